"""The bot's conversation: /start, /help, /new, text turns, follow-up buttons, non-text.

Every update is recorded in the ledger before its turn runs. A reply that cannot be delivered
(flood limits, a network that is down) is not dropped: its parts stay in the ledger and are sent
again in the background with backoff until a deadline; after it the chat gets one short notice
with a Retry button, when that can be sent.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass

from telegram import Bot, InlineKeyboardButton, InlineKeyboardMarkup, Update
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
from sommelier.bot.ledger import CHANNEL, Ledger
from sommelier.bot.limits import RateLimiter
from sommelier.bot.render import Button, Part, escape, parse_vote, render_reply, text_parts
from sommelier.chat.service import ChatService, Origin
from sommelier.db.repositories import Person

log = logging.getLogger("sommelier.bot")

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
    "/new – start a fresh conversation\n"
    "/profile – what I remember about your taste\n/forget – forget it\n\n"
    "Tap 👍 or 👎 under a reply or a wine to tell me how I did."
)
NOTHING_REMEMBERED = "I don't remember anything about your taste yet. Tell me what you like!"
FORGOTTEN = "Done: I've forgotten everything about your taste."
NEW = "Fresh start! What are you in the mood for?"
TEXT_ONLY = "I can only read text for now. Tell me in words what you're looking for. 🍷"
TOO_LONG = "That's a long message! Please keep it under {limit} characters."
SLOW_DOWN = "You're writing faster than I can taste! Please wait {seconds} s and try again."
OOPS = "Something went wrong on my side. Please try again in a moment."
UNDELIVERED = "I couldn't get my whole answer to you. Shall I try again?"
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
    redelivery_delay: float = 5.0  # first wait before sending an undelivered reply again
    delivery_deadline: float = 600.0  # after this, one notice with a Retry button


def person_of(update: Update) -> Person:
    user = update.effective_user
    assert user is not None
    return Person(
        channel=CHANNEL,
        telegram_id=user.id,
        display_name=user.full_name or user.username or str(user.id),
        language=user.language_code,
    )


def _chat_id(update: Update) -> int | None:
    return update.effective_chat.id if update.effective_chat else None


def _command_chat(update: Update) -> int:
    chat = update.effective_chat
    assert chat is not None  # commands always arrive from a chat
    return chat.id


class SommelierBot:
    def __init__(
        self, chat: ChatService, ledger: Ledger, options: BotOptions | None = None
    ) -> None:
        self.chat = chat
        self.ledger = ledger
        self.options = options or BotOptions()
        self.limiter = RateLimiter(self.options.rate_limit_per_minute)
        self._limited: dict[int, float] = {}  # update id -> seconds to wait, set on arrival

    def install(self, application: Application) -> None:
        application.add_handler(CommandHandler("start", self.start))
        application.add_handler(CommandHandler("help", self.help))
        application.add_handler(CommandHandler("new", self.new))
        application.add_handler(CommandHandler("profile", self.profile))
        application.add_handler(CommandHandler("forget", self.forget))
        application.add_handler(CallbackQueryHandler(self.button))
        application.add_handler(MessageHandler(filters.TEXT & ~filters.COMMAND, self.text))
        application.add_handler(MessageHandler(~filters.TEXT & ~filters.COMMAND, self.not_text))
        application.add_error_handler(self.error)

    def admit(self, update: object) -> bool:
        """On arrival, before the chat's queue: a person over the rate limit is answered at
        once, without waiting behind (or holding up) that chat's earlier updates."""
        if not isinstance(update, Update) or update.effective_user is None:
            return True
        message = update.effective_message
        text = message.text if message is not None else None
        is_turn = update.callback_query is not None or (
            text is not None
            and not text.startswith("/")
            and len(text) <= self.options.max_input_chars  # a notice, not a turn
        )
        if not is_turn:
            return True
        wait = self.limiter.check(update.effective_user.id)
        if wait:
            self._limited[update.update_id] = wait
        return not wait

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
            _command_chat(update),
            WELCOME.format(name=name),
            parse_mode=ParseMode.HTML,
            reply_markup=keyboard,
        )

    async def help(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        if await self._claim(update, "/help"):
            await context.bot.send_message(_command_chat(update), HELP, parse_mode=ParseMode.HTML)

    async def new(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        if not await self._claim(update, "/new"):
            return
        await self.chat.new_conversation(person_of(update), _chat_id(update))
        await context.bot.send_message(_command_chat(update), NEW)

    async def profile(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        if not await self._claim(update, "/profile"):
            return
        lines = await self.chat.preferences.profile(person_of(update))
        text = "\n".join(escape(line) for line in lines) if lines else NOTHING_REMEMBERED
        await context.bot.send_message(_command_chat(update), text, parse_mode=ParseMode.HTML)

    async def forget(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        if not await self._claim(update, "/forget"):
            return
        await self.chat.preferences.forget(person_of(update))
        await context.bot.send_message(_command_chat(update), FORGOTTEN)

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
        vote = parse_vote(query.data or "")
        if vote is not None and update.effective_user is not None:
            message_id, card, value = vote
            rated = await self.chat.preferences.rate(
                person_of(update), value, message_id=message_id, card=card
            )
            with contextlib.suppress(Exception):
                await query.answer(rated.text)
            return
        # Answer at once, so the button stops spinning; the turn follows.
        with contextlib.suppress(Exception):
            await query.answer()
        if query.data == "r:new":
            await self.new(update, context)
            return
        text = await self._button_text(query.data or "", _chat_id(update))
        if text:
            await self._turn(update, context, text)

    async def _button_text(self, data: str, chat_id: int | None = None) -> str | None:
        if data in FOLLOW_UPS:
            return FOLLOW_UPS[data]
        if data == "r:retry" and chat_id is not None:
            return await self.ledger.retry_text(chat_id)
        if data.startswith("ex:") and data[3:].isdigit() and int(data[3:]) < len(EXAMPLES):
            return EXAMPLES[int(data[3:])]
        parts = data.split(":")
        if len(parts) == 3 and parts[0] == "m" and parts[1].isdigit() and parts[2].isdigit():
            wine = await self.ledger.wine_of_button(int(parts[1]), int(parts[2]))
            return f"Tell me more about {wine[1]} (wine id {wine[0]})." if wine else None
        return None

    async def _refused(self, update: Update, context: ContextTypes.DEFAULT_TYPE, text: str) -> bool:
        """Too long, or over the rate limit: a notice instead of a turn."""
        chat = update.effective_chat
        assert chat is not None
        if len(text) > self.options.max_input_chars:
            if await self._claim(update, text, status="too_long"):
                await self._say(
                    context.bot, chat.id, TOO_LONG.format(limit=self.options.max_input_chars)
                )
            return True
        wait = self._limited.pop(update.update_id, None)
        if wait:
            if await self._claim(update, text, status="rate_limited"):
                await self._say(context.bot, chat.id, SLOW_DOWN.format(seconds=int(wait) + 1))
            return True
        return False

    async def _turn(self, update: Update, context: ContextTypes.DEFAULT_TYPE, text: str) -> None:
        chat = update.effective_chat
        if chat is None or update.effective_user is None:
            return
        if await self._refused(update, context, text):
            return
        typing = asyncio.create_task(self._keep_typing(context.bot, chat.id))
        # Drafts exist in private chats only; groups get "typing…" and the final messages.
        drafts = None
        if self.options.streaming and chat.type == ChatType.PRIVATE:
            drafts = DraftStreamer(context.bot, chat.id, self.options.draft_interval)
        try:
            async with drafts or contextlib.nullcontext():
                reply = await self.chat.turn(
                    person_of(update),
                    text,
                    origin=Origin(key=update.update_id, thread=chat.id),
                    sink=drafts,
                )
            if reply.status == "duplicate":
                await self._resume(context.bot, chat.id, reply.inbound_id)
                return
            await self._send(context.bot, chat.id, reply.inbound_id, render_reply(reply))
        except DeliveryFailed:
            self._deliver_later(context, chat.id, reply.inbound_id)
        except Exception:
            log.exception("turn failed", extra={"event": "telegram_turn_failed"})
            with contextlib.suppress(Exception):
                await self._say(context.bot, chat.id, OOPS)
        finally:
            typing.cancel()

    async def _send(
        self, bot: Bot, chat_id: int, inbound_id: int | None, parts: list[Part], already: int = 0
    ) -> None:
        if inbound_id is not None and not already:
            await self.ledger.save_parts(inbound_id, [p.to_json() for p in parts])

        async def progress(sent: int) -> None:
            if inbound_id is not None:
                await self.ledger.mark_sent(inbound_id, sent)

        await deliver(bot, chat_id, parts, already_sent=already, progress=progress)

    async def _resume(self, bot: Bot, chat_id: int, inbound_id: int | None) -> bool:
        """Send what was not sent yet of a reply, never anything twice; True when done."""
        pending = await self.ledger.pending(inbound_id) if inbound_id is not None else None
        if pending is None:
            return True
        log.info(
            "resuming an interrupted reply",
            extra={"event": "telegram_reply_resumed", "from_part": pending.sent},
        )
        parts = [Part.from_json(p) for p in pending.parts]
        await self._send(bot, chat_id, inbound_id, parts, already=pending.sent)
        return True

    def _deliver_later(
        self, context: ContextTypes.DEFAULT_TYPE, chat_id: int, inbound_id: int | None
    ) -> None:
        log.error(
            "reply not delivered; sending it again in the background",
            extra={"event": "telegram_delivery_failed", "chat_id": chat_id},
        )
        if inbound_id is not None:
            context.application.create_task(self._redeliver(context.bot, chat_id, inbound_id))

    async def _redeliver(self, bot: Bot, chat_id: int, inbound_id: int) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.options.delivery_deadline
        delay = self.options.redelivery_delay
        while loop.time() + delay <= deadline:
            await asyncio.sleep(delay)
            try:
                if await self._resume(bot, chat_id, inbound_id):
                    return
            except DeliveryFailed:
                delay = min(delay * 2, 300.0)
        await self.ledger.mark_undelivered(inbound_id)
        log.error(
            "reply given up after the delivery deadline",
            extra={"event": "telegram_delivery_given_up", "chat_id": chat_id},
        )
        notice = Part(UNDELIVERED, UNDELIVERED, [[Button("🔁 Retry", "r:retry")]])
        with contextlib.suppress(Exception):
            await deliver(bot, chat_id, [notice])

    async def _keep_typing(self, bot: Bot, chat_id: int) -> None:
        # Telegram shows "typing…" for about 5 s: renew it until the reply is sent.
        while True:
            with contextlib.suppress(Exception):
                await bot.send_chat_action(chat_id, ChatAction.TYPING)
            await asyncio.sleep(self.options.typing_interval)

    async def _say(self, bot: Bot, chat_id: int, text: str) -> None:
        await deliver(bot, chat_id, text_parts(text))

    async def _claim(self, update: Update, text: str, status: str = "answered") -> bool:
        """Record the update for the admin; False when it was handled before (redelivery)."""
        person = person_of(update) if update.effective_user is not None else None
        return await self.ledger.claim(person, update.update_id, _chat_id(update), text, status)

    async def error(self, update: object, context: ContextTypes.DEFAULT_TYPE) -> None:
        log.error("unhandled bot error", exc_info=context.error, extra={"event": "telegram_error"})
