"""ChatService.turn: the single entry point of every front end (Telegram, terminal).

A turn always ends: whatever the model, the network or a tool does, the inbound message gets a
final status, the model calls made so far are stored, and the person gets a reply or a friendly
message. A cancelled turn (Ctrl-C) is stored as cancelled before the cancellation goes on.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from enum import StrEnum
from functools import partial
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from sommelier.agent.admission import Admission, EndpointQueue, Place, QueueTimeout
from sommelier.agent.loop import Agent, StreamSink
from sommelier.agent.messages import Message, system, user
from sommelier.agent.observer import TurnObserver
from sommelier.agent.output import ParseResult
from sommelier.agent.parsers import Phase, Waiting
from sommelier.agent.protocols import PROTOCOLS
from sommelier.agent.records import AgentResult, AttemptRecord, Status
from sommelier.agent.text import clean_text
from sommelier.agent.turn import TurnInput
from sommelier.catalog.reading import Names, Reading, read, read_turn
from sommelier.catalog.search import get_wines
from sommelier.catalog.tool_arguments import NAMES, PROFILE, READING
from sommelier.catalog.tools import CELLAR, PREVIOUS, UNSTORED, CatalogTools
from sommelier.cellar.adding import ADDING, adding_of
from sommelier.cellar.report import kept_line, own_lines
from sommelier.cellar.store import Kept, kept_wines, own_bottles, owner_of
from sommelier.chat import reasons
from sommelier.chat.answer import Guard, Reply, ResponseType, accepted, is_empty
from sommelier.chat.catalog_only import from_catalog, no_model_line
from sommelier.chat.guard import attempt, refusal, wine_asked
from sommelier.chat.history import cut_for_storage, earlier_requests, to_model_messages
from sommelier.chat.labels import (
    found_intro,
    place_label,
    price_label,
    relaxed_notice,
    style_label,
)
from sommelier.chat.policy import CAPPED
from sommelier.chat.preferences import Preferences
from sommelier.chat.prompts import system_prompt
from sommelier.chat.recording import CallRecorder
from sommelier.chat.taste import Taste, as_context, note
from sommelier.db import repositories as repo
from sommelier.db.models import Wine, utcnow
from sommelier.db.repositories import Person, Said
from sommelier.db.session import DATABASE_ERRORS, database_problem, describe_database
from sommelier.db.turns import (
    Begun,
    Duplicate,
    InboundStatus,
    Superseded,
    TurnStore,
    log_superseded,
)
from sommelier.i18n.languages import base
from sommelier.i18n.translations import N_, translator
from sommelier.observability.tracing import NoTracer, Tracer, mask_messages

log = logging.getLogger("sommelier.chat")
# For someone with a cellar, beside their profile (its own message: the system prompt's bytes
# stay the same for everyone): where their bottles are, and how the plan reaches them.
CELLAR_NOTE = (
    "The person keeps {wines} wines in their own cellar. search_wines with source "
    "open_own_bottle looks among them, when they ask what they have or what to open; with "
    "buy_from_shop it searches the shop's wines to buy. Bottles they say they bought or got "
    "are add_to_cellar with source add_bought_bottles."
)


class Unstored(StrEnum):
    """How a turn ends when no inbound row says so."""

    duplicate = "duplicate"  # its key was answered before: nothing ran
    database = "database"  # the database could not be reached
    superseded = "superseded"  # a later run of the same message took it over: nothing is sent


TurnStatus = InboundStatus | Unstored

STORE_RETRY = 0.5  # seconds before a turn's end is stored again, doubling
STORE_RETRY_MAX = 15.0
STORE_PATIENCE = 600.0  # seconds; after that the sweep (db/turns.py) marks the turn

FRIENDLY = {
    "exhausted": N_("Sorry, I couldn't put a proper answer together just now. Please try again."),
    "error": N_("I can't reach my wine brain right now. Please try again in a moment."),
    "reset": N_(
        "I got tangled up there, so I'm starting our conversation fresh. "
        "Could you tell me again what you're looking for?"
    ),
    "refused": N_(
        "I'm sorry, I can't help with that one. I'm happy to help with wine and food, though."
    ),
    "interrupted": N_("The connection broke off while I was answering. Retry, or start over?"),
    "timeout": N_("Sorry, that took me too long to think through. Please try again in a moment."),
    "failed": N_("Sorry, something went wrong on my side. Please try again in a moment."),
    "cancelled": N_("Cancelled."),
    "database": N_("I can't reach my records right now. Please try again in a moment."),
    "busy": N_("Many people are asking me at once. Please try again in a few minutes."),
}


def friendly(status: str, language: str | None) -> str:
    return translator(language)(FRIENDLY[status])


@dataclass(frozen=True, slots=True)
class Card:
    """A wine card: facts from the catalog row (labels in the person's language), `why` from
    the model."""

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
    type: str = ""  # the catalog's own value ("red"), whatever the labels' language
    cellar: str = ""  # the person owns it: "In your cellar: 2 · rack B · Ready to drink"


def card_of(wine: Wine, why: str, language: str) -> Card:
    """A catalog row as a card, its labels in `language`."""
    return Card(
        wine_id=wine.external_id,
        name=wine.name,
        producer=wine.producer,
        place=place_label(wine, language),
        grapes=list(wine.grapes),
        style=style_label(wine, language),
        price=price_label(wine, language),
        rating=round(wine.rating_avg, 1) if wine.rating_avg is not None else None,
        rating_count=wine.rating_count,
        why=why,
        type=wine.type,
    )


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
    run: int = 1  # which run of the message's turn this is (db/turns.py)
    trace_id: str | None = None
    message_id: int | None = None  # the stored reply, for 👍/👎
    language: str = "en"  # the person's, for the front end's own texts
    notice: str = ""  # what the search had to give up, said before the intro
    # Bottles they said they have, to add at a press (cellar/adding.py): its cards are the
    # wines it may be, and the reply shows buttons to add them instead of the usual ones.
    adding: dict[str, Any] | None = None

    @property
    def ok(self) -> bool:
        return self.status == InboundStatus.ok


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
    per chat or room; None is the person's own conversation. `shared`: a chat of several
    people (a Telegram group), where "we" means the group: what one person's profile says is
    not applied to everyone's request (it is still learned, as that person's)."""

    key: int | None = None
    thread: int | None = None
    shared: bool = False
    topic: int | None = None  # a forum topic of a group: a conversation of its own


NO_ORIGIN = Origin()


@dataclass(frozen=True, slots=True)
class _Turn:
    """What the end of a turn needs to know about its start."""

    turn_id: str
    person: Person
    text: str
    received_at: datetime
    begun: Begun  # its rows (db/turns.py)
    taste: Taste = field(default_factory=Taste)
    trace_id: str | None = None
    reading: Reading | None = None  # the message, read once (catalog/reading.py)
    calls: CallRecorder | None = None  # its model calls, written as they finish
    no_model: bool = False  # answered from the catalog alone (chat/catalog_only.py)
    kept: Mapping[str, Kept] = field(default_factory=dict)  # their cellar's catalog wines
    group: int | None = None  # the group chat whose cellar this chat shares, if any

    @property
    def language(self) -> str:
        return self.reading.language if self.reading else base(self.person.language) or "en"

    @property
    def conversation_id(self) -> int:
        return self.begun.conversation_id


@dataclass(frozen=True, slots=True)
class ChatOptions:
    inactivity: timedelta = timedelta(hours=12)
    history_max_chars: int = 2000
    history_max_messages: int = 40
    mask_text: bool = False
    protocol: str = "json"


def party(person: Person, origin: Origin) -> str:
    """Who a turn is for, as the model's queue takes turns: the chat, else the person."""
    if origin.thread is not None:
        return f"{person.channel}:chat:{origin.thread}"
    return f"{person.channel}:{person.telegram_id or person.local_name}"


def trace_user(person: Person) -> str:
    """The person as an operator can look them up: `telegram:<user id>` or `cli:<name>`."""
    who = person.telegram_id if person.telegram_id is not None else person.local_name
    return f"{person.channel}:{who}"


def turn_input(
    messages: list[Message],
    history: list[Said],
    taste: Taste | None = None,
    reading: Reading | None = None,
    names: Names | None = None,
    cellar: list[str] | None = None,
    *,
    unstored: bool = False,
) -> TurnInput:
    """The agent's view of a turn: the transcript, what the last reply said and showed, the
    message read once, and the person's hard dislikes and budget for the search defaults."""
    last = next((m for m in reversed(history) if m.role == "assistant"), None)
    reply: dict[str, Any] = (last.reply or {}) if last is not None else {}
    profile: dict[str, Any] = {}
    if taste is not None and not taste.is_empty():
        profile = as_context(taste, names.currency if names else "EUR")
    # The wines in view: those of the latest reply that showed some (an answer about them,
    # "keeps 3-5 days", shows none, and "which is lightest?" still means those).
    shown = next((m for m in reversed(history) if m.role == "assistant" and m.wine_ids), None)
    context: dict[str, Any] = {
        PREVIOUS: list(shown.wine_ids or []) if shown is not None else [],
        PROFILE: profile,
        CAPPED: bool(reply.get("capped")),
    }
    if reading is not None:
        context[READING] = reading
    if names is not None:
        context[NAMES] = names
    if cellar:
        context[CELLAR] = cellar
    if unstored:
        context[UNSTORED] = True
    return TurnInput(
        messages=messages,
        previous_answer=last.text if last is not None else None,
        asked_last=reply.get("response_type") == ResponseType.clarification,
        context=context,
    )


class ChatService:
    def __init__(
        self,
        sessions: async_sessionmaker[AsyncSession],
        agent: Agent,
        options: ChatOptions | None = None,
        tracer: Tracer | None = None,
        catalog: CatalogTools | None = None,
        admission: EndpointQueue | None = None,
    ) -> None:
        self.sessions = sessions
        # The model endpoint's queue: shared by every chat service of a process (app.py).
        self.admission: EndpointQueue = admission or Admission()
        self.agent = agent
        self.options = options or ChatOptions()
        self.turns = TurnStore(sessions, self.options.inactivity, self.options.history_max_messages)
        self.tracer = tracer or NoTracer()
        # The tools' catalog: cards reuse the rows the tools already loaded.
        self.catalog = catalog or CatalogTools(sessions)
        self.preferences = Preferences(sessions, self.tracer, self.catalog.names)
        self.protocol = PROTOCOLS[self.options.protocol]
        self.system_prompt = system_prompt()
        # Turns whose end waits for the database to come back (held so they are not collected).
        self._storing: set[asyncio.Task[None]] = set()

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
            started = await self._begin(person, text, origin)
        except DATABASE_ERRORS as exc:
            return self._database_down(exc, language=base(person.language))
        if isinstance(started, TurnReply):
            return started
        turn, history = started
        group = origin.thread if origin.shared else None
        turn = replace(turn, kept=await self._kept(turn, group), group=group)
        names = await self._names(turn)
        earlier = earlier_requests(history)
        reading = read_turn(text, names, earlier, hint=person.language)
        turn = replace(turn, reading=reading)
        messages = self._messages(turn, history, text)
        with self.tracer.turn(
            turn_id=turn.turn_id,
            user_id=trace_user(person),
            user_name=person.display_name,
            session_id=str(turn.conversation_id),
            channel=person.channel,
            text=text,
        ) as trace:
            calls = CallRecorder(trace, self.turns, partial(_call_row, turn=turn))
            turn = replace(turn, trace_id=trace.trace_id, calls=calls)
            agent_turn = turn_input(messages, history, turn.taste, reading, names, list(turn.kept))
            # An attempt on the rules asks no model: there is nothing to leak or agree to.
            result = refused_attempt(text, reading, names) or await self._admitted(
                agent_turn, turn, calls, sink, party(person, origin)
            )
            result, turn = await self._without_model(result, agent_turn, turn)
            reply = await self._finish_safely(result, turn)
            trace.record(result, reply.status, reply.text)
            reply.trace_id = trace.trace_id
        return reply

    def _messages(self, turn: _Turn, history: list[Said], text: str) -> list[Message]:
        """The system prompt, then the person's profile and cellar (their own messages: the
        system prompt's bytes stay the same for everyone), the history and their message."""
        profile = note(turn.taste)
        return [
            system(self.system_prompt),
            *([system(profile)] if profile else []),
            *([system(CELLAR_NOTE.format(wines=len(turn.kept)))] if turn.kept else []),
            *to_model_messages(history, self.protocol),
            user(text),
        ]

    async def _admitted(
        self,
        agent_turn: TurnInput,
        turn: _Turn,
        trace: TurnObserver,
        sink: StreamSink | None,
        who: str,
    ) -> AgentResult:
        """The agent's run once the model endpoint is this turn's (agent/admission.py): the
        person hears their place while they wait, and the turn's deadline starts when it
        runs. A wait over the limit ends the turn as `busy`."""

        def waiting(place: Place) -> None:
            if sink is not None:
                sink.emit(Waiting(place.ahead, place.seconds))

        running = False
        try:
            async with self.admission.turn(who, waiting) as ticket:
                if sink is not None and ticket.place is not None:
                    sink.emit(Phase("admitted"))
                requeue = partial(self.admission.rejoin, ticket)
                run = self.agent.start(agent_turn, observer=trace, sink=sink, requeue=requeue)
                running = True
                return await self._run(run.execute(), run.result, turn)
        except QueueTimeout:
            log.warning(
                "turn waited for the model past the limit",
                extra={"event": "turn_queue_timeout", "turn_id": turn.turn_id},
            )
            return AgentResult(status=Status.busy)
        except asyncio.CancelledError:
            if not running:  # stopped while it waited: stored here (a run stores itself)
                stopped = AgentResult(status=Status.cancelled)
                await asyncio.shield(self._finish_safely(stopped, turn))
            raise

    async def _without_model(
        self, result: AgentResult, agent_turn: TurnInput, turn: _Turn
    ) -> tuple[AgentResult, _Turn]:
        """A wine request the model could not serve, answered from the catalog alone
        (chat/catalog_only.py); the turn's end is stored as usual."""
        if turn.reading is None:
            return result, turn
        try:
            answered = await from_catalog(result, agent_turn, turn.reading, self.catalog)
        except DATABASE_ERRORS:
            return result, turn  # the "can't reach" line; storing the turn says the rest
        return answered, turn if answered is result else replace(turn, no_model=True)

    async def _names(self, turn: _Turn) -> Names:
        """The catalog's names; a Stop while they load stores the turn, as a run stores
        itself."""
        try:
            return await self.catalog.names()
        except asyncio.CancelledError:
            await asyncio.shield(self._finish_safely(AgentResult(status=Status.cancelled), turn))
            raise

    async def _begin(
        self, person: Person, text: str, origin: Origin
    ) -> tuple[_Turn, list[Said]] | TurnReply:
        """`_start`, which a Stop does not cut half-way: a turn stopped while it is being
        recorded is recorded, then stored `cancelled` (else its row would stay `received`)."""
        start = asyncio.ensure_future(self._start(person, text, origin))
        try:
            return await asyncio.shield(start)
        except asyncio.CancelledError:
            with contextlib.suppress(*DATABASE_ERRORS):
                started = await start
                if not isinstance(started, TurnReply):
                    stopped = AgentResult(status=Status.cancelled)
                    await self._finish_safely(stopped, started[0])
            raise

    async def _start(
        self, person: Person, text: str, origin: Origin
    ) -> tuple[_Turn, list[Said]] | TurnReply:
        turn_id = str(uuid.uuid4())
        received_at = utcnow()
        begun = await self.turns.begin(person, text, origin.key, origin.thread, origin.topic)
        if isinstance(begun, Duplicate):
            return TurnReply(
                Unstored.duplicate,
                "",
                conversation_id=begun.conversation_id,
                inbound_id=begun.inbound_id,
                run=begun.run,
                turn_id=turn_id,
            )
        taste = Taste() if origin.shared else Taste.of(begun.taste)
        turn = _Turn(turn_id, person, text, received_at, begun, taste)
        return turn, begun.history

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

    def _database_down(
        self, exc: BaseException, turn_id: str = "", language: str | None = None
    ) -> TurnReply:
        url = describe_database(str(self.sessions.kw["bind"].url))
        log.error(
            "the database at %s cannot be reached: %s",
            url,
            database_problem(exc),
            extra={"event": "database_unavailable", "turn_id": turn_id},
        )
        down = Unstored.database
        return TurnReply(down, friendly(down, language), turn_id=turn_id, language=language or "en")

    async def _finish_safely(self, result: AgentResult, turn: _Turn) -> TurnReply:
        try:
            return await self._finish(result, turn)
        except Superseded:
            return self._superseded(turn)
        except DATABASE_ERRORS as exc:
            # The turn's end is stored once the database is back, not left half-way.
            later = asyncio.create_task(self._store_when_back(result, turn))
            self._storing.add(later)
            later.add_done_callback(self._storing.discard)
            return self._database_down(exc, turn.turn_id, turn.language)
        except Exception:
            log.exception(
                "turn %s could not be stored",
                turn.turn_id,
                extra={"event": "turn_store_failed", "turn_id": turn.turn_id},
            )
            failed = InboundStatus.failed
            text = friendly(failed, turn.language)
            return TurnReply(failed, text, turn_id=turn.turn_id, language=turn.language)

    @staticmethod
    def _superseded(turn: _Turn) -> TurnReply:
        log_superseded(f"turn {turn.turn_id}", turn_id=turn.turn_id)
        return TurnReply(Unstored.superseded, "", turn_id=turn.turn_id, run=turn.begun.run)

    async def _store_when_back(self, result: AgentResult, turn: _Turn) -> None:
        """A turn whose end could not be stored (the database went away): its model calls and
        the status `interrupted` (the person got the "can't reach my records" line, and may
        retry), tried again with backoff until STORE_PATIENCE runs out."""
        delay, waited = STORE_RETRY, 0.0
        while waited < STORE_PATIENCE:
            await asyncio.sleep(delay)
            waited += delay
            try:
                calls = [_call_row(record, turn) for record in result.attempts]
                if turn.calls is not None:
                    calls = await turn.calls.unwritten(result.attempts)
                status = InboundStatus.interrupted
                await self.turns.finish(turn.begun, status, turn.turn_id, calls=calls)
                return
            except Superseded:
                return
            except DATABASE_ERRORS:
                delay = min(delay * 2, STORE_RETRY_MAX)
        log.error(
            "turn %s not stored: the database stayed away",
            turn.turn_id,
            extra={"event": "turn_store_gave_up", "turn_id": turn.turn_id},
        )

    async def _finish(self, result: AgentResult, turn: _Turn) -> TurnReply:
        """Store what the turn leaves behind, in one transaction: history only for an answer,
        always the model calls and the inbound status."""
        if turn.calls is not None:
            calls = await turn.calls.unwritten(result.attempts)
        else:
            calls = [_call_row(record, turn) for record in result.attempts]
        if result.status == Status.ok and result.parse is not None:
            result = replace(result, parse=await self._from_data(result, turn.language))
            reply = await self._store_answer(result, turn, calls)
        else:
            status = InboundStatus(str(result.status))  # every Status is one
            reset = result.status == Status.reset
            await self.turns.finish(turn.begun, status, turn.turn_id, calls=calls, reset=reset)
            if reset:
                self._log_reset(result, turn.turn_id)
            reply = TurnReply(status, friendly(status, turn.language))
        if reply.reply is not None:  # after the commit: the cards may read the catalog
            await self._dress(reply, result, turn.language, turn.kept)
            if turn.kept:
                await self._own_bottles(reply, result, turn)
            if turn.no_model:
                reply.notice = " ".join(
                    p for p in (no_model_line(turn.language), reply.notice) if p
                )
            reply.text = "\n\n".join(p for p in (reply.notice, reply.text) if p)
        reply.language = turn.language
        reply.conversation_id = turn.conversation_id
        reply.turn_id = turn.turn_id
        reply.inbound_id = turn.begun.inbound_id
        reply.run = turn.begun.run
        return reply

    async def _store_answer(
        self, result: AgentResult, turn: _Turn, calls: list[dict[str, Any]]
    ) -> TurnReply:
        assert result.parse is not None and result.parse.reply is not None
        parsed: Reply = result.parse.reply
        if parsed.guard not in (None, Guard.off_topic):  # an attempt on the rules
            extra = {"event": "reply_guarded", "guard": str(parsed.guard), "turn_id": turn.turn_id}
            log.warning("reply guarded: %s", parsed.guard, extra=extra)
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
                "reply": {**parsed.model_dump(mode="json"), **_adding(result)},
                "wine_ids": list(result.parse.ids),
                "trace_id": turn.trace_id,
                "created_at": utcnow(),
            },
        ]
        reading, user_id = turn.reading, turn.begun.user_id

        async def learn(session: AsyncSession) -> None:
            if reading is not None:
                await self.preferences.learn(session, user_id, reading)

        reply_id = await self.turns.finish(
            turn.begun, InboundStatus.ok, turn.turn_id, calls=calls, exchange=exchange, also=learn
        )
        return TurnReply(
            InboundStatus.ok,
            result.parse.text,
            intro=parsed.intro,
            closing=parsed.closing,
            reply=parsed,
            message_id=reply_id,
            adding=_adding(result).get(ADDING),
        )

    async def _dress(
        self, reply: TurnReply, result: AgentResult, language: str, kept: Mapping[str, Kept]
    ) -> None:
        """An answer's cards and the notice of what its search gave up."""
        assert reply.reply is not None
        reply.cards = await self._cards(reply.reply, language, kept)
        reply.notice = await self._notice(result, language)

    async def _from_data(self, result: AgentResult, language: str) -> ParseResult[Reply]:
        """A recommendation that searched, said from data (chat/reasons.py): each why from its
        row and the search, a closing on what to ask next, and the intro from what was searched
        (wines the runtime put under the model's answer keep it as the intro: "Rosé is made
        with brief skin contact")."""
        parsed = result.parse
        assert parsed is not None
        reply = parsed.reply
        searches = [t.result for t in result.tools if t.result.call.name == "search_wines"]
        if not isinstance(reply, Reply) or not reply.wines or not searches or reply.guard:
            return parsed
        # Every wish may be a guess (a language without word lists): the intro is then plain,
        # never the model's prose ("three wines" above one card, seen in Chinese).
        asked = reasons.searched(searches)
        rows = {
            w.external_id: w for w in await self.catalog.wines([p.wine_id for p in reply.wines])
        }
        currency = (await self.catalog.names()).currency
        picks = [
            p.model_copy(update={"why": reasons.why(rows[p.wine_id], asked, p, language)})
            for p in reply.wines
            if p.wine_id in rows
        ]
        intro = reply.intro
        # The search's wines put under an answer that named none ("Rosé is made with brief skin
        # contact") keep its words; any other intro is said from data, a repaired one too (its
        # words failed a check once: "Ελληνικά: Τα προτεραιότητες είναι:").
        under_words = "wines_from_search" in parsed.rules and intro != found_intro(language)
        if not under_words or is_empty(intro):
            intro = reasons.opening(asked, language, currency)
        said = reply.model_copy(
            update={"wines": picks, "intro": intro, "closing": reasons.closing(language)}
        )
        return accepted(said, parsed.raw)

    async def _cards(
        self, reply: Reply, language: str, kept: Mapping[str, Kept] | None = None
    ) -> list[Card]:
        wines = {
            w.external_id: w for w in await self.catalog.wines([p.wine_id for p in reply.wines])
        }
        cards = [
            card_of(wines[p.wine_id], p.why, language) for p in reply.wines if p.wine_id in wines
        ]
        owned = kept or {}
        return [
            replace(c, cellar=kept_line(owned[c.wine_id], language)) if c.wine_id in owned else c
            for c in cards
        ]

    async def _kept(self, turn: _Turn, group: int | None) -> Mapping[str, Kept]:
        """The catalog wines in the cellar this chat shares (the group's, else their own); a
        Stop while they load stores the turn, as `_names`."""
        try:
            async with self.sessions() as session:
                kept = await kept_wines(session, await owner_of(session, turn.person, group))
                await session.commit()
        except DATABASE_ERRORS:
            return {}  # the turn goes on without it; the database's trouble is said elsewhere
        except asyncio.CancelledError:
            await asyncio.shield(self._finish_safely(AgentResult(status=Status.cancelled), turn))
            raise
        return kept

    async def _own_bottles(self, reply: TurnReply, result: AgentResult, turn: _Turn) -> None:
        """Under a search of their cellar, their bottles the catalog lacks that meet its wishes
        (no card can show them), before the closing, said from their rows."""
        searches = [t.result for t in result.tools if t.result.call.name == "search_wines"]
        asked = searches[-1].arguments if searches else None
        if not isinstance(asked, Mapping) or not asked.get("only_ids"):
            return
        wishes = {k: asked.get(k) for k in ("type", "country", "grape")}
        try:
            if not wishes["type"] and asked.get("food") and reply.cards:
                # A dish and no colour asked: the colour of the catalog's matches for it (the
                # plan's own colour for a dish is no longer searched, and a white of theirs
                # was listed for the lamb).
                shown = await self.catalog.wines([c.wine_id for c in reply.cards])
                colours = {w.type for w in shown}
                wishes["type"] = colours.pop() if len(colours) == 1 else None
            async with self.sessions() as session:
                owner = await owner_of(session, turn.person, turn.group)
                found = await own_bottles(session, owner, wishes)
                await session.commit()
        except DATABASE_ERRORS:
            return  # the cards stand without them
        said = own_lines(found, turn.language)
        if said:
            reply.closing = "\n\n".join(p for p in (said, reply.closing) if p)
            reply.text = "\n\n".join(p for p in (reply.text, said) if p)

    async def _notice(self, result: AgentResult, language: str) -> str:
        """What the turn's last search gave up, in the person's words ("No wines from Georgia
        in the catalog…"); empty when it gave up nothing."""
        searches = [t.result for t in result.tools if t.result.call.name == "search_wines"]
        notes = searches[-1].notes if searches else {}
        if not notes.get("relaxed"):
            return ""
        currency = (await self.catalog.names()).currency
        others, cellar = bool(notes.get("others")), bool(notes.get("cellar"))
        return relaxed_notice(
            notes["wanted"], notes["relaxed"], language, currency, others, cellar=cellar
        )

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

    async def guest_turn(self, text: str, language: str, who: str) -> TurnReply:
        """One message from a chat the bot is not in (Telegram's guest mode), answered by the
        model with no history and no taste, and nothing kept: no rows and no trace (the words
        are another chat's), only a log line of how it went. Every way it can go wrong ends as
        a status, never an exception."""
        text = clean_text(text)
        try:
            names = await self.catalog.names()
            reading = read_turn(text, names, [], hint=language)
            messages = [system(self.system_prompt), user(text)]
            agent_turn = turn_input(messages, [], None, reading, names, unstored=True)
            refused = refused_attempt(text, reading, names)
            result = refused or await self._unstored_run(agent_turn, who)
            if result.status != Status.ok or result.parse is None:
                status = InboundStatus(str(result.status))
                return TurnReply(status, friendly(status, reading.language))
            parse = await self._from_data(result, reading.language)
            assert parse.reply is not None
            reply = TurnReply(
                InboundStatus.ok,
                parse.text,
                intro=parse.reply.intro,
                closing=parse.reply.closing,
                reply=parse.reply,
                language=reading.language,
            )
            await self._dress(reply, result, reading.language, {})
        except DATABASE_ERRORS as exc:
            return self._database_down(exc, language=language)
        return reply

    async def _unstored_run(self, agent_turn: TurnInput, who: str) -> AgentResult:
        """The agent's run in its turn at the model endpoint, with no observer."""
        try:
            async with self.admission.turn(who) as ticket:
                requeue = partial(self.admission.rejoin, ticket)
                return await self.agent.start(agent_turn, requeue=requeue).execute()
        except QueueTimeout:
            return AgentResult(status=Status.busy)
        except Exception:
            log.exception("unstored turn failed", extra={"event": "turn_failed"})
            return AgentResult(status=Status.failed)

    async def cards_for_words(self, text: str, language: str, limit: int) -> list[Card]:
        """Catalog wines for a person's own words, as cards, with no model (inline mode)."""
        wines = await self.catalog.search_words(text, limit=limit)
        return [card_of(wine, "", language) for wine in wines]

    async def new_conversation(
        self, person: Person, thread: int | None = None, topic: int | None = None
    ) -> None:
        async with self.sessions() as session, session.begin():
            account = await repo.get_or_create_user(session, person)
            await repo.close_open_conversations(
                session, account.id, person.channel, "new", thread, topic
            )

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


