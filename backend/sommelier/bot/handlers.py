"""The bot's conversation: /start, /help, /new, text turns, follow-up buttons, non-text.

Every update is recorded (db/turns.py) before its turn runs. A reply that cannot be delivered
(flood limits, a network that is down) is not dropped: its parts stay with the update's row and
are sent again in the background with backoff until a deadline; after it the chat gets one
short notice with a Retry button, when that can be sent.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from telegram import Bot, Message, Update
from telegram.constants import ChatAction, ChatType, ParseMode
from telegram.ext import (
    Application,
    ApplicationHandlerStop,
    CallbackQueryHandler,
    ChosenInlineResultHandler,
    CommandHandler,
    ContextTypes,
    InlineQueryHandler,
    MessageHandler,
    TypeHandler,
    filters,
)

from sommelier.bot.adding import SaidBottles
from sommelier.bot.cellar import FILES as CELLAR_FILES
from sommelier.bot.cellar import FORGET_DATA as CELLAR_FORGET
from sommelier.bot.cellar import HELP as CELLAR_HELP
from sommelier.bot.cellar import KEEP_DATA as CELLAR_KEEP
from sommelier.bot.cellar import REMIND as CELLAR_REMIND
from sommelier.bot.cellar import Cellars
from sommelier.bot.compare import Comparisons
from sommelier.bot.delivery import DeliveryFailed, deliver, markup
from sommelier.bot.drafts import DraftStreamer
from sommelier.bot.ephemeral import Ephemeral
from sommelier.bot.groups import ADMINS, GROUP_FACTOR, called, is_group, switch
from sommelier.bot.guest import GuestAnswers
from sommelier.bot.inline import InlineSearch, wine_of_start
from sommelier.bot.limits import RateLimiter
from sommelier.bot.opened import WHEN as OPENED_WHEN
from sommelier.bot.opened import OpenedBottles
from sommelier.bot.photos import ADD_DATA, render_photo
from sommelier.bot.progress import STOP_DATA, Fanout, QueueNotice
from sommelier.bot.render import (
    ADD_SAID,
    RETRY,
    Button,
    Part,
    escape,
    parse_vote,
    placed,
    render_reply,
    text_parts,
)
from sommelier.bot.signing import SEPARATOR, keyboard, verified
from sommelier.chat.photos import PhotoAnswers, Seen
from sommelier.chat.service import ChatService, Origin, TurnReply, Unstored, card_of
from sommelier.db.chat_settings import ChatSettings
from sommelier.db.repositories import Person
from sommelier.db.session import DATABASE_ERRORS
from sommelier.db.turns import InboundStatus, Stale, Superseded, log_superseded
from sommelier.i18n.languages import base, choose
from sommelier.i18n.translations import N_, translator

log = logging.getLogger("sommelier.bot")
# A cellar button's handler: (update, bot, the presser, the button's data, their language).
CellarAct = Callable[[Update, Bot, Person, str, str | None], Awaitable[None]]

CHANNEL = "telegram"

# The bot's own texts, in English; each is shown in the person's language (gettext catalogs,
# i18n/locales): for commands, the language their Telegram client reports.
EXAMPLES = (
    N_("A red under 20 euros for steak"),
    N_("Something sparkling for a birthday"),
    N_("A crisp white for oysters"),
)
WELCOME = N_(
    "🍷 <b>Hello{name}! I'm Sommelier.</b>\n\n"
    "Tell me what you're eating, your budget or the style you like, and I'll suggest bottles "
    "from my catalog, with why they fit.\n\n"
    "<i>For adults of legal drinking age (18+). Please drink responsibly.</i>\n\n"
    "Try one of these:"
)
HELP = N_(
    "Ask me the way you'd ask a sommelier, for example:\n"
    "• <i>a red under 20 euros for steak</i>\n"
    "• <i>a dry white from Germany</i>\n"
    "• <i>what goes with spicy Thai food?</i>\n\n"
    "Commands:\n/start – welcome and examples\n/help – this help\n"
    "/new – start a fresh conversation\n"
    "/profile – what I remember about your taste\n/forget – forget it\n"
    "/stop – stop the answer I'm working on\n\n"
    "Tap 👍 or 👎 under a reply or a wine to tell me how I did."
)
HELP_ELSEWHERE = N_(
    "📷 Send a photo of a label or a wine list, and I'll find the wines I know on it.\n"
    "💬 Type @{bot} and a wish in any chat to share a wine from my catalog.\n"
    "👥 In a group, mention me or reply to me."
)
NOTHING_REMEMBERED = N_("I don't remember anything about your taste yet. Tell me what you like!")
FORGOTTEN = N_("Done: I've forgotten everything about your taste.")
NEW = N_("Fresh start! What are you in the mood for?")
TEXT_ONLY = N_(
    "I read text and photos of wine labels. Tell me in words what you're looking for. 🍷"
)
VOICE = N_(
    "I can't listen to voice messages: I read text and photos of wine labels. "
    "Tell me in words what you're looking for. 🍷"
)
ADMINS_ONLY = N_("Only the group's admins can change that.")
ANSWER_ALL = N_("From now on I answer every message in this group.")
ANSWER_CALLED = N_("From now on I answer in this group when I'm mentioned or replied to.")
ANSWER_USAGE = N_("Use /sommelier_all on or /sommelier_all off.")
TOO_LONG = N_("That's a long message! Please keep it under {limit} characters.")
SLOW_DOWN = N_("You're writing faster than I can taste! Please wait {seconds} s and try again.")
OOPS = N_("Something went wrong on my side. Please try again in a moment.")
UNDELIVERED = N_("I couldn't get my whole answer to you. Shall I try again?")
CUT_SHORT = N_("My answer to “{text}” was cut short on my side. Shall I try again?")
MORE_ABOUT = N_("Tell me more about {name} (wine id {id}).")
STOPPED = N_("Stopped.")
STOPPED_MARK = N_("(stopped)")
NOTHING_RUNNING = N_("There is nothing to stop.")
FIRST_GROUP = -1000  # before every other handler, the queue's receiver included
MAX_UPDATE_ID = 2**63  # inbound_messages.update_id is a BIGINT
STOP_UPDATE = "stopped_message_generation"  # Bot API: the person pressed Stop on a draft
MAX_REDELIVERY_WAIT = 60.0
# What a follow-up button says for the person, in the reply's language (its data carries it).
FOLLOW_UPS = {
    "cheaper": N_("Something cheaper, please."),
    "different": N_("Something different, please."),
}


Owned = tuple[int | None, int]  # an inbound row, and the run of its turn that sends its reply


def language_of(update: Update) -> str | None:
    """The language a person's Telegram client reports ("pt-br" → "pt")."""
    user = update.effective_user
    return base(user.language_code) if user is not None else None


