"""Sending a reply so that it is never lost and never sent twice.

- Flood limits (RetryAfter) are waited out by PTB's AIORateLimiter, which repeats the request.
- Transient network errors (NetworkError, TimedOut) are retried here, with backoff.
- If Telegram rejects the HTML, the same text is sent plain.
- Progress is saved after every part, so an interrupted reply resumes with the parts not yet
  sent (after a restart, when Telegram redelivers the update).
"""

from __future__ import annotations

import asyncio
import logging
import warnings
from collections.abc import Awaitable, Callable, Sequence
from datetime import timedelta

from telegram import Bot, InlineKeyboardButton, InlineKeyboardMarkup
from telegram.constants import ParseMode
from telegram.error import BadRequest, Forbidden, NetworkError, RetryAfter, TimedOut
from telegram.warnings import PTBDeprecationWarning

from sommelier.bot.render import Part

log = logging.getLogger("sommelier.bot.delivery")

NETWORK_ATTEMPTS = 4
FLOOD_WAITS = 5
BACKOFF_SECONDS = 0.5

Progress = Callable[[int], Awaitable[None]]  # called with the number of parts sent so far


def markup(part: Part) -> InlineKeyboardMarkup | None:
    if not part.buttons:
        return None
    return InlineKeyboardMarkup(
        [[InlineKeyboardButton(b.text, callback_data=b.data) for b in row] for row in part.buttons]
    )


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
    attempt = floods = 0
    plain = False
    while True:
        attempt += 1
        try:
            if plain:
                await bot.send_message(chat_id, part.plain, reply_markup=markup(part))
            else:
                await bot.send_message(
                    chat_id, part.html, parse_mode=ParseMode.HTML, reply_markup=markup(part)
                )
            return
        except RetryAfter as exc:  # only when the rate limiter's own retries ran out
            floods += 1
            if floods > FLOOD_WAITS:
                raise DeliveryFailed(f"still flood-limited after {FLOOD_WAITS} waits") from exc
            attempt -= 1  # waiting out a flood limit is not a failed attempt
            await asyncio.sleep(_retry_after(exc))
        except BadRequest as exc:
            if not plain and "parse" in str(exc).lower():
                log.warning(
                    "telegram rejected the HTML; sending plain text",
                    extra={"event": "telegram_plain_fallback", "error": str(exc)},
                )
                plain = True
                continue
            raise
        except Forbidden:
            raise  # the person blocked the bot: nothing to retry
        except (TimedOut, NetworkError) as exc:
            if attempt >= NETWORK_ATTEMPTS:
                raise DeliveryFailed(str(exc)) from exc
            log.warning(
                "telegram send failed, retrying",
                extra={"event": "telegram_send_retry", "attempt": attempt, "error": str(exc)},
            )
            await asyncio.sleep(BACKOFF_SECONDS * 2 ** (attempt - 1))


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
