"""The cellar's questions behind the queue (bot/queue.py, bot/asks.py): procrastinate's periodic
task in two workers asks a due question once, and when one worker stops the other asks the
next; nothing is asked twice."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import select, text

from sommelier.cellar.files import CellarRow
from sommelier.cellar.opened import open_one
from sommelier.cellar.store import add_rows, cellar_of, owner_of
from sommelier.db.models import CellarEvent
from sommelier.db.repositories import Person, get_or_create_user
from tests.support.scripted import ScriptedModel
from tests.support.telegram import TelegramUser, calls, new_token, running_queued_bot
from tests.support.waiting import until

pytestmark = pytest.mark.postgres

ANA_ID = 5301
ANA = Person(channel="telegram", telegram_id=ANA_ID, display_name="Ana", language="de")


async def _opens_a_bottle(app) -> None:  # type: ignore[no-untyped-def]
    """Ana opens a Malbec (her private chat's id is hers); the question is due at once."""
    async with app.sessions() as session, session.begin():
        owner = await owner_of(session, ANA)
        if not await session.scalar(select(CellarEvent.id).limit(1)):
            row = CellarRow(1, "Catena Malbec", 3, "Catena Zapata", "2021", "rack B")
            await add_rows(session, await cellar_of(session, owner), [row], None, "csv")
        user = await get_or_create_user(session, ANA)
        await open_one(session, owner, "sm-059", user.id, ANA_ID, timedelta(0))


async def _asked(emulator, token: str) -> list[dict]:  # type: ignore[no-untyped-def,type-arg]
    sent = [c["body"] for c in await calls(emulator, token) if c["method"] == "sendMessage"]
    return [b for b in sent if "geöffnet hast?" in b.get("text", "")]


async def test_two_workers_ask_a_due_question_once_and_one_goes_on_when_the_other_stops(
    pg_app, telegram_emulator
) -> None:  # type: ignore[no-untyped-def]
    token = new_token()
    ana = TelegramUser(telegram_emulator, token, ANA_ID)
    await _opens_a_bottle(pg_app)
    models = [ScriptedModel([]), ScriptedModel([])]  # no model call: the rows say it all
    async with running_queued_bot(pg_app, models, telegram_emulator, token) as workers:
        await until(lambda: _count(telegram_emulator, token, 1), timeout=40)
        workers[0].cancel()  # one worker stops, as SIGTERM stops it
        await _opens_a_bottle(pg_app)
        await until(lambda: _count(telegram_emulator, token, 2), timeout=40)
        rounds = await _rounds(pg_app)
        await until(lambda: _more(pg_app, rounds), timeout=40)  # a round more: nothing asked again
        asked = await _asked(telegram_emulator, token)
    assert [b["text"] for b in asked] == ["Wie war der Catena Malbec 2021, den du geöffnet hast?"] * 2  # fmt: skip
    assert {int(b["chat_id"]) for b in asked} == {ana.chat_id}
    async with pg_app.sessions() as session:
        sent = (await session.scalars(select(CellarEvent.message_id).where(CellarEvent.kind == "opened"))).all()  # fmt: skip
    assert len(sent) == 2 and None not in sent


async def _rounds(app) -> int:  # type: ignore[no-untyped-def]
    """When the latest periodic round was queued (procrastinate's record of its defers)."""
    query = text(
        "SELECT coalesce(max(defer_timestamp), 0) FROM procrastinate_periodic_defers"
        " WHERE task_name = 'sommelier.cellar_asks'"
    )
    async with app.sessions() as session:
        return int(await session.scalar(query) or 0)


async def _more(app, rounds: int) -> bool:  # type: ignore[no-untyped-def]
    """A later round was queued and has run (its job is gone: workers delete finished jobs)."""
    pending = text(
        "SELECT count(*) FROM procrastinate_jobs WHERE task_name = 'sommelier.cellar_asks'"
    )
    async with app.sessions() as session:
        waiting = await session.scalar(pending)
    return await _rounds(app) > rounds and not waiting


async def _count(emulator, token: str, count: int) -> bool:  # type: ignore[no-untyped-def]
    return len(await _asked(emulator, token)) >= count
