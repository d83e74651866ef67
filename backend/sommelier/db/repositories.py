"""Repositories: the queries the application makes, in one place, typed.

The statements a turn runs are built once, with bound parameters: building a SQLAlchemy
statement and its cache key costs more than SQLite takes to run it."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import cache
from typing import Any

from sqlalchemy import ColumnElement, Select, and_, bindparam, func, insert, or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased

from sommelier.db.models import (
    Base,
    Conversation,
    Message,
    ModelCall,
    ModelEndpoint,
    TasteProfile,
    User,
    utcnow,
)
from sommelier.db.session import as_utc, dialect_insert


@dataclass(frozen=True, slots=True)
class Person:
    """Who is talking: a Telegram user or a local (terminal) name."""

    channel: str  # telegram | cli
    telegram_id: int | None = None
    local_name: str | None = None
    display_name: str = ""
    language: str | None = None


async def get_or_create_user(session: AsyncSession, person: Person) -> User:
    found = await session.scalar(select(User).where(_user_match(person)))
    return await user_or_create(session, person, found)


async def user_or_create(session: AsyncSession, person: Person, found: User | None) -> User:
    """`found` (the person's row, kept up to date), or a new row on first contact."""
    query = select(User).where(_user_match(person))
    if found:
        if person.display_name and found.display_name != person.display_name:
            found.display_name = person.display_name
        return found
    user = User(
        telegram_id=person.telegram_id,
        local_name=person.local_name,
        display_name=person.display_name or person.local_name or str(person.telegram_id),
        language=person.language,
    )
    try:
        async with session.begin_nested():
            session.add(user)
    except IntegrityError:  # created meanwhile by a concurrent turn
        found = await session.scalar(query)
        assert found is not None
        return found
    return user


def _scope(
    user_id: Any, channel: Any, chat_id: Any, topic: Any = None
) -> list[ColumnElement[bool]]:
    """A chat's conversations (Telegram: one per forum topic, `topic`), or a person's where
    there is no chat (terminal). `user_id`: an id, or `User.id` inside a correlated subquery;
    the others values or bound parameters."""
    if chat_id is not None:
        return [
            Conversation.channel == channel,
            Conversation.chat_id == chat_id,
            Conversation.topic_id.is_not_distinct_from(topic),
        ]
    return [
        Conversation.user_id == user_id,
        Conversation.channel == channel,
        Conversation.chat_id.is_(None),
    ]


@dataclass(frozen=True, slots=True)
class Said:
    """A stored message as a turn replays it: plain columns, no ORM object to build."""

    id: int
    role: str
    text: str
    reply: dict[str, Any] | None
    wine_ids: list[str] | None


_SAID = (Message.id, Message.role, Message.text, Message.reply, Message.wine_ids)


@dataclass(frozen=True, slots=True)
class Known:
    """What a turn starts from, read in one statement: the person, their open conversation,
    its recent messages (as `recent_messages` reads them) and their taste profile (None, or no
    messages, where there is none yet)."""

    user: User | None
    conversation: Conversation | None
    taste: TasteProfile | None
    history: list[Said] = field(default_factory=list)


def _user_match(person: Person) -> ColumnElement[bool]:
    if person.telegram_id is not None:
        return User.telegram_id == person.telegram_id
    return User.local_name == person.local_name


def _recent(conversation_id: Any, limit: Any) -> ColumnElement[bool]:
    """Messages of a conversation worth replaying: the first thing the person asked and the
    last `limit`. `conversation_id`: an id, or `Conversation.id` inside a correlated query."""
    other = aliased(Message)
    mine = other.conversation_id == conversation_id
    latest = select(other.id).where(mine).order_by(other.id.desc()).limit(limit)
    first = select(func.min(other.id)).where(mine, other.role == "user").scalar_subquery()
    return and_(
        Message.conversation_id == conversation_id,
        or_(Message.id.in_(latest), Message.id == first),
    )


@cache
def _known_query(by_telegram: bool, in_chat: bool) -> Select[Any]:
    """`known`'s statement for one kind of person and place; parameters `who`, `channel`,
    `chat_id` (in a chat) and `history_limit`."""
    who = User.telegram_id if by_telegram else User.local_name
    chat_id: Any = bindparam("chat_id") if in_chat else None
    topic: Any = bindparam("topic") if in_chat else None
    latest_open = (
        select(func.max(Conversation.id))
        .where(
            *_scope(User.id, bindparam("channel"), chat_id, topic),
            Conversation.closed_at.is_(None),
        )
        .correlate(User)
        .scalar_subquery()
    )
    return (
        select(User, Conversation, TasteProfile, *_SAID)
        .select_from(User)
        .outerjoin(Conversation, Conversation.id == latest_open)
        .outerjoin(TasteProfile, TasteProfile.user_id == User.id)
        .outerjoin(Message, _recent(Conversation.id, bindparam("history_limit")))
        .where(who == bindparam("who"))
        .order_by(Message.id)
    )


async def known(
    session: AsyncSession,
    person: Person,
    chat_id: int | None,
    history_limit: int = 40,
    topic: int | None = None,
) -> Known:
    """One round trip: a row per history message (or one row without), the person, the open
    conversation and the taste profile repeated on each."""
    by_telegram = person.telegram_id is not None
    statement = _known_query(by_telegram, chat_id is not None)
    parameters = {
        "who": person.telegram_id if by_telegram else person.local_name,
        "channel": person.channel,
        "chat_id": chat_id,
        "topic": topic,
        "history_limit": history_limit,
    }
    rows = (await session.execute(statement, parameters)).all()
    if not rows:
        return Known(None, None, None)
    user, conversation, taste = rows[0][:3]
    return Known(user, conversation, taste, [Said(*row[3:]) for row in rows if row[3] is not None])


async def open_conversation(
    session: AsyncSession,
    user: User,
    channel: str,
    inactivity: timedelta,
    chat_id: int | None = None,
    topic: int | None = None,
) -> Conversation:
    """The chat's (or person's) open conversation, or a new one after `inactivity`."""
    current = await session.scalar(
        select(Conversation)
        .where(*_scope(user.id, channel, chat_id, topic), Conversation.closed_at.is_(None))
        .order_by(Conversation.id.desc())
        .limit(1)
    )
    return await continue_or_start(session, user, channel, inactivity, chat_id, current, topic)


async def continue_or_start(
    session: AsyncSession,
    user: User,
    channel: str,
    inactivity: timedelta,
    chat_id: int | None,
    current: Conversation | None,
    topic: int | None = None,
) -> Conversation:
    """`current` (the open conversation), or a new one when it is missing or went quiet."""
    now = utcnow()
    if current and now - as_utc(current.last_activity_at) <= inactivity:
        return current
    if current:
        current.closed_at, current.close_reason = now, "inactive"
    conversation = Conversation(
        user_id=user.id,
        channel=channel,
        chat_id=chat_id,
        topic_id=topic,
        started_at=now,
        last_activity_at=now,
    )
    session.add(conversation)
    await session.flush()
    return conversation


async def close_open_conversations(
    session: AsyncSession,
    user_id: int,
    channel: str,
    reason: str,
    chat_id: int | None = None,
    topic: int | None = None,
) -> None:
    await session.execute(
        update(Conversation)
        .where(*_scope(user_id, channel, chat_id, topic), Conversation.closed_at.is_(None))
        .values(closed_at=utcnow(), close_reason=reason)
    )


_RECENT = (
    select(*_SAID)
    .where(_recent(bindparam("conversation_id"), bindparam("history_limit")))
    .order_by(Message.id)
)


async def recent_messages(session: AsyncSession, conversation_id: int, limit: int) -> list[Said]:
    """The first user message of the conversation and the last `limit`, in order (one
    statement)."""
    parameters = {"conversation_id": conversation_id, "history_limit": limit}
    return [Said(*row) for row in await session.execute(_RECENT, parameters)]


_MESSAGES = Base.metadata.tables[Message.__tablename__]
# Core statements on the tables: the ORM's bulk path costs more than the statements do.
_INSERT_MESSAGES = insert(_MESSAGES).returning(_MESSAGES.c.id)
_INSERT_MODEL_CALLS = insert(Base.metadata.tables[ModelCall.__tablename__])


async def insert_exchange(
    session: AsyncSession, conversation_id: int, rows: list[dict[str, Any]]
) -> list[int]:
    """The person's message and the reply, in one statement; their ids in order."""
    values = [{"conversation_id": conversation_id, **r} for r in rows]
    ids = (await session.execute(_INSERT_MESSAGES, values)).scalars()
    # Ids grow with the order of the VALUES rows, whatever RETURNING's order (asking SQLAlchemy
    # to sort them makes SQLite insert row by row).
    return sorted(ids)


async def insert_model_calls(session: AsyncSession, rows: list[dict[str, Any]]) -> None:
    if rows:
        now = utcnow()
        await session.execute(_INSERT_MODEL_CALLS, [{"created_at": now, **row} for row in rows])


async def load_endpoint_profile(
    session: AsyncSession, base_url: str, model: str
) -> dict[str, Any] | None:
    return await session.scalar(
        select(ModelEndpoint.profile).where(
            ModelEndpoint.base_url == base_url, ModelEndpoint.model == model
        )
    )


async def save_endpoint_profile(
    session: AsyncSession, base_url: str, model: str, profile: dict[str, Any]
) -> None:
    statement = dialect_insert(session, ModelEndpoint).values(
        base_url=base_url, model=model, profile=profile, checked_at=utcnow()
    )
    await session.execute(
        statement.on_conflict_do_update(
            index_elements=["base_url", "model"],
            set_={
                "profile": statement.excluded.profile,
                "checked_at": statement.excluded.checked_at,
            },
        )
    )


@dataclass(frozen=True, slots=True)
class ConversationSummary:
    id: int
    started_at: datetime
    last_activity_at: datetime
    messages: int
    first_request: str | None
    open: bool


async def conversations_of(
    session: AsyncSession, user_id: int, channel: str, limit: int = 20
) -> list[ConversationSummary]:
    """A person's conversations, newest first, with their size and first request."""
    count = (
        select(func.count(Message.id))
        .where(Message.conversation_id == Conversation.id)
        .scalar_subquery()
    )
    first = (
        select(Message.text)
        .where(Message.conversation_id == Conversation.id, Message.role == "user")
        .order_by(Message.id)
        .limit(1)
        .scalar_subquery()
    )
    rows = await session.execute(
        select(Conversation, count, first)
        .where(Conversation.user_id == user_id, Conversation.channel == channel)
        .order_by(Conversation.last_activity_at.desc(), Conversation.id.desc())
        .limit(limit)
    )
    return [
        ConversationSummary(
            c.id, as_utc(c.started_at), as_utc(c.last_activity_at), n, text, c.closed_at is None
        )
        for c, n, text in rows.all()
    ]


async def reopen_conversation(
    session: AsyncSession, user_id: int, channel: str, conversation_id: int
) -> bool:
    """Make one of a person's conversations the open one again (closing the current one)."""
    owned = await session.scalar(
        select(Conversation.id).where(
            Conversation.id == conversation_id,
            Conversation.user_id == user_id,
            Conversation.channel == channel,
        )
    )
    if owned is None:
        return False
    await close_open_conversations(session, user_id, channel, "switched")
    await session.execute(
        update(Conversation)
        .where(Conversation.id == conversation_id)
        .values(closed_at=None, close_reason=None, last_activity_at=utcnow())
    )
    return True