def refused_attempt(text: str, reading: Reading, names: Names) -> AgentResult | None:
    """An attempt to change the rules or borrow authority that asks for no wine in its own
    words: the fixed, translated refusal (chat/guard.py), as the turn's answer."""
    kind = attempt(text)
    if kind is None or wine_asked(read(text, names, language=reading.language)):
        return None
    reply = Reply(
        response_type=ResponseType.off_topic,
        intro=refusal(kind, reading.language),
        wines=[],
        closing="",
        guard=Guard(kind),
    )
    log.warning("attempt refused", extra={"event": "attempt_refused", "guard": kind})
    return AgentResult(status=Status.ok, parse=accepted(reply, raw=""))


def _call_row(attempt: AttemptRecord, turn: _Turn) -> dict[str, Any]:
    """A model call as `model_calls` keeps it; an answered turn's are linked to its reply."""
    return {
        "conversation_id": turn.conversation_id,
        "message_id": None,
        "turn_id": turn.turn_id,
        "attempt": attempt.attempt,
        "purpose": str(attempt.purpose),
        "recovery_level": int(attempt.level),
        "model": attempt.model,
        "prompt_tokens": attempt.prompt_tokens,
        "completion_tokens": attempt.completion_tokens,
        "cached_tokens": attempt.cached_tokens,
        "usage_estimated": attempt.usage_estimated,
        "latency_ms": attempt.latency_ms,
        "finish_reason": attempt.finish_reason,
        "outcome": str(attempt.outcome),
        "error_kind": attempt.error_kind,
        "error_message": attempt.error_message,
        "rules": list(attempt.rules) or None,
    }


def _adding(result: AgentResult) -> dict[str, Any]:
    """The proposal of bottles to add that the turn's add_to_cellar left, as the stored reply
    keeps it (the buttons under it read it back: bot/cellar.py)."""
    for record in result.tools:
        found = adding_of(record.result.notes) if record.result.ok else None
        if found is not None:
            return {ADDING: found}
    return {}
