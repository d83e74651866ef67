"""Runs the dialogs against the configured model, one configuration (protocol x strategy) at a
time, each on a fresh SQLite database with the starter catalog, and judges every turn.

What is judged is what a person would notice, checked independently of the runtime's own
validation: did a wine request search the catalog, is every card a wine that this turn's tools
returned, is the reply an actual answer (not "please search the catalog", not empty, not the
previous reply again), how long until text showed, and how long the turn took.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import openai

from sommelier.agent.loop import with_static
from sommelier.agent.messages import Message, system, user, wire
from sommelier.agent.parsers import DisplayEvent, TextDelta
from sommelier.agent.profile import Strategy
from sommelier.agent.records import AgentResult, AttemptRecord, Level, Outcome, Purpose, Status
from sommelier.app import App
from sommelier.catalog.vocabulary import fold
from sommelier.chat.reply import _PUNT, _normal, echoes, only_questions
from sommelier.chat.service import Card, ChatService, TurnReply
from sommelier.config import AgentStrategy, OutputProtocol, Settings
from sommelier.db.repositories import Person
from sommelier.evaluation.dialogs import Dialog, Respect, Say
from sommelier.evaluation.judging import contradictions, reply_language, violations
from sommelier.observability.tracing import Tracer, TurnTrace

CATALOG_TOOLS = frozenset({"search_wines", "get_wine"})


@dataclass(slots=True)
class TurnOutcome:
    dialog: int
    text: str
    wine_request: bool
    status: str
    searched: bool
    result: str  # first try | after repair | after compaction | reset | failed (status)
    invented: int  # cards whose wine no tool of this turn returned
    non_answer: str | None
    calls: int
    prompt_tokens: int | None
    seconds: float
    first_text: float | None
    first_call_prompt_tokens: int | None = None
    reply: str = ""
    respects: bool | None = None  # a second conversation's reply against the first's taste
    language: str = "en"  # the person's
    reply_language: str | None = None  # the reply's, as detected; None: too little to tell
    violations: list[str] = field(default_factory=list)  # what the wines break of the request
    relaxed: bool = False  # the search gave up a wish
    stated: bool = False  # the reply said which (its notice)
    contradictions: int = 0  # false facts the final reply states about its cards
    mended: bool = False  # false sentences were dropped after a repair did not mend them
    capped: bool = False  # a field ran over its length cap (mended at a sentence or clause)
    # The answers the runtime sent back, with why: a reset explained after the run (the
    # console log does not print the failed turn, and the run's database is gone).
    rejected: list[str] = field(default_factory=list)
    cards: list[str] = field(default_factory=list)  # the wines shown, by id
    # What the model wrote for the answer shown, before it was mended: a why the cap emptied,
    # or a sentence dropped, can be seen after the run.
    answer: str = ""

    @property
    def in_language(self) -> bool:
        return self.reply_language in (None, self.language)

    @property
    def good(self) -> bool:
        """Grounded, an answer, searched when asked for wine, nothing asked for broken."""
        return (
            self.status == "ok"
            and not self.invented
            and self.non_answer is None
            and (self.searched or not self.wine_request)
            and not self.violations
            and (self.stated or not self.relaxed)
        )


@dataclass(slots=True)
class FirstText:
    """A sink that notes when the person first saw text."""

    started: float = field(default_factory=time.perf_counter)
    at: float | None = None

    def emit(self, event: DisplayEvent) -> None:
        if self.at is None and isinstance(event, TextDelta) and event.text.strip():
            self.at = time.perf_counter() - self.started


class Capture:
    """A tracer that keeps each turn's AgentResult and passes everything on to the real one."""

    def __init__(self, inner: Tracer) -> None:
        self.inner = inner
        self.results: list[AgentResult] = []

    @contextmanager
    def turn(self, **fields: str) -> Iterator[TurnTrace]:
        with self.inner.turn(**fields) as trace:
            outer = self

            class Recording:
                def __getattr__(self, name: str) -> Any:
                    return getattr(trace, name)

                def record(self, result: AgentResult, status: str, shown_text: str) -> None:
                    outer.results.append(result)
                    trace.record(result, status, shown_text)

            yield Recording()

    def score(
        self, trace_id: str, name: str, value: float | str, comment: str | None = None
    ) -> None:
        self.inner.score(trace_id, name, value, comment)

    def score_feedback(
        self, trace_id: str, name: str, value: float, comment: str | None, score_id: str
    ) -> None:
        self.inner.score_feedback(trace_id, name, value, comment, score_id)

    def flush(self) -> None:
        self.inner.flush()

    def shutdown(self) -> None:
        self.inner.shutdown()


