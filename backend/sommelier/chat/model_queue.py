"""One model endpoint's queue for every process that uses it (issue 46, item 4).

Each worker process used to keep its own queue (agent/admission.py), so three workers on a
one-slot endpoint sent it three requests at once, and each told people a third of their real
wait. Here the places are rows of `model_turns` in PostgreSQL, which the processes already
share: a turn inserts a waiting row, and a process admits its own rows, under an advisory lock
per endpoint, while fewer than `capacity` rows of that endpoint run. The order is the local
queue's: one turn per party (chat) per round, the party served longest ago first. Places and
estimates count every process's turns; an estimate is the median of the endpoint's last
finished turns, whoever ran them.

A process wakes its waiting turns when any process's turn ends or starts: each change is a
NOTIFY on the endpoint's channel, heard on one LISTEN connection per process; a look every
`POLL` seconds stays as the backstop (a notice lost with a dropped connection), every
`POLL_UNHEARD` seconds while nothing listens.

A process that dies leaves rows behind: each process touches its rows every `HEARTBEAT`
seconds, and rows untouched for `STALE` seconds are removed by whoever looks next. One frozen
inside the endpoint's lock loses it after `LOCK_IDLE_LIMIT` seconds (PostgreSQL ends the idle
transaction). A process
that cannot reach the database queues on its own (the local admission) rather than not at all:
the model may still answer while the database is away.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import logging
import statistics
import uuid
import zlib
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg
from sqlalchemy import delete, func, insert, select, text, update
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from sommelier.agent.admission import (
    DEFAULT_TURN_SECONDS,
    MEASURED,
    Admission,
    Place,
    QueueTimeout,
    Ticket,
)
from sommelier.db.models import ModelTurn
from sommelier.db.session import DATABASE_ERRORS

log = logging.getLogger(__name__)

# A database that is away, or whose connection broke mid-statement (asyncpg's "connection was
# closed in the middle of operation" arrives as a bare DBAPIError).
AWAY: tuple[type[BaseException], ...] = (*DATABASE_ERRORS, DBAPIError)

POLL = 2.0  # seconds between looks at the queue while waiting, the queue's notices heard
POLL_UNHEARD = 0.2  # the same while this process hears none (its LISTEN connection is down)
HEARTBEAT = 3.0  # seconds between touches of this process's rows
STALE = 20.0  # a row untouched this long is a dead (or long frozen) process's
LONGER = 1.0  # seconds a turn running past the median is still given
# A process frozen while it holds the endpoint's lock (a GC pause, a stopped VM) would hold every
# other process's turns until it woke: PostgreSQL ends its transaction, and its session, after
# this long idle in it. The lock is held for a few statements, never while waiting.
LOCK_IDLE_LIMIT = 5.0


@dataclass(eq=False)
class SharedTicket:
    party: str
    on_wait: Callable[[Place], None] | None = None
    place: Place | None = None
    row: int | None = None  # this turn's row while it waits or runs
    local: Ticket | None = field(default=None, repr=False)  # queued locally instead


class SharedAdmission:
    """The same contract as `Admission` (`turn`, `rejoin`), across processes."""

    def __init__(
        self,
        sessions: async_sessionmaker[AsyncSession],
        endpoint: str,
        capacity: int = 1,
        wait_limit: float | None = None,
    ) -> None:
        self.sessions = sessions
        self.endpoint = endpoint[:720]
        self.capacity = max(1, capacity)
        self.wait_limit = wait_limit
        self.owner = uuid.uuid4().hex
        self.lock_idle_limit = LOCK_IDLE_LIMIT
        self.fallback = Admission(capacity, wait_limit)  # while the database is away
        self._lock_key = zlib.crc32(self.endpoint.encode()) - 2**31  # a signed 32-bit key
        self._held: set[int] = set()
        self._heartbeat: asyncio.Task[None] | None = None
        self._moved = asyncio.Event()  # set when a turn ends or starts, in any process
        self.channel = f"model_queue_{self._lock_key & 0xFFFFFFFF:08x}"
        self._listener: asyncpg.Connection | None = None
        self._listening: asyncio.Task[None] | None = None

    @asynccontextmanager
    async def turn(
        self, party: str, on_wait: Callable[[Place], None] | None = None
    ) -> AsyncIterator[SharedTicket]:
        """Hold a place at the endpoint for one turn, across processes; wait for it first."""
        ticket = SharedTicket(party, on_wait)
        try:
            await self._wait(ticket)
        except AWAY as exc:
            log.warning(
                "the model queue's database is away: this process queues on its own",
                extra={"event": "model_queue_local", "error": type(exc).__name__},
            )
        if ticket.row is None:
            async with self.fallback.turn(party, on_wait) as local:
                ticket.local, ticket.place = local, local.place
                yield ticket
            return
        try:
            yield ticket
        finally:
            await asyncio.shield(self._finish(ticket))

    async def rejoin(self, ticket: SharedTicket) -> None:
        """Give the place up and queue again at the back (a retried stream)."""
        if isinstance(ticket.local, Ticket):
            await self.fallback.rejoin(ticket.local)
            return
        await asyncio.shield(self._finish(ticket))
        try:
            await self._wait(ticket)
        except AWAY:  # the retry goes ahead without a place rather than not at all
            log.warning("the model queue's database is away", extra={"event": "model_queue_local"})

    async def _enqueue(self, ticket: SharedTicket) -> None:
        async with self.sessions() as session:
            # Under the endpoint's lock, as places are counted: a row's id is then taken in the
            # order rows become visible. Without it a row numbered before another could commit
            # after that one had counted its place ("1 ahead", then a turn more to wait).
            await self._locked(session)
            ticket.row = await session.scalar(
                insert(ModelTurn)
                .values(
                    endpoint=self.endpoint,
                    party=ticket.party,
                    owner=self.owner,
                    created_at=func.now(),
                    seen_at=func.now(),
                )
                .returning(ModelTurn.id)
            )
            await session.commit()
        assert ticket.row is not None
        self._held.add(ticket.row)
        if self._heartbeat is None or self._heartbeat.done():
            self._heartbeat = asyncio.create_task(self._beating())

    async def _wait(self, ticket: SharedTicket) -> None:
        """Queue a row and wait until it is admitted, telling the place as it changes."""
        try:
            async with asyncio.timeout(self.wait_limit):
                await self._enqueue(ticket)
                while not await self._try_admit(ticket):
                    await self._nap()
        except BaseException as exc:
            await asyncio.shield(self._leave(ticket))
            if isinstance(exc, TimeoutError):
                raise QueueTimeout(f"waited over {self.wait_limit:g} s") from None
            raise

    async def _locked(self, session: AsyncSession) -> None:
        """The endpoint's lock, for this transaction, which PostgreSQL ends if it idles past
        LOCK_IDLE_LIMIT (SET LOCAL: no other transaction of the session is bounded)."""
        limit = int(self.lock_idle_limit * 1000)
        await session.execute(text(f"SET LOCAL idle_in_transaction_session_timeout = {limit}"))
        await session.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": self._lock_key})

    async def _try_admit(self, ticket: SharedTicket) -> bool:
        """One look at the queue, under the endpoint's lock: admit this ticket if its turn has
        come and a place is free; else tell it where it stands."""
        async with self.sessions() as session, session.begin():
            await self._locked(session)
            await self._sweep(session)
            rows = (
                await session.execute(
                    select(
                        ModelTurn.id,
                        ModelTurn.party,
                        ModelTurn.admitted_at,
                        ModelTurn.finished_at,
                        func.extract("epoch", func.now() - ModelTurn.admitted_at).label("ran"),
                    )
                    .where(ModelTurn.endpoint == self.endpoint)
                    .order_by(ModelTurn.id)
                )
            ).all()
            ran = [float(r.ran) for r in rows if r.admitted_at is not None and not r.finished_at]
            running = len(ran)
            order = _fair(rows)
            if ticket.row not in order:  # swept while this process was frozen: queue again
                self._held.discard(ticket.row)
                ticket.row = None
            elif order.index(ticket.row) < self.capacity - running:
                await session.execute(
                    update(ModelTurn)
                    .where(ModelTurn.id == ticket.row)
                    .values(admitted_at=func.now(), seen_at=func.now())
                )
                await self._notify(session)  # the places behind it moved
                return True
            else:
                index = order.index(ticket.row)
                per_turn = await self._turn_seconds(session)
        if ticket.row is None:
            await self._enqueue(ticket)
            return False
        seconds = _estimate(ran, index, self.capacity, per_turn)
        self._tell(ticket, Place(running + index, round(seconds)))
        return False

    async def _nap(self) -> None:
        """Until a turn ends or starts in any process, or the backstop's seconds."""
        await self._listen()
        heard = self._listener is not None and not self._listener.is_closed()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._moved.wait(), POLL if heard else POLL_UNHEARD)

    async def _notify(self, session: AsyncSession) -> None:
        """Tell every process's waiting turns that the queue moved (sent at commit)."""
        await session.execute(text("SELECT pg_notify(:channel, '')"), {"channel": self.channel})

    async def _listen(self) -> None:
        """One LISTEN connection for this process, opened at the first wait and again after it
        dropped; while it is down, the backstop looks more often."""
        if self._listener is not None and not self._listener.is_closed():
            return
        if self._listening is not None and not self._listening.done():
            return  # connecting already
        self._listening = asyncio.create_task(self._connect())

    async def _connect(self) -> None:
        engine = self.sessions.kw["bind"]
        dsn = engine.url.set(drivername="postgresql").render_as_string(hide_password=False)
        try:
            listener = await asyncpg.connect(dsn, timeout=5)
            await listener.add_listener(self.channel, lambda *_: self._moving())
        except (OSError, asyncpg.PostgresError, TimeoutError) as exc:
            log.debug("the model queue hears no notices: %s", type(exc).__name__)
            return
        self._listener = listener

    def _moving(self) -> None:
        self._moved.set()
        self._moved = asyncio.Event()

    def _tell(self, ticket: SharedTicket, place: Place) -> None:
        """Told when the queue moved, or when the estimate moved by a quarter (not as a clock
        counting down)."""
        told = ticket.place
        if (
            told is None
            or place.ahead != told.ahead
            or abs(place.seconds - told.seconds) > max(2, told.seconds / 4)
        ):
            ticket.place = place
            if ticket.on_wait is not None:
                ticket.on_wait(place)

    async def _sweep(self, session: AsyncSession) -> None:
        """Remove dead processes' rows, and finished rows beyond those the estimate reads."""
        stale = func.now() - timedelta(seconds=STALE)
        await session.execute(
            delete(ModelTurn).where(
                ModelTurn.endpoint == self.endpoint,
                ModelTurn.finished_at.is_(None),
                ModelTurn.seen_at < stale,
            )
        )
        kept = (
            select(ModelTurn.id)
            .where(ModelTurn.endpoint == self.endpoint, ModelTurn.finished_at.is_not(None))
            .order_by(ModelTurn.finished_at.desc())
            .limit(MEASURED)
        )
        await session.execute(
            delete(ModelTurn).where(
                ModelTurn.endpoint == self.endpoint,
                ModelTurn.finished_at.is_not(None),
                ModelTurn.id.not_in(kept.scalar_subquery()),
            )
        )

    async def _turn_seconds(self, session: AsyncSession) -> float:
        measured = (
            await session.scalars(
                select(ModelTurn.seconds)
                .where(ModelTurn.endpoint == self.endpoint, ModelTurn.seconds.is_not(None))
                .order_by(ModelTurn.finished_at.desc())
                .limit(MEASURED)
            )
        ).all()
        seconds = [s for s in measured if s is not None]
        return statistics.median(seconds) if seconds else DEFAULT_TURN_SECONDS

    async def turn_seconds(self) -> float:
        """The median of the endpoint's last finished turns (every process's)."""
        async with self.sessions() as session:
            return await self._turn_seconds(session)

    async def _finish(self, ticket: SharedTicket) -> None:
        """The turn is over: its row keeps how long it ran, for the estimates."""
        row, ticket.row = ticket.row, None
        if row is None:
            return
        self._held.discard(row)
        seconds = func.extract("epoch", func.now() - ModelTurn.admitted_at)
        with contextlib.suppress(*AWAY):
            async with self.sessions() as session:
                await session.execute(
                    update(ModelTurn)
                    .where(ModelTurn.id == row)
                    .values(finished_at=func.now(), seconds=seconds)
                )
                await self._notify(session)
                await session.commit()
        self._moving()

    async def _leave(self, ticket: SharedTicket) -> None:
        """A turn that ends without running (stopped, timed out, failed) leaves no row."""
        row, ticket.row = ticket.row, None
        if row is None:
            return
        self._held.discard(row)
        with contextlib.suppress(*AWAY):
            async with self.sessions() as session:
                await session.execute(delete(ModelTurn).where(ModelTurn.id == row))
                await self._notify(session)
                await session.commit()
        self._moving()

    async def _beating(self) -> None:
        """Touch this process's rows while it holds any, so no other process sweeps them."""
        while self._held:
            await asyncio.sleep(HEARTBEAT)
            try:
                async with self.sessions() as session:
                    await session.execute(
                        update(ModelTurn)
                        .where(ModelTurn.id.in_(list(self._held)))
                        .values(seen_at=func.now())
                    )
                    await session.commit()
            except Exception:  # the next beat tries again; a swept row is queued again
                log.debug("model queue heartbeat failed", exc_info=True)

    async def aclose(self) -> None:
        if self._listening is not None:
            self._listening.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._listening
        if self._listener is not None:
            with contextlib.suppress(Exception):
                await self._listener.close(timeout=2)
        if self._heartbeat is not None:
            self._heartbeat.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._heartbeat


def _estimate(ran: list[float], index: int, capacity: int, per_turn: float) -> float:
    """Seconds until the `index`-th waiting turn (0-based) starts: each running turn lasts the
    median turn from when it started, each turn ahead a median turn on the slot freed first."""
    free = sorted(max(per_turn - seconds, LONGER) for seconds in ran)
    free += [0.0] * (capacity - len(free))
    for _ in range(index):
        heapq.heapreplace(free, free[0] + per_turn)
    return free[0]


def _fair(rows: Sequence[Any]) -> list[int]:
    """The waiting rows (`admitted_at` NULL) in the order they are admitted: each party's
    first, then each party's second, and so on; within a round, the party served longest ago
    (or never) first, then the oldest row."""
    served: dict[str, datetime] = {}
    for row in rows:
        if row.admitted_at is not None:
            served[row.party] = max(row.admitted_at, served.get(row.party, row.admitted_at))
    never = datetime.min.replace(tzinfo=UTC)
    rounds: dict[str, int] = {}
    ranked = []
    for row in rows:
        if row.admitted_at is None:
            rounds[row.party] = rounds.get(row.party, 0) + 1
            ranked.append((rounds[row.party], served.get(row.party, never), row.id))
    return [row for *_, row in sorted(ranked)]
