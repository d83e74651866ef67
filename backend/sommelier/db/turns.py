"""A turn in SQL, one way for every database: `begin` and `finish`, one transaction each, and
the inbound message's whole life (the bot's delivery ledger too) in this one place.

- `begin`: the person (created on first contact), their open conversation (a new one after a
  quiet spell), its recent messages and their taste, and the inbound row. A redelivered update
  whose turn gave no answer runs again; one that was answered comes back as `Duplicate`.
- `record_call`: each model call as it finishes, so a turn cut short (a crash, a database that
  went away) still shows its calls.
- `finish`: an answer's two messages, its calls linked to the reply and the inbound status; or,
  for a turn that gave no answer, the status alone.
- Runs: a turn run again (its worker stalled, and the queue gave its job to another) takes the
  row over (`run` + 1); the run it took it from, if it wakes up, may no longer store its end
  (`Superseded`) or send a part (`save_parts`, `mark_sent` say False), so the person gets one
  reply, whichever worker finishes.
- `sweep`: inbound rows left `received` past the turn deadline (the process died, or the
  database went away mid-turn) are marked `interrupted`, once, and returned so the person can
  be offered a retry.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from enum import StrEnum
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from sommelier.db import repositories as repo
from sommelier.db.models import Conversation, InboundMessage, Message, ModelCall, User, utcnow
from sommelier.db.repositories import Person, Said
from sommelier.db.session import again_if_dropped, dialect_insert, patiently


class InboundStatus(StrEnum):
    """Where a message a person sent stands; the one list of these values."""

    received = "received"  # its turn runs (or ran, and the process died: `sweep`)
    # A turn's end (agent.records.Status, and the chat service's own).
    ok = "ok"
    refused = "refused"
    exhausted = "exhausted"
    reset = "reset"
    error = "error"  # the model could not be reached
    interrupted = "interrupted"  # the model's stream broke, or the turn was cut short
    timeout = "timeout"
    failed = "failed"
    cancelled = "cancelled"
    busy = "busy"  # waited for the model past the queue's limit
    # Handled without a turn.
    answered = "answered"  # a command
    rate_limited = "rate_limited"
    too_long = "too_long"
    # Answered, but the reply never reached the person.
    undelivered = "undelivered"


# Turns that gave the person no answer: a redelivered update runs them again. `received` is
# among them because a chat's updates are handled one at a time (bot/ordering.py, the queue's
# per-chat lock): a `received` row met again is a run that died with its process.
RUN_AGAIN = (
    InboundStatus.received,
    InboundStatus.failed,
    InboundStatus.cancelled,
    InboundStatus.error,
    InboundStatus.timeout,
    InboundStatus.busy,
)
log = logging.getLogger("sommelier.db")
# What the bot's Retry button sends again.
RETRY = (InboundStatus.interrupted, InboundStatus.undelivered)


class Superseded(Exception):
    """A later run of the same message's turn owns its row: this run stores and sends nothing."""


def log_superseded(subject: str, **ids: object) -> None:
    """Log that this run of a message (`subject`: "turn …", "message …") was taken over, on
    whichever path found out: finishing, saving its parts or sending them."""
    log.warning(
        "%s was run again elsewhere while this run stalled; this run's reply is dropped",
        subject,
        extra={"event": "turn_superseded", **ids},
    )


MAX_ROW_ID = 2**31  # an INTEGER key: a larger id in a button's data is no row


@dataclass(frozen=True, slots=True)
class Begun:
    """A turn that may run: who, where, and what it starts from."""

    user_id: int
    conversation_id: int
    inbound_id: int
    channel: str
    thread: int | None = None
    history: list[Said] = field(default_factory=list)
    taste: Any = None  # the TasteProfile row, or None
    topic: int | None = None  # the forum topic, in a group that has topics
    run: int = 1  # which run of the message's turn this is


