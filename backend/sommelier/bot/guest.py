"""Guest mode (Bot API 10.0): a person @mentions the bot in a chat it is not a member of and
gets one answer there (`Update.guest_message`, answered by `answerGuestQuery`).

Telegram's window for the answer is short, so the answer is the catalog's own, read from the
person's words as inline mode reads them (bot/inline.py): no model call, nothing stored, no
taste profile (that is used in the person's private chat only). Each card carries the
"Why this wine?" link into the private chat, where the full sommelier answers. A guest message
never reaches the text handler: it would run a stored turn and send to a chat the bot is not in.
"""

from __future__ import annotations

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
from telegram.error import TelegramError
from telegram.ext import ContextTypes

from sommelier.bot.inline import WHY, start_of
from sommelier.bot.render import MESSAGE_LIMIT, card_parts
from sommelier.chat.guard import STEER
from sommelier.chat.service import Card, ChatService
from sommelier.i18n.languages import base
from sommelier.i18n.translations import translator

log = logging.getLogger("sommelier.bot")

CARDS = 3  # one message in someone else's chat: a few wines, not a list


class GuestAnswers:
    def __init__(self, chat: ChatService) -> None:
        self.chat = chat

    async def __call__(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        message = update.guest_message
        if message is None or not message.guest_query_id:
            return
        caller = message.guest_bot_caller_user or message.from_user
        language = base(caller.language_code if caller else None) or "en"
        words = without_mention(message.text or message.caption or "", context.bot.username)
        cards = await self.chat.cards_for_words(words, language, CARDS) if words else []
        result = guest_result(cards, language, context.bot.username)
        try:
            await context.bot.answer_guest_query(message.guest_query_id, result)
        except TelegramError as exc:  # the window closed first: nobody waits for it any more
            log.info(
                "guest query not answered: %s",
                exc,
                extra={"event": "guest_query_unanswered", "error": str(exc)},
            )
            return
        log.info("guest query answered", extra={"event": "guest_answered", "wines": len(cards)})


def guest_result(
    cards: list[Card], language: str, username: str | None
) -> InlineQueryResultArticle:
    """The one message a guest query gets: a few cards with the link into the private chat,
    or what the bot is for when the words found no wine."""
    t = translator(language)
    if cards:
        parts = [card_parts(i, card, language=language)[0].html for i, card in enumerate(cards, 1)]
        html, title = "\n\n".join(parts), ", ".join(card.name for card in cards)
    else:
        html = title = t(STEER)
    start = start_of(cards[0].wine_id) if cards else None
    why = InlineKeyboardButton(t(WHY), url=f"https://t.me/{username}?start={start}")
    return InlineQueryResultArticle(
        id="guest",
        title=title[:100],
        input_message_content=InputTextMessageContent(
            html[:MESSAGE_LIMIT], parse_mode=ParseMode.HTML
        ),
        reply_markup=InlineKeyboardMarkup([[why]]) if start else None,
    )


def without_mention(text: str, username: str | None) -> str:
    """The person's words without the @mention that summoned the bot."""
    if username:
        text = re.sub(rf"@{re.escape(username)}\b", " ", text, flags=re.IGNORECASE)
    return " ".join(text.split())
