"""ChatService.turn: the single entry point of every front end (Telegram, terminal).

A turn always ends: whatever the model, the network or a tool does, the inbound message gets a
final status, the model calls made so far are stored, and the person gets a reply or a friendly
message. A cancelled turn (Ctrl-C) is stored as cancelled before the cancellation goes on.
"""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from functools import partial
from typing import Any, Literal, cast

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from sommelier.agent.loop import Agent, StreamSink
from sommelier.agent.messages import Message, system, user
from sommelier.agent.protocols import PROTOCOLS
from sommelier.agent.records import AgentResult, Status
from sommelier.agent.text import clean_text
from sommelier.agent.turn import TurnInput
from sommelier.catalog.search import get_wines, place_of, price_of, style_of
from sommelier.catalog.tool_arguments import PROFILE
from sommelier.catalog.tools import PREVIOUS, CatalogTools
from sommelier.chat.history import cut_for_storage, to_model_messages
from sommelier.chat.preferences import Preferences
from sommelier.chat.prompts import system_prompt
from sommelier.chat.reply import Reply, ResponseType
from sommelier.chat.taste import Taste, as_context, note
from sommelier.db import repositories as repo
from sommelier.db.answers import store_answer
from sommelier.db.models import Conversation, User, utcnow
from sommelier.db.repositories import Person, Said
from sommelier.db.session import (
    DATABASE_ERRORS,
    as_utc,
    autocommit,
    database_problem,
    describe_database,
)
from sommelier.observability.tracing import NoTracer, Tracer, mask_messages

log = logging.getLogger("sommelier.chat")

TurnStatus = Literal[
    "ok",
    "refused",
    "exhausted",
    "reset",
    "error",
    "interrupted",
    "timeout",
    "failed",
    "cancelled",
    "database",
    "duplicate",
]

FRIENDLY = {
    "exhausted": "Sorry, I couldn't put a proper answer together just now. Please try again.",
    "error": "I can't reach my wine brain right now. Please try again in a moment.",
    "reset": "I got tangled up there, so I'm starting our conversation fresh. "
    "Could you tell me again what you're looking for?",
    "refused": "I'm sorry, I can't help with that one. I'm happy to help with wine and food, "
    "though.",
    "interrupted": "The connection broke off while I was answering. Retry, or start over?",
    "timeout": "Sorry, that took me too long to think through. Please try again in a moment.",
    "failed": "Sorry, something went wrong on my side. Please try again in a moment.",
    "cancelled": "Cancelled.",
    "database": "I can't reach my records right now. Please try again in a moment.",
}


@dataclass(frozen=True, slots=True)
class Card:
    """A wine card: facts from the catalog row, `why` from the model."""

    wine_id: str
    name: str
    producer: str | None
    place: str | None
    grapes: list[str]
    style: str
    price: str | None
    rating: float | None
    rating_count: int
    why: str


@dataclass(slots=True)
class TurnReply:
    status: TurnStatus
    text: str
    intro: str = ""
    closing: str = ""
    cards: list[Card] = field(default_factory=list)
    reply: Reply | None = None
    conversation_id: int | None = None
    turn_id: str = ""
    inbound_id: int | None = None
    trace_id: str | None = None
    message_id: int | None = None  # the stored reply, for 👍/👎

    @property
    def ok(self) -> bool:
        return self.status == "ok"


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    role: str
    text: str
    wines: list[str]  # names of the wines a reply recommended


@dataclass(frozen=True, slots=True)
class Origin:
    """Where a message came from, in terms any channel has.

    `key` makes delivery idempotent: a message that arrives again with the same key (per
    channel) is not answered twice, unless its first run gave no answer (Telegram's update id;
    a web client's idempotency key would do the same). `thread` keeps a separate conversation
    per chat or room; None is the person's own conversation."""

    key: int | None = None
    thread: int | None = None


NO_ORIGIN = Origin()


