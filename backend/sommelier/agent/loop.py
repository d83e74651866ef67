"""One agent run: act (tools), then answer, with separate budgets and the recovery ladder.

A turn is split in two, because servers that enforce an answer format (llama.cpp, Ollama,
vLLM) let the model write nothing but the answer:
- act: the strategy gets the tools used. Native: the model calls tools, with no response format
  (a tool the domain requires is forced when the model does not call it). Planner: a constrained
  planning call, then the runtime runs the tools itself.
- answer: calls with no tools and the answer format enforced where the server can; repair with
  feedback `max_retries` times (level 1), one compaction attempt (level 2), then reset (level 3).

Budgets: tool rounds ≤ `max_iterations`; repair retries ≤ `max_retries`; network retries live
in the client; the whole run ≤ `turn_seconds`. None spends another.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

from sommelier.agent.context import (
    EstimatingCounter,
    TiktokenCounter,
    TokenBudgets,
    text_tokens,
    tools_tokens,
)
from sommelier.agent.messages import (
    Message,
    Part,
    assistant,
    runtime,
    system,
    text_of,
    tool_result,
)
from sommelier.agent.model import (
    Completion,
    DeltaCallback,
    ModelClient,
    ModelRequest,
    ModelUnavailable,
    OutputFormat,
    StreamBroken,
    ToolCall,
)
from sommelier.agent.observer import NO_OBSERVER, TurnObserver
from sommelier.agent.output import AnswerContext, AnswerSpec, ErrorKind, ParseResult
from sommelier.agent.parsers import Discard, DisplayEvent, Phase, StreamParser, TextDelta
from sommelier.agent.profile import Strategy
from sommelier.agent.protocols import OutputProtocol
from sommelier.agent.records import (
    AgentResult,
    AttemptRecord,
    Level,
    Outcome,
    Purpose,
    Status,
    ToolRecord,
)
from sommelier.agent.recovery import Summarizer, compaction_context, feedback_for
from sommelier.agent.strategies import act, plan_section
from sommelier.agent.text import clean_text
from sommelier.agent.tools import ToolRegistry, ToolResult
from sommelier.agent.turn import NoPolicy, TurnInput, TurnPolicy, TurnRules

log = logging.getLogger("sommelier.agent")


@dataclass(frozen=True, slots=True)
class AgentLimits:
    max_iterations: int = 5
    max_retries: int = 2
    max_output_tokens: int = 512
    plan_tokens: int = 160
    context_tokens: int = 8192
    compaction: bool = True
    turn_seconds: float | None = None
    clarify_below: float = 0.7


MIN_MESSAGE_TOKENS = 150  # room a person's message needs beside the fixed part of a prompt
MIN_OUTPUT_TOKENS = 256  # the smallest answer budget the start-up check may shrink to


class ContextTooSmall(Exception):
    """The context window cannot hold the fixed part of a prompt, a message and an answer."""

    def __init__(self, window: int, fixed: int, needed: int) -> None:
        super().__init__(
            f"a context window of {window} tokens leaves no room for a message: the system "
            f"prompt and tools take about {fixed} tokens and an answer at least "
            f"{MIN_OUTPUT_TOKENS}; it needs at least {needed}"
        )
        self.needed = needed


class StreamSink(Protocol):
    """A front end that shows answers while they stream. Calls must not block."""

    def emit(self, event: DisplayEvent) -> None: ...


class StreamInterrupted(Exception):
    """A stream broke, and so did its one retry."""


CONTINUE = (
    "Your answer was cut off by a network error. Continue exactly where it stopped, in the same "
    "format; do not repeat anything you already wrote."
)
CLARIFY = (
    "Ask me one short question about what is unclear ({unclear}): response_type "
    "clarification, no wines. "
)


class Agent:
    def __init__(
        self,
        model: ModelClient,
        tools: ToolRegistry,
        spec: AnswerSpec[Any],
        *,
        limits: AgentLimits,
        summarize: Summarizer,
        protocol: OutputProtocol,
        strategy: Strategy = Strategy.planner,
        policy: TurnPolicy | None = None,
        counter: EstimatingCounter | TiktokenCounter | None = None,
        stream_retry_delay: float = 2.0,
        replies: Mapping[str, str] | None = None,
    ) -> None:
        self.model = model
        self.tools = tools
        self.spec = spec
        self.limits = limits
        self.summarize = summarize
        self.protocol = protocol
        self.strategy = strategy
        self.policy = policy or NoPolicy()
        self.counter = counter or EstimatingCounter()
        self.stream_retry_delay = stream_retry_delay
        # Actions a plan may choose that run no tool, answered by the domain's rules (the
        # AnswerContext says which was planned): "thanks", "other_subject"…
        self.replies = dict(replies or {})
        # What a prompt may hold: the window less the output and the tool schemas, computed
        # once per (tools, output budget) instead of on every call.
        self.budgets = TokenBudgets(limits.context_tokens, self.counter)
        # How to plan and how to answer never change: they join the system prompt, so every
        # call starts with the same bytes and a server's prompt cache covers them.
        sections = [protocol.format_section(spec)]
        if strategy == Strategy.planner:
            sections.insert(0, plan_section(tools, self.replies))
        self.static = "\n\n".join(sections)

    def fit_window(self, system_prompt: str) -> None:
        """At start-up, not mid-turn: check that every prompt leaves room for the person's
        message and an answer. The answer budget shrinks (down to MIN_OUTPUT_TOKENS) before
        anything of the message would have to go; below that, ContextTooSmall."""
        fixed = self.counter.count([system(f"{system_prompt}\n\n{self.static}")])
        if self.strategy == Strategy.native:
            fixed += self.counter.count([system(json.dumps(self.tools.specs()))])
        window = self.limits.context_tokens
        room = window - fixed - MIN_MESSAGE_TOKENS
        if room >= self.limits.max_output_tokens:
            return
        if room < MIN_OUTPUT_TOKENS:
            raise ContextTooSmall(window, fixed, fixed + MIN_MESSAGE_TOKENS + MIN_OUTPUT_TOKENS)
        log.warning(
            "the context window of %d tokens is tight: answers get %d tokens instead of %d",
            window,
            room,
            self.limits.max_output_tokens,
            extra={"event": "output_budget_shrunk", "max_output_tokens": room},
        )
        self.limits = replace(self.limits, max_output_tokens=room)

    def start(
        self,
        turn: TurnInput,
        observer: TurnObserver | None = None,
        sink: StreamSink | None = None,
        requeue: Callable[[], Awaitable[None]] | None = None,
    ) -> Run:
        """A run of one turn, not yet executed: its `result` fills as it goes, so a caller
        keeps what was done even when the run is cancelled or fails. `requeue` gives the
        endpoint up and waits for it again (agent/admission.py) before a cut stream is tried
        again, so the retry does not cut someone else's answer."""
        return Run(self, turn, observer or NO_OBSERVER, sink, requeue)

    async def run(
        self,
        turn: TurnInput,
        observer: TurnObserver | None = None,
        sink: StreamSink | None = None,
    ) -> AgentResult:
        """Run one turn. `observer` gets live hooks (tracing); `sink`, when given, gets display
        events of the answer as its text arrives."""
        return await self.start(turn, observer, sink).execute()


