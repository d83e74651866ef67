"""Inline mode: "@bot red under 20 for pizza" in any chat shows catalog wines as results.

The words are read as a turn's words are (any covered language, budgets, what is turned
down), and the catalog is searched directly: no model call, so results come in well under a
second. Each result sends a wine card, with a "Why this wine?" button that opens a private chat
with the bot on that wine (a /start deep link). Telegram caches the answer per query for
CACHE_SECONDS, the same for everyone (the results depend on the words alone).
"""

from __future__ import annotations

import logging

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
DEEP_LINK = "why_"  # /start why_<wine id>


def wine_of_start(argument: str) -> str | None:
    """The wine id a "Why this wine?" deep link carries."""
    if not argument.startswith(DEEP_LINK):
        return None
    return argument[len(DEEP_LINK) :] or None


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
            link = f"https://t.me/{me}?start={DEEP_LINK}{card.wine_id}"
            results.append(
                InlineQueryResultArticle(
                    id=card.wine_id[:64],
                    title=card.name,
                    description=" · ".join(facts[1:]) or title,
                    input_message_content=InputTextMessageContent(
                        part.html, parse_mode=ParseMode.HTML
                    ),
                    reply_markup=InlineKeyboardMarkup([[InlineKeyboardButton(t(WHY), url=link)]]),
                )
            )
        await query.answer(results, cache_time=CACHE_SECONDS, is_personal=False)

    @staticmethod
    async def chosen(update: Update, _: ContextTypes.DEFAULT_TYPE) -> None:
        """Which result a person sent (when inline feedback is on in BotFather): for operators."""
        chosen = update.chosen_inline_result
        if chosen is not None:
            log.info(
                "inline result chosen",
                extra={"event": "inline_chosen", "wine_id": chosen.result_id},
            )
