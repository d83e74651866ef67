"""What the bot keeps in SQL for itself: the delivery ledger of each update (recorded before its
turn, its reply's parts, how many were sent) and the stored replies its buttons refer to.

The bot reads and writes the database only through here; conversations and turns go through
the chat service.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from sommelier.catalog.search import get_wines
from sommelier.db import repositories as repo
from sommelier.db.models import InboundMessage, Message, utcnow
from sommelier.db.repositories import Person

CHANNEL = "telegram"
RETRY_STATUSES = ("interrupted", "undelivered")


@dataclass(frozen=True, slots=True)
class Pending:
    parts: list[dict[str, Any]]
    sent: int


class Ledger:
    def __init__(self, sessions: async_sessionmaker[AsyncSession]) -> None:
        self.sessions = sessions

    async def claim(
        self, person: Person | None, update_id: int, chat_id: int | None, text: str, status: str
    ) -> bool:
        """Record an update answered without a turn; False when it was handled before."""
        async with self.sessions() as session, session.begin():
            user_id = (await repo.get_or_create_user(session, person)).id if person else None
            inbound_id = await repo.record_inbound(
                session,
                channel=CHANNEL,
                text=text,
                update_id=update_id,
                chat_id=chat_id,
                user_id=user_id,
                status=status,
            )
        return inbound_id is not None

    async def save_parts(self, inbound_id: int, parts: list[dict[str, Any]]) -> None:
        async with self.sessions() as session, session.begin():
            await repo.save_reply_parts(session, inbound_id, parts)

    async def mark_sent(self, inbound_id: int, sent: int) -> None:
        async with self.sessions() as session, session.begin():
            await repo.mark_parts_sent(session, inbound_id, sent)

    async def pending(self, inbound_id: int) -> Pending | None:
        """The parts of a reply not sent yet, or None when there is nothing left to send."""
        async with self.sessions() as session:
            inbound = await session.get(InboundMessage, inbound_id)
        if inbound is None or not inbound.reply_parts:
            return None
        if inbound.parts_sent >= len(inbound.reply_parts):
            return None
        return Pending(list(inbound.reply_parts), inbound.parts_sent)

    async def mark_undelivered(self, inbound_id: int) -> None:
        async with self.sessions() as session, session.begin():
            await session.execute(
                update(InboundMessage)
                .where(InboundMessage.id == inbound_id)
                .values(status="undelivered", finished_at=utcnow())
            )

    async def retry_text(self, chat_id: int) -> str | None:
        """The chat's latest message whose answer broke off or never arrived, for "Retry"."""
        async with self.sessions() as session:
            return await session.scalar(
                select(InboundMessage.text)
                .where(
                    InboundMessage.channel == CHANNEL,
                    InboundMessage.chat_id == chat_id,
                    InboundMessage.status.in_(RETRY_STATUSES),
                )
                .order_by(InboundMessage.id.desc())
                .limit(1)
            )

    async def wine_of_button(self, inbound_id: int, index: int) -> tuple[str, str] | None:
        """(wine id, name) of the index-th card (1-based) of the reply to an update."""
        async with self.sessions() as session:
            wine_ids = await session.scalar(
                select(Message.wine_ids)
                .join(InboundMessage, InboundMessage.reply_message_id == Message.id)
                .where(InboundMessage.id == inbound_id)
            )
            if not wine_ids or not 1 <= index <= len(wine_ids):
                return None
            wines = await get_wines(session, [wine_ids[index - 1]])
        return (wines[0].external_id, wines[0].name) if wines else None
