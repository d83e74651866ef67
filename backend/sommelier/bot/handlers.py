"""The bot's conversation: /start, /help, /new, text turns, follow-up buttons, non-text."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from telegram import InlineKeyboardButton, InlineKeyboardMarkup, Update
from telegram.constants import ChatAction, ChatType, ParseMode
from telegram.ext import (
    Application,
    CallbackQueryHandler,
    CommandHandler,
    ContextTypes,
    MessageHandler,
    filters,
)

from sommelier.bot.delivery import DeliveryFailed, deliver
from sommelier.bot.drafts import DraftStreamer
from sommelier.bot.limits import RateLimiter
from sommelier.bot.render import Part, escape, render_reply, text_parts
from sommelier.catalog.search import get_wines
from sommelier.chat.service import ChatService
from sommelier.db import repositories as repo
from sommelier.db.repositories import Person

log = logging.getLogger("sommelier.bot")

CHANNEL = "telegram"
EXAMPLES = (
    "A red under 20 euros for steak",
    "Something sparkling for a birthday",
    "A crisp white for oysters",
)
WELCOME = (
    "🍷 <b>Hello{name}! I'm Sommelier.</b>\n\n"
    "Tell me what you're eating, your budget or the style you like, and I'll suggest bottles "
    "from my catalog, with why they fit.\n\n"
    "<i>For adults of legal drinking age (18+). Please drink responsibly.</i>\n\n"
    "Try one of these:"
)
HELP = (
    "Ask me the way you'd ask a sommelier, for example:\n"
    "• <i>a red under 20 euros for steak</i>\n"
    "• <i>a dry white from Germany</i>\n"
    "• <i>what goes with spicy Thai food?</i>\n\n"
    "Commands:\n/start – welcome and examples\n/help – this help\n"
    "/new – start a fresh conversation"
)
NEW = "Fresh start! What are you in the mood for?"
TEXT_ONLY = "I can only read text for now. Tell me in words what you're looking for. 🍷"
TOO_LONG = "That's a long message! Please keep it under {limit} characters."
SLOW_DOWN = "You're writing faster than I can taste! Please wait {seconds} s and try again."
OOPS = "Something went wrong on my side. Please try again in a moment."
FOLLOW_UPS = {
    "f:cheaper": "Something cheaper, please.",
    "f:different": "Something different, please.",
}


@dataclass(frozen=True, slots=True)
class BotOptions:
    rate_limit_per_minute: int = 10
    max_input_chars: int = 1000
    typing_interval: float = 4.0
    streaming: bool = True
    draft_interval: float = 1.0


def person_of(update: Update) -> Person:
    user = update.effective_user
    assert user is not None
    return Person(
        channel=CHANNEL,
        telegram_id=user.id,
        display_name=user.full_name or user.username or str(user.id),
        language=user.language_code,
    )


class SommelierBot:
    def __init__(
        self,
        chat: ChatService,
        sessions: async_sessionmaker[AsyncSession],
        options: BotOptions | None = None,
    ) -> None:
        self.chat = chat
        self.sessions = sessions
        self.options = options or BotOptions()
        self.limiter = RateLimiter(self.options.rate_limit_per_minute)

    def install(self, application: Application) -> None:
        application.add_handler(CommandHandler("start", self.start))
        application.add_handler(CommandHandler("help", self.help))
        application.add_handler(CommandHandler("new", self.new))
        application.add_handler(CallbackQueryHandler(self.button))
        application.add_handler(MessageHandler(filters.TEXT & ~filters.COMMAND, self.text))
        application.add_handler(MessageHandler(~filters.TEXT & ~filters.COMMAND, self.not_text))
        application.add_error_handler(self.error)

    # -- commands ---------------------------------------------------------------------------

    async def start(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        if not await self._claim(update, "/start"):
            return
        user = update.effective_user
        name = f", {escape(user.first_name)}" if user and user.first_name else ""
        keyboard = InlineKeyboardMarkup(
            [
                [InlineKeyboardButton(text, callback_data=f"ex:{i}")]
                for i, text in enumerate(EXAMPLES)
            ]
        )
        await context.bot.send_message(
            update.effective_chat.id,
            WELCOME.format(name=name),
            parse_mode=ParseMode.HTML,
            reply_markup=keyboard,
        )

    async def help(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        if await self._claim(update, "/help"):
            await context.bot.send_message(
                update.effective_chat.id, HELP, parse_mode=ParseMode.HTML
            )

    async def new(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        if not await self._claim(update, "/new"):
            return
        await self.chat.new_conversation(person_of(update))
        await context.bot.send_message(update.effective_chat.id, NEW)

    async def not_text(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        if update.effective_chat and await self._claim(update, "[non-text message]"):
            await context.bot.send_message(update.effective_chat.id, TEXT_ONLY)

    # -- turns ------------------------------------------------------------------------------

    async def text(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        message = update.effective_message
        if message is None or message.text is None:
            return
        await self._turn(update, context, message.text)

    async def button(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        query = update.callback_query
        if query is None:
            return
        # Answer at once, so the button stops spinning; the turn follows.
        with contextlib.suppress(Exception):
            await query.answer()
        if query.data == "r:new":
            await self.new(update, context)
            return
        chat_id = update.effective_chat.id if update.effective_chat else None
        text = await self._button_text(query.data or "", chat_id)
        if text:
            await self._turn(update, context, text)

    async def _button_text(self, data: str, chat_id: int | None = None) -> str | None:
        if data in FOLLOW_UPS:
            return FOLLOW_UPS[data]
        if data == "r:retry" and chat_id is not None:
            async with self.sessions() as session:
                return await repo.last_interrupted_text(session, CHANNEL, chat_id)
        if data.startswith("ex:") and data[3:].isdigit() and int(data[3:]) < len(EXAMPLES):
            return EXAMPLES[int(data[3:])]
        if data.startswith("f:more:"):
            wine_id = data.removeprefix("f:more:")
            async with self.sessions() as session:
                wines = await get_wines(session, [wine_id])
            name = wines[0].name if wines else wine_id
            return f"Tell me more about {name} (wine id {wine_id})."
        return None

    async def _turn(self, update: Update, context: ContextTypes.DEFAULT_TYPE, text: str) -> None:
        chat = update.effective_chat
        if chat is None or update.effective_user is None:
            return
        person = person_of(update)
        if len(text) > self.options.max_input_chars:
            if await self._claim(update, text, status="too_long"):
                await self._say(
                    context, chat.id, TOO_LONG.format(limit=self.options.max_input_chars)
                )
            return
        wait = self.limiter.check(person.telegram_id or 0)
        if wait:
            if await self._claim(update, text, status="rate_limited"):
                await self._say(context, chat.id, SLOW_DOWN.format(seconds=int(wait) + 1))
            return
        typing = asyncio.create_task(self._keep_typing(context, chat.id))
        # Drafts exist in private chats only; groups get "typing…" and the final messages.
        drafts = None
        if self.options.streaming and chat.type == ChatType.PRIVATE:
            drafts = DraftStreamer(context.bot, chat.id, self.options.draft_interval)
        try:
            async with drafts or contextlib.nullcontext():
                reply = await self.chat.turn(
                    person, text, update_id=update.update_id, chat_id=chat.id, sink=drafts
                )
            if reply.status == "duplicate":
                await self._resume(context, chat.id, reply.inbound_id)
                return
            parts = render_reply(reply)
            await self._send(context, chat.id, reply.inbound_id, parts)
        except DeliveryFailed:
            log.error(
                "reply not delivered; it resumes when the update is redelivered",
                extra={"event": "telegram_delivery_failed", "chat_id": chat.id},
            )
        except Exception:
            log.exception("turn failed", extra={"event": "telegram_turn_failed"})
            with contextlib.suppress(Exception):
                await self._say(context, chat.id, OOPS)
        finally:
            typing.cancel()

    async def _send(
        self,
        context: ContextTypes.DEFAULT_TYPE,
        chat_id: int,
        inbound_id: int | None,
        parts: list[Part],
        already_sent: int = 0,
    ) -> None:
        if inbound_id is not None and not already_sent:
            async with self.sessions() as session, session.begin():
                await repo.save_reply_parts(session, inbound_id, [p.to_json() for p in parts])

        async def progress(sent: int) -> None:
            if inbound_id is None:
                return
            async with self.sessions() as session, session.begin():
                await repo.mark_parts_sent(session, inbound_id, sent)

        await deliver(context.bot, chat_id, parts, already_sent=already_sent, progress=progress)

    async def _resume(
        self, context: ContextTypes.DEFAULT_TYPE, chat_id: int, inbound_id: int | None
    ) -> None:
        """A redelivered update: send what was not sent yet, never anything twice."""
        if inbound_id is None:
            return
        async with self.sessions() as session:
            inbound = await session.get(repo.InboundMessage, inbound_id)
        if inbound is None or not inbound.reply_parts:
            return
        if inbound.parts_sent >= len(inbound.reply_parts):
            return
        parts = [Part.from_json(p) for p in inbound.reply_parts]
        log.info(
            "resuming an interrupted reply",
            extra={"event": "telegram_reply_resumed", "from_part": inbound.parts_sent},
        )
        await self._send(context, chat_id, inbound_id, parts, already_sent=inbound.parts_sent)

    async def _keep_typing(self, context: ContextTypes.DEFAULT_TYPE, chat_id: int) -> None:
        # Telegram shows "typing…" for about 5 s: renew it until the reply is sent.
        while True:
            with contextlib.suppress(Exception):
                await context.bot.send_chat_action(chat_id, ChatAction.TYPING)
            await asyncio.sleep(self.options.typing_interval)

    async def _say(self, context: ContextTypes.DEFAULT_TYPE, chat_id: int, text: str) -> None:
        await deliver(context.bot, chat_id, text_parts(text))

    async def _claim(self, update: Update, text: str, status: str = "answered") -> bool:
        """Record the update for the admin; False when it was handled before (redelivery)."""
        user_id = None
        async with self.sessions() as session, session.begin():
            if update.effective_user is not None:
                user_id = (await repo.get_or_create_user(session, person_of(update))).id
            inbound_id = await repo.record_inbound(
                session,
                channel=CHANNEL,
                text=text,
                update_id=update.update_id,
                chat_id=update.effective_chat.id if update.effective_chat else None,
                user_id=user_id,
                status=status,
            )
        return inbound_id is not None

    async def error(self, update: object, context: ContextTypes.DEFAULT_TYPE) -> None:
        log.error("unhandled bot error", exc_info=context.error, extra={"event": "telegram_error"})
