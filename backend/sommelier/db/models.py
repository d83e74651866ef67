"""SQLAlchemy 2 typed ORM models. Admins read these tables directly, so names are plain."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, ClassVar

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Text,
    UniqueConstraint,
    false,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

# Stable constraint names keep migrations identical on SQLite and PostgreSQL.
NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

# None is SQL NULL, not the JSON text 'null': admins query `reply IS NULL`.
JsonType = JSON(none_as_null=True).with_variant(JSONB(none_as_null=True), "postgresql")


def utcnow() -> datetime:
    return datetime.now(UTC)


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)
    type_annotation_map: ClassVar[dict[Any, Any]] = {
        dict[str, Any]: JsonType,
        list[str]: JsonType,
        list[dict[str, Any]]: JsonType,
    }


class User(Base):
    __tablename__ = "users"

    id: Mapped[int] = mapped_column(primary_key=True)
    telegram_id: Mapped[int | None] = mapped_column(BigInteger, unique=True)
    local_name: Mapped[str | None] = mapped_column(String(100), unique=True)
    display_name: Mapped[str] = mapped_column(String(200))
    language: Mapped[str | None] = mapped_column(String(16))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)

    conversations: Mapped[list[Conversation]] = relationship(back_populates="user")


class Conversation(Base):
    """A conversation is a chat's (Telegram) or a person's (terminal): a person's private chat
    and a group they share with the bot keep separate histories."""

    __tablename__ = "conversations"
    __table_args__ = (
        Index("ix_conversations_user_open", "user_id", "channel", "closed_at"),
        Index("ix_conversations_chat_open", "channel", "chat_id", "closed_at"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    channel: Mapped[str] = mapped_column(String(16))  # telegram | cli
    chat_id: Mapped[int | None] = mapped_column(BigInteger)  # Telegram's chat; None for cli
    topic_id: Mapped[int | None] = mapped_column(BigInteger)  # a forum topic of that chat
    started_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    last_activity_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    closed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    close_reason: Mapped[str | None] = mapped_column(String(32))  # new | inactive | reset

    user: Mapped[User] = relationship(back_populates="conversations")


class Message(Base):
    __tablename__ = "messages"
    __table_args__ = (Index("ix_messages_conversation_recent", "conversation_id", "id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    conversation_id: Mapped[int] = mapped_column(ForeignKey("conversations.id", ondelete="CASCADE"))
    role: Mapped[str] = mapped_column(String(16))  # user | assistant
    text: Mapped[str] = mapped_column(Text)  # as shown to the person
    reply: Mapped[dict[str, Any] | None] = mapped_column()  # structured reply (assistant only)
    wine_ids: Mapped[list[str] | None] = mapped_column()
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    # The reply's Langfuse trace (when tracing is on): a later 👍/👎 becomes a score on it.
    trace_id: Mapped[str | None] = mapped_column(String(32))


class ModelCall(Base):
    """One row per model attempt, written by the agent."""

    __tablename__ = "model_calls"
    __table_args__ = (Index("ix_model_calls_created_at", "created_at"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    conversation_id: Mapped[int | None] = mapped_column(
        ForeignKey("conversations.id", ondelete="SET NULL"), index=True
    )
    message_id: Mapped[int | None] = mapped_column(ForeignKey("messages.id", ondelete="SET NULL"))
    turn_id: Mapped[str] = mapped_column(String(36), index=True)
    attempt: Mapped[int] = mapped_column(Integer)  # 1-based, within the turn
    purpose: Mapped[str] = mapped_column(String(16))  # tool_round | answer | repair | compaction
    recovery_level: Mapped[int] = mapped_column(Integer, default=0)  # 0 tools, 1 repair, 2 compact
    model: Mapped[str] = mapped_column(String(200))
    prompt_tokens: Mapped[int | None] = mapped_column(Integer)
    completion_tokens: Mapped[int | None] = mapped_column(Integer)
    cached_tokens: Mapped[int | None] = mapped_column(Integer)  # from the prompt cache
    # The server reported no usage (llama.cpp's streams): the counts above were counted here.
    usage_estimated: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    latency_ms: Mapped[int] = mapped_column(Integer)
    finish_reason: Mapped[str | None] = mapped_column(String(32))
    outcome: Mapped[str] = mapped_column(String(32))  # tool_calls | ok | invalid | refused | error
    error_kind: Mapped[str | None] = mapped_column(String(32))
    error_message: Mapped[str | None] = mapped_column(Text)
    # The reply rules (chat/rules.py) that fired on this call's answer, in order.
    rules: Mapped[list[str] | None] = mapped_column(JsonType)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class Wine(Base):
    __tablename__ = "wines"

    id: Mapped[int] = mapped_column(primary_key=True)
    external_id: Mapped[str] = mapped_column(String(64), unique=True)
    name: Mapped[str] = mapped_column(String(300))
    producer: Mapped[str | None] = mapped_column(String(300))
    country: Mapped[str | None] = mapped_column(String(100), index=True)
    region: Mapped[str | None] = mapped_column(String(200))
    grapes: Mapped[list[str]] = mapped_column(default=list)
    type: Mapped[str] = mapped_column(String(16), index=True)
    sweetness: Mapped[str | None] = mapped_column(String(16))
    body: Mapped[str | None] = mapped_column(String(16))
    acidity: Mapped[str | None] = mapped_column(String(16))
    abv: Mapped[float | None] = mapped_column(Float)
    vintage: Mapped[str | None] = mapped_column(String(8))  # a year or "NV"
    price: Mapped[float | None] = mapped_column(Float, index=True)
    currency: Mapped[str | None] = mapped_column(String(3))
    description: Mapped[str | None] = mapped_column(Text)
    food_pairings: Mapped[list[str]] = mapped_column(default=list)
    rating_avg: Mapped[float | None] = mapped_column(Float)
    rating_count: Mapped[int] = mapped_column(Integer, default=0)
    # Accent- and case-folded text used by filters and full-text search (see catalog/text.py).
    search_text: Mapped[str] = mapped_column(Text, default="")
    grape_keys: Mapped[str] = mapped_column(Text, default="")  # "|syrah|grenache|"
    food_keys: Mapped[str] = mapped_column(Text, default="")  # "|beef|lamb|"
    country_key: Mapped[str] = mapped_column(String(100), default="", index=True)
    region_key: Mapped[str] = mapped_column(String(200), default="")
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class WineRating(Base):
    __tablename__ = "wine_ratings"
    __table_args__ = (UniqueConstraint("source", "source_rating_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    wine_id: Mapped[int] = mapped_column(ForeignKey("wines.id", ondelete="CASCADE"), index=True)
    source: Mapped[str] = mapped_column(String(32))
    source_rating_id: Mapped[str] = mapped_column(String(64))
    rater_id: Mapped[str | None] = mapped_column(String(64))
    vintage: Mapped[str | None] = mapped_column(String(8))
    rating: Mapped[float] = mapped_column(Float)
    rated_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class ModelEndpoint(Base):
    """What `sommelier model check` found about one endpoint and model (agent/profile.py)."""

    __tablename__ = "model_endpoints"
    __table_args__ = (UniqueConstraint("base_url", "model"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    base_url: Mapped[str] = mapped_column(String(500))
    model: Mapped[str] = mapped_column(String(200))
    profile: Mapped[dict[str, Any]] = mapped_column()
    checked_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class ModelTurn(Base):
    """A turn's place at a model endpoint shared by several processes (chat/model_queue.py):
    waiting (`admitted_at` NULL), running, or finished (`seconds`, kept for the estimates).
    `seen_at` is its process's heartbeat: a row nobody touches for a while is a dead process's
    and is removed."""

    __tablename__ = "model_turns"
    __table_args__ = (Index("ix_model_turns_endpoint", "endpoint", "finished_at"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    endpoint: Mapped[str] = mapped_column(String(720))
    party: Mapped[str] = mapped_column(String(200))
    owner: Mapped[str] = mapped_column(String(64))  # the process (a random id per process)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    admitted_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    seen_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    seconds: Mapped[float | None] = mapped_column(Float)


class InboundMessage(Base):
    """Every message a person sent, kept for the admin even when its turn failed.

    Also the delivery ledger of the Telegram bot: `update_id` de-duplicates redelivered updates
    and `reply_parts`/`parts_sent` let an interrupted multi-message reply resume. `run` counts
    the runs of its turn: only the latest may store or send its reply (db/turns.py).
    """

    __tablename__ = "inbound_messages"
    __table_args__ = (UniqueConstraint("channel", "update_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    channel: Mapped[str] = mapped_column(String(16))
    update_id: Mapped[int | None] = mapped_column(BigInteger)
    chat_id: Mapped[int | None] = mapped_column(BigInteger)
    user_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    conversation_id: Mapped[int | None] = mapped_column(
        ForeignKey("conversations.id", ondelete="SET NULL")
    )
    text: Mapped[str] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(16), default="received")
    reply_parts: Mapped[list[dict[str, Any]] | None] = mapped_column()
    parts_sent: Mapped[int] = mapped_column(Integer, default=0)
    run: Mapped[int] = mapped_column(Integer, default=1, server_default="1")
    # The stored reply this message got: its wines are what the reply's buttons refer to.
    reply_message_id: Mapped[int | None] = mapped_column(
        ForeignKey("messages.id", ondelete="SET NULL")
    )
    received_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class Feedback(Base):
    """A 👍 or 👎 on a reply (`card` 0) or on one of its wine cards (`card` 1…). A second press
    changes the stored value; the unique key means it never adds a row."""

    __tablename__ = "feedback"
    __table_args__ = (UniqueConstraint("user_id", "message_id", "card"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    message_id: Mapped[int] = mapped_column(ForeignKey("messages.id", ondelete="CASCADE"))
    card: Mapped[int] = mapped_column(Integer, default=0)
    wine_id: Mapped[str | None] = mapped_column(String(64))  # the card's wine; None for a reply
    value: Mapped[int] = mapped_column(Integer)  # 1 = 👍, -1 = 👎
    reason: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class TasteProfile(Base):
    """What a person likes, kept across conversations; `/forget` deletes the row."""

    __tablename__ = "taste_profiles"

    user_id: Mapped[int] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
    )
    # {"type": [...], "grape": [...], "country": [...], "region": [...]}
    likes: Mapped[dict[str, Any]] = mapped_column()
    # the same keys, plus "wine": ids the person gave a 👎
    dislikes: Mapped[dict[str, Any]] = mapped_column()
    max_price: Mapped[float | None] = mapped_column(Float)
    # The currency the budget was said in (None: the catalog's).
    budget_currency: Mapped[str | None] = mapped_column(String(3))
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class ChatSetting(Base):
    """How the bot behaves in a group chat, as its admins set it (/sommelier_all)."""

    __tablename__ = "chat_settings"

    channel: Mapped[str] = mapped_column(String(16), primary_key=True)
    chat_id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    # Answer every message, not only those that mention the bot or reply to it.
    answer_all: Mapped[bool] = mapped_column(Boolean, default=False)
    changed_by: Mapped[int | None] = mapped_column(BigInteger)  # the admin's Telegram id
    changed_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class Cellar(Base):
    """The bottles a person owns (`user_id`), or a group chat's members share (`chat_id`)."""

    __tablename__ = "cellars"

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), unique=True
    )
    chat_id: Mapped[int | None] = mapped_column(BigInteger, unique=True)  # a Telegram group
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    # Weekly reminders (cellar/reminders.py): to this chat, in this language, next at remind_at;
    # no chat, none.
    remind_chat_id: Mapped[int | None] = mapped_column(BigInteger)
    remind_language: Mapped[str | None] = mapped_column(String(16))
    remind_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), index=True)


