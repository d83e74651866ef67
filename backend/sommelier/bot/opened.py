"""The loop after opening a bottle (issue 48, item 5), in Telegram.

"🍾 Opened" under a card of a wine the cellar holds takes one bottle off (`o:<update>:<card>`,
the card named as "More about" names it). Some hours later (`BotOptions.cellar_ask_after`) the
chat is asked how it was, with stars (`st:<event>:<n>`); the stars are the presser's rating, a
4 or 5 a 👍 and a 1 or 2 a 👎 for their taste profile, and a reply to the thanks is the rating's
note. Questions are rows (cellar/opened.py); `send_due` is what the schedule runs (bot/asks.py).
No model call: the facts are the rows'.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from telegram import Bot, Message, Update
from telegram.error import TelegramError

from sommelier.bot.groups import is_group
from sommelier.bot.signing import keyboard, numbers
from sommelier.cellar import opened as store
from sommelier.cellar.store import owner_of
from sommelier.chat.preferences import Preferences
from sommelier.db.repositories import Person, get_or_create_user
from sommelier.db.turns import TurnStore
from sommelier.i18n.translations import N_, translator

log = logging.getLogger("sommelier.bot")

OPENED = N_(
    "Opened: {wine}. Bottles of it left in the cellar: {left}. I'll ask you later how it was."
)
NONE_LEFT = N_("There is no bottle of this wine left in the cellar.")
ASK = N_("How was the {wine} you opened?")
RATED = N_("Thanks: {stars} for {wine}. Reply to this message with a short note, if you like.")
NOTED = N_("Noted.")
# Under "Opened": when to ask how it was, instead of the default (`BotOptions.cellar_ask_after`).
ASK_WHEN = {  # hours: (the button, what the press is answered with)
    4: (N_("🕗 Ask tonight"), N_("I'll ask you tonight how it was.")),
    24: (N_("📅 Ask tomorrow"), N_("I'll ask you tomorrow how it was.")),
    72: (N_("🗓 Ask in 3 days"), N_("I'll ask you in 3 days how it was.")),
}
WHEN = "aw:"  # aw:<opened event>:<hours>
MAX_NOTE = 500  # characters of a note kept
STARS = 5


class OpenedBottles:
    def __init__(
        self,
        sessions: async_sessionmaker[AsyncSession],
        ledger: TurnStore,
        preferences: Preferences,
        ask_after: timedelta,
        channel: str,
    ) -> None:
        self.sessions = sessions
        self.ledger = ledger
        self.channel = channel  # whose replies the "Opened" buttons name (bot/handlers.CHANNEL)
        self.preferences = preferences
        self.ask_after = ask_after

    async def open(
        self, update: Update, bot: Bot, person: Person, data: str, language: str | None
    ) -> None:
        """An "Opened" press: one bottle of the card's wine off this chat's cellar."""
        chat, (inbound, card) = update.effective_chat, numbers(data)
        if chat is None or inbound is None or card is None:
            return
        wine_id = await self.ledger.reply_wine(inbound, card, self.channel, chat.id)
        if wine_id is None:
            return
        group = chat.id if is_group(chat) else None
        async with self.sessions() as session, session.begin():
            owner = await owner_of(session, person, group)
            user = await get_or_create_user(session, person)
            done = await store.open_one(session, owner, wine_id, user.id, chat.id, self.ask_after)
        t = translator(language)
        log.info("bottle opened", extra={"event": "cellar_opened", "opened": done is not None})
        if done is None:
            await bot.send_message(chat.id, t(NONE_LEFT))
            return
        # When to ask is theirs to say: the default, or one of these (`when`).
        rows = [[(t(b), f"{WHEN}{done.event_id}:{hours}") for hours, (b, _) in ASK_WHEN.items()]]
        await bot.send_message(
            chat.id,
            t(OPENED).format(wine=done.wine, left=done.left),
            reply_markup=keyboard(bot.token, chat.id, rows),
        )

    async def when(
        self, update: Update, bot: Bot, person: Person, data: str, language: str | None
    ) -> None:
        """A "when to ask" button under "Opened": the question moved to then."""
        chat, (event, hours) = update.effective_chat, numbers(data)
        if chat is None or event is None or hours not in ASK_WHEN:
            return
        async with self.sessions() as session, session.begin():
            due = await store.ask_in(session, event, chat.id, timedelta(hours=hours))
        if due is None:
            return  # not this chat's, or asked already
        log.info("cellar question moved", extra={"event": "cellar_ask_moved", "hours": hours})
        await bot.send_message(chat.id, translator(language)(ASK_WHEN[hours][1]))

    async def send_due(self, bot: Bot) -> int:
        """Ask every question that is due; one that cannot be sent is given back for later."""
        async with self.sessions() as session, session.begin():
            due = await store.take_due(session)
        for question in due:
            t = translator(question.language)
            rows = [[(f"{n}★", f"st:{question.event_id}:{n}") for n in range(1, STARS + 1)]]
            sent: Message | None = None
            try:
                sent = await bot.send_message(
                    question.chat_id,
                    t(ASK).format(wine=question.wine),
                    reply_markup=keyboard(bot.token, question.chat_id, rows),
                )
            except TelegramError as exc:
                log.warning(
                    "cellar question not sent: %s",
                    exc,
                    extra={"event": "cellar_question_failed", "error": str(exc)},
                )
            async with self.sessions() as session, session.begin():
                await store.asked(session, question.event_id, sent.message_id if sent else None)
        if due:
            log.info("cellar questions asked", extra={"event": "cellar_asked", "count": len(due)})
        return len(due)

    async def rate(
        self, update: Update, bot: Bot, person: Person, data: str, language: str | None
    ) -> None:
        """A star pressed under the question: the presser's rating of that bottle."""
        chat, (event, stars) = update.effective_chat, numbers(data)
        if chat is None or event is None or stars is None or not 1 <= stars <= STARS:
            return
        async with self.sessions() as session, session.begin():
            user = await get_or_create_user(session, person)
            rating = await store.rate(session, event, chat.id, user.id, stars)
            if rating is not None and rating.wine_id is not None and stars != 3:
                value = 1 if stars > 3 else -1
                await self.preferences.learn_from_press(session, user.id, rating.wine_id, value)
        if rating is None:
            return
        t = translator(language)
        shown = "★" * stars + "☆" * (STARS - stars)
        sent = await bot.send_message(chat.id, t(RATED).format(stars=shown, wine=rating.wine))
        async with self.sessions() as session, session.begin():
            await store.thanked(session, rating.event_id, sent.message_id)
        log.info("bottle rated", extra={"event": "cellar_rated", "stars": stars})

    async def note(self, update: Update, bot: Bot, person: Person, language: str | None) -> bool:
        """A reply to a rating's thanks, kept as its note; False for any other message."""
        message, chat = update.effective_message, update.effective_chat
        replied = message.reply_to_message if message is not None else None
        if message is None or chat is None or replied is None or not message.text:
            return False
        if replied.from_user is None or replied.from_user.id != bot.id:
            return False
        async with self.sessions() as session, session.begin():
            user = await get_or_create_user(session, person)
            text = message.text.strip()[:MAX_NOTE]
            kept = await store.note(session, chat.id, replied.message_id, user.id, text)
        if kept:
            await bot.send_message(chat.id, translator(language)(NOTED))
        return kept
