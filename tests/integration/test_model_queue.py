"""One model endpoint's queue across processes (chat/model_queue.py, issue 46 item 4): each
`SharedAdmission` here has its own engine, as a worker process has, over one PostgreSQL."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest
import pytest_asyncio
from sqlalchemy import func, insert, select

from sommelier.agent.admission import Place, QueueTimeout
from sommelier.chat.model_queue import STALE, SharedAdmission, _estimate
from sommelier.db.models import ModelTurn
from sommelier.db.session import create_engine, session_factory
from tests.support.databases import DatabaseFactory
from tests.support.waiting import until

pytestmark = pytest.mark.postgres

ENDPOINT = "http://127.0.0.1:8011/v1 local"


@pytest_asyncio.fixture
async def processes(db_factory: DatabaseFactory) -> AsyncIterator[list[SharedAdmission]]:
    """Three processes' queues for one single-slot endpoint."""
    url = await db_factory.postgres()
    engines = [create_engine(url) for _ in range(3)]
    queues = [SharedAdmission(session_factory(e), ENDPOINT, 1, wait_limit=30) for e in engines]
    yield queues
    for queue, engine in zip(queues, engines, strict=True):
        await queue.aclose()
        await engine.dispose()
    await db_factory.release(url)


class Endpoint:
    """A one-slot model server's view: how many turns ran on it at once, and in what order."""

    def __init__(self) -> None:
        self.now = 0
        self.most = 0
        self.order: list[str] = []

    async def serve(self, queue: SharedAdmission, party: str, seconds: float = 0.15) -> None:
        async with queue.turn(party):
            self.now += 1
            self.most = max(self.most, self.now)
            self.order.append(party)
            await asyncio.sleep(seconds)
            self.now -= 1


async def test_processes_sharing_a_one_slot_endpoint_run_one_turn_at_a_time(processes) -> None:  # type: ignore[no-untyped-def]
    endpoint = Endpoint()
    turns = [endpoint.serve(processes[n % 3], f"chat-{n}") for n in range(9)]
    await asyncio.gather(*turns)
    assert endpoint.most == 1 and len(endpoint.order) == 9
    async with processes[0].sessions() as session:
        left = await session.scalar(
            select(func.count()).select_from(ModelTurn).where(ModelTurn.finished_at.is_(None))
        )
    assert left == 0  # nothing waits or runs once every turn is over


async def test_a_waiting_turn_hears_its_place_counted_across_processes(processes) -> None:  # type: ignore[no-untyped-def]
    first, second, third = processes
    await _finished_turns(first, seconds=40.0, count=3)
    heard: dict[str, list[Place]] = {"ben": [], "cleo": []}
    release = asyncio.Event()

    async def hold() -> None:
        async with first.turn("ana"):
            await release.wait()

    async def wait(queue: SharedAdmission, party: str) -> None:
        async with queue.turn(party, heard[party].append):
            if party == "ben":  # Ben's turn runs until Cleo has heard her place move up
                await until(lambda: len(heard["cleo"]) > 1)

    running = asyncio.create_task(hold())
    await _until_rows(first, 1)
    ben = asyncio.create_task(wait(second, "ben"))
    await _until_rows(first, 2)
    cleo = asyncio.create_task(wait(third, "cleo"))
    await until(lambda: bool(heard["cleo"]))
    release.set()
    await asyncio.gather(running, ben, cleo)
    # Ben waits behind Ana's turn (another process's), Cleo behind both: what is left of Ana's
    # turn, then the endpoint's median turn (40 s) per turn ahead that has not started.
    assert heard["ben"][0].ahead == 1 and 38 <= heard["ben"][0].seconds <= 40
    assert heard["cleo"][0].ahead == 2 and 78 <= heard["cleo"][0].seconds <= 80
    assert heard["cleo"][-1].ahead == 1  # told again when Ana's turn ended


async def test_each_chat_takes_its_turn_whichever_process_queued_it(processes) -> None:  # type: ignore[no-untyped-def]
    endpoint = Endpoint()
    release = asyncio.Event()

    async def hold() -> None:
        async with processes[0].turn("other"):
            await release.wait()

    running = asyncio.create_task(hold())
    await _until_rows(processes[0], 1)
    queued = []
    for n in range(3):  # Ana queues three turns on two processes, then Ben one
        queued.append(asyncio.create_task(endpoint.serve(processes[n % 2], "ana", 0.05)))
        await _until_rows(processes[0], n + 2)
    queued.append(asyncio.create_task(endpoint.serve(processes[2], "ben", 0.05)))
    await _until_rows(processes[0], 5)
    release.set()
    await asyncio.gather(running, *queued)
    assert endpoint.order == ["ana", "ben", "ana", "ana"]