class Run:
    """The state of one agent run: the transcript, what the tools found, the budgets spent."""

    def __init__(
        self,
        agent: Agent,
        turn: TurnInput,
        observer: TurnObserver,
        sink: StreamSink | None,
        requeue: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self.agent = agent
        self.requeue = requeue
        self.turn = turn
        self.observer = observer
        self.sink = sink
        self.shown = False  # whether the sink has shown text of the current attempt
        self.limits = agent.limits
        self.messages: list[Message] = with_static(turn.messages, agent.static)
        self.result = AgentResult(status=Status.ok, strategy=str(agent.strategy))
        self.grounded: set[str] = set()
        self.labels: dict[str, str] = {}
        self.facts: dict[str, Mapping[str, Any]] = {}
        self.tool_results: list[ToolResult] = []
        self.max_tokens = agent.limits.max_output_tokens
        self.clarify: list[str] | None = None  # set by a plan that asks for a question
        self.rules = TurnRules()  # the domain's rules for this turn (set on execute)

    async def execute(self) -> AgentResult:
        try:
            async with asyncio.timeout(self.limits.turn_seconds):
                self.rules = await self.agent.policy.rules(self.turn)
                if self.rules.required_tool or self.rules.tools_allowed:
                    self.phase("searching")
                acted = await act(self)
                if acted.answer is not None and acted.answered_by is not None:
                    self.settle(acted.answered_by, Outcome.ok, acted.answer, purpose=Purpose.answer)
                    return self.end(Status.ok, acted.answer)
                self.result.plan = acted.plan.to_json() if acted.plan else None
                given = self.given_answer() or self.fixed_answer()
                if given is not None:
                    return self.end(Status.ok, given)
                self.clarify = list(acted.clarify) if acted.clarify is not None else None
                return await self.answer()
        except TimeoutError:
            log.error(
                "turn deadline of %ss passed",
                self.limits.turn_seconds,
                extra={"event": "turn_timeout", "seconds": self.limits.turn_seconds},
            )
            return self.end(Status.timeout)
        except StreamInterrupted:
            return self.end(Status.interrupted)
        except ModelUnavailable as exc:
            self.result.error = exc
            return self.end(Status.error)

    # -- model calls ---------------------------------------------------------------------

    async def call(
        self,
        messages: list[Message],
        purpose: Purpose,
        level: Level = Level.first,
        *,
        tools: list[dict[str, Any]] | None = None,
        tool_choice: str | None = None,
        output: OutputFormat | None = None,
        parser: StreamParser | None = None,
        max_tokens: int | None = None,
    ) -> tuple[Completion, AttemptRecord]:
        """One recorded model call, fitted to the context window. With a `parser` and a
        sink, its text streams to the person; a broken stream or an unusable answer is tried
        once more."""
        budget = max_tokens or self.max_tokens
        fitted = self.agent.budgets.fit(messages, tools, budget)
        request = ModelRequest(fitted, tools, tool_choice, output, budget)
        on_delta = self._display(parser) if parser is not None and self.sink else None
        try:
            completion = await self._attempt(request, purpose, level, on_delta)
        except StreamBroken as broken:
            completion = await self._retry_stream(request, purpose, level, parser, broken)
        except ModelUnavailable as exc:
            if exc.kind != "bad_response":
                raise
            # A garbage 200 (broken JSON, no choices) is the server's hiccup, and the SDK
            # retries only failed statuses: once more, recorded as its own attempt.
            log.warning("unusable answer; asking once more", extra={"event": "llm_bad_retry"})
            completion = await self._attempt(request, purpose, level, on_delta)
        if parser is not None and not parser.raw and completion.content:
            # Not streamed (or a client that does not stream): the parser gets it whole.
            if self.sink is not None:
                self._display(parser)(completion.content)
            else:
                parser.feed(completion.content)
        return completion, self.result.attempts[-1]

    def _display(self, parser: StreamParser) -> DeltaCallback:
        sink = self.sink
        assert sink is not None

        def on_delta(delta: str) -> None:
            for event in parser.feed(delta):
                if isinstance(event, TextDelta):
                    # Model text reaches a terminal or Telegram: never its control characters
                    # or escape sequences (OSC 52 writes a clipboard), never a lone surrogate.
                    event = TextDelta(clean_text(event.text))
                    if not event.text:
                        continue
                    self.shown = True
                sink.emit(event)

        return on_delta

    async def _retry_stream(
        self,
        request: ModelRequest,
        purpose: Purpose,
        level: Level,
        parser: StreamParser | None,
        broken: StreamBroken,
    ) -> Completion:
        """Once, after a pause (and after the queue: this turn gives the endpoint up and waits
        its turn again). A free-text answer continues from what was received; under an
        enforced format (which must start from the beginning) it starts again, with its parser
        starting again too."""
        log.warning(
            "stream broke; retrying once",
            extra={"event": "llm_stream_retry", "chunks_received": broken.chunks},
        )
        await asyncio.sleep(self.agent.stream_retry_delay)
        if self.requeue is not None:
            await self.requeue()
        continuing = bool(broken.partial) and not self._enforced(request.output)
        retry = request
        if continuing:
            retry = ModelRequest(
                [*request.messages, assistant(broken.partial), runtime(Part.instruction, CONTINUE)],
                request.tools,
                request.tool_choice,
                request.output,
                request.max_tokens,
            )
        else:
            self.discard("stream_broken")
            if parser is not None:
                parser.reset()
        on_delta = self._display(parser) if parser is not None and self.sink else None
        try:
            rest = await self._attempt(retry, purpose, level, on_delta)
        except StreamBroken as again:
            raise StreamInterrupted(str(again)) from again
        if continuing:
            rest.content = broken.partial + (rest.content or "")
        return rest

    def _enforced(self, output: OutputFormat | None) -> bool:
        """Whether the server enforces this format (then an answer must start from the top)."""
        formats = getattr(self.agent.model, "formats", None)
        return formats is not None and bool(formats.fields(output))

    async def _attempt(
        self,
        request: ModelRequest,
        purpose: Purpose,
        level: Level,
        on_delta: DeltaCallback | None,
    ) -> Completion:
        attempt = len(self.result.attempts) + 1
        model = self.agent.model
        fitted = list(request.messages)
        handle = self.observer.model_started(attempt, level, model.model, fitted)
        record = AttemptRecord(
            attempt=attempt,
            purpose=purpose,
            level=level,
            model=model.model,
            started_ns=time.time_ns(),
            ended_ns=0,
            latency_ms=0,
            input=fitted,
            max_tokens=request.max_tokens,
            handle=handle,
        )
        self.result.attempts.append(record)
        started = time.perf_counter()
        delta = self._timed(on_delta, record, started) if on_delta else None
        try:
            completion = await model.complete(request, delta)
        except ModelUnavailable as exc:
            self._failed(record, exc, started)
            raise
        except asyncio.CancelledError:
            self._failed(record, ModelUnavailable("cancelled", "the turn was cancelled"), started)
            raise
        self.agent.counter.calibrate(fitted, completion.usage.prompt_tokens)
        record.ended_ns = time.time_ns()
        record.latency_ms = completion.latency_ms or _ms(started)
        record.model = completion.model or model.model
        record.output = completion.content
        record.tool_calls = [
            {"id": c.id, "name": c.name, "arguments": c.arguments} for c in completion.tool_calls
        ]
        record.prompt_tokens = completion.usage.prompt_tokens
        record.completion_tokens = completion.usage.completion_tokens
        record.cached_tokens = completion.usage.cached_tokens
        if record.prompt_tokens is None or record.completion_tokens is None:
            self._estimate_usage(record, request, completion)
        record.finish_reason = completion.finish_reason
        return completion

    def _estimate_usage(
        self, record: AttemptRecord, request: ModelRequest, completion: Completion
    ) -> None:
        """Counts the server did not report (llama-cpp-python's server sends no usage in
        streams), counted with the context fitter's counter and marked estimated, so prompt
        size and tokens per turn can be read for every server."""
        counter = self.agent.counter
        if record.prompt_tokens is None:
            record.prompt_tokens = counter.count(record.input) + tools_tokens(
                request.tools, counter
            )
        if record.completion_tokens is None:
            calls = (
                json.dumps(record.tool_calls, separators=(",", ":")) if record.tool_calls else ""
            )
            record.completion_tokens = text_tokens((completion.content or "") + calls, counter)
        record.usage_estimated = True

    @staticmethod
    def _timed(on_delta: DeltaCallback, record: AttemptRecord, started: float) -> DeltaCallback:
        def timed(delta: str) -> None:
            if record.first_text_ms is None and delta.strip():
                record.first_text_ms = _ms(started)
            on_delta(delta)

        return timed

    def _failed(self, record: AttemptRecord, exc: ModelUnavailable, started: float) -> None:
        record.ended_ns = time.time_ns()
        record.latency_ms = exc.latency_ms or _ms(started)
        record.output = getattr(exc, "partial", None)
        record.outcome, record.error_kind, record.error_message = Outcome.error, exc.kind, str(exc)
        self.observer.model_finished(record.handle, record)

    def settle(
        self,
        record: AttemptRecord,
        outcome: Outcome,
        parsed: ParseResult[Any] | None = None,
        purpose: Purpose | None = None,
    ) -> None:
        """A call's outcome, once known, and (for a tool round that turned out to be the
        answer) its purpose; the observer hears of the call then."""
        record.outcome = outcome
        if purpose is not None:
            record.purpose = purpose
        if parsed is not None:
            record.rules = list(parsed.rules)
        if parsed is not None and not parsed.ok:
            record.error_kind = str(parsed.error_kind)
            record.error_message = parsed.error_message
        self.observer.model_finished(record.handle, record)

    def phase(self, name: str) -> None:
        """What the turn does now, for the person's sign of life ("searching", "writing")."""
        if self.sink is not None:
            self.sink.emit(Phase(name))

    def discard(self, reason: str) -> None:
        if self.sink is not None and self.shown:
            self.sink.emit(Discard(reason))
        self.shown = False

    # -- tools ---------------------------------------------------------------------------

    async def run_tools(self, calls: Sequence[ToolCall], content: str = "") -> None:
        """Run one round of tool calls and put the calls and their results in the transcript.
        The calls show the arguments as the tools ran them (after the domain's preparation),
        so the model reads what was actually searched."""
        self.result.tool_rounds += 1
        started_ns = time.time_ns()
        handles = [self.observer.tool_started(call) for call in calls]
        results = await self.agent.tools.run_all(calls, self.turn)
        self.messages.append(assistant(content, [_call_message(r) for r in results]))
        for handle, result in zip(handles, results, strict=True):
            self.observer.tool_finished(handle, result)
            self.messages.append(tool_result(result.call.id, result.content))
            self.grounded |= result.references
            self.labels.update(result.labels)
            self.facts.update(result.facts)
            self.tool_results.append(result)
            ended_ns = started_ns + result.latency_ms * 1_000_000
            self.result.tools.append(
                ToolRecord(result, started_ns, ended_ns, self.result.tool_rounds)
            )

    def given_answer(self) -> ParseResult[Any] | None:
        """The answer a tool wrote from data, when every tool of the turn that ran gave one
        (a serving temperature from a table): it is the reply, and no model writes one."""
        ran = [r for r in self.tool_results if r.ok]
        if not ran or any(r.answer is None for r in ran):
            return None
        parsed = self.agent.spec.given(ran[-1].answer)
        return parsed if parsed.ok else None

    def stood_alone(self) -> bool:
        """Whether a tool whose answer is the whole reply has given it (Tool.stands_alone)."""
        tools = self.agent.tools.tools
        return any(
            r.ok
            and r.answer is not None
            and r.call.name in tools
            and tools[r.call.name].stands_alone
            for r in self.tool_results
        )

    def fixed_answer(self) -> ParseResult[Any] | None:
        """What the plan called the message, in the domain's fixed text, when no tool ran: the
        answer a model would write is replaced by it anyway, so none is asked for."""
        if self.result.tools_used:
            return None
        return self.agent.spec.fixed(self.answer_context())

    # -- the answer ----------------------------------------------------------------------

    @property
    def required(self) -> str | None:
        return self.rules.required_tool

    def answer_context(self) -> AnswerContext:
        return AnswerContext(
            grounded=frozenset(self.grounded),
            previous_answer=self.turn.previous_answer,
            tools_used=frozenset(self.result.tools_used),
            labels=dict(self.labels),
            tools_required=self.required is not None,
            request=self.turn.request,
            facts=dict(self.facts),
            turn=self.turn.context,
            planned=(self.result.plan or {}).get("action"),
            tool_results=tuple(self.tool_results),
        )

    def instruction(self) -> Message:
        protocol, spec = self.agent.protocol, self.agent.spec
        text = protocol.instruction(spec, sorted(self.grounded))
        if self.clarify is not None:
            text = CLARIFY.format(unclear=", ".join(self.clarify) or "what you want") + text
        if self.rules.note:
            # Last, right before the model writes: a small model follows what it read last
            # (the language to write in, above all).
            text = f"{text} {self.rules.note}"
        return runtime(Part.instruction, text)

    def preface(self) -> None:
        """The text the domain says from data whatever the model writes (a recommendation's
        intro): the person reads it while the model writes the rest. Only under a JSON schema,
        which leaves the model no intro of its own (in the delimited and ndjson protocols its
        text streams as the intro, and would follow this one)."""
        if self.sink is None or not self.agent.protocol.schema_enforced:
            return
        opening = self.agent.spec.preface(self.answer_context())
        if opening:
            self.sink.emit(TextDelta(opening + "\n\n"))
            self.shown = True

    async def answer(self) -> AgentResult:
        """Answer calls with no tools and an enforced format, repaired with feedback."""
        self.phase("writing")
        self.preface()
        self.messages.append(self.instruction())
        answers = 0
        fallback: ParseResult[Any] | None = None
        while True:
            purpose = Purpose.answer if answers == 0 else Purpose.repair
            level = Level.first if answers == 0 else Level.repair
            parsed, completion = await self.attempt_answer(self.messages, purpose, level)
            answers += 1
            verdict = self.judge(parsed, retries_left=self.limits.max_retries - answers + 1)
            if verdict is not None:
                return verdict
            if parsed.fallback is not None and parsed.fallback.ok:
                fallback = parsed
            if answers > 1 and fallback is not None:
                # A repair was tried and did not give a sound answer: the latest mended
                # answer (false sentences dropped) beats more calls, and a reset.
                return self.mended(fallback)
            if answers > self.limits.max_retries:
                log.error(
                    "structured output exhausted after %d attempts",
                    answers,
                    extra={"event": "structured_output_exhausted", "attempts": answers},
                )
                return await self.compaction()
            self.result.retries += 1
            self.result.level = max(self.result.level, Level.repair)
            log.warning(
                "structured output retry %d/%d: %s",
                answers,
                self.limits.max_retries,
                parsed.describe(),
                extra={
                    "event": "structured_output_retry",
                    "retry": answers,
                    "max_retries": self.limits.max_retries,
                    "error_kind": str(parsed.error_kind),
                },
            )
            self.messages.append(assistant(completion.content or ""))
            self.messages.append(feedback_for(parsed, sorted(self.grounded), self.agent.protocol))
            if (
                parsed.error_kind == ErrorKind.truncated
                and self.max_tokens == self.limits.max_output_tokens
            ):
                self.max_tokens *= 2  # once: a bigger budget for the retry

    async def attempt_answer(
        self, messages: list[Message], purpose: Purpose, level: Level
    ) -> tuple[ParseResult[Any], Completion]:
        protocol, spec = self.agent.protocol, self.agent.spec
        self.discard("repair")
        parser = protocol.parser(spec, self.answer_context())
        output = protocol.output_format(spec, sorted(self.grounded), self.facts)
        completion, record = await self.call(messages, purpose, level, output=output, parser=parser)
        parsed = parser.finish(completion.finish_reason, completion.refusal)
        if parsed.ok:
            outcome = Outcome.ok
        else:
            outcome = Outcome.refused if parsed.error_kind == ErrorKind.refused else Outcome.invalid
        self.settle(record, outcome, parsed)
        return parsed, completion

    def judge(self, parsed: ParseResult[Any], retries_left: int = 0) -> AgentResult | None:
        """The end of the run for a usable answer or a refusal; None to go on repairing."""
        if parsed.ok:
            if self.result.retries:
                log.info(
                    "structured output recovered after %d retries",
                    self.result.retries,
                    extra={"event": "structured_output_recovered", "retries": self.result.retries},
                )
            return self.end(Status.ok, parsed)
        if parsed.error_kind == ErrorKind.refused:
            return self.end(Status.refused, parsed)
        self.result.errors.append(parsed.describe())
        return None

    def mended(self, parsed: ParseResult[Any]) -> AgentResult:
        assert parsed.fallback is not None
        log.warning(
            "answer mended after repair: %s",
            parsed.describe(),
            extra={"event": "structured_output_mended", "error_kind": str(parsed.error_kind)},
        )
        self.result.mended = True
        return self.end(Status.ok, parsed.fallback)

    async def compaction(self) -> AgentResult:
        if not self.limits.compaction:
            return self.end(Status.exhausted)
        self.result.level, self.result.retries = Level.compaction, self.result.retries + 1
        log.warning(
            "structured output compaction: rebuilding the context",
            extra={"event": "structured_output_compaction", "level": 2},
        )
        compact = compaction_context(
            self.messages, self.tool_results, self.agent.summarize, self.agent.protocol
        )
        parsed, _ = await self.attempt_answer(compact, Purpose.compaction, Level.compaction)
        if parsed.ok:
            log.info(
                "structured output recovered by compaction",
                extra={"event": "structured_output_recovered", "level": 2},
            )
        verdict = self.judge(parsed)
        if verdict is not None:
            return verdict
        self.result.level = Level.reset
        log.error(
            "structured output reset after compaction failed",
            extra={"event": "structured_output_reset", "level": 3},
        )
        return self.end(Status.reset)

    def end(self, status: Status, parsed: ParseResult[Any] | None = None) -> AgentResult:
        self.result.status = status
        self.result.parse = parsed
        self.result.transcript = list(self.messages)
        return self.result


def _call_message(result: ToolResult) -> dict[str, Any]:
    ran = result.arguments
    arguments = json.dumps(ran, ensure_ascii=False) if isinstance(ran, dict) else None
    return {
        "id": result.call.id,
        "type": "function",
        "function": {
            "name": result.call.name,
            "arguments": arguments or result.call.arguments or "{}",
        },
    }


def with_static(messages: Sequence[Message], static: str) -> list[Message]:
    """The transcript with the agent's static sections added to its first system message."""
    messages = list(messages)
    first = next((i for i, m in enumerate(messages) if m.get("role") == "system"), None)
    if first is None:
        return [system(static), *messages]
    messages[first] = system(f"{text_of(messages[first])}\n\n{static}")
    return messages


def _ms(started: float) -> int:
    return int((time.perf_counter() - started) * 1000)