def result_kind(result: AgentResult) -> str:
    if result.status != Status.ok:
        return "reset" if result.status == Status.reset else f"failed ({result.status})"
    answers = [a for a in result.attempts if a.purpose not in (Purpose.tool_round, Purpose.plan)]
    if result.level >= Level.compaction:
        return "after compaction"
    return "first try" if len(answers) <= 1 else "after repair"


def non_answer(
    reply: TurnReply, previous: TurnReply | None, asked: str = "", wine_request: bool = True
) -> str | None:
    if reply.status != "ok":
        return None
    if not reply.text.strip():
        return "empty"
    if _PUNT.search(f"{reply.intro} {reply.closing}"):
        return "asks the person to search"
    if previous is not None and repeated(reply, previous):
        return "repeats the previous reply"
    if echoes(reply.intro or reply.text, asked):
        return "only repeats the person's message"
    if not wine_request and not reply.cards and only_questions(reply.text):
        return "asks back instead of answering"
    return None


def repeated(reply: TurnReply, previous: TurnReply) -> bool:
    """The same text about the same wines: the same plain line above other cards is not."""
    same_cards = {c.wine_id for c in reply.cards} == {c.wine_id for c in previous.cards}
    return same_cards and _normal(reply.text) == _normal(previous.text)


def judge(
    dialog: int, text: str, wine_request: bool, reply: TurnReply, result: AgentResult,
    seconds: float, first_text: float | None, previous: TurnReply | None,
) -> TurnOutcome:  # fmt: skip
    returned = {ref for t in result.tools for ref in t.result.references}
    prompt = [a.prompt_tokens for a in result.attempts]
    return TurnOutcome(
        dialog=dialog,
        text=text,
        wine_request=wine_request,
        status=reply.status,
        searched=bool(result.tools_used & CATALOG_TOOLS),
        result=result_kind(result),
        invented=sum(1 for card in reply.cards if card.wine_id not in returned),
        non_answer=non_answer(reply, previous, text, wine_request),
        calls=len(result.attempts),
        prompt_tokens=sum(p for p in prompt if p) if prompt and all(prompt) else None,
        seconds=seconds,
        first_text=first_text,
        reply=reply.text,
        rejected=rejected(result),
        cards=[card.wine_id for card in reply.cards],
        answer=accepted(result)[:REJECTED_CHARS],
    )


REJECTED_CHARS = 1500  # of each answer kept: enough to see what the model wrote


def accepted(result: AgentResult) -> str:
    """What the model wrote for the answer that was shown, as it wrote it."""
    shown = [a.output or "" for a in _answers(result) if a.outcome == Outcome.ok]
    return shown[-1] if shown else ""


def _answers(result: AgentResult) -> list[AttemptRecord]:
    """The turn's answer calls (not its tool rounds or plan)."""
    return [a for a in result.attempts if a.purpose not in (Purpose.tool_round, Purpose.plan)]


def rejected(result: AgentResult) -> list[str]:
    """Each answer of the turn that was sent back or failed: why, then what it said."""
    return [
        f"{a.error_kind}: {a.error_message}\n{(a.output or '')[:REJECTED_CHARS]}"
        for a in _answers(result)
        if a.outcome != Outcome.ok
    ]


async def run_config(
    settings: Settings, dialogs: Sequence[Dialog], protocol: str, strategy: str, log: Any = None
) -> list[TurnOutcome]:
    """All dialogs under one configuration, on a database of its own."""
    with tempfile.TemporaryDirectory() as folder:
        url = f"sqlite+aiosqlite:///{Path(folder) / 'eval.db'}"
        config = settings.model_copy(
            update={
                "database_url": url,
                "output_protocol": OutputProtocol(protocol),
                "agent_strategy": AgentStrategy(strategy),
                "auto_migrate": True,
                "load_starter_catalog": True,
            }
        )
        app = App.build(config)
        try:
            await app.prepare()
            await app.check_model()
            return await _dialogs(app, dialogs, log)
        finally:
            await app.aclose()