@dataclass(frozen=True, slots=True)
class _Turn:
    """What the end of a turn needs to know about its start."""

    turn_id: str
    person: Person
    text: str
    received_at: datetime
    user_id: int
    conversation_id: int
    inbound_id: int
    thread: int | None = None
    taste: Taste = field(default_factory=Taste)
    trace_id: str | None = None


@dataclass(frozen=True, slots=True)
class ChatOptions:
    inactivity: timedelta = timedelta(hours=12)
    history_max_chars: int = 2000
    history_max_messages: int = 40
    mask_text: bool = False
    protocol: str = "json"


def trace_user(person: Person) -> str:
    """The person as an operator can look them up: `telegram:<user id>` or `cli:<name>`."""
    who = person.telegram_id if person.telegram_id is not None else person.local_name
    return f"{person.channel}:{who}"


def turn_input(
    messages: list[Message], history: list[Said], taste: Taste | None = None
) -> TurnInput:
    """The agent's view of a turn: the transcript, what the last reply said and showed, and
    the person's hard dislikes and budget for the search defaults."""
    last = next((m for m in reversed(history) if m.role == "assistant"), None)
    reply: dict[str, Any] = (last.reply or {}) if last is not None else {}
    profile: dict[str, Any] = {}
    if taste is not None and not taste.is_empty():
        profile = as_context(taste)
    return TurnInput(
        messages=messages,
        previous_answer=last.text if last is not None else None,
        asked_last=reply.get("response_type") == ResponseType.clarification,
        context={PREVIOUS: list(last.wine_ids or []) if last is not None else [], PROFILE: profile},
    )


