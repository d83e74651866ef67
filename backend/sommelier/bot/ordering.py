"""Per-chat ordering: updates of one chat run strictly one at a time, in arrival order;
different chats run concurrently, at most `max_concurrent_updates` at once.

A chat's waiting updates wait *outside* the concurrency limit: an update takes a slot only when
it is its chat's turn, so one busy chat never holds slots that other chats could use. PTB's own
semaphore is set out of the way for that reason; the limit is this processor's.

`admit` runs on arrival, before any queueing: an update it refuses (a person over the rate
limit) is answered at once instead of waiting behind that chat's earlier updates. An `urgent`
update (Stop, /stop) also runs at once: it must reach the turn it stops, not wait behind it.
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
    ) -> None:
        super().__init__(UNBOUNDED)
        self.limit = max_concurrent_updates
        self._slots = asyncio.Semaphore(max_concurrent_updates)
        self._tails: dict[int, asyncio.Future[None]] = {}
        self._admit = admit or (lambda _: True)
        self._urgent = urgent or (lambda _: False)

    async def do_process_update(self, update: object, coroutine: Awaitable[Any]) -> None:
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
