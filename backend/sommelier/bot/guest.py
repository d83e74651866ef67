"""Guest mode (Bot API 10.0): a person @mentions the bot in a chat it is not a member of and
gets one answer there (`Update.guest_message`, answered by `answerGuestQuery`).

Telegram's window for the answer is short, so the first answer is the catalog's own, read from
the person's words as inline mode reads them (bot/inline.py), sent at once. Then the model
answers the message (`ChatService.guest_turn`: no history, no taste, nothing stored) and that
answer replaces the first through the sent message's `inline_message_id`; when the model cannot
answer (busy, unreachable, the person over the rate limit) the catalog's answer stays. The
"Why this wine?" link leads into the private chat, where the person's taste is used. A guest
message never reaches the text handler: it would run a stored turn and send to a chat the bot
is not in.
"""

from __future__ import annotations

import logging
import re

from telegram import (
    Bot,
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
from sommelier.bot.limits import RateLimiter
from sommelier.bot.render import MESSAGE_LIMIT, card_parts, render_reply
from sommelier.chat.guard import STEER
from sommelier.chat.service import Card, ChatService, TurnReply
from sommelier.i18n.languages import base
from sommelier.i18n.translations import translator

log = logging.getLogger("sommelier.bot")

CARDS = 3  # one message in someone else's chat: a few wines, not a list


class GuestAnswers:
    def __init__(self, chat: ChatService, limiter: RateLimiter) -> None:
        self.chat = chat
        self.limiter = limiter  # the person's own: a guest answer costs a model turn too

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
            sent = await context.bot.answer_guest_query(message.guest_query_id, result)
        except TelegramError as exc:  # the window closed first: nobody waits for it any more
            log.info(
                "guest query not answered: %s",
                exc,
                extra={"event": "guest_query_unanswered", "error": str(exc)},
            )
            return
        log.info("guest query answered", extra={"event": "guest_answered", "wines": len(cards)})
        if not words or (caller is not None and self.limiter.check(caller.id)):
            return  # the catalog's answer stands
        who = f"telegram:guest:{caller.id if caller else message.guest_query_id}"
        reply = await self.chat.guest_turn(words, language, who)
        await _replace(context.bot, sent.inline_message_id, reply, context.bot.username)


async def _replace(bot: Bot, message_id: str, reply: TurnReply, username: str | None) -> None:
    """The model's answer in place of the catalog's; a failed turn leaves that one."""
    if not reply.ok:
        log.info(
            "guest answer kept from the catalog: %s",
            reply.status,
            extra={"event": "guest_not_refined", "status": str(reply.status)},
        )
        return
    # Its closing invites a follow-up, which a guest chat cannot have: the message comes alone
    # (the "Why this wine?" link leads to the chat that can).
    reply.closing = ""
    try:
        await bot.edit_message_text(
            one_message(reply),
            inline_message_id=message_id,
            parse_mode=ParseMode.HTML,
            reply_markup=why_link(reply.cards, reply.language, username),
        )
    except TelegramError as exc:  # deleted meanwhile, or the chat went away
        log.info(
            "guest answer not replaced: %s",
            exc,
            extra={"event": "guest_not_refined", "error": str(exc)},
        )
        return
    log.info("guest answer replaced", extra={"event": "guest_refined", "wines": len(reply.cards)})


def one_message(reply: TurnReply) -> str:
    """A reply as one message: its parts as the chat shows them, without their buttons (which
    act on a stored reply), as many whole parts as fit."""
    text = ""
    for part in render_reply(reply):
        joined = f"{text}\n\n{part.html}" if text else part.html
        if len(joined) > MESSAGE_LIMIT:
            break
        text = joined
    return text


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
    return InlineQueryResultArticle(
        id="guest",
        title=title[:100],
        input_message_content=InputTextMessageContent(
            html[:MESSAGE_LIMIT], parse_mode=ParseMode.HTML
        ),
        reply_markup=why_link(cards, language, username),
    )


def why_link(cards: list[Card], language: str, username: str | None) -> InlineKeyboardMarkup | None:
    """ "Why this wine?" into the private chat, about the first wine; none without a wine."""
    if not cards:
        return None
    url = f"https://t.me/{username}?start={start_of(cards[0].wine_id)}"
    return InlineKeyboardMarkup([[InlineKeyboardButton(translator(language)(WHY), url=url)]])


def without_mention(text: str, username: str | None) -> str:
    """The person's words without the @mention that summoned the bot."""
    if username:
        text = re.sub(rf"@{re.escape(username)}\b", " ", text, flags=re.IGNORECASE)
    return " ".join(text.split())