class TokenCounter:
    """Exact prompt tokens of calls whose streams did not report usage (llama-cpp-python):
    the same request again, not streamed, for one token. The server's prompt cache holds the
    prefix, so this costs a fraction of a second, after the turn's clock has stopped."""

    def __init__(self, app: App) -> None:
        s = app.settings
        self.model = s.llm_model
        self.tools = app.chat_service().agent.tools.specs()
        self.client = openai.AsyncOpenAI(
            base_url=s.llm_base_url, api_key=s.llm_api_key or "x", max_retries=1, timeout=300
        )

    async def fill(self, result: AgentResult) -> None:
        # Latest first: the server's cache holds the last call, and each earlier call shares
        # a prefix with the one after it.
        for attempt in reversed(result.attempts):
            if attempt.prompt_tokens is not None or attempt.outcome == Outcome.error:
                continue
            tools = attempt.purpose == Purpose.tool_round
            attempt.prompt_tokens = await self._prompt_tokens(attempt.input, tools)

    async def first_call(self, service: ChatService, text: str) -> int | None:
        """Prompt tokens of the smallest first call of a conversation, exactly as the issue
        counts it: the system prompt with its static sections, the tool definitions where the
        model is offered tools (native), and one user message."""
        agent = service.agent
        messages = with_static([system(service.system_prompt), user(text)], agent.static)
        return await self._prompt_tokens(messages, agent.strategy == Strategy.native)

    async def _prompt_tokens(self, messages: Sequence[Message], tools: bool) -> int | None:
        """The server's count for `messages` (with the tool definitions), asked for one token."""
        request: dict[str, Any] = {
            "model": self.model,
            "messages": [wire(m) for m in messages],
            "max_tokens": 1,
        }
        if tools:
            request["tools"] = self.tools
        try:
            response = await self.client.chat.completions.create(**request)
        except openai.APIError:
            return None
        return response.usage.prompt_tokens if response.usage is not None else None

    async def close(self) -> None:
        await self.client.close()


async def _dialogs(app: App, dialogs: Sequence[Dialog], log: Any) -> list[TurnOutcome]:
    capture = Capture(app.tracer())
    service = app.chat_service(tracer=capture)
    counter = TokenCounter(app)
    try:
        return await _talk(service, capture, counter, dialogs, log)
    finally:
        await counter.close()


async def _talk(
    service: ChatService,
    capture: Capture,
    counter: TokenCounter,
    dialogs: Sequence[Dialog],
    log: Any,
) -> list[TurnOutcome]:
    outcomes: list[TurnOutcome] = []
    for index, dialog in enumerate(dialogs):
        person = Person(channel="cli", local_name=f"eval-{index}", display_name=f"eval {index}")
        previous: TurnReply | None = None
        for say in dialog:
            if say.new:
                await service.new_conversation(person)
                previous = None
            sink = FirstText()
            reply = await service.turn(person, say.text, sink=sink)
            seconds = time.perf_counter() - sink.started
            result = capture.results[-1]
            await counter.fill(result)
            outcome = judge(
                index, say.text, say.wine_request, reply, result, seconds, sink.at, previous
            )
            await _judge_words(service, outcome, say, reply, result, previous)
            if not outcomes:
                outcome.first_call_prompt_tokens = await counter.first_call(service, say.text)
            if say.respects is not None:
                outcome.respects = respects(reply, say.respects)
            outcomes.append(outcome)
            _score(capture, reply, outcome)
            if log is not None:
                log(outcome)
            previous = reply if reply.ok else previous
    return outcomes


async def _judge_words(
    service: ChatService,
    outcome: TurnOutcome,
    say: Say,
    reply: TurnReply,
    result: AgentResult,
    previous: TurnReply | None,
) -> None:
    """The reply's wines against the request, its language, and its prose against its cards."""
    wines = await service.catalog.wines([c.wine_id for c in reply.cards])
    before = await service.catalog.wines([c.wine_id for c in previous.cards]) if previous else []
    outcome.language = say.language
    outcome.reply_language = reply_language(reply)
    outcome.violations = violations(say.expect, wines, before)
    searches = [t.result for t in result.tools if t.result.call.name == "search_wines"]
    outcome.relaxed = bool(searches and searches[-1].notes.get("relaxed"))
    outcome.stated = bool(reply.notice)
    names = await service.catalog.names()
    outcome.contradictions = contradictions(reply, wines, say.language, names)
    outcome.mended = result.mended
    outcome.capped = bool(reply.reply and reply.reply.capped)


def respects(reply: TurnReply, wanted: Respect) -> bool:
    """Whether a reply's wines respect what an earlier conversation said; no wine is a miss."""
    if not reply.ok or not reply.cards:
        return False

    def has(card: Card, kind: str, value: str) -> bool:
        if kind == "type":
            return card.style.split(",")[0].strip() == value
        if kind == "country":
            return fold(card.place or "").endswith(value)
        return value in {fold(g) for g in card.grapes}

    if wanted.avoid and any(has(c, *wanted.avoid) for c in reply.cards):
        return False
    return not wanted.like or any(has(c, *wanted.like) for c in reply.cards)


def _score(tracer: Capture, reply: TurnReply, outcome: TurnOutcome) -> None:
    """With Langfuse configured, each judgement is a score on the turn's trace."""
    if not reply.trace_id:
        return
    if outcome.wine_request:
        tracer.score(reply.trace_id, "eval.searched", outcome.searched)
    tracer.score(reply.trace_id, "eval.result", outcome.result)
    tracer.score(reply.trace_id, "eval.invented_wines", float(outcome.invented))
    tracer.score(reply.trace_id, "eval.non_answer", outcome.non_answer is not None)
    tracer.score(reply.trace_id, "eval.seconds", round(outcome.seconds, 2))
