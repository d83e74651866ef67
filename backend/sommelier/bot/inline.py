"""Inline mode: "@bot red under 20 for pizza" in any chat shows catalog wines as results.

The words are read as a turn's words are (any covered language, budgets, what is turned
down), and the catalog is searched directly: no model call, so results come in well under a
second. Each result sends a wine card, with a "Why this wine?" button that opens a private chat
with the bot on that wine (a /start deep link). Telegram caches the answer per query for
CACHE_SECONDS per person: the wines depend on the words alone, but the cards' labels are in
the person's language, so one person's cached answer is not shown to another.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import logging
import re

from telegram import (
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    InlineQueryResultArticle,
    InputTextMessageContent,
    Update,
)
from telegram.constants import ParseMode
from telegram.ext import ContextTypes

from sommelier.bot.render import card_lines, card_parts
from sommelier.chat.service import ChatService
from sommelier.i18n.languages import base
from sommelier.i18n.translations import N_, translator

log = logging.getLogger("sommelier.bot")

RESULTS = 8
CACHE_SECONDS = 60
WHY = N_("🍷 Why this wine?")
DEEP_LINK, ENCODED = "why_", "whyb_"  # /start why_<wine id>, or whyb_<base64url of the id>
# Telegram's start parameter: at most 64 of these characters.
START_PARAMETER = re.compile(r"[A-Za-z0-9_-]{1,64}")


def start_of(wine_id: str) -> str | None:
    """The /start parameter of a "Why this wine?" link: the id as it is when Telegram allows
    its characters, else base64url; None when even that is too long (no button then)."""
    plain = DEEP_LINK + wine_id
    if START_PARAMETER.fullmatch(plain):
        return plain
    encoded = ENCODED + base64.urlsafe_b64encode(wine_id.encode()).decode().rstrip("=")
    return encoded if START_PARAMETER.fullmatch(encoded) else None


def wine_of_start(argument: str) -> str | None:
    """The wine id a "Why this wine?" deep link carries."""
    if argument.startswith(ENCODED):
        data = argument[len(ENCODED) :]
        with contextlib.suppress(ValueError):
            return base64.urlsafe_b64decode(data + "=" * (-len(data) % 4)).decode() or None
        return None
    if argument.startswith(DEEP_LINK):
        return argument[len(DEEP_LINK) :] or None
    return None


def result_id(wine_id: str) -> str:
    """An inline result's id: the wine's, or its digest when longer than Telegram's 64 bytes."""
    if len(wine_id.encode()) <= 64:
        return wine_id
    return hashlib.sha256(wine_id.encode()).hexdigest()


class InlineSearch:
    def __init__(self, chat: ChatService) -> None:
        self.chat = chat

    async def __call__(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        query = update.inline_query
        if query is None:
            return
        language = base(query.from_user.language_code) or "en"
        cards = await self.chat.cards_for_words(query.query.strip(), language, RESULTS)
        t, me = translator(language), context.bot.username
        results = []
        for card in cards:
            title, facts = card_lines(None, card, language)
            (part, *_) = card_parts(None, card, language=language)
            start = start_of(card.wine_id)
            why = [[InlineKeyboardButton(t(WHY), url=f"https://t.me/{me}?start={start}")]]
            results.append(
                InlineQueryResultArticle(
                    id=result_id(card.wine_id),
                    title=card.name,
                    description=" · ".join(facts[1:]) or title,
                    input_message_content=InputTextMessageContent(
                        part.html, parse_mode=ParseMode.HTML
                    ),
                    reply_markup=InlineKeyboardMarkup(why) if start else None,
                )
            )
        await query.answer(results, cache_time=CACHE_SECONDS, is_personal=True)

    @staticmethod
    async def chosen(update: Update, _: ContextTypes.DEFAULT_TYPE) -> None:
        """Which result a person sent (when inline feedback is on in BotFather): for operators."""
        chosen = update.chosen_inline_result
        if chosen is not None:
            log.info(
                "inline result chosen",
                extra={"event": "inline_chosen", "wine_id": chosen.result_id},
            )