@dataclass(frozen=True, slots=True)
class Duplicate:
    """An update that was answered before: nothing runs, and what is left of its reply is
    this run's to send (`run`)."""

    conversation_id: int
    inbound_id: int | None
    run: int = 1


@dataclass(frozen=True, slots=True)
class Stale:
    """A turn left unfinished, marked interrupted by `sweep`."""

    inbound_id: int
    channel: str
    chat_id: int | None
    text: str


@dataclass(frozen=True, slots=True)
class Pending:
    """The parts of a reply not sent yet."""

    parts: list[dict[str, Any]]
    sent: int


class TurnStore:
    def __init__(
        self,
        sessions: async_sessionmaker[AsyncSession],
        inactivity: timedelta = timedelta(hours=12),
        history_limit: int = 40,
    ) -> None:
        self.sessions = sessions
        self.inactivity = inactivity
        self.history_limit = history_limit

    # -- a turn ----------------------------------------------------------------------------

    @again_if_dropped
    async def begin(
        self,
        person: Person,
        text: str,
        key: int | None = None,
        thread: int | None = None,
        topic: int | None = None,
    ) -> Begun | Duplicate:
        async with self.sessions() as session, session.begin():
            found = await repo.known(session, person, thread, self.history_limit, topic)
            user = await repo.user_or_create(session, person, found.user)
            conversation = await self._conversation(session, user, person, (thread, topic), found)
            inbound_id = await _record(
                session,
                channel=person.channel,
                text=text,
                update_id=key,
                chat_id=thread,
                user_id=user.id,
                conversation_id=conversation.id,
            )
            run = 1
            if inbound_id is None:  # redelivered: run it again only if it gave no answer
                again = await self._run_again(session, person.channel, key)
                if again is None:
                    claimed = await _take_over(session, person.channel, key)
                    return Duplicate(conversation.id, *(claimed or (None, 1)))
                inbound_id, run = again
            history = await self._history(session, conversation, found)
        channel = person.channel
        return Begun(
            user.id, conversation.id, inbound_id, channel, thread, history, found.taste, topic, run
        )

    async def _conversation(
        self,
        session: AsyncSession,
        user: User,
        person: Person,
        place: tuple[int | None, int | None],
        found: repo.Known,
    ) -> Conversation:
        """`place`: the chat and its forum topic (None: the person's own conversation)."""
        thread, topic = place
        if found.user is None and thread is not None:
            # A newcomer in a group chat: the chat may have an open conversation already.
            return await repo.open_conversation(
                session, user, person.channel, self.inactivity, thread, topic
            )
        return await repo.continue_or_start(
            session, user, person.channel, self.inactivity, thread, found.conversation, topic
        )

    async def _history(
        self, session: AsyncSession, conversation: Conversation, found: repo.Known
    ) -> list[Said]:
        """The conversation's recent messages: read with the person when it is the one they
        had open, none when it is new, read now for a group chat met for the first time."""
        if found.conversation is not None and conversation.id == found.conversation.id:
            return found.history
        if found.user is None and conversation.chat_id is not None:
            return await repo.recent_messages(session, conversation.id, self.history_limit)
        return []

    @staticmethod
    async def _run_again(
        session: AsyncSession, channel: str, key: int | None
    ) -> tuple[int, int] | None:
        """The row of a redelivered update whose turn gave no answer, taken over by this run:
        (its id, this run's number)."""
        if key is None:
            return None
        found = await session.execute(
            update(InboundMessage)
            .where(
                InboundMessage.channel == channel,
                InboundMessage.update_id == key,
                InboundMessage.status.in_([str(s) for s in RUN_AGAIN]),
            )
            .values(
                status=InboundStatus.received,
                finished_at=None,
                reply_parts=None,
                parts_sent=0,
                received_at=utcnow(),
                run=InboundMessage.run + 1,
            )
            .returning(InboundMessage.id, InboundMessage.run)
        )
        row = found.first()
        return (row[0], row[1]) if row is not None else None

    async def record_call(self, row: dict[str, Any]) -> None:
        """One model call, as it finished (its reply is linked when the turn is stored)."""
        async with self.sessions() as session, session.begin():
            await repo.insert_model_calls(session, [row])

    async def finish(
        self,
        begun: Begun,
        status: InboundStatus,
        turn_id: str,
        *,
        calls: Sequence[dict[str, Any]] = (),
        exchange: Sequence[dict[str, Any]] = (),
        reset: bool = False,
        also: Callable[[AsyncSession], Awaitable[None]] | None = None,
    ) -> int | None:
        """The end of a turn, in one transaction: the calls not recorded yet, and the status.
        An answer adds the person's message and the reply (`exchange`), links the turn's calls
        to the reply and returns its id; `reset` closes the conversation; `also` writes what
        the caller keeps with the answer (the taste it learnt). A run that no longer owns the
        row raises Superseded, and nothing of it is stored."""
        async with self.sessions() as session, session.begin():
            await repo.insert_model_calls(session, list(calls))
            reply_id = None
            if exchange:
                _, reply_id = await repo.insert_exchange(
                    session, begun.conversation_id, list(exchange)
                )
                await session.execute(
                    update(ModelCall)
                    .where(ModelCall.turn_id == turn_id)
                    .values(message_id=reply_id)
                )
            if reset:
                await repo.close_open_conversations(
                    session, begun.user_id, begun.channel, "reset", begun.thread, begun.topic
                )
            if also is not None:
                await also(session)
            if not await _set_status(session, begun, status, reply_id):
                raise Superseded(f"inbound {begun.inbound_id}: run {begun.run} was taken over")
        return reply_id

    async def sweep(self, channel: str, older_than: timedelta) -> list[Stale]:
        """A channel's turns left `received` for longer than a turn may take (their process
        died, or the database went away mid-turn): marked interrupted, and returned once."""
        cutoff = utcnow() - older_than
        async with self.sessions() as session, session.begin():
            rows = await session.execute(
                update(InboundMessage)
                .where(
                    InboundMessage.channel == channel,
                    InboundMessage.status == InboundStatus.received,
                    InboundMessage.received_at < cutoff,
                )
                .values(status=InboundStatus.interrupted, finished_at=utcnow())
                .returning(
                    InboundMessage.id,
                    InboundMessage.channel,
                    InboundMessage.chat_id,
                    InboundMessage.text,
                )
            )
            return [Stale(*row) for row in rows.all()]

    # -- the bot's delivery ledger ----------------------------------------------------------

    @again_if_dropped
    async def claim(
        self,
        person: Person | None,
        channel: str,
        key: int,
        thread: int | None,
        text: str,
        status: InboundStatus,
    ) -> bool:
        """An update answered without a turn (a command, a notice); False when it was
        handled before (a redelivery)."""
        async with self.sessions() as session, session.begin():
            user_id = (await repo.get_or_create_user(session, person)).id if person else None
            inbound_id = await _record(
                session,
                channel=channel,
                text=text,
                update_id=key,
                chat_id=thread,
                user_id=user_id,
                status=status,
            )
        return inbound_id is not None

    async def save_parts(self, inbound_id: int, parts: list[dict[str, Any]], run: int) -> bool:
        """A reply's messages, before the first is sent: what redelivery sends if it fails.
        False when a later run owns the row: this run sends nothing."""
        return await self._update(inbound_id, run, reply_parts=parts, parts_sent=0)

    @patiently
    async def mark_sent(self, inbound_id: int, sent: int, run: int) -> bool:
        """False when a later run took the sending over: this run sends no further part. The
        part is sent: a database restart is waited out (`patiently`), so the next part waits
        too, and a redelivery of the update does not send this one again."""
        return await self._update(inbound_id, run, parts_sent=sent, finished_at=utcnow())

    async def _update(self, inbound_id: int, run: int | None = None, **values: Any) -> bool:
        statement = update(InboundMessage).where(InboundMessage.id == inbound_id)
        if run is not None:
            statement = statement.where(InboundMessage.run == run)
        async with self.sessions() as session, session.begin():
            done = await session.execute(statement.values(**values))
        return bool(getattr(done, "rowcount", 0))

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
        status = InboundStatus.undelivered
        await self._update(inbound_id, status=status, finished_at=utcnow())

    async def retry_text(self, channel: str, thread: int) -> str | None:
        """The chat's latest message whose answer broke off or never arrived, for "Retry"."""
        async with self.sessions() as session:
            return await session.scalar(
                select(InboundMessage.text)
                .where(
                    InboundMessage.channel == channel,
                    InboundMessage.chat_id == thread,
                    InboundMessage.status.in_([str(s) for s in RETRY]),
                )
                .order_by(InboundMessage.id.desc())
                .limit(1)
            )

    async def reply_wine(
        self, inbound_id: int, index: int, channel: str, chat_id: int | None
    ) -> str | None:
        """The id of the index-th wine (1-based) of the reply to a message of this chat: a
        button's data is the person's to forge, and another chat's reply is none of theirs."""
        wine_ids = await self.reply_wines(inbound_id, channel, chat_id)
        if not 1 <= index <= len(wine_ids):
            return None
        return wine_ids[index - 1]

    async def reply_wines(self, inbound_id: int, channel: str, chat_id: int | None) -> list[str]:
        """The wines of the reply to a message of this chat, in the reply's order."""
        async with self.sessions() as session:
            stored = await stored_reply(session, inbound_id, channel, chat_id)
        return [str(wine_id) for wine_id in (stored.wine_ids if stored else None) or []]


