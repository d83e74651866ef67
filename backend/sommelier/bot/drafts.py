"""Live drafts in private chats: streamed text goes to a Telegram message draft
(sendMessageDraft), updated at most about once per interval. Only the validated reply becomes
real messages; a repair clears the draft (Telegram then shows its "Thinking…" placeholder) and
"typing…" comes back."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging

from telegram import Bot
from telegram.constants import ChatAction

from sommelier.agent.parsers import Discard, DisplayEvent, TextDelta
from sommelier.bot.render import MESSAGE_LIMIT

log = logging.getLogger("sommelier.bot.drafts")

_draft_ids = itertools.count(1)


class DraftStreamer:
    def __init__(self, bot: Bot, chat_id: int, interval: float = 1.0) -> None:
        self.bot = bot
        self.chat_id = chat_id
        self.interval = interval
        self.draft_id = next(_draft_ids)
        self.text = ""
        self._dirty = False
        self._cleared = False
        self._task: asyncio.Task[None] | None = None

    def emit(self, event: DisplayEvent) -> None:
        # Called from inside the model stream: never blocks, only records.
        if isinstance(event, TextDelta):
            self.text += event.text
            self._dirty = True
        elif isinstance(event, Discard):
            self.text = ""
            self._cleared = True
            self._dirty = False

    async def __aenter__(self) -> DraftStreamer:
        self._task = asyncio.create_task(self._run())
        return self

    async def __aexit__(self, *_: object) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self.interval)
            try:
                if self._cleared:
                    # A discarded attempt: clear the draft and show "typing…" before any text
                    # of the next attempt (that waits for the next tick).
                    self._cleared = False
                    await self.bot.send_message_draft(self.chat_id, self.draft_id, "")
                    await self.bot.send_chat_action(self.chat_id, ChatAction.TYPING)
                elif self._dirty:
                    self._dirty = False
                    # can_stop: Telegram shows its own Stop on the draft (Bot API 9.x; PTB 22
                    # has no parameter for it yet); a press is handled like /stop.
                    await self.bot.send_message_draft(
                        self.chat_id,
                        self.draft_id,
                        self.text[:MESSAGE_LIMIT],
                        api_kwargs={"can_stop": True},
                    )
            except Exception as exc:  # a draft is a preview: never let it fail the turn
                log.info(
                    "draft not updated",
                    extra={"event": "telegram_draft_failed", "error": str(exc)},
                )
