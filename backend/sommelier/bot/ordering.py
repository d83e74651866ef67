"""Per-chat ordering: updates of one chat run strictly one at a time, in arrival order;
different chats run concurrently (bounded by max_concurrent_updates)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any

from telegram import Update
from telegram.ext import BaseUpdateProcessor


def chat_key(update: object) -> int | None:
    if isinstance(update, Update) and update.effective_chat is not None:
        return update.effective_chat.id
    return None


class PerChatUpdateProcessor(BaseUpdateProcessor):
    def __init__(self, max_concurrent_updates: int) -> None:
        super().__init__(max_concurrent_updates)
        self._tails: dict[int, asyncio.Future[None]] = {}

    async def do_process_update(self, update: object, coroutine: Awaitable[Any]) -> None:
        key = chat_key(update)
        if key is None:
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
            await coroutine
        finally:
            done.set_result(None)
            if self._tails.get(key) is done:
                del self._tails[key]

    async def initialize(self) -> None:
        return None

    async def shutdown(self) -> None:
        return None