class CellarBottle(Base):
    """Bottles of one wine and vintage in one place. `wine_id` is the catalog's id when the
    wine is in the catalog; the name, producer and style are kept either way, so a wine the
    catalog lacks (or later drops) is still the person's own row."""

    __tablename__ = "cellar_bottles"
    __table_args__ = (Index("ix_cellar_bottles_cellar", "cellar_id", "quantity"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    cellar_id: Mapped[int] = mapped_column(ForeignKey("cellars.id", ondelete="CASCADE"))
    wine_id: Mapped[str | None] = mapped_column(String(64))  # the catalog's external id
    name: Mapped[str] = mapped_column(String(300))
    producer: Mapped[str | None] = mapped_column(String(300))
    country: Mapped[str | None] = mapped_column(String(100))
    region: Mapped[str | None] = mapped_column(String(200))
    type: Mapped[str | None] = mapped_column(String(16))
    grapes: Mapped[list[str]] = mapped_column(default=list)
    vintage: Mapped[str | None] = mapped_column(String(8))  # a year or "NV"
    quantity: Mapped[int] = mapped_column(Integer)
    location: Mapped[str | None] = mapped_column(String(200))  # where it lies, in their words
    price_paid: Mapped[float | None] = mapped_column(Float)
    currency: Mapped[str | None] = mapped_column(String(3))
    # The person's own drink window (years), over the table's (cellar/data/drink_windows.toml).
    drink_from: Mapped[int | None] = mapped_column(Integer)
    drink_until: Mapped[int | None] = mapped_column(Integer)
    told: Mapped[str | None] = mapped_column(String(16))  # the readiness a reminder last said
    source: Mapped[str] = mapped_column(
        String(32)
    )  # message | photo | csv | cellartracker | vivino
    added_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class CellarEvent(Base):
    """What happened to bottles: added, opened, gone, rated. A rating is its person's own,
    in a shared cellar too."""

    __tablename__ = "cellar_events"

    id: Mapped[int] = mapped_column(primary_key=True)
    bottle_id: Mapped[int] = mapped_column(
        ForeignKey("cellar_bottles.id", ondelete="CASCADE"), index=True
    )
    user_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    kind: Mapped[str] = mapped_column(String(16))  # added | opened | gone | rated
    quantity: Mapped[int] = mapped_column(Integer, default=0)
    rating: Mapped[float | None] = mapped_column(Float)  # 1–5 stars
    note: Mapped[str | None] = mapped_column(Text)
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    # An opened bottle's "how was it?": due at `ask_at`, taken to be sent at `asked_at` (by one
    # process: cellar/opened.py), sent to `chat_id` as `message_id`. A rating's `message_id` is
    # its thanks, which a note replies to.
    ask_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), index=True)
    asked_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    chat_id: Mapped[int | None] = mapped_column(BigInteger)
    message_id: Mapped[int | None] = mapped_column(BigInteger)
