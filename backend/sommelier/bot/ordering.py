"""Per-chat ordering: updates of one chat run strictly one at a time, in arrival order;
different chats run concurrently, at most `max_concurrent_updates` at once.

A chat's waiting updates wait *outside* the concurrency limit: an update takes a slot only when
it is its chat's turn, so one busy chat never holds slots that other chats could use. PTB's own
semaphore is set out of the way for that reason; the limit is this processor's.

`admit` runs on arrival, before any queueing: an update it refuses (a person over the rate
limit) is answered at once instead of waiting behind that chat's earlier updates. An `urgent`
update (Stop, /stop) also runs at once: it must reach the turn it stops, not wait behind it.

`HeldUpdates` is the queueing receiver's update queue (bot/queue.py): Telegram's update is
confirmed (the next getUpdates offset, the webhook's 200) only once it is settled, that is
queued in the database or answered, so an update a receiver could not queue is Telegram's to
send again, not lost with the process.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from telegram import Update
from telegram.ext import BaseUpdateProcessor

UNBOUNDED = 1_000_000  # PTB's semaphore: never the one that binds


def chat_key(update: object) -> int | None:
    if isinstance(update, Update) and update.effective_chat is not None:
        return update.effective_chat.id
    return None


class PerChatUpdateProcessor(BaseUpdateProcessor):
    def __init__(
        self,
        max_concurrent_updates: int,
        admit: Callable[[object], bool] | None = None,
        urgent: Callable[[object], bool] | None = None,
        settled: Callable[[object], None] | None = None,
    ) -> None:
        super().__init__(UNBOUNDED)
        self.limit = max_concurrent_updates
        self._slots = asyncio.Semaphore(max_concurrent_updates)
        self._tails: dict[int, asyncio.Future[None]] = {}
        self._admit = admit or (lambda _: True)
        self._urgent = urgent or (lambda _: False)
        self._settled = settled or (lambda _: None)

    async def do_process_update(self, update: object, coroutine: Awaitable[Any]) -> None:
        try:
            await self._in_turn(update, coroutine)
        finally:
            self._settled(update)

    async def _in_turn(self, update: object, coroutine: Awaitable[Any]) -> None:
        key = chat_key(update)
        if key is None or self._urgent(update) or not self._admit(update):
            async with self._slots:
                await coroutine
            return
        # Chain this update behind the previous one of the same chat. asyncio runs the
        # processing tasks in arrival order, so the chain preserves that order.
        previous = self._tails.get(key)
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._tails[key] = done
        try:
            if previous is not None:
                await asyncio.shield(previous)
            async with self._slots:
                await coroutine
        finally:
            done.set_result(None)
            if self._tails.get(key) is done:
                del self._tails[key]

    async def initialize(self) -> None:
        return None

    async def shutdown(self) -> None:
        return None


class HeldUpdates(asyncio.Queue[object]):
    """PTB's update queue, whose `put` returns once the update is settled. PTB's updater puts
    a batch's updates one by one and confirms them with its next getUpdates; its webhook
    answers 200 when `put` returns. Both now wait for the update to be queued."""

    def __init__(self) -> None:
        super().__init__()
        self._unsettled: dict[int, asyncio.Future[None]] = {}

    async def put(self, item: object) -> None:
        if not isinstance(item, Update):
            await super().put(item)
            return
        settled = asyncio.get_running_loop().create_future()
        self._unsettled[id(item)] = settled
        try:
            await super().put(item)
            await settled
        finally:
            self._unsettled.pop(id(item), None)

    def settle(self, item: object) -> None:
        settled = self._unsettled.get(id(item))
        if settled is not None and not settled.done():
            settled.set_result(None)
