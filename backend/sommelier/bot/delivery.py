"""Sending a reply so that it is never lost and never sent twice.

- Flood limits (RetryAfter) are waited out by PTB's AIORateLimiter, which repeats the request.
- A network error (NetworkError, TimedOut) fails the send: the chat's courier sends the rest
  again later, in order (bot/handlers.py), the one place a send is retried.
- If Telegram rejects the HTML, the same text is sent plain.
- Progress is saved after every part, so an interrupted reply resumes with the parts not yet
  sent (after a restart, when Telegram redelivers the update).
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Awaitable, Callable, Sequence
from datetime import timedelta

from telegram import Bot, InlineKeyboardMarkup, ReplyParameters
from telegram.constants import ParseMode
from telegram.error import BadRequest, NetworkError, RetryAfter, TimedOut
from telegram.warnings import PTBDeprecationWarning

from sommelier.bot.render import Part
from sommelier.bot.signing import keyboard

log = logging.getLogger("sommelier.bot.delivery")


Progress = Callable[[int], Awaitable[None]]  # called with the number of parts sent so far


def markup(part: Part, token: str, chat_id: int) -> InlineKeyboardMarkup | None:
    """A part's buttons, their data signed for this chat (bot/signing.py)."""
    if not part.buttons:
        return None
    return keyboard(token, chat_id, [[(b.text, b.data) for b in row] for row in part.buttons])


def _retry_after(exc: RetryAfter) -> float:
    # PTB 22 warns that `retry_after` will become a timedelta; _seconds reads either form.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PTBDeprecationWarning)
        return _seconds(exc.retry_after)


def _seconds(retry_after: float | timedelta) -> float:
    """PTB 22 reports RetryAfter as seconds or as a timedelta, depending on its settings."""
    if isinstance(retry_after, timedelta):
        return retry_after.total_seconds()
    return float(retry_after)


class DeliveryFailed(Exception):
    """A part could not be delivered after every retry; the rest is kept for a resume."""


async def send_part(bot: Bot, chat_id: int, part: Part) -> None:
    """One message. Flood limits are PTB's rate limiter's to wait out; a network error or a
    limit it gave up on is DeliveryFailed, for the chat's courier (handlers.py) to send again
    later, in order: the one retry policy of a send."""
    try:
        await _send(bot, chat_id, part, plain=False)
    except BadRequest as exc:
        if "parse" not in str(exc).lower():
            raise
        log.warning(
            "telegram rejected the HTML; sending plain text",
            extra={"event": "telegram_plain_fallback", "error": str(exc)},
        )
        await _send(bot, chat_id, part, plain=True)


async def _send(bot: Bot, chat_id: int, part: Part, *, plain: bool) -> None:
    # A quoted message deleted meanwhile must not cost the reply.
    quote = (
        ReplyParameters(part.reply_to, allow_sending_without_reply=True)
        if part.reply_to is not None
        else None
    )
    try:
        await bot.send_message(
            chat_id,
            part.plain if plain else part.html,
            parse_mode=None if plain else ParseMode.HTML,
            reply_markup=markup(part, bot.token, chat_id),
            reply_parameters=quote,
            message_thread_id=part.topic,
        )
    except RetryAfter as exc:  # the rate limiter's own waits ran out
        raise DeliveryFailed(f"flood-limited for {_retry_after(exc):g} s more") from exc
    except (TimedOut, NetworkError) as exc:
        if isinstance(exc, BadRequest):
            raise  # BadRequest is a NetworkError in PTB: the request itself is wrong
        raise DeliveryFailed(str(exc)) from exc


async def deliver(
    bot: Bot,
    chat_id: int,
    parts: Sequence[Part],
    *,
    already_sent: int = 0,
    progress: Progress | None = None,
) -> int:
    """Send parts[already_sent:], in order; returns how many parts are sent in all."""
    sent = already_sent
    for part in parts[already_sent:]:
        await send_part(bot, chat_id, part)
        sent += 1
        if progress is not None:
            await progress(sent)
    return sent