@dataclass(frozen=True, slots=True)
class BotOptions:
    rate_limit_per_minute: int = 10
    max_input_chars: int = 1000
    typing_interval: float = 4.0
    streaming: bool = True
    draft_interval: float = 1.0
    notice_interval: float = 3.0  # least time between edits of a queue notice
    # A reply that could not be sent is sent again after 1, 2, 4 … (at most 60) seconds until
    # 10 minutes have passed; then the chat gets one notice with a Retry button.
    redelivery_delay: float = 1.0
    delivery_deadline: float = 600.0
    cellar_ask_after: timedelta = timedelta(hours=24)  # an opened bottle's "how was it?"
    clock: Callable[[], float] = time.monotonic  # injectable, for tests of the backoff
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep


def person_of(update: Update) -> Person:
    user = update.effective_user
    assert user is not None
    return Person(
        channel=CHANNEL,
        telegram_id=user.id,
        display_name=user.full_name or user.username or str(user.id),
        language=user.language_code,
    )


def _quoted(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _chat_id(update: Update) -> int | None:
    return update.effective_chat.id if update.effective_chat else None


def _topic(update: Update) -> int | None:
    """The forum topic a group message is in (each has a conversation of its own)."""
    message = update.effective_message
    return message.message_thread_id if message and message.is_topic_message else None


def _replies_to_bot(message: Message, bot_id: int) -> bool:
    replied = message.reply_to_message
    return replied is not None and replied.from_user is not None and replied.from_user.id == bot_id


def _names_bot(caption: str, bot: Bot) -> bool:
    return bool(bot.username) and f"@{bot.username}".casefold() in caption.casefold()


def _is_photo(message: Message | None) -> bool:
    if message is None:
        return False
    document = message.document
    image = document is not None and (document.mime_type or "").startswith("image/")
    return bool(message.photo) or image


async def _photo_bytes(message: Message) -> bytes:
    """The largest size of a photo (or an image sent as a file)."""
    media = message.photo[-1] if message.photo else message.document
    assert media is not None  # the handler's filter: a photo or an image document
    return bytes(await (await media.get_file()).download_as_bytearray())


def _command_chat(update: Update) -> int:
    chat = update.effective_chat
    assert chat is not None  # commands always arrive from a chat
    return chat.id


class SommelierBot:
    def __init__(self, chat: ChatService, options: BotOptions | None = None) -> None:
        self.chat = chat
        self.ledger = chat.turns  # each update's row: its status, its reply's parts
        self.options = options or BotOptions()
        self.limiter = RateLimiter(self.options.rate_limit_per_minute)
        self._limited: dict[int, float] = {}  # update id -> seconds to wait, set on arrival
        self._running: dict[int, asyncio.Task[TurnReply]] = {}  # chat id -> its turn, for Stop
        # chat id -> its replies not delivered yet (inbound id, language), oldest first
        self._backlog: dict[int, deque[tuple[Owned, str | None]]] = {}
        # Behind the queue (bot/queue.py), a chat's turn runs in a worker process.
        self.stop_elsewhere: Callable[[int], Awaitable[bool]] | None = None
        self.group_limiter = RateLimiter(self.options.rate_limit_per_minute * GROUP_FACTOR)
        self.chat_settings = ChatSettings(chat.sessions)
        self.photos = PhotoAnswers(chat)
        self.inline = InlineSearch(chat)
        self.guest = GuestAnswers(chat, self.limiter)
        self.ephemeral = Ephemeral()
        self.comparisons = Comparisons()
        self.cellars = Cellars(chat.sessions)
        self.said_bottles = SaidBottles(chat.sessions, CHANNEL)
        ask_after = self.options.cellar_ask_after
        self.opened = OpenedBottles(
            chat.sessions, self.ledger, chat.preferences, ask_after, CHANNEL
        )

    def install(self, application: Application) -> None:
        application.add_handler(TypeHandler(object, self.forged), group=FIRST_GROUP)
        application.add_handler(CommandHandler("start", self.start))
        application.add_handler(CommandHandler("help", self.help))
        application.add_handler(CommandHandler("new", self.new))
        application.add_handler(CommandHandler("profile", self.profile))
        application.add_handler(CommandHandler("forget", self.forget))
        application.add_handler(CommandHandler("stop", self.stop))
        application.add_handler(CommandHandler("sommelier_all", self.answer_all))
        application.add_handler(CommandHandler("cellar", self.cellar))
        application.add_handler(InlineQueryHandler(self.inline))
        application.add_handler(ChosenInlineResultHandler(self.inline.chosen))
        application.add_handler(TypeHandler(Update, self.generation_stopped), group=-1)
        application.add_handler(CallbackQueryHandler(self.button))
        # Before the text handler, which a guest message would match too (bot/guest.py).
        application.add_handler(MessageHandler(filters.UpdateType.GUEST_MESSAGE, self.guest))
        application.add_handler(MessageHandler(filters.TEXT & ~filters.COMMAND, self.text))
        application.add_handler(MessageHandler(filters.PHOTO | filters.Document.IMAGE, self.photo))
        application.add_handler(MessageHandler(CELLAR_FILES, self.cellar_file))
        application.add_handler(MessageHandler(~filters.TEXT & ~filters.COMMAND, self.not_text))
        application.add_error_handler(self.error)

    async def forged(self, update: object, _: ContextTypes.DEFAULT_TYPE) -> None:
        """An update whose id is no whole number (a forged webhook body) is nobody's message:
        dropped before anything reads or stores it."""
        key = getattr(update, "update_id", None)
        if isinstance(update, Update) and not (type(key) is int and 0 <= key < MAX_UPDATE_ID):
            log.warning("update with id %r dropped", key, extra={"event": "telegram_update_forged"})
            raise ApplicationHandlerStop

    def admit(self, update: object) -> bool:
        """On arrival, before the chat's queue: a person over the rate limit is answered at
        once, without waiting behind (or holding up) that chat's earlier updates."""
        if not isinstance(update, Update) or update.effective_user is None:
            return True
        if update.guest_message is not None:
            return True  # its catalog answer is free; its model turn is counted there
        message = update.effective_message
        text = message.text if message is not None else None
        is_turn = (
            update.callback_query is not None
            or _is_photo(message)  # a photo costs more than a message: it counts as one
            or (
                text is not None
                and not text.startswith("/")
                and len(text) <= self.options.max_input_chars  # a notice, not a turn
            )
        )
        if not is_turn or is_group(update.effective_chat):
            return True  # a group's messages are limited once known to be for the bot (_turn)
        wait = self.limiter.check(update.effective_user.id)
        if wait:
            self._limited[update.update_id] = wait
        return not wait

    def limited(self, update: object) -> bool:
        """`admit` refused it: a notice is due instead of a turn."""
        return isinstance(update, Update) and update.update_id in self._limited

    @staticmethod
    def urgent(update: object) -> bool:
        """Stop and /stop: handled at once, not behind the chat's running turn."""
        if not isinstance(update, Update):
            return False
        if STOP_UPDATE in update.api_kwargs:
            return True
        if update.callback_query is not None:  # checked when it is handled (`button`)
            return (update.callback_query.data or "").rpartition(SEPARATOR)[0] == STOP_DATA
        message = update.effective_message
        words = (message.text or "").split(maxsplit=1) if message is not None else []
        return bool(words) and words[0].split("@")[0] == "/stop"

    # -- commands ---------------------------------------------------------------------------

    async def start(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        wine_id = wine_of_start(context.args[0]) if context.args else None
        if wine_id is not None:  # "Why this wine?" under an inline result
            text = await self._about_wine(wine_id, translator(language_of(update)))
            if text:
                await self._turn(update, context, text)
                return
        if not await self._claim(update, "/start"):
            return
        user = update.effective_user
        t = translator(language_of(update))
        name = f", {escape(user.first_name)}" if user and user.first_name else ""
        chat_id = _command_chat(update)
        examples = [[(t(text), f"ex:{i}")] for i, text in enumerate(EXAMPLES)]
        await context.bot.send_message(
            chat_id,
            t(WELCOME).format(name=name),
            parse_mode=ParseMode.HTML,
            reply_markup=keyboard(context.bot.token, chat_id, examples),
        )

    async def help(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        if await self._claim(update, "/help"):
            t = translator(language_of(update))
            elsewhere = escape(t(HELP_ELSEWHERE).format(bot=context.bot.username))
            text = f"{t(HELP)}\n\n{elsewhere}\n{escape(t(CELLAR_HELP))}"
            await context.bot.send_message(_command_chat(update), text, parse_mode=ParseMode.HTML)

    async def new(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        if not await self._claim(update, "/new"):
            return
        await self.chat.new_conversation(person_of(update), _chat_id(update), _topic(update))
        await context.bot.send_message(_command_chat(update), translator(language_of(update))(NEW))

    async def profile(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        if not await self._claim(update, "/profile"):
            return
        lines = await self.chat.preferences.profile(person_of(update))
        nothing = translator(language_of(update))(NOTHING_REMEMBERED)
        text = "\n".join(escape(line) for line in lines) if lines else nothing
        await self._tell(update, context.bot, text, html=True)

    async def forget(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        if not await self._claim(update, "/forget"):
            return
        await self.chat.preferences.forget(person_of(update))
        forgotten = translator(language_of(update))(FORGOTTEN)
        await context.bot.send_message(_command_chat(update), forgotten)
        await self.cellars.offer_to_forget(
            update, context.bot, person_of(update), language_of(update)
        )

    async def cellar(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """/cellar: the person's bottles (a group's, in a group) by readiness."""
        if await self._claim(update, "/cellar"):
            await self.cellars.show(update, context.bot, person_of(update), language_of(update))

    async def cellar_file(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """A CSV file of bottles; in a group, when it replies to the bot or its caption
        mentions it (other files in a group are not the bot's business)."""
        message, chat = update.effective_message, update.effective_chat
        if message is None or chat is None or update.effective_user is None:
            return
        for_bot = _replies_to_bot(message, context.bot.id) or _names_bot(
            message.caption or "", context.bot
        )
        if is_group(chat) and not for_bot:
            return
        name = message.document.file_name if message.document else None
        if await self._claim(update, f"[cellar file] {name or ''}".strip()):
            await self.cellars.add_file(update, context.bot, person_of(update), language_of(update))

    async def not_text(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """A voice message, a sticker, a file: a notice in a private chat, or in a group when
        it answers the bot; other group chatter is not the bot's business."""
        message = update.effective_message
        if message is None or update.effective_chat is None:
            return
        if is_group(update.effective_chat) and not _replies_to_bot(message, context.bot.id):
            return
        voice = message.voice or message.audio or message.video_note
        if await self._claim(update, "[voice message]" if voice else "[non-text message]"):
            text = translator(language_of(update))(VOICE if voice else TEXT_ONLY)
            await self._say(context.bot, update.effective_chat.id, text, message)

    async def photo(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """A photo of a label or a wine list (bot/photos.py); in a group, when its caption
        mentions the bot or it replies to the bot."""
        message, chat = update.effective_message, update.effective_chat
        if message is None or chat is None:
            return
        caption = message.caption or ""
        for_bot = _replies_to_bot(message, context.bot.id) or _names_bot(caption, context.bot)
        if is_group(chat) and not for_bot:
            return
        language = choose(caption, hint=language_of(update)) if caption else language_of(update)
        said = f"[photo] {caption}".strip()
        if await self._photo_limited(update, context, said, language):
            return
        if not await self._claim(update, said):
            return
        try:
            image = await _photo_bytes(message)
            answer = await self.photos.answer(image, caption, person_of(update), language or "en")
            parts = render_photo(answer, language or "en")
        except Exception:
            log.exception("photo failed", extra={"event": "telegram_photo_failed"})
            parts = text_parts(translator(language)(OOPS))
            answer = None
        if answer is not None and answer.seen == Seen.choose and await self._choice(update, parts):
            return  # "is it one of these?" is the sender's question alone
        await deliver(context.bot, chat.id, self._placed(parts, message))

    async def _choice(self, update: Update, parts: list[Part]) -> bool:
        """The photo's "Not sure: is it one of these?" to the person alone in a group (one part,
        its buttons signed for the group); False where it goes to the group as before."""
        chat, user = update.effective_chat, update.effective_user
        if chat is None or user is None or not is_group(chat) or len(parts) != 1:
            return False
        bot = update.get_bot()
        buttons = markup(parts[0], bot.token, chat.id)
        return await self.ephemeral.send(
            bot, chat.id, user.id, parts[0].plain, topic=_topic(update), markup=buttons
        )

    async def _photo_limited(
        self, update: Update, context: ContextTypes.DEFAULT_TYPE, said: str, language: str | None
    ) -> bool:
        """A photo over the person's (or the group's) limit gets the "wait" notice: photos
        count against the limit as messages do."""
        chat, user = update.effective_chat, update.effective_user
        assert chat is not None
        if is_group(chat) and user is not None:  # a private chat's is checked on arrival
            over = self.limiter.check(user.id) or self.group_limiter.check(chat.id)
            if over:
                self._limited[update.update_id] = over
        wait = self._limited.pop(update.update_id, None)
        if not wait:
            return False
        if await self._claim(update, said, InboundStatus.rate_limited):
            slow = translator(language)(SLOW_DOWN).format(seconds=int(wait) + 1)
            await self._tell(update, context.bot, slow)
        return True

    async def answer_all(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """/sommelier_all on|off: a group's admins let the bot answer every message."""
        chat, user, message = update.effective_chat, update.effective_user, update.effective_message
        if chat is None or user is None or message is None or not is_group(chat):
            return
        if not await self._claim(update, message.text or "/sommelier_all"):
            return
        t = translator(language_of(update))
        on = switch(context.args[0]) if context.args else None
        member = await context.bot.get_chat_member(chat.id, user.id)
        if member.status not in ADMINS:  # the refusal is the asker's business alone
            await self._tell(update, context.bot, t(ADMINS_ONLY))
            return
        if on is None:
            text = t(ANSWER_USAGE)
        else:
            await self.chat_settings.set_answer_all(CHANNEL, chat.id, on, user.id)
            text = t(ANSWER_ALL if on else ANSWER_CALLED)
        await self._say(context.bot, chat.id, text, message)

    # -- turns ------------------------------------------------------------------------------

    async def text(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        message = update.effective_message
        if message is None or message.text is None:
            return
        text = await self.addressed(update)
        if text is None or await self._noted(update, context.bot):
            return
        await self._turn(update, context, text)

    async def _noted(self, update: Update, bot: Bot) -> bool:
        """A reply to the thanks for a bottle's rating is its note, not a turn."""
        if update.effective_user is None:
            return False
        return await self.opened.note(update, bot, person_of(update), language_of(update))

    async def addressed(self, update: Update) -> str | None:
        """A text message's words for the bot: all of them in a private chat; in a group, when
        it mentions the bot or replies to it (the mention taken out), or when the group's
        admins let the bot answer everything; else None, and the message is not stored."""
        message, chat = update.effective_message, update.effective_chat
        if message is None or message.text is None:
            return None
        if not is_group(chat):
            return message.text
        said = called(message, update.get_bot().bot)
        if said is not None:
            return said
        assert chat is not None
        return message.text if await self.chat_settings.answers_all(CHANNEL, chat.id) else None

    async def ignored(self, update: object) -> bool:
        """A group's text message that is not for the bot (the queue does not take it)."""
        if not isinstance(update, Update) or update.effective_chat is None:
            return False
        message = update.effective_message
        if not is_group(update.effective_chat) or message is None or message.text is None:
            return False
        return not message.text.startswith("/") and await self.addressed(update) is None

    async def button(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        query = update.callback_query
        if query is None:
            return
        data = verified(context.bot.token, _chat_id(update), query.data)
        if data is None:  # not made by this bot for this chat: nothing reads it
            log.info("button data refused", extra={"event": "button_refused"})
            with contextlib.suppress(Exception):
                await query.answer()
            return
        if data == STOP_DATA:
            stopped = await self.stop_chat(_chat_id(update))
            t = translator(language_of(update))
            with contextlib.suppress(Exception):
                await query.answer(t(STOPPED if stopped else NOTHING_RUNNING))
            return
        vote = parse_vote(data)
        if vote is not None and update.effective_user is not None:
            message_id, card, value = vote
            rated = await self.chat.preferences.rate(
                person_of(update), value, message_id=message_id, chat_id=_chat_id(update), card=card
            )
            with contextlib.suppress(Exception):
                await query.answer(rated.text)
            return
        # Answer at once, so the button stops spinning; the turn follows.
        with contextlib.suppress(Exception):
            await query.answer()
        if data == "r:new":
            await self.new(update, context)
            return
        if data.startswith("c:"):
            await self._compare(context.bot, _chat_id(update), data)
            return
        act = self._cellar_act(data)
        if act is not None and update.effective_user is not None:
            await act(update, context.bot, person_of(update), data, language_of(update))
            return
        if data in (CELLAR_FORGET, CELLAR_KEEP) and update.effective_user is not None:
            await self.cellars.answer_forget(
                update, context.bot, person_of(update), data, language_of(update)
            )
            return
        text = await self._button_text(data, _chat_id(update), language_of(update))
        if text:
            await self._turn(update, context, text)

    def _cellar_act(self, data: str) -> CellarAct | None:
        """The cellar's buttons: opened, its stars, reminders, a label's bottle added."""
        acts: dict[str, CellarAct] = {
            "o:": self.opened.open,
            "st:": self.opened.rate,
            OPENED_WHEN: self.opened.when,
            CELLAR_REMIND: self.cellars.remind,
            ADD_DATA: self.cellars.add_seen,
            ADD_SAID: self.said_bottles.add,
        }
        return next((act for prefix, act in acts.items() if data.startswith(prefix)), None)

    async def _button_text(
        self, data: str, chat_id: int | None = None, language: str | None = None
    ) -> str | None:
        """What a button says for the person: in the language the reply it came with was in
        (carried in its data), else their client's."""
        kind, _, rest = data.partition(":")
        parts = rest.split(":")
        t = translator(parts[-1] if kind in ("f", "m") and len(parts) > 1 else language)
        if kind == "f" and parts[0] in FOLLOW_UPS:
            return t(FOLLOW_UPS[parts[0]])
        if data == "r:retry" and chat_id is not None:
            return await self.ledger.retry_text(CHANNEL, chat_id)
        if kind == "ex" and rest.isdigit() and int(rest) < len(EXAMPLES):
            return t(EXAMPLES[int(rest)])
        if kind == "m" and len(parts) >= 2 and parts[0].isdigit() and parts[1].isdigit():
            return await self._more_about(int(parts[0]), int(parts[1]), chat_id, t)
        if kind == "lw" and rest:  # a wine a photo showed
            return await self._about_wine(rest, t)
        return None

    async def _compare(self, bot: Bot, chat_id: int | None, data: str) -> None:
        """The Compare button: the reply's wines side by side (bot/compare.py), no model."""
        _, inbound, language = [*data.split(":"), "", ""][:3]
        if chat_id is None or not inbound.isdigit():
            return
        ids = await self.ledger.reply_wines(int(inbound), CHANNEL, chat_id)
        found = {wine.external_id: wine for wine in await self.chat.catalog.wines(ids)}
        cards = [card_of(found[i], "", language or "en") for i in ids if i in found]
        if len(cards) > 1:
            await self.comparisons.send(bot, chat_id, cards, language or "en")

    async def _about_wine(self, wine_id: str, t: Callable[[str], str]) -> str | None:
        wines = await self.chat.catalog.wines([wine_id])
        return t(MORE_ABOUT).format(name=wines[0].name, id=wines[0].external_id) if wines else None

    async def _more_about(
        self, inbound_id: int, index: int, chat_id: int | None, t: Callable[[str], str]
    ) -> str | None:
        wine_id = await self.ledger.reply_wine(inbound_id, index, CHANNEL, chat_id)
        return await self._about_wine(wine_id, t) if wine_id else None

    async def _refused(self, update: Update, context: ContextTypes.DEFAULT_TYPE, text: str) -> bool:
        """Too long, or over the rate limit: a notice instead of a turn."""
        chat = update.effective_chat
        assert chat is not None
        t = translator(language_of(update))
        if len(text) > self.options.max_input_chars:
            if await self._claim(update, text, InboundStatus.too_long):
                limit = self.options.max_input_chars
                text = t(TOO_LONG).format(limit=limit)
                await self._tell(update, context.bot, text)
            return True
        wait = self._limited.pop(update.update_id, None)
        if wait:
            if await self._claim(update, text, InboundStatus.rate_limited):
                text = t(SLOW_DOWN).format(seconds=int(wait) + 1)
                await self._tell(update, context.bot, text)
            return True
        return False

    async def _turn(self, update: Update, context: ContextTypes.DEFAULT_TYPE, text: str) -> None:
        chat = update.effective_chat
        if chat is None or update.effective_user is None:
            return
        group = is_group(chat)
        if group:  # per person, and per group (bot/groups.py)
            person_id = update.effective_user.id
            wait = self.limiter.check(person_id) or self.group_limiter.check(chat.id)
            if wait:
                self._limited[update.update_id] = wait
        if await self._refused(update, context, text):
            return
        topic = _topic(update)
        typing = asyncio.create_task(self._keep_typing(context.bot, chat.id, topic))
        language = language_of(update)
        # Drafts exist in private chats only; groups get "typing…" and the final messages.
        drafts = None
        if self.options.streaming and chat.type == ChatType.PRIVATE:
            drafts = DraftStreamer(context.bot, chat.id, self.options.draft_interval)
        notice = QueueNotice(context.bot, chat.id, language, self.options.notice_interval, topic)
        try:
            async with drafts or contextlib.nullcontext(), notice:
                turn = self.chat.turn(
                    person_of(update),
                    text,
                    origin=Origin(update.update_id, chat.id, group, topic),
                    sink=Fanout(drafts, notice),
                )
                reply = await self._stoppable(chat.id, turn)
            if reply is None:
                await self._stopped(context.bot, chat.id, drafts, language)
                return
            await self._deliver(context, chat.id, reply, update.effective_message)
        except Exception:
            log.exception("turn failed", extra={"event": "telegram_turn_failed"})
            with contextlib.suppress(Exception):
                await self._tell(update, context.bot, translator(language)(OOPS))
        finally:
            typing.cancel()

    async def _deliver(
        self,
        context: ContextTypes.DEFAULT_TYPE,
        chat_id: int,
        reply: TurnReply,
        message: Message | None = None,
    ) -> None:
        if reply.status == Unstored.superseded:
            return  # a later run of this message answers it
        if reply.status == Unstored.duplicate:
            await self._resume(context.bot, chat_id, (reply.inbound_id, reply.run))
            return
        parts = self._placed(render_reply(reply), message)
        if reply.inbound_id is None:
            await deliver(context.bot, chat_id, parts)
            return
        owned = (reply.inbound_id, reply.run)
        if not await self.ledger.save_parts(
            reply.inbound_id, [p.to_json() for p in parts], reply.run
        ):
            # The run that took it over sends it.
            log_superseded(
                f"message {reply.inbound_id}", inbound_id=reply.inbound_id, run=reply.run
            )
            return
        if self._backlog.get(chat_id):
            # An earlier reply of this chat is still on its way: this one goes after it.
            self._backlog[chat_id].append((owned, reply.language))
            return
        try:
            await self._resume(context.bot, chat_id, owned)
        except DeliveryFailed:
            self._deliver_later(context, chat_id, owned, reply.language)

    async def _stoppable(
        self, chat_id: int, turn: Coroutine[Any, Any, TurnReply]
    ) -> TurnReply | None:
        """The chat's turn, which Stop or /stop may cancel (None then). The turn stores itself
        as cancelled; this handler goes on, so the chat's next message is answered."""
        task = asyncio.create_task(turn)
        self._running[chat_id] = task
        try:
            await asyncio.wait({task})
        finally:
            if self._running.get(chat_id) is task:
                del self._running[chat_id]
        return None if task.cancelled() else task.result()

    async def _stopped(
        self, bot: Bot, chat_id: int, drafts: DraftStreamer | None, language: str | None
    ) -> None:
        """What was already shown stays, marked as stopped (a draft vanishes otherwise)."""
        t = translator(language)
        shown = drafts.text.strip() if drafts is not None else ""
        text = f"{shown} {t(STOPPED_MARK)}" if shown else t(STOPPED)
        with contextlib.suppress(Exception):
            await self._say(bot, chat_id, text)

    def stop_here(self, chat_id: int | None) -> bool:
        """Cancel the chat's running or waiting turn in this process; False when there is
        none."""
        task = self._running.get(chat_id) if chat_id is not None else None
        if task is None or task.done():
            return False
        task.cancel()
        return True

    async def stop_chat(self, chat_id: int | None) -> bool:
        """Stop the chat's turn, here or, behind the queue, in the worker that runs it."""
        if self.stop_here(chat_id):
            return True
        if chat_id is None or self.stop_elsewhere is None:
            return False
        return await self.stop_elsewhere(chat_id)

    async def stop(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """/stop: it runs at once, not behind the turn it stops (ordering.py, `urgent`)."""
        if not await self._claim(update, "/stop"):
            return
        if not await self.stop_chat(_chat_id(update)):
            nothing = translator(language_of(update))(NOTHING_RUNNING)
            await context.bot.send_message(_command_chat(update), nothing)

    async def generation_stopped(self, update: Update, _: ContextTypes.DEFAULT_TYPE) -> None:
        """Telegram's own Stop on a streamed draft (sendMessageDraft with can_stop)."""
        stopped = update.api_kwargs.get(STOP_UPDATE)
        if isinstance(stopped, dict) and isinstance(stopped.get("chat"), dict):
            await self.stop_chat(stopped["chat"].get("id"))

    async def _resume(self, bot: Bot, chat_id: int, owned: Owned) -> bool:
        """Send what was not sent yet of a stored reply, never anything twice; True when done.
        Progress is saved after every part, so a reply cut by a restart resumes where it
        stopped (Telegram redelivers the update). A run that another run took over stops
        before its next part: the other one sends the rest."""
        inbound_id, run = owned
        pending = await self.ledger.pending(inbound_id) if inbound_id is not None else None
        if pending is None or inbound_id is None:
            return True
        if pending.sent:
            log.info(
                "resuming an interrupted reply",
                extra={"event": "telegram_reply_resumed", "from_part": pending.sent},
            )

        async def progress(sent: int) -> None:
            try:
                owner = await self.ledger.mark_sent(inbound_id, sent, run)
            except DATABASE_ERRORS as exc:  # the part is sent: the record only lags behind
                log.warning(
                    "part %d sent but not recorded: %s",
                    sent,
                    exc,
                    extra={"event": "telegram_progress_unrecorded"},
                )
                return
            if not owner:
                raise Superseded(f"inbound {inbound_id}: run {run} was taken over")

        parts = [Part.from_json(p) for p in pending.parts]
        try:
            await deliver(bot, chat_id, parts, already_sent=pending.sent, progress=progress)
        except Superseded:
            log_superseded(f"message {inbound_id}", inbound_id=inbound_id, run=run)
        return True

    def _deliver_later(
        self,
        context: ContextTypes.DEFAULT_TYPE,
        chat_id: int,
        owned: Owned,
        language: str | None = None,
    ) -> None:
        log.error(
            "reply not delivered; sending it again in the background",
            extra={"event": "telegram_delivery_failed", "chat_id": chat_id},
        )
        self._backlog.setdefault(chat_id, deque()).append((owned, language))
        if len(self._backlog[chat_id]) == 1:
            context.application.create_task(self._courier(context.bot, chat_id))

    async def _courier(self, bot: Bot, chat_id: int) -> None:
        """The chat's undelivered replies, oldest first, each sent again with backoff until
        its deadline (then one notice with a Retry button); replies of the chat that come
        meanwhile wait behind them, so the person never reads them out of order. This is the
        one retry of a send: PTB's rate limiter only waits out flood limits."""
        backlog = self._backlog[chat_id]
        try:
            while backlog:
                owned, language = backlog[0]
                if not await self._redeliver(bot, chat_id, owned):
                    await self._give_up(bot, chat_id, owned, language)
                backlog.popleft()
        finally:
            del self._backlog[chat_id]

    async def _redeliver(self, bot: Bot, chat_id: int, owned: Owned) -> bool:
        """Send what is left of a reply, again and again; False past its deadline."""
        deadline = self.options.clock() + self.options.delivery_deadline
        delay = self.options.redelivery_delay
        while True:
            try:
                return await self._resume(bot, chat_id, owned)
            except DeliveryFailed:
                if self.options.clock() + delay > deadline:
                    return False
                await self.options.sleep(delay)
                delay = min(delay * 2, MAX_REDELIVERY_WAIT)

    async def _give_up(self, bot: Bot, chat_id: int, owned: Owned, language: str | None) -> None:
        if owned[0] is not None:
            await self.ledger.mark_undelivered(owned[0])
        log.error(
            "reply given up after the delivery deadline",
            extra={"event": "telegram_delivery_given_up", "chat_id": chat_id},
        )
        t = translator(language)
        notice = Part(t(UNDELIVERED), t(UNDELIVERED), [[Button(t(RETRY), "r:retry")]])
        with contextlib.suppress(Exception):
            await deliver(bot, chat_id, [notice])

    async def offer_retries(self, bot: Bot, stale: list[Stale]) -> None:
        """Turns cut short (the process died, the database went away mid-turn): their chats
        are told, with a Retry button, in the language the message was written in."""
        for turn in stale:
            if turn.channel != CHANNEL or turn.chat_id is None:
                continue
            t = translator(choose(turn.text))
            text = t(CUT_SHORT).format(text=_quoted(turn.text))
            notice = Part(escape(text), text, [[Button(t(RETRY), "r:retry")]])
            try:
                await deliver(bot, turn.chat_id, [notice])
            except Exception as exc:  # the next message will do; nothing else is owed
                log.warning(
                    "could not offer a retry: %s",
                    exc,
                    extra={"event": "telegram_retry_offer_failed", "chat_id": turn.chat_id},
                )

    async def _keep_typing(self, bot: Bot, chat_id: int, topic: int | None = None) -> None:
        # Telegram shows "typing…" for about 5 s: renew it until the reply is sent.
        while True:
            with contextlib.suppress(Exception):
                await bot.send_chat_action(chat_id, ChatAction.TYPING, message_thread_id=topic)
            await asyncio.sleep(self.options.typing_interval)

    async def _tell(self, update: Update, bot: Bot, text: str, *, html: bool = False) -> None:
        """A notice that concerns only the person who wrote: in a group, to them alone where
        Telegram allows it (bot/ephemeral.py); otherwise as any notice."""
        chat, user, message = update.effective_chat, update.effective_user, update.effective_message
        assert chat is not None
        if is_group(chat) and user is not None:
            topic = message.message_thread_id if message and message.is_topic_message else None
            if await self.ephemeral.send(bot, chat.id, user.id, text, html=html, topic=topic):
                return
        if html:
            await bot.send_message(_command_chat(update), text, parse_mode=ParseMode.HTML)
        else:
            await self._say(bot, chat.id, text, message)

    async def _say(self, bot: Bot, chat_id: int, text: str, message: Message | None = None) -> None:
        await deliver(bot, chat_id, self._placed(text_parts(text), message))

    @staticmethod
    def _placed(parts: list[Part], message: Message | None) -> list[Part]:
        """In a group: in the message's forum topic, quoting it (no drafts there)."""
        if message is None or not is_group(message.chat):
            return parts
        topic = message.message_thread_id if message.is_topic_message else None
        return placed(parts, message.message_id, topic)

    async def _claim(
        self, update: Update, text: str, status: InboundStatus = InboundStatus.answered
    ) -> bool:
        """Record the update for the admin; False when it was handled before (redelivery)."""
        person = person_of(update) if update.effective_user is not None else None
        key, chat_id = update.update_id, _chat_id(update)
        return await self.ledger.claim(person, CHANNEL, key, chat_id, text, status)

    async def error(self, update: object, context: ContextTypes.DEFAULT_TYPE) -> None:
        log.error("unhandled bot error", exc_info=context.error, extra={"event": "telegram_error"})
