"""Several bot processes behind procrastinate's queue (SOMMELIER_TELEGRAM_QUEUE, bot/queue.py):
any worker takes any chat, a chat's messages are answered in the order they were sent, Stop
reaches the worker running the turn, a killed worker's turns are answered by another, and
workers can come and go without stranding an update."""

from __future__ import annotations

import asyncio
import os
import signal
import time

import pytest
from sqlalchemy import func, select, text

from sommelier.db.models import InboundMessage
from tests.support.processes import unanswered, workers_ready
from tests.support.scripted import ScriptedModel, answer, reply
from tests.support.telegram import TelegramUser, new_token, running_queued_bot
from tests.support.waiting import until

pytestmark = pytest.mark.postgres


class Recording(ScriptedModel):
    """Answers "re: <text>"; a text starting with "slow" waits for `release` (or for Stop).
    Notes which worker ran each call."""

    def __init__(self, name: str, seen: list[tuple[str, str]], release: asyncio.Event) -> None:
        super().__init__([])
        self.name, self.seen, self.release = name, seen, release

    async def complete(self, request, on_delta=None):  # type: ignore[no-untyped-def]
        said = request.messages[-1]["content"]
        self.seen.append((self.name, f"start {said}"))
        if said.startswith("slow"):
            await self.release.wait()
        self.seen.append((self.name, f"end {said}"))
        return answer(reply([], "informational", intro=f"re: {said}", closing=""))


async def test_each_chat_is_answered_in_order_whichever_worker_takes_it(
    pg_app, telegram_emulator
) -> None:  # type: ignore[no-untyped-def]
    token = new_token()
    ana, ben = (TelegramUser(telegram_emulator, token, uid) for uid in (5102, 5103))
    seen: list[tuple[str, str]] = []
    release = asyncio.Event()
    models = [Recording(f"worker {n}", seen, release) for n in (1, 2)]
    async with running_queued_bot(pg_app, models, telegram_emulator, token):
        for said in ("slow first", "second", "third"):
            await ana.say(f"{said} (ana)")
            await ben.say(f"{said} (ben)")
        # Both slow first turns run at once (whichever worker took each), and nothing of
        # either chat overtakes its first.
        await until(lambda: sum(step.startswith("start slow") for _, step in seen) == 2)
        assert not any(step.startswith(("start second", "start third")) for _, step in seen)
        release.set()
        replies = {user.chat_id: await user.wait_for(3) for user in (ana, ben)}
    for user, who in ((ana, "ana"), (ben, "ben")):
        texts = [f"{said} ({who})" for said in ("slow first", "second", "third")]
        assert [m["text"] for m in replies[user.chat_id]] == [f"re: {t}" for t in texts]
    async with pg_app.sessions() as session:
        statuses = (await session.scalars(select(InboundMessage.status))).all()
        jobs = await session.scalar(text("SELECT count(*) FROM procrastinate_jobs"))
    assert statuses == ["ok"] * 6  # each update answered once
    assert jobs == 0  # done jobs leave the queue; inbound_messages keeps the story


async def test_stop_reaches_the_worker_running_the_turn(pg_app, telegram_emulator) -> None:  # type: ignore[no-untyped-def]
    token = new_token()
    ana = TelegramUser(telegram_emulator, token, 5104)
    seen: list[tuple[str, str]] = []
    never = asyncio.Event()
    async with running_queued_bot(
        pg_app, [Recording("worker", seen, never)], telegram_emulator, token
    ):
        await ana.say("slow, please")
        await until(lambda: ("worker", "start slow, please") in seen)
        await ana.command("/stop")
        messages = await ana.wait_for(1)
        await ana.say("and now?")
        after = await ana.wait_for(2)
    assert messages[0]["text"] == "Stopped."
    assert after[1]["text"] == "re: and now?"  # the chat goes on
    async with pg_app.sessions() as session:
        rows = (await session.execute(select(InboundMessage.text, InboundMessage.status))).all()
    assert ("slow, please", "cancelled") in rows


# -- separate processes -------------------------------------------------------------------


async def test_a_killed_worker_s_turns_are_answered_by_the_others(
    pg_app, telegram_emulator, slow_model, processes
) -> None:  # type: ignore[no-untyped-def]
    token = processes.env["SOMMELIER_TELEGRAM_BOT_TOKEN"]
    workers = [await processes.start("worker") for _ in range(3)]
    try:
        await workers_ready(pg_app, 3)
    except AssertionError:
        raise AssertionError(f"not every worker started:\n{processes.output()}") from None
    await processes.start("bot")
    users = [TelegramUser(telegram_emulator, token, 5200 + n) for n in range(6)]
    for user in users:
        await user.say(f"msg-{user.user_id}a")
        await user.say(f"msg-{user.user_id}b")
    # Six first messages in flight, two per worker (each takes two at a time).
    await until(lambda: len(slow_model.requests) >= 6, timeout=90)
    os.kill(workers[0].pid, signal.SIGKILL)  # three workers become two, mid-turn
    killed = time.monotonic()
    answered = [await user.wait_for(2, timeout=120) for user in users]
    recovered = time.monotonic() - killed
    for user, messages in zip(users, answered, strict=True):
        expected = [f"re: msg-{user.user_id}{x}" for x in "ab"]
        assert [m["text"] for m in messages] == expected, processes.output()
    assert await unanswered(pg_app) == 0
    print(f"\nall chats answered {recovered:.1f} s after a worker with turns was killed")


async def test_updates_queued_while_no_worker_runs_are_answered_when_one_starts(
    pg_app, telegram_emulator, slow_model, processes
) -> None:  # type: ignore[no-untyped-def]
    token = processes.env["SOMMELIER_TELEGRAM_BOT_TOKEN"]
    await processes.start("bot")
    users = [TelegramUser(telegram_emulator, token, 5300 + n) for n in range(2)]
    for user in users:
        await user.say(f"msg-{user.user_id}a")
        await user.say(f"msg-{user.user_id}b")

    async def queued() -> bool:
        async with pg_app.sessions() as session:
            jobs = await session.scalar(
                text("SELECT count(*) FROM procrastinate_jobs WHERE status = 'todo'")
            )
        return jobs == 4

    await until(queued, timeout=60)
    await processes.start("worker")
    answered = [await user.wait_for(2, timeout=90) for user in users]
    for user, messages in zip(users, answered, strict=True):
        expected = [f"re: msg-{user.user_id}{x}" for x in "ab"]
        assert [m["text"] for m in messages] == expected, processes.output()
    async with pg_app.sessions() as session:
        received = await session.scalar(
            select(func.count()).where(InboundMessage.status == "received")
        )
    assert received == 0
