"""Turns take turns at a model endpoint: at most `capacity` run at once (what the server
serves in parallel: 1 for llama-cpp-python's server, llama-server's slots, a setting), and the
rest wait, admitted round-robin across parties (chats), so one chat's three queued turns do not
hold everyone else back.

A waiting turn knows its place and an estimate from the turns measured so far ("2 ahead of
you, about 40 s"), told again whenever the queue moves; time in the queue is not the turn's
(its deadline starts when it is admitted), and a separate wait limit ends a wait politely.
A turn whose model stream was cut gives its place up and queues again (`rejoin`), so the retry
does not cut the next person's answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import statistics
import time
from collections import OrderedDict, deque
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol

DEFAULT_TURN_SECONDS = 15.0  # the estimate before any turn was measured
MEASURED = 20  # turns the estimate is the median of


@dataclass(frozen=True, slots=True)
class Place:
    """Where a waiting turn stands: how many turns run before it, and about how long that is."""

    ahead: int
    seconds: float


class QueueTimeout(Exception):
    """A turn waited longer than the wait limit."""


@dataclass(eq=False)
class Ticket:
    party: str
    on_wait: Callable[[Place], None] | None = None
    admitted: asyncio.Future[None] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )
    place: Place | None = None


class EndpointQueue(Protocol):
    """What a chat service needs of a model endpoint's queue: this process's (`Admission`) or
    every process's (chat/model_queue.py)."""

    capacity: int

    def turn(
        self, party: str, on_wait: Callable[[Place], None] | None = None
    ) -> contextlib.AbstractAsyncContextManager[Any]: ...

    async def rejoin(self, ticket: Any) -> None: ...


class Admission:
    def __init__(
        self,
        capacity: int = 1,
        wait_limit: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.capacity = max(1, capacity)
        self.wait_limit = wait_limit
        self.clock = clock
        self.running = 0
        self._queues: OrderedDict[str, deque[Ticket]] = OrderedDict()
        self._rotation: list[str] = []  # parties in the order they first came
        self._last: str | None = None  # the party admitted last (where the rotation goes on)
        self._durations: deque[float] = deque(maxlen=MEASURED)

    @property
    def waiting(self) -> int:
        return sum(len(q) for q in self._queues.values())

    def turn_seconds(self) -> float:
        return statistics.median(self._durations) if self._durations else DEFAULT_TURN_SECONDS

    @asynccontextmanager
    async def turn(
        self, party: str, on_wait: Callable[[Place], None] | None = None
    ) -> AsyncIterator[Ticket]:
        """Hold a place at the endpoint for one turn; wait (fairly) for it first."""
        ticket = Ticket(party, on_wait)
        await self._acquire(ticket)
        started = self.clock()
        try:
            yield ticket
        finally:
            self._durations.append(self.clock() - started)
            self._release()

    async def rejoin(self, ticket: Ticket) -> None:
        """Give the place up and queue again at the back of the rotation (a retried stream)."""
        self._release()
        fresh = Ticket(ticket.party, ticket.on_wait)
        await self._acquire(fresh)

    async def _acquire(self, ticket: Ticket) -> None:
        if ticket.party not in self._rotation:
            self._rotation.append(ticket.party)
        if self.running < self.capacity and not self.waiting:
            self.running += 1
            self._served(ticket.party)
            return
        self._queues.setdefault(ticket.party, deque()).append(ticket)
        self._admit()
        try:
            async with asyncio.timeout(self.wait_limit):
                await asyncio.shield(ticket.admitted)
        except BaseException as exc:
            if ticket.admitted.done() and not ticket.admitted.cancelled():
                self._release()  # admitted as the wait ended: give the place back
            else:
                self._leave(ticket)
            if isinstance(exc, TimeoutError):
                raise QueueTimeout(f"waited over {self.wait_limit:g} s") from None
            raise

    def _release(self) -> None:
        self.running -= 1
        self._admit()

    def _admit(self) -> None:
        while self.running < self.capacity:
            ticket = self._next()
            if ticket is None:
                break
            self.running += 1
            ticket.admitted.set_result(None)
        self._tell()

    def _next(self) -> Ticket | None:
        order = self._order()
        if not order:
            return None
        ticket = order[0]
        self._take(ticket)
        self._served(ticket.party)
        return ticket

    def _served(self, party: str) -> None:
        """The rotation goes on after `party`; parties with nothing waiting leave it."""
        self._last = party
        self._rotation = [p for p in self._rotation if p == party or p in self._queues]

    def _take(self, ticket: Ticket) -> None:
        queue = self._queues[ticket.party]
        queue.remove(ticket)
        if not queue:
            del self._queues[ticket.party]

    def _leave(self, ticket: Ticket) -> None:
        if ticket.party in self._queues and ticket in self._queues[ticket.party]:
            self._take(ticket)
            self._tell()

    def _order(self) -> list[Ticket]:
        """Waiting turns in the order they will be admitted: one per party per round, the
        rotation going on after the party admitted last."""
        rotation = self._rotation
        if self._last in rotation:
            start = rotation.index(self._last) + 1
            rotation = rotation[start:] + rotation[:start]
        rounds = [list(self._queues[p]) for p in rotation if p in self._queues]
        order: list[Ticket] = []
        while any(rounds):
            for queue in rounds:
                if queue:
                    order.append(queue.pop(0))
        return order

    def _tell(self) -> None:
        """Each waiting turn hears its (new) place."""
        per_turn = self.turn_seconds()
        for index, ticket in enumerate(self._order()):
            ahead = self.running + index
            seconds = (index // self.capacity + 1) * per_turn
            place = Place(ahead, round(seconds))
            if place != ticket.place:
                ticket.place = place
                if ticket.on_wait is not None:
                    ticket.on_wait(place)
