"""The cellar in Telegram (issue 48): `/cellar` lists the bottles by readiness, and a CSV file
sent to the bot (this bot's own export, CellarTracker's or Vivino's) adds them. In a private
chat the cellar is the person's; in a group it is the group's, which its members share. No
model call: the facts are the rows'."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from telegram import Bot, Document, Update
from telegram.ext import filters

from sommelier.bot.delivery import deliver
from sommelier.bot.groups import is_group
from sommelier.bot.render import text_parts
from sommelier.cellar.files import CellarFileError, read_file
from sommelier.cellar.store import READINESS_ORDER, Held, Owner, add_rows, cellar_of, held, label
from sommelier.cellar.windows import Readiness
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

EMPTY = N_(
    "The cellar is empty. Send me your bottles as a CSV file (this bot's own, or an export "
    "from CellarTracker or Vivino) and I will add them."
)
TOTAL = N_("Bottles in the cellar: {bottles}")
HEADINGS = {
    Readiness.peak: N_("At their peak"),
    Readiness.ready: N_("Ready to drink"),
    Readiness.too_young: N_("Too young"),
    Readiness.past: N_("Past their peak"),
}
ADDED = N_(
    "Added {bottles} bottles to the cellar: {matched} of {rows} wines are in the catalog, the "
    "others are kept as you named them."
)
REFUSED = N_("Nothing was added from this file:")
TOO_BIG = N_("This file is too large for a cellar. Send a CSV file under 5 MB.")


def render(found: Sequence[Held], language: str | None) -> str:
    """The cellar as text: the total, then the bottles under their readiness, peak first."""
    t = translator(language)
    if not found:
        return t(EMPTY)
    lines = [t(TOTAL).format(bottles=sum(h.bottle.quantity for h in found))]
    for readiness in READINESS_ORDER:
        here = [h for h in found if h.readiness == readiness]
        if not here:
            continue
        lines += ["", t(HEADINGS[readiness])]
        for h in here:
            b = h.bottle
            vintage = f" {b.vintage}" if b.vintage else ""
            place = f" · {b.location}" if b.location else ""
            lines.append(f"• {b.quantity} × {label(b.producer, b.name)}{vintage}{place}")
    return "\n".join(lines)


class Cellars:
    def __init__(self, sessions: async_sessionmaker[AsyncSession]) -> None:
        self.sessions = sessions

    async def _owner(self, session: AsyncSession, update: Update, person: Person) -> Owner:
        chat = update.effective_chat
        if is_group(chat):
            assert chat is not None
            return Owner(chat_id=chat.id)
        user = await get_or_create_user(session, person)
        await session.flush()
        return Owner(user_id=user.id)

    async def show(self, update: Update, bot: Bot, person: Person, language: str | None) -> None:
        async with self.sessions() as session:
            cellar = await cellar_of(session, await self._owner(session, update, person))
            found = await held(session, cellar)
            await session.commit()
        chat = update.effective_chat
        assert chat is not None
        await deliver(bot, chat.id, text_parts(render(found, language)))

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
            more = (
                [f"… +{len(exc.errors) - SHOWN_ERRORS}"] if len(exc.errors) > SHOWN_ERRORS else []
            )
            return "\n".join([t(REFUSED), str(exc), *shown, *more])
        async with self.sessions() as session:
            owner = await self._owner(session, update, person)
            cellar = await cellar_of(session, owner)
            user = owner.user_id or (await get_or_create_user(session, person)).id
            added = await add_rows(session, cellar, parsed.rows, user, parsed.format)
            await session.commit()
        log.info(
            "cellar file added",
            extra={"event": "cellar_file_added", "rows": added.rows, "format": parsed.format},
        )
        return t(ADDED).format(bottles=added.bottles, matched=added.matched, rows=added.rows)
