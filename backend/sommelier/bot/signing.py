"""Button data only this bot can have made, for the chat it was sent to (issue 46, item 6).

Callback data comes back from the person's client, which may send anything: a 👍 on a reply id
that is another chat's, or an id past the database's range. Every button the bot sends carries
a short HMAC of its data and its chat, keyed by the bot's token (which every process of one bot
has, the receiver and each worker), so a press whose data was not made for that chat is
refused before anything reads it. The chat checks behind it (db/turns.py `reply_wine`,
db/preferences.py `rated_reply`) stay: they are what holds if the token leaks.

48 bits of tag: guessing one takes ~10¹⁴ presses, against a rate limit of a few a second.
The tag adds 9 bytes; the longest data the bot makes stays far under Telegram's 64.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from collections.abc import Sequence

from telegram import InlineKeyboardButton, InlineKeyboardMarkup

from sommelier.db.turns import MAX_ROW_ID

SEPARATOR = "~"
TAG_BYTES = 6
LIMIT = 64  # bytes of callback data Telegram keeps
ROOM = LIMIT - len(SEPARATOR) - 8  # bytes left for the data: 8 characters of base64 tag


def _key(token: str) -> bytes:
    return hmac.new(token.encode(), b"sommelier button data", hashlib.sha256).digest()


def _tag(token: str, chat_id: int, data: str) -> str:
    mac = hmac.new(_key(token), f"{chat_id}\n{data}".encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(mac[:TAG_BYTES]).decode()


def sign(token: str, chat_id: int, data: str) -> str:
    signed = f"{data}{SEPARATOR}{_tag(token, chat_id, data)}"
    if len(signed.encode()) > LIMIT:
        raise ValueError(f"button data over {LIMIT} bytes once signed: {data!r}")
    return signed


def verified(token: str, chat_id: int | None, signed: str | None) -> str | None:
    """The data a button was made with, if this bot made it for this chat; else None."""
    if chat_id is None or not signed:
        return None
    data, separator, tag = signed.rpartition(SEPARATOR)
    if not separator or not hmac.compare_digest(tag.encode(), _tag(token, chat_id, data).encode()):
        return None
    return data


def keyboard(
    token: str, chat_id: int, rows: Sequence[Sequence[tuple[str, str]]]
) -> InlineKeyboardMarkup:
    """Buttons (text, data) for one chat, their data signed."""
    return InlineKeyboardMarkup(
        [
            [
                InlineKeyboardButton(text, callback_data=sign(token, chat_id, data))
                for text, data in row
            ]
            for row in rows
        ]
    )


def numbers(data: str) -> tuple[int | None, int | None]:
    """The two numbers of a button's data ("o:<update>:<card>", "st:<event>:<stars>",
    "cm:<update>:<card>"); None for what is not one (a row id of 2^31 or more is no row, and
    fails PostgreSQL's integer)."""
    parts = data.split(":")
    found = [int(p) if p.isdigit() and int(p) < MAX_ROW_ID else None for p in parts[1:]]
    return (found[0], found[1]) if len(found) == 2 else (None, None)
