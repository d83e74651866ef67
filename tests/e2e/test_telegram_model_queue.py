"""Three `sommelier worker` processes and one model server that answers one request at a
time (issue 46, item 4): the endpoint's queue is shared through PostgreSQL, so the server
never sees two requests at once, none of its answers is cut, and the waits people are told
count every worker's turns."""

from __future__ import annotations

import re

import pytest
from sqlalchemy import select

from sommelier.db.models import ModelTurn
from tests.support.processes import unanswered, workers_ready
from tests.support.telegram import TelegramUser, calls
from tests.support.waiting import until

pytestmark = pytest.mark.postgres

NOTICE = re.compile(r"(\d+) (?:people|person) ahead of you, about (\d+) s")


async def test_three_workers_send_a_one_slot_server_one_request_at_a_time(
    pg_app, telegram_emulator, slow_model, processes
) -> None:  # type: ignore[no-untyped-def]
    processes.env["SOMMELIER_LLM_CONCURRENCY"] = "1"
    # Like llama-cpp-python's server: a second request cuts the answer that streams.
    slow_model.interrupting = True
    token = processes.env["SOMMELIER_TELEGRAM_BOT_TOKEN"]
    for _ in range(3):
        await processes.start("worker")
    await workers_ready(pg_app, 3)
    await processes.start("bot")

    async def answered(users: list[TelegramUser]) -> None:
        for user in users:
            await user.say(f"msg-{user.user_id}")
        for user in users:
            reply = f"re: msg-{user.user_id}"
            await until(lambda u=user, r=reply: _said(u, r), timeout=120)

    await answered([TelegramUser(telegram_emulator, token, 5700 + n) for n in range(3)])
    waves = [TelegramUser(telegram_emulator, token, 5710 + n) for n in range(6)]
    await answered(waves)  # the turns before are measured: the estimates are the endpoint's

    assert slow_model.most_at_once == 1, processes.output()
    assert slow_model.cut == 0
    assert len(slow_model.requests) == 9  # one call per turn: none was cut and tried again
    assert await unanswered(pg_app) == 0
    told = await _told(pg_app, await calls(telegram_emulator, token), waves)
    # Someone waited behind turns of other workers; the wait each was first told is within a
    # quarter of how long it was (two seconds either way: estimates are whole seconds).
    assert max(ahead for ahead, _, _ in told) >= 3, told
    for _, estimate, waited in told:
        assert abs(estimate - waited) <= max(2.0, waited / 4), told


async def _said(user: TelegramUser, text: str) -> bool:
    return any(m.get("text") == text for m in await user.bot_messages())


async def _told(app, log: list[dict], users: list[TelegramUser]) -> list[tuple[int, int, float]]:  # type: ignore[no-untyped-def,type-arg]
    """(places ahead, seconds told, seconds waited) of each chat's first queue notice; how long
    its turn waited is the queue's own record (the notice goes a few seconds later)."""
    first: dict[int, tuple[int, int]] = {}
    for call in log:
        found = NOTICE.search(str(call["body"].get("text", "")))
        chat = int(call["body"].get("chat_id", 0))
        if call["method"] == "sendMessage" and found and chat not in first:
            first[chat] = (int(found[1]), int(found[2]))
    async with app.sessions() as session:
        rows = (await session.execute(select(ModelTurn))).scalars().all()
    # A chat's turns queue as "telegram:chat:<id>" (chat/service.py `party`).
    waited = {row.party: (row.admitted_at - row.created_at).total_seconds() for row in rows}
    return [
        (*first[u.chat_id], waited[f"telegram:chat:{u.chat_id}"])
        for u in users
        if u.chat_id in first
    ]
