"""The wines of a reply side by side (issue 49, item 4): "⚖️ Compare" under a recommendation of
two wines or more sends a table of their catalog facts, no model call.

The table is a Bot API 10.1 rich message (`sendRichMessage`, HTML with a `<table>`), which
python-telegram-bot 22.8 does not know: it goes through `Bot.do_api_request`. Its header is
icons, so it needs no translation; the cells are the cards' own facts, in the person's
language. A chat or client that refuses rich messages gets the same facts as ordinary cards
(HTML parse mode, never raw table markup), and the process remembers it: a refusal never
loses the reply.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from html import escape

from telegram import Bot
from telegram.error import TelegramError

from sommelier.bot.delivery import deliver
from sommelier.bot.render import Part, card_parts
from sommelier.chat.labels import rating_label
from sommelier.chat.service import Card

log = logging.getLogger("sommelier.bot")

HEADER = ("🍷", "🏠", "📍", "🍇", "🎨", "💶", "★")


def table_html(cards: Sequence[Card], language: str) -> str:
    """The rich message: one row per wine, one column per fact."""

    def row(cells: Sequence[str], tag: str) -> str:
        return "<tr>" + "".join(f"<{tag}>{escape(c)}</{tag}>" for c in cells) + "</tr>"

    rows = [row(HEADER, "th")]
    for card in cards:
        rating = rating_label(card.rating, card.rating_count, language)
        facts = (card.name, card.producer, card.place, ", ".join(card.grapes), card.style)
        rows.append(row([*(f or "" for f in facts), card.price or "", rating or ""], "td"))
    return "<table>" + "".join(rows) + "</table>"


class Comparisons:
    def __init__(self) -> None:
        self.refused: set[int] = set()  # chats where a rich message was refused

    async def send(self, bot: Bot, chat_id: int, cards: Sequence[Card], language: str) -> None:
        if chat_id not in self.refused:
            message = {"html": table_html(cards, language)}
            try:
                await bot.do_api_request(
                    "sendRichMessage", api_kwargs={"chat_id": chat_id, "rich_message": message}
                )
                return
            except TelegramError as exc:
                self.refused.add(chat_id)
                log.info(
                    "rich message refused; the comparison goes as cards",
                    extra={"event": "rich_message_refused", "error": str(exc)},
                )
        parts: list[Part] = []
        for index, card in enumerate(cards, 1):
            parts += card_parts(index, card, language=language)
        await deliver(bot, chat_id, parts)