async def test_a_turn_ending_in_one_process_wakes_the_turn_waiting_in_another(
    processes, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    """The waiting process hears the other's turn end (NOTIFY): with its backstop look a
    minute away, it is admitted as soon as the place is free, not a minute later."""
    monkeypatch.setattr("sommelier.chat.model_queue.POLL", 60.0)
    holder, waiter = processes[0], processes[1]
    release = asyncio.Event()
    admitted = asyncio.Event()
    told: list[Place] = []  # its place, told after each look at the queue

    async def hold() -> None:
        async with holder.turn("ana"):
            await release.wait()

    async def wait() -> None:
        async with waiter.turn("ben", told.append):
            admitted.set()

    running = asyncio.create_task(hold())
    await _until_rows(holder, 1)
    waiting = asyncio.create_task(wait())
    await _until_rows(holder, 2)
    await until(lambda: waiter._listener is not None)  # it listens while it waits
    await until(lambda: bool(told))  # past its first look: the next is a minute away, or a notice
    assert not admitted.is_set()
    release.set()
    async with asyncio.timeout(10):
        await asyncio.gather(running, waiting)
    assert admitted.is_set()


async def test_a_dead_process_place_is_given_back(processes) -> None:  # type: ignore[no-untyped-def]
    alive = processes[0]
    long_ago = datetime.now(UTC) - timedelta(seconds=STALE + 5)
    async with alive.sessions() as session:  # a process killed while its turn ran
        await session.execute(
            insert(ModelTurn).values(
                endpoint=ENDPOINT, party="x", owner="dead", admitted_at=long_ago, seen_at=long_ago
            )
        )
        await session.commit()
    async with asyncio.timeout(5), alive.turn("ana") as ticket:
        assert ticket.place is None  # admitted at once: the dead turn's row was swept


async def test_a_live_process_keeps_its_place_and_the_wait_limit_holds(processes) -> None:  # type: ignore[no-untyped-def]
    holder, waiter = processes[0], processes[1]
    waiter.wait_limit = 1.0
    release = asyncio.Event()

    async def hold() -> None:
        async with holder.turn("ana"):
            await release.wait()

    running = asyncio.create_task(hold())
    await _until_rows(holder, 1)
    with pytest.raises(QueueTimeout):
        async with waiter.turn("ben"):
            pass
    release.set()
    await running
    async with holder.sessions() as session:  # the turn that gave up left no row behind
        rows = (await session.scalars(select(ModelTurn.party))).all()
    assert rows == ["ana"]


async def test_a_queue_whose_database_is_away_still_lets_turns_run() -> None:
    engine = create_engine("postgresql+asyncpg://nobody@127.0.0.1:9/none")
    queue = SharedAdmission(session_factory(engine), ENDPOINT, 1, wait_limit=5)
    endpoint = Endpoint()
    try:
        await asyncio.gather(*(endpoint.serve(queue, f"chat-{n}", 0.05) for n in range(3)))
    finally:
        await engine.dispose()
    assert endpoint.order and endpoint.most == 1  # this process's own queue, still one at once


async def _finished_turns(queue: SharedAdmission, seconds: float, count: int) -> None:
    now = datetime.now(UTC)
    async with queue.sessions() as session:
        for _ in range(count):
            values = {"endpoint": ENDPOINT, "party": "past", "owner": "past"}
            await session.execute(
                insert(ModelTurn).values(
                    **values, admitted_at=now, finished_at=now, seen_at=now, seconds=seconds
                )
            )
        await session.commit()


async def _until_rows(queue: SharedAdmission, count: int) -> None:
    async def enough() -> bool:
        async with queue.sessions() as session:
            found = await session.scalar(
                select(func.count()).select_from(ModelTurn).where(ModelTurn.finished_at.is_(None))
            )
        return found == count

    await until(enough)


@pytest.mark.parametrize(
    ("ran", "index", "capacity", "expected"),
    [
        ([], 0, 1, 0.0),  # nothing runs: at once
        ([3.0], 0, 1, 7.0),  # what is left of the running turn
        ([3.0], 2, 1, 27.0),  # then two whole turns
        ([12.0], 0, 1, 1.0),  # a turn past the median may end any moment
        ([1.0, 9.0], 1, 2, 9.0),  # two slots: the second slot frees first, then the first
    ],
)
def test_a_wait_is_estimated_from_the_turns_that_run_and_the_median_turn(
    ran: list[float], index: int, capacity: int, expected: float
) -> None:
    assert _estimate(ran, index, capacity, per_turn=10.0) == expected


async def test_a_process_frozen_holding_the_queues_lock_holds_the_others_only_seconds(
    processes,
) -> None:  # type: ignore[no-untyped-def]
    """Frozen inside the endpoint's lock (a GC pause, a stopped VM: here, a transaction that
    took it and sends nothing more), a process holds the other processes' turns only until
    PostgreSQL ends its idle transaction, not until it wakes."""
    frozen, other = processes[0], processes[1]
    frozen.lock_idle_limit = 1.0
    session = frozen.sessions()
    try:
        await frozen._locked(session)  # and then nothing: frozen
        async with asyncio.timeout(10), other.turn("ben") as ticket:
            assert ticket.row is not None  # admitted through the shared queue, not on its own
    finally:
        with contextlib.suppress(Exception):
            await session.close()
