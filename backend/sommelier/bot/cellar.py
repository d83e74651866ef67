"""The cellar in Telegram (issue 48): `/cellar` lists the bottles by readiness, and a CSV file
sent to the bot (this bot's own export, CellarTracker's or Vivino's) adds them. In a private
chat the cellar is the person's; in a group it is the group's, which its members share. No
model call: the facts are the rows'."""

from __future__ import annotations

import logging

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from telegram import Bot, Document, Update
from telegram.error import TelegramError
from telegram.ext import filters

from sommelier.bot.delivery import DeliveryFailed, deliver
from sommelier.bot.groups import is_group
from sommelier.bot.photos import ADD_DATA
from sommelier.bot.render import Button, text_parts
from sommelier.bot.signing import keyboard
from sommelier.cellar import reminders
from sommelier.cellar.files import CellarFileError, read_file
from sommelier.cellar.opened import add_catalog_wine
from sommelier.cellar.report import reminder, render
from sommelier.cellar.store import (
    Held,
    add_rows,
    bottles_held,
    cellar_of,
    forget,
    held,
    owner_of,
)
from sommelier.db.repositories import Person, get_or_create_user
from sommelier.i18n.translations import N_, Translate, translator

log = logging.getLogger("sommelier.bot")

# A cellar file larger than this is no cellar a person keeps (CellarTracker's export of 5,000
# bottles is about 2 MB).
MAX_FILE_BYTES = 5_000_000
SHOWN_ERRORS = 5

# What a cellar file is sent as: a spreadsheet saved as CSV (by its name or its type).
FILES = (
    filters.Document.FileExtension("csv")
    | filters.Document.MimeType("text/csv")
    | filters.Document.MimeType("text/comma-separated-values")
)
HELP = N_("🍾 /cellar – the bottles you own; send me a CSV file of them to add them.")

ADDED = N_(
    "Added {bottles} bottles to the cellar: {matched} of {rows} wines are in the catalog, the "
    "others are kept as you named them."
)
REFUSED = N_("Nothing was added from this file:")
TOO_BIG = N_("This file is too large for a cellar. Send a CSV file under 5 MB.")
ADDED_ONE = N_("Added a bottle of {wine} to the cellar. Bottles of it now: {bottles}.")


FORGET_OFFER = N_("Your cellar still holds {bottles} bottles. Delete it too?")
DELETE = N_("Delete the cellar")
KEEP = N_("Keep it")
DELETED = N_("Done: your cellar is deleted.")
KEPT = N_("Your cellar is kept.")
# Button data: signed for the chat it is sent to (bot/signing.py), so only the person's own
# private chat can press it.
FORGET_DATA, KEEP_DATA = "cellar:forget", "cellar:keep"
REMIND_ON = N_("🔔 Weekly reminders")
REMIND_OFF = N_("🔕 No more reminders")
REMIND = "cellar:remind:"
REMIND_ON_DATA, REMIND_OFF_DATA = f"{REMIND}on", f"{REMIND}off"
REMINDING = N_(
    "Reminders are on: once a week I'll tell you which bottles reached their peak or started "
    "to decline."
)
NOT_REMINDING = N_("Reminders are off.")


def _group(update: Update) -> int | None:
    chat = update.effective_chat
    return chat.id if chat is not None and is_group(chat) else None


