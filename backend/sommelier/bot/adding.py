"""Bottles a person said they have, added at a press (issue 48): the buttons under a proposal
(cellar/adding.py, bot/render.py `adding_parts`) name the reply and a card of it
(`cm:<update>:<card>`, card 0 the wine as they named it), so they act only in the chat the reply
is in, on that chat's cellar (the group's, in a group), and once. No model call."""

from __future__ import annotations

import contextlib
import logging

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from telegram import Bot, Update
from telegram.error import TelegramError

from sommelier.bot.groups import is_group
from sommelier.bot.signing import numbers
from sommelier.cellar.adding import confirm
from sommelier.cellar.store import owner_of
from sommelier.db.repositories import Person, get_or_create_user
from sommelier.db.turns import stored_reply

log = logging.getLogger("sommelier.bot")


class SaidBottles:
    def __init__(self, sessions: async_sessionmaker[AsyncSession], channel: str) -> None:
        self.sessions = sessions
        self.channel = channel  # whose replies the buttons name (bot/handlers.CHANNEL)

    async def add(
        self, update: Update, bot: Bot, person: Person, data: str, language: str | None
    ) -> None:
        """A press: the bottles into this chat's cellar, the buttons taken off the proposal."""
        chat, (inbound, card) = update.effective_chat, numbers(data)
        if chat is None or inbound is None or card is None:
            return
        group = chat.id if is_group(chat) else None
        async with self.sessions() as session, session.begin():
            reply = await stored_reply(session, inbound, self.channel, chat.id)
            if reply is None:
                return
            owner = await owner_of(session, person, group)
            user = await get_or_create_user(session, person)
            added = await confirm(session, owner, reply, card, user.id)
        if added is None:
            return
        log.info(
            "bottles added from a message",
            extra={"event": "cellar_message_added", "again": added.again, "card": card},
        )
        query = update.callback_query
        if query is not None and not added.again:
            with contextlib.suppress(TelegramError):  # an old message may no longer be edited
                await query.edit_message_reply_markup(None)
        await bot.send_message(chat.id, added.said(language))
