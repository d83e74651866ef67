"""What a person sees while their turn waits for the model: one message with their place and
an estimate ("⏳ 2 people ahead of you, about 40 s") and a Stop button, edited as the queue moves
(at most every few seconds) and deleted when the turn runs. "typing…" goes on meanwhile."""

from __future__ import annotations

import asyncio
import contextlib
import logging

from telegram import Bot, InlineKeyboardMarkup

from sommelier.agent.loop import StreamSink
from sommelier.agent.parsers import DisplayEvent, Phase, Waiting
from sommelier.bot.signing import keyboard
from sommelier.i18n.translations import N_, plural, translator

log = logging.getLogger("sommelier.bot.progress")

STOP = N_("⏹ Stop")
STOP_DATA = "s:stop"


def waiting_text(event: Waiting, language: str | None) -> str:
    text = plural(
        language,
        "⏳ {count} person ahead of you, about {seconds} s.",
        "⏳ {count} people ahead of you, about {seconds} s.",
        event.ahead,
    )
    return text.format(count=event.ahead, seconds=round(event.seconds))


def stop_button(language: str | None, token: str, chat_id: int) -> InlineKeyboardMarkup:
    return keyboard(token, chat_id, [[(translator(language)(STOP), STOP_DATA)]])


class QueueNotice:
    """A sink for a turn's queue events; the Telegram work happens in its own task."""

    def __init__(
        self,
        bot: Bot,
        chat_id: int,
        language: str | None,
        interval: float = 3.0,
        topic: int | None = None,  # a group's forum topic: the notice goes there
    ) -> None:
        self.bot = bot
        self.chat_id = chat_id
        self.topic = topic
        self.language = language
        self.interval = interval
        self.place: Waiting | None = None
        self.admitted = False
        self.message_id: int | None = None
        self._changed = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def emit(self, event: DisplayEvent) -> None:
        # Called from the queue and the model stream: never blocks, only records.
        if isinstance(event, Waiting):
            self.place = event
            self._changed.set()
        elif isinstance(event, Phase) and not self.admitted and self.place is not None:
            self.admitted = True
            self._changed.set()

    async def __aenter__(self) -> QueueNotice:
        self._task = asyncio.create_task(self._run())
        return self

    async def __aexit__(self, *_: object) -> None:
        self.admitted = True
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        await self._remove()

    async def _run(self) -> None:
        shown: Waiting | None = None
        while not self.admitted:
            await self._changed.wait()
            self._changed.clear()
            if self.admitted:
                break
            if self.place is not None and self.place != shown:
                shown = self.place
                await self._show(shown)
            await asyncio.sleep(self.interval)  # Telegram's edit rate: a few seconds apart
        await self._remove()

    async def _show(self, place: Waiting) -> None:
        text = waiting_text(place, self.language)
        try:
            if self.message_id is None:
                sent = await self.bot.send_message(
                    self.chat_id,
                    text,
                    reply_markup=stop_button(self.language, self.bot.token, self.chat_id),
                    message_thread_id=self.topic,
                )
                self.message_id = sent.message_id
            else:
                await self.bot.edit_message_text(
                    text,
                    chat_id=self.chat_id,
                    message_id=self.message_id,
                    reply_markup=stop_button(self.language, self.bot.token, self.chat_id),
                )
        except Exception as exc:  # a notice is a courtesy: never let it fail the turn
            log.info(
                "queue notice not shown",
                extra={"event": "queue_notice_failed", "error": str(exc)},
            )

    async def _remove(self) -> None:
        message_id, self.message_id = self.message_id, None
        if message_id is None:
            return
        with contextlib.suppress(Exception):
            await self.bot.delete_message(self.chat_id, message_id)


class Fanout:
    """One sink to several: the live draft and the queue notice."""

    def __init__(self, *sinks: StreamSink | None) -> None:
        self.sinks = [s for s in sinks if s is not None]

    def emit(self, event: DisplayEvent) -> None:
        for sink in self.sinks:
            sink.emit(event)