class Cellars:
    def __init__(self, sessions: async_sessionmaker[AsyncSession]) -> None:
        self.sessions = sessions

    async def show(self, update: Update, bot: Bot, person: Person, language: str | None) -> None:
        """The bottles by readiness; under them, reminders to turn on (or off)."""
        async with self.sessions() as session:
            cellar = await cellar_of(session, await owner_of(session, person, _group(update)))
            found = await held(session, cellar)
            reminding = cellar.remind_chat_id is not None
            await session.commit()
        chat = update.effective_chat
        assert chat is not None
        parts = text_parts(render(found, language))
        if found:
            t = translator(language)
            toggle = (
                (t(REMIND_OFF), REMIND_OFF_DATA) if reminding else (t(REMIND_ON), REMIND_ON_DATA)
            )
            parts[-1].buttons = [[Button(*toggle)]]
        await deliver(bot, chat.id, parts)

    async def remind(
        self, update: Update, bot: Bot, person: Person, data: str, language: str | None
    ) -> None:
        """The reminders' button: on (to this chat, in the presser's language) or off."""
        chat = update.effective_chat
        if chat is None:
            return
        on = data == REMIND_ON_DATA
        async with self.sessions() as session, session.begin():
            cellar = await cellar_of(session, await owner_of(session, person, _group(update)))
            await reminders.switch(session, cellar, chat.id if on else None, language)
        log.info("cellar reminders switched", extra={"event": "cellar_reminders", "on": on})
        await bot.send_message(chat.id, translator(language)(REMINDING if on else NOT_REMINDING))

    async def add_seen(
        self, update: Update, bot: Bot, person: Person, data: str, language: str | None
    ) -> None:
        """ "Add to my cellar" under a label's match: one bottle of that catalog wine, in this
        chat's cellar; pressed again, one more."""
        chat, wine_id = update.effective_chat, data.removeprefix(ADD_DATA)
        if chat is None:
            return
        async with self.sessions() as session, session.begin():
            owner = await owner_of(session, person, _group(update))
            user = owner.user_id or (await get_or_create_user(session, person)).id
            added = await add_catalog_wine(session, owner, wine_id, user, "photo")
        if added is None:
            return
        text = translator(language)(ADDED_ONE).format(wine=added[0], bottles=added[1])
        log.info("bottle added from a photo", extra={"event": "cellar_photo_added"})
        await bot.send_message(chat.id, text)

    async def remind_due(self, bot: Bot) -> int:
        """Every due reminder: the bottles that reached their peak or passed it since the chat
        was last told; none, no message. A send that fails is tried again later."""
        async with self.sessions() as session, session.begin():
            due = await reminders.take_due(session)
        for cellar in due:
            async with self.sessions() as session:
                found = await reminders.news(session, cellar.cellar_id)
            told: list[Held] | None = found
            if found:
                text = reminder(found, cellar.language)
                try:
                    await deliver(bot, cellar.chat_id, text_parts(text))
                except (TelegramError, DeliveryFailed) as exc:
                    log.warning(
                        "cellar reminder not sent: %s",
                        exc,
                        extra={"event": "cellar_reminder_failed", "error": str(exc)},
                    )
                    told = None
            async with self.sessions() as session, session.begin():
                await reminders.done(session, cellar.cellar_id, told)
        return len(due)

    async def offer_to_forget(
        self, update: Update, bot: Bot, person: Person, language: str | None
    ) -> None:
        """After /forget in a private chat: a cellar with bottles is not deleted unasked."""
        chat = update.effective_chat
        if chat is None or _group(update) is not None:
            return  # a group's cellar is the group's, not one member's to forget
        async with self.sessions() as session:
            bottles = await bottles_held(session, await owner_of(session, person))
            await session.commit()
        if bottles:
            t = translator(language)
            choices = [[(t(DELETE), FORGET_DATA), (t(KEEP), KEEP_DATA)]]
            await bot.send_message(
                chat.id,
                t(FORGET_OFFER).format(bottles=bottles),
                reply_markup=keyboard(bot.token, chat.id, choices),
            )

    async def answer_forget(
        self, update: Update, bot: Bot, person: Person, data: str, language: str | None
    ) -> None:
        """The person's answer to the offer: the cellar deleted, or kept."""
        chat = update.effective_chat
        if chat is None or _group(update) is not None:
            return
        t = translator(language)
        if data == FORGET_DATA:
            async with self.sessions() as session:
                bottles = await forget(session, await owner_of(session, person))
                await session.commit()
            log.info("cellar forgotten", extra={"event": "cellar_forgotten", "bottles": bottles})
        await bot.send_message(chat.id, t(DELETED if data == FORGET_DATA else KEPT))

    async def add_file(
        self, update: Update, bot: Bot, person: Person, language: str | None
    ) -> None:
        """A cellar file: added whole, or nothing added and the bad rows named."""
        message, chat = update.effective_message, update.effective_chat
        assert message is not None and message.document is not None and chat is not None
        t = translator(language)
        text = await self._added(update, message.document, person, t)
        await deliver(bot, chat.id, text_parts(text))

    async def _added(self, update: Update, document: Document, person: Person, t: Translate) -> str:
        if (document.file_size or 0) > MAX_FILE_BYTES:
            return t(TOO_BIG)
        data = bytes(await (await document.get_file()).download_as_bytearray())
        name = document.file_name or "cellar.csv"
        try:
            parsed = read_file(data, name)
        except CellarFileError as exc:
            shown = [str(e) for e in exc.errors[:SHOWN_ERRORS]]
            hidden = len(exc.errors) - len(shown)
            more = [f"… +{hidden}"] if hidden else []
            return "\n".join([t(REFUSED), str(exc), *shown, *more])
        async with self.sessions() as session:
            owner = await owner_of(session, person, _group(update))
            cellar = await cellar_of(session, owner)
            user = owner.user_id or (await get_or_create_user(session, person)).id
            added = await add_rows(session, cellar, parsed.rows, user, parsed.format)
            await session.commit()
        log.info(
            "cellar file added",
            extra={"event": "cellar_file_added", "rows": added.rows, "format": parsed.format},
        )
        return t(ADDED).format(bottles=added.bottles, matched=added.matched, rows=added.rows)
