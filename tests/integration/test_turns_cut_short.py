"""Turns cut short leave no half-turn behind: model calls are written as they finish, a turn
whose process died is marked once by the sweep, and a database that goes away mid-turn gets the
turn's end once it is back (db/turns.py, chat/recording.py)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import timedelta

import pytest
import pytest_asyncio
from sqlalchemy import func, select

from sommelier.app import App
from sommelier.catalog.starter import load_starter_catalog_if_empty
from sommelier.chat.service import Origin
from sommelier.db.models import InboundMessage, ModelCall
from sommelier.db.repositories import Person
from sommelier.db.turns import Begun, InboundStatus, Pending, TurnStore
from tests.conftest import make_settings
from tests.support.chat import ANA, native
from tests.support.databases import DatabaseFactory
from tests.support.pg_proxy import Proxy
from tests.support.scripted import ScriptedModel, answer, reply, tools
from tests.support.waiting import until

SEARCH = ("search_wines", {"type": "red", "max_price": 20, "food": "steak"})
STEAK = "a red under 20 euros for steak"
BEA = Person(channel="telegram", telegram_id=9, display_name="Bea")


class HeldAnswer(ScriptedModel):
    """Searches, then holds its answer until `go` is set."""

    def __init__(self) -> None:
        super().__init__([tools(SEARCH), answer(reply(["sm-059"], intro="Catena."))])
        self.answering = asyncio.Event()
        self.go = asyncio.Event()

    async def complete(self, request, on_delta=None):  # type: ignore[no-untyped-def]
        if self.requests:  # the second call: the answer
            self.answering.set()
            await self.go.wait()
        return await super().complete(request, on_delta)


async def _count(app: App, *where) -> int:  # type: ignore[no-untyped-def]
    async with app.sessions() as session:
        return int(await session.scalar(select(func.count()).select_from(ModelCall).where(*where)))


async def test_model_calls_are_in_sql_as_soon_as_they_finish(app) -> None:  # type: ignore[no-untyped-def]
    model = HeldAnswer()
    turn = asyncio.create_task(native(app, model).turn(ANA, STEAK))
    await model.answering.wait()
    # The search call is stored while the answer is still being written.
    await until(lambda: _written(app, 1))
    model.go.set()
    reply_ = await turn
    assert reply_.ok
    async with app.sessions() as session:
        calls = (await session.scalars(select(ModelCall).order_by(ModelCall.attempt))).all()
    assert [(c.attempt, c.purpose, c.message_id) for c in calls] == [
        (1, "tool_round", reply_.message_id),
        (2, "answer", reply_.message_id),
    ]


async def _written(app: App, count: int) -> bool:
    return await _count(app) == count


async def test_a_turn_whose_process_died_is_swept_once_and_runs_again_if_redelivered(app) -> None:  # type: ignore[no-untyped-def]
    chat = native(app, ScriptedModel([]))
    # What a process that died mid-turn leaves: the inbound rows, still `received`.
    died = await chat.turns.begin(ANA, STEAK, key=71, thread=7)
    elsewhere = await chat.turns.begin(BEA, "hi", key=72)
    assert isinstance(died, Begun) and isinstance(elsewhere, Begun)
    assert await chat.turns.sweep("cli", timedelta(hours=1)) == []  # not old enough yet
    stale = await chat.turns.sweep("cli", timedelta(0))
    assert [(s.text, s.chat_id) for s in stale] == [(STEAK, 7)]
    assert await chat.turns.sweep("cli", timedelta(0)) == []  # once
    async with app.sessions() as session:
        statuses = dict(
            (await session.execute(select(InboundMessage.id, InboundMessage.status))).all()
        )
    assert statuses[died.inbound_id] == InboundStatus.interrupted
    assert statuses[elsewhere.inbound_id] == InboundStatus.received  # another channel's sweep

    # The telegram row is met again (its job ran again on another worker): it runs.
    model = ScriptedModel([answer(reply([], "informational", intro="Hello again."))])
    again = await native(app, model).turn(BEA, "hi", origin=Origin(key=72))
    assert again.ok and again.inbound_id == elsewhere.inbound_id


@pytest_asyncio.fixture
async def proxied(db_factory: DatabaseFactory) -> AsyncIterator[tuple[App, Proxy]]:
    url = await db_factory.postgres()
    proxy = await Proxy(url).start()
    app = App.build(make_settings(proxy.proxied_url))
    await load_starter_catalog_if_empty(app.sessions)
    yield app, proxy
    await proxy.cut()
    await app.aclose()
    await db_factory.release(url)


@pytest.mark.postgres
async def test_the_database_going_away_mid_turn_leaves_no_half_turn(proxied) -> None:  # type: ignore[no-untyped-def]
    app, proxy = proxied
    model = HeldAnswer()
    turn = asyncio.create_task(native(app, model).turn(ANA, STEAK))
    await model.answering.wait()
    await until(lambda: _written(app, 1))
    await proxy.cut()  # the database goes away while the answer is written
    model.go.set()
    reply_ = await turn
    assert reply_.status == "database"
    assert "can't reach my records" in reply_.text
    await proxy.restore()

    async def stored() -> bool:
        async with app.sessions() as session:
            status = await session.scalar(select(InboundMessage.status))
        return status == InboundStatus.interrupted

    await until(stored, timeout=30)
    assert await _count(app) == 2  # the answer call too, written once the database was back


@pytest.mark.postgres
async def test_a_part_sent_while_the_database_restarts_is_recorded_once_it_is_back(proxied) -> None:  # type: ignore[no-untyped-def]
    """The worker sent a reply's part just as the database went away: the record waits for
    the database instead of failing the turn ("something went wrong" after a good answer) and
    leaving the part to be sent again when the update is redelivered."""
    app, proxy = proxied
    turns = native(app, ScriptedModel([])).turns
    begun = await turns.begin(ANA, STEAK, key=81, thread=8)
    assert isinstance(begun, Begun)
    parts = [{"text": "Catena."}, {"text": "Cheers."}]
    assert await turns.save_parts(begun.inbound_id, parts, begun.run)
    await proxy.cut()  # the pool's connections are dropped mid-use, as by a restart
    recording = asyncio.create_task(turns.mark_sent(begun.inbound_id, 1, begun.run))
    # It has failed at least once and tries again: waiting, not failed.
    await until(lambda: TurnStore.mark_sent.statistics.get("attempt_number", 0) >= 2)  # type: ignore[attr-defined]
    assert not recording.done()
    await proxy.restore()
    assert await asyncio.wait_for(recording, timeout=30)
    assert await turns.pending(begun.inbound_id) == Pending(parts, 1)
