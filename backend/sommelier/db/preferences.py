"""Queries for what people tell us about their taste: feedback presses and taste profiles."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from sommelier.db.models import Conversation, Feedback, Message, TasteProfile, utcnow


@dataclass(frozen=True, slots=True)
class RatedReply:
    """The reply a press is about: its id, the turn that made it, and the wines it showed."""

    message_id: int
    trace_id: str | None
    wine_ids: list[str]


async def rated_reply(
    session: AsyncSession,
    user_id: int,
    message_id: int | None,
    conversation_id: int | None,
    chat_id: int | None = None,
) -> RatedReply | None:
    """A reply the person may rate: `message_id`, else the latest reply in `conversation_id`,
    else their latest reply anywhere. In a chat (`chat_id`) any reply of that chat's: a group's
    conversation is stored under whoever spoke first, and every member's press counts."""
    mine = (
        Conversation.chat_id == chat_id if chat_id is not None else Conversation.user_id == user_id
    )
    query = (
        select(Message.id, Message.wine_ids, Message.trace_id)
        .join(Conversation, Conversation.id == Message.conversation_id)
        .where(mine, Message.role == "assistant")
    )
    if message_id is not None:
        query = query.where(Message.id == message_id)
    elif conversation_id is not None:
        query = query.where(Message.conversation_id == conversation_id)
    row = (await session.execute(query.order_by(Message.id.desc()).limit(1))).first()
    if row is None:
        return None
    return RatedReply(row.id, row.trace_id, list(row.wine_ids or []))


async def save_feedback(
    session: AsyncSession,
    user_id: int,
    reply: RatedReply,
    card: int,
    value: int,
    reason: str | None,
) -> str | None:
    """Store a press; a second press on the same reply or card changes the row. Returns the
    card's wine id (None for the reply as a whole)."""
    wine_id = reply.wine_ids[card - 1] if card else None
    existing = await session.scalar(
        select(Feedback).where(
            Feedback.user_id == user_id,
            Feedback.message_id == reply.message_id,
            Feedback.card == card,
        )
    )
    if existing is None:
        session.add(
            Feedback(
                user_id=user_id,
                message_id=reply.message_id,
                card=card,
                wine_id=wine_id,
                value=value,
                reason=reason,
            )
        )
    else:
        existing.value, existing.updated_at = value, utcnow()
        existing.reason = reason if reason is not None else existing.reason
    await session.flush()
    return wine_id


async def load_taste(session: AsyncSession, user_id: int) -> TasteProfile | None:
    return await session.get(TasteProfile, user_id)


async def save_taste(
    session: AsyncSession,
    user_id: int,
    likes: dict[str, Any],
    dislikes: dict[str, Any],
    max_price: float | None,
    currency: str | None = None,
) -> None:
    row = await session.get(TasteProfile, user_id)
    if row is None:
        row = TasteProfile(user_id=user_id)
        session.add(row)
    row.likes, row.dislikes, row.updated_at = likes, dislikes, utcnow()
    row.max_price, row.budget_currency = max_price, currency
    await session.flush()


async def delete_taste(session: AsyncSession, user_id: int) -> bool:
    result = await session.execute(delete(TasteProfile).where(TasteProfile.user_id == user_id))
    return bool(getattr(result, "rowcount", 0))