async def stored_reply(
    session: AsyncSession, inbound_id: int, channel: str, chat_id: int | None
) -> Message | None:
    """The stored reply to a message of this chat (a button's data names the message, and is
    the person's to forge: another chat's reply is none of theirs)."""
    if not 0 < inbound_id < MAX_ROW_ID or chat_id is None:
        return None
    return await session.scalar(
        select(Message)
        .join(InboundMessage, InboundMessage.reply_message_id == Message.id)
        .where(
            InboundMessage.id == inbound_id,
            InboundMessage.channel == channel,
            InboundMessage.chat_id == chat_id,
        )
    )


async def _record(session: AsyncSession, **row: Any) -> int | None:
    """A new inbound row; None when its update was recorded before (a redelivery). One INSERT
    … ON CONFLICT DO NOTHING: race-free without a savepoint."""
    statement = (
        dialect_insert(session, InboundMessage)
        .on_conflict_do_nothing(index_elements=["channel", "update_id"])
        .returning(InboundMessage.id)
    )
    values = {"status": InboundStatus.received, "parts_sent": 0, "received_at": utcnow(), **row}
    return await session.scalar(statement, values)


async def _take_over(
    session: AsyncSession, channel: str, key: int | None
) -> tuple[int, int] | None:
    """An answered update met again: what is left of its reply is this run's to send (the run
    that sent the rest, if it still lives, sends no further part)."""
    if key is None:
        return None
    found = await session.execute(
        update(InboundMessage)
        .where(InboundMessage.channel == channel, InboundMessage.update_id == key)
        .values(run=InboundMessage.run + 1)
        .returning(InboundMessage.id, InboundMessage.run)
    )
    row = found.first()
    return (row[0], row[1]) if row is not None else None


async def _set_status(
    session: AsyncSession, begun: Begun, status: InboundStatus, reply_id: int | None
) -> bool:
    """The turn's end, if this run still owns the row."""
    done = await session.execute(
        update(InboundMessage)
        .where(InboundMessage.id == begun.inbound_id, InboundMessage.run == begun.run)
        .values(status=status, finished_at=utcnow(), reply_message_id=reply_id)
    )
    return bool(getattr(done, "rowcount", 0))