class ChatService:
    def __init__(
        self,
        sessions: async_sessionmaker[AsyncSession],
        agent: Agent,
        options: ChatOptions | None = None,
        tracer: Tracer | None = None,
        catalog: CatalogTools | None = None,
    ) -> None:
        self.sessions = sessions
        self.autocommit = autocommit(sessions)
        self.agent = agent
        self.options = options or ChatOptions()
        self.tracer = tracer or NoTracer()
        # The tools' catalog: cards reuse the rows the tools already loaded.
        self.catalog = catalog or CatalogTools(sessions)
        self.preferences = Preferences(sessions, self.tracer, self.catalog.names)
        self.protocol = PROTOCOLS[self.options.protocol]
        self.system_prompt = system_prompt()

    async def turn(
        self,
        person: Person,
        text: str,
        *,
        origin: Origin = NO_ORIGIN,
        sink: StreamSink | None = None,
    ) -> TurnReply:
        """One user message in, one validated reply out. With a `sink`, the answer streams to
        it as it is generated (only validated parts become the reply). A message whose
        `origin.key` was already answered returns status `duplicate` and runs nothing."""
        text = clean_text(text)
        try:
            started = await self._start(person, text, origin)
        except DATABASE_ERRORS as exc:
            return self._database_down(exc)
        if isinstance(started, TurnReply):
            return started
        turn, history = started
        # The taste note follows the system prompt in a message of its own, so the prompt's
        # bytes stay the same for everyone (a server's prompt cache covers them).
        profile = note(turn.taste)
        messages = [
            system(self.system_prompt),
            *([system(profile)] if profile else []),
            *to_model_messages(history, self.protocol),
            user(text),
        ]
        with self.tracer.turn(
            turn_id=turn.turn_id,
            user_id=trace_user(person),
            user_name=person.display_name,
            session_id=str(turn.conversation_id),
            channel=person.channel,
            text=text,
        ) as trace:
            turn = replace(turn, trace_id=trace.trace_id)
            run = self.agent.start(
                turn_input(messages, history, turn.taste), observer=trace, sink=sink
            )
            result = await self._run(run.execute(), run.result, turn)
            reply = await self._finish_safely(result, turn)
            trace.record(result, reply.status, reply.text)
            reply.trace_id = trace.trace_id
        return reply

    async def _start(
        self, person: Person, text: str, origin: Origin
    ) -> tuple[_Turn, list[Said]] | TurnReply:
        turn_id = str(uuid.uuid4())
        # The turn, once its user, conversation, inbound row, thread and taste are known.
        new_turn = partial(_Turn, turn_id, person, text, utcnow())
        started = await self._go_on(new_turn, person, text, origin)
        if started is not None:
            return started
        over = await self._start_over(new_turn, person, text, origin)
        if isinstance(over, TurnReply):
            over.turn_id = turn_id
        return over

    async def _go_on(
        self, new_turn: partial[_Turn], person: Person, text: str, origin: Origin
    ) -> tuple[_Turn, list[Said]] | None:
        """Most turns go on with an open conversation: one read and one insert, each atomic on
        its own, so no transaction (on PostgreSQL, two round trips fewer). None when something
        needs writing first: first contact, a new conversation, a redelivered update."""
        async with self.autocommit() as session, session.begin():
            found = await self._known(session, person, origin)
            if not self._continues(found, person):
                return None
            assert found.user is not None and found.conversation is not None
            user_id, conversation_id = found.user.id, found.conversation.id
            inbound_id = await self._record(session, person, text, origin, user_id, conversation_id)
        if inbound_id is None:
            return None
        taste = Taste.of(found.taste)
        turn = new_turn(user_id, conversation_id, inbound_id, origin.thread, taste)
        return turn, found.history

    async def _start_over(
        self, new_turn: partial[_Turn], person: Person, text: str, origin: Origin
    ) -> tuple[_Turn, list[Said]] | TurnReply:
        """The person, their conversation and the inbound row, created where missing, in one
        transaction; `duplicate` for an update that was answered before."""
        async with self.sessions() as session, session.begin():
            found = await self._known(session, person, origin)
            account = await repo.user_or_create(session, person, found.user)
            conversation = await self._conversation(session, account, person, origin, found)
            inbound_id = await self._record(
                session, person, text, origin, account.id, conversation.id
            )
            if inbound_id is None:  # redelivered: run it again only if it gave no answer
                inbound_id = await repo.reclaim_inbound(session, person.channel, origin.key)
            if inbound_id is None:
                existing = await repo.find_inbound(session, person.channel, origin.key)
                return TurnReply(
                    "duplicate",
                    "",
                    conversation_id=conversation.id,
                    inbound_id=existing.id if existing else None,
                )
            history = await self._history(session, conversation, found)
        taste = Taste.of(found.taste)
        turn = new_turn(account.id, conversation.id, inbound_id, origin.thread, taste)
        return turn, history

    async def _known(self, session: AsyncSession, person: Person, origin: Origin) -> repo.Known:
        limit = self.options.history_max_messages
        return await repo.known(session, person, origin.thread, limit)

    def _continues(self, found: repo.Known, person: Person) -> bool:
        """The person's open conversation continues and nothing about them needs writing."""
        if found.user is None or found.conversation is None:
            return False
        renamed = person.display_name and found.user.display_name != person.display_name
        quiet = utcnow() - as_utc(found.conversation.last_activity_at)
        return not renamed and quiet <= self.options.inactivity

    @staticmethod
    async def _record(
        session: AsyncSession,
        person: Person,
        text: str,
        origin: Origin,
        user_id: int,
        conversation_id: int,
    ) -> int | None:
        return await repo.record_inbound(
            session,
            channel=person.channel,
            text=text,
            update_id=origin.key,
            chat_id=origin.thread,
            user_id=user_id,
            conversation_id=conversation_id,
        )

    async def _conversation(
        self,
        session: AsyncSession,
        account: User,
        person: Person,
        origin: Origin,
        found: repo.Known,
    ) -> Conversation:
        inactivity = self.options.inactivity
        if found.user is None and origin.thread is not None:
            # A newcomer in a group chat: the chat may have an open conversation already.
            return await repo.open_conversation(
                session, account, person.channel, inactivity, origin.thread
            )
        return await repo.continue_or_start(
            session, account, person.channel, inactivity, origin.thread, found.conversation
        )

    async def _history(
        self, session: AsyncSession, conversation: Conversation, found: repo.Known
    ) -> list[Said]:
        """The conversation's recent messages: read with the person when it is the one they
        had open, none when it is new, read now only for a group chat met for the first time."""
        if found.conversation is not None and conversation.id == found.conversation.id:
            return found.history
        if found.user is None and conversation.chat_id is not None:
            limit = self.options.history_max_messages
            return await repo.recent_messages(session, conversation.id, limit)
        return []

    async def _run(self, execution: Any, partial: AgentResult, turn: _Turn) -> AgentResult:
        """The agent's run, with every way it can end turned into a result to store."""
        try:
            return await execution
        except asyncio.CancelledError:
            partial.status = Status.cancelled
            # Store what happened before the cancellation goes on; the storing itself must
            # not be cancelled half-way.
            await asyncio.shield(self._finish_safely(partial, turn))
            raise
        except Exception:
            log.exception(
                "turn %s failed unexpectedly",
                turn.turn_id,
                extra={"event": "turn_failed", "turn_id": turn.turn_id},
            )
            partial.status = Status.failed
            return partial

    def _database_down(self, exc: BaseException, turn_id: str = "") -> TurnReply:
        url = describe_database(str(self.sessions.kw["bind"].url))
        log.error(
            "the database at %s cannot be reached: %s",
            url,
            database_problem(exc),
            extra={"event": "database_unavailable", "turn_id": turn_id},
        )
        return TurnReply("database", FRIENDLY["database"], turn_id=turn_id)

    async def _finish_safely(self, result: AgentResult, turn: _Turn) -> TurnReply:
        try:
            return await self._finish(result, turn)
        except DATABASE_ERRORS as exc:
            return self._database_down(exc, turn.turn_id)
        except Exception:
            log.exception(
                "turn %s could not be stored",
                turn.turn_id,
                extra={"event": "turn_store_failed", "turn_id": turn.turn_id},
            )
            return TurnReply("failed", FRIENDLY["failed"], turn_id=turn.turn_id)

    async def _finish(self, result: AgentResult, turn: _Turn) -> TurnReply:
        """Store what the turn leaves behind: history only for an answer, always the attempts
        and the inbound status."""
        if result.status == Status.ok and result.parse is not None:
            # One statement on PostgreSQL (answers.py): no transaction around it there.
            async with self.autocommit() as session, session.begin():
                reply = await self._store_answer(session, result, turn)
        else:
            async with self.sessions() as session, session.begin():
                status = cast(TurnStatus, str(result.status))  # every failed Status is one
                reply = TurnReply(status, FRIENDLY[status])
                if result.status == Status.reset:
                    await repo.close_open_conversations(
                        session, turn.user_id, turn.person.channel, "reset", turn.thread
                    )
                    self._log_reset(result, turn.turn_id)
                await repo.insert_model_calls(session, _call_rows(result, turn))
                await repo.finish_inbound(session, turn.inbound_id, reply.status)
        if reply.reply is not None:  # after the commit: the cards may read the catalog
            reply.cards = await self._cards(reply.reply)
        reply.conversation_id = turn.conversation_id
        reply.turn_id = turn.turn_id
        reply.inbound_id = turn.inbound_id
        return reply

    async def _store_answer(
        self, session: AsyncSession, result: AgentResult, turn: _Turn
    ) -> TurnReply:
        assert result.parse is not None and result.parse.reply is not None
        parsed: Reply = result.parse.reply
        if parsed.guard is not None:
            log.warning(
                "reply guarded: %s",
                parsed.guard,
                extra={
                    "event": "reply_guarded",
                    "guard": str(parsed.guard),
                    "turn_id": turn.turn_id,
                },
            )
        exchange: list[dict[str, Any]] = [
            {
                "role": "user",
                "text": turn.text,
                "created_at": turn.received_at,
                "reply": None,
                "wine_ids": None,
                "trace_id": None,
            },
            {
                "role": "assistant",
                "text": cut_for_storage(result.parse.text, self.options.history_max_chars),
                "reply": parsed.model_dump(mode="json"),
                "wine_ids": list(result.parse.ids),
                "trace_id": turn.trace_id,
                "created_at": utcnow(),
            },
        ]
        calls = _call_rows(result, turn)
        assistant_id = await store_answer(
            session, turn.conversation_id, exchange, calls, turn.inbound_id
        )
        await self.preferences.learn(session, turn.user_id, turn.text)
        return TurnReply(
            "ok",
            result.parse.text,
            intro=parsed.intro,
            closing=parsed.closing,
            reply=parsed,
            message_id=assistant_id,
        )

    async def _cards(self, reply: Reply) -> list[Card]:
        wines = {
            w.external_id: w for w in await self.catalog.wines([p.wine_id for p in reply.wines])
        }
        return [
            Card(
                wine_id=pick.wine_id,
                name=wine.name,
                producer=wine.producer,
                place=place_of(wine),
                grapes=list(wine.grapes),
                style=style_of(wine),
                price=price_of(wine),
                rating=round(wine.rating_avg, 1) if wine.rating_avg is not None else None,
                rating_count=wine.rating_count,
                why=pick.why,
            )
            for pick in reply.wines
            if (wine := wines.get(pick.wine_id)) is not None
        ]

    def _log_reset(self, result: AgentResult, turn_id: str) -> None:
        transcript = result.transcript
        if self.options.mask_text:
            transcript = mask_messages(transcript)
        log.error(
            "turn reset after the recovery ladder; full history of the failed turn follows",
            extra={
                "event": "turn_reset",
                "turn_id": turn_id,
                "errors": result.errors,
                "messages": json.dumps(transcript, ensure_ascii=False),
            },
        )

    async def new_conversation(self, person: Person, thread: int | None = None) -> None:
        async with self.sessions() as session, session.begin():
            account = await repo.get_or_create_user(session, person)
            await repo.close_open_conversations(session, account.id, person.channel, "new", thread)

    async def history(
        self, person: Person, limit: int = 20, thread: int | None = None
    ) -> list[HistoryEntry]:
        """The open conversation so far: what was said, and the wines each reply named."""
        async with self.sessions() as session, session.begin():
            account = await repo.get_or_create_user(session, person)
            conversation = await repo.open_conversation(
                session, account, person.channel, self.options.inactivity, thread
            )
            stored = await repo.recent_messages(session, conversation.id, limit)
            ids = [wine_id for m in stored for wine_id in m.wine_ids or []]
            names = {w.external_id: w.name for w in await get_wines(session, ids)}
        return [
            HistoryEntry(m.role, m.text, [names.get(i, i) for i in m.wine_ids or []])
            for m in stored
        ]

    async def conversations(self, person: Person) -> list[repo.ConversationSummary]:
        """The person's conversations, newest first (`/sessions`)."""
        async with self.sessions() as session, session.begin():
            account = await repo.get_or_create_user(session, person)
            return await repo.conversations_of(session, account.id, person.channel)

    async def resume(self, person: Person, conversation_id: int) -> bool:
        """Continue one of the person's earlier conversations (`/load`)."""
        async with self.sessions() as session, session.begin():
            account = await repo.get_or_create_user(session, person)
            return await repo.reopen_conversation(
                session, account.id, person.channel, conversation_id
            )


def _call_rows(result: AgentResult, turn: _Turn) -> list[dict[str, Any]]:
    """The turn's model calls; an answered turn's are linked to its reply (answers.py)."""
    return [
        {
            "conversation_id": turn.conversation_id,
            "message_id": None,
            "turn_id": turn.turn_id,
            "attempt": attempt.attempt,
            "purpose": str(attempt.purpose),
            "recovery_level": int(attempt.level),
            "model": attempt.model,
            "prompt_tokens": attempt.prompt_tokens,
            "completion_tokens": attempt.completion_tokens,
            "latency_ms": attempt.latency_ms,
            "finish_reason": attempt.finish_reason,
            "outcome": str(attempt.outcome),
            "error_kind": attempt.error_kind,
            "error_message": attempt.error_message,
        }
        for attempt in result.attempts
    ]
