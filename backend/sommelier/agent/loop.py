"""The tool loop and the final answer's repair, with separate budgets.

- tool rounds: at most `max_iterations`; after that one more call without tools must answer;
- repair retries: at most `max_retries` after the first answer attempt (level 1), then one
  compaction attempt (level 2) when enabled, then reset (level 3);
- network retries live inside the model client and spend neither.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from sommelier.agent.context import ContextBudget, EstimatingCounter, TiktokenCounter, fit_messages
from sommelier.agent.llm import (
    Completion,
    ModelClient,
    ModelUnavailable,
    ResponseSchema,
    StreamBroken,
    StreamingModelClient,
    ToolCall,
)
from sommelier.agent.messages import Message, assistant, tool_result, user
from sommelier.agent.output import AnswerSpec, ErrorKind, ParseResult
from sommelier.agent.protocols import (
    Discard,
    DisplayEvent,
    StreamParser,
    TextDelta,
    parser_for,
)
from sommelier.agent.records import AgentResult, AttemptRecord, ToolRecord
from sommelier.agent.recovery import FEEDBACK_PREFIX, Summarizer, compaction_context
from sommelier.agent.tools import ToolRegistry, ToolResult, tool_calls_in_text
from sommelier.observability.tracing import NO_TURN, TurnTrace

log = logging.getLogger("sommelier.agent")


@dataclass(frozen=True, slots=True)
class AgentLimits:
    max_iterations: int = 5
    max_retries: int = 2
    max_output_tokens: int = 1024
    context_tokens: int = 8192
    compaction: bool = True


FORMAT_REMINDERS = {
    "json": "Reply again with one JSON object that follows the schema exactly.",
    "delimited": "Reply again in the required format: your text, then a line with only ---, "
    "then one JSON object that follows the schema.",
    "ndjson": "Reply again in the required format: one JSON object per line (intro, wine "
    "lines, closing, meta), nothing else.",
}


def feedback_for(result: ParseResult, grounded: Sequence[str], protocol: str = "json") -> str:
    message = f"{FEEDBACK_PREFIX} {result.error_kind}: {result.error_message}"
    if result.error_kind == ErrorKind.grounding:
        choices = ", ".join(sorted(grounded)) or "none yet: search the catalog first"
        message += f" Wine ids from this turn's tool results: {choices}."
    return f"{message} {FORMAT_REMINDERS[protocol]}"


class Agent:
    def __init__(
        self,
        model: ModelClient,
        tools: ToolRegistry,
        spec: AnswerSpec,
        *,
        limits: AgentLimits,
        summarize: Summarizer,
        counter: EstimatingCounter | TiktokenCounter | None = None,
        protocol: str = "json",
        stream_retry_delay: float = 2.0,
    ) -> None:
        self.model = model
        self.tools = tools
        self.spec = spec
        self.limits = limits
        self.summarize = summarize
        self.counter = counter or EstimatingCounter()
        self.protocol = protocol
        # Only the json protocol is asked for through response_format; the others are text
        # (their format is in the system prompt).
        self.response_schema = (
            ResponseSchema(spec.name, spec.json_schema()) if protocol == "json" else None
        )
        self.stream_retry_delay = stream_retry_delay

    async def run(
        self,
        messages: Sequence[Message],
        observer: TurnTrace | None = None,
        sink: StreamSink | None = None,
    ) -> AgentResult:
        """Run one turn. `observer` gets live hooks (a tracing TurnTrace); `sink`, when given
        and the model can stream, gets display events as text arrives."""
        streaming = sink is not None and isinstance(self.model, StreamingModelClient)
        run = _Run(self, list(messages), observer or NO_TURN, sink if streaming else None)
        try:
            return await run.execute()
        except StreamInterrupted:
            run.result.status = "interrupted"
            return run.result
        except ModelUnavailable as exc:
            run.result.status = "error"
            run.result.error = exc
            return run.result


class StreamSink(Protocol):
    """A front end that shows answers while they stream. Calls must not block."""

    def emit(self, event: DisplayEvent) -> None: ...


class StreamInterrupted(Exception):
    """A stream broke, and so did its one retry."""


CONTINUE = (
    "Your answer was cut off by a network error. Continue exactly where it stopped, in the same "
    "format; do not repeat anything you already wrote."
)


class _Run:
    """State of one agent run: the messages so far and the budgets spent."""

    def __init__(
        self,
        agent: Agent,
        messages: list[Message],
        observer: TurnTrace,
        sink: StreamSink | None,
    ) -> None:
        self.agent = agent
        self.observer = observer
        self.sink = sink
        self.shown = False  # whether the sink has shown text of the current attempt
        self.limits = agent.limits
        self.messages = messages
        self.result = AgentResult(status="ok")
        self.grounded: set[str] = set()
        self.tool_results: list = []
        self.max_tokens = agent.limits.max_output_tokens
        self._prompt_budgets: dict[tuple[bool, int], int] = {}

    def prompt_budget(self, tools: list | None) -> int:
        key = (tools is not None, self.max_tokens)
        if key not in self._prompt_budgets:
            budget = ContextBudget(self.limits.context_tokens, self.max_tokens)
            schema = self.agent.response_schema
            self._prompt_budgets[key] = budget.for_prompt(
                self.agent.counter, tools, schema.schema if schema else None
            )
        return self._prompt_budgets[key]

    async def execute(self) -> AgentResult:
        answers = 0
        widened = False
        while True:
            tools_allowed = self.result.tool_rounds < self.limits.max_iterations
            level = 1 if answers else 0
            completion, record, parser = await self._call(self.messages, tools_allowed, level)
            calls = completion.tool_calls or tool_calls_in_text(
                completion.content, self.agent.tools
            )
            if calls and tools_allowed:
                record.purpose, record.outcome = "tool_round", "tool_calls"
                self.observer.model_finished(record.handle, record)
                self._discard("tool_call")
                await self._run_tools(completion, calls)
                continue
            answers += 1
            record.purpose = "answer" if answers == 1 else "repair"
            parsed = self._parse(completion, calls, parser)
            self._settle(record, parsed)
            if parsed.ok:
                if answers > 1:
                    log.info(
                        "structured output recovered after %d retries",
                        answers - 1,
                        extra={"event": "structured_output_recovered", "retries": answers - 1},
                    )
                return self._finish("ok", parsed)
            if parsed.error_kind == ErrorKind.refused:
                return self._finish("refused", parsed)
            self.result.errors.append(parsed.describe())
            if answers > self.limits.max_retries:
                log.error(
                    "structured output exhausted after %d attempts",
                    answers,
                    extra={"event": "structured_output_exhausted", "attempts": answers},
                )
                return await self._after_exhaustion()
            self.result.retries += 1
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
            self._discard("repair")
            self.messages.append(assistant(completion.content or ""))
            self.messages.append(
                user(feedback_for(parsed, sorted(self.grounded), self.agent.protocol))
            )
            if parsed.error_kind == ErrorKind.truncated and not widened:
                self.max_tokens *= 2  # once: a bigger budget for the retry
                widened = True

    def _parse(self, completion: Completion, calls: list, parser: StreamParser) -> ParseResult:
        if calls and not completion.content:
            return ParseResult.failure(
                ErrorKind.schema,
                "no more tool calls are possible in this turn; give the final answer now",
            )
        return parser.finish(completion.finish_reason, completion.refusal)

    def _discard(self, reason: str) -> None:
        if self.sink is not None and self.shown:
            self.sink.emit(Discard(reason))
        self.shown = False

    async def _after_exhaustion(self) -> AgentResult:
        if not self.limits.compaction:
            return self._finish("exhausted", None)
        self.result.level = 2
        self.result.retries += 1
        log.warning(
            "structured output compaction: rebuilding the context",
            extra={"event": "structured_output_compaction", "level": 2},
        )
        self._discard("repair")
        compact = compaction_context(self.messages, self.tool_results, self.agent.summarize)
        completion, record, parser = await self._call(compact, False, 2)
        record.purpose = "compaction"
        parsed = self._parse(completion, [], parser)
        self._settle(record, parsed)
        if parsed.ok:
            log.info(
                "structured output recovered by compaction",
                extra={"event": "structured_output_recovered", "level": 2},
            )
            return self._finish("ok", parsed)
        if parsed.error_kind == ErrorKind.refused:
            return self._finish("refused", parsed)
        self.result.errors.append(parsed.describe())
        self.result.level = 3
        log.error(
            "structured output reset after compaction failed",
            extra={"event": "structured_output_reset", "level": 3},
        )
        return self._finish("reset", None)

    def _finish(self, status: str, parsed: ParseResult | None) -> AgentResult:
        self.result.status = status  # type: ignore[assignment]
        self.result.parse = parsed
        self.result.transcript = list(self.messages)
        if self.result.level < 2 and self.result.retries:
            self.result.level = 1
        return self.result

    def _settle(self, record: AttemptRecord, parsed: ParseResult) -> None:
        if parsed.ok:
            record.outcome = "ok"
        else:
            record.outcome = "refused" if parsed.error_kind == ErrorKind.refused else "invalid"
            record.error_kind = str(parsed.error_kind)
            record.error_message = parsed.error_message
        self.observer.model_finished(record.handle, record)

    async def _call(
        self, messages: list[Message], tools_allowed: bool, level: int
    ) -> tuple[Completion, AttemptRecord, StreamParser]:
        tools = self.agent.tools.specs() if tools_allowed else None
        counter = self.agent.counter
        fitted = fit_messages(messages, self.prompt_budget(tools), counter)
        parser = parser_for(self.agent.protocol, self.agent.spec, self.grounded)
        if self.sink is None:
            completion = await self._attempt(fitted, tools, level, None)
            if completion.content:
                parser.feed(completion.content)
        else:
            completion = await self._streamed(fitted, tools, level, parser)
        record = self.result.attempts[-1]
        return completion, record, parser

    async def _streamed(
        self, fitted: list[Message], tools: list | None, level: int, parser: StreamParser
    ) -> Completion:
        """A streamed call; a stream that breaks is retried once, continuing from its text."""
        sink = self.sink
        assert sink is not None

        def on_delta(delta: str) -> None:
            for event in parser.feed(delta):
                if isinstance(event, TextDelta) and event.text:
                    self.shown = True
                sink.emit(event)

        try:
            return await self._attempt(fitted, tools, level, on_delta)
        except StreamBroken as broken:
            log.warning(
                "stream broke; retrying once",
                extra={"event": "llm_stream_retry", "chunks_received": broken.chunks},
            )
            await asyncio.sleep(self.agent.stream_retry_delay)
            continuation = list(fitted)
            if broken.partial:
                continuation += [assistant(broken.partial), user(CONTINUE)]
            try:
                rest = await self._attempt(continuation, tools, level, on_delta)
            except StreamBroken as again:
                raise StreamInterrupted(str(again)) from again
            rest.content = broken.partial + (rest.content or "")
            return rest

    async def _attempt(
        self,
        fitted: list[Message],
        tools: list | None,
        level: int,
        on_delta: Callable[[str], None] | None,
    ) -> Completion:
        """One model call, recorded. The caller sets the record's purpose and outcome once
        it knows them (tool round, answer, repair, compaction)."""
        attempt = len(self.result.attempts) + 1
        handle = self.observer.model_started(attempt, level, self.agent.model.model, fitted)
        started_ns, started = time.time_ns(), time.perf_counter()
        model = self.agent.model
        options: dict[str, Any] = {
            "tools": tools,
            "response_schema": self.agent.response_schema,
            "max_tokens": self.max_tokens,
        }
        try:
            if on_delta is None:
                completion = await model.complete(fitted, **options)
            else:
                assert isinstance(model, StreamingModelClient)
                completion = await model.stream(fitted, on_delta, **options)
        except ModelUnavailable as exc:
            failed = AttemptRecord(
                attempt=attempt,
                purpose="answer",
                level=level,
                model=model.model,
                started_ns=started_ns,
                ended_ns=time.time_ns(),
                latency_ms=exc.latency_ms or int((time.perf_counter() - started) * 1000),
                input=fitted,
                output=getattr(exc, "partial", None),
                outcome="error",
                error_kind=exc.kind,
                error_message=str(exc),
                max_tokens=self.max_tokens,
            )
            self.result.attempts.append(failed)
            self.observer.model_finished(handle, failed)
            raise
        self.agent.counter.calibrate(fitted, completion.usage.prompt_tokens)
        record = AttemptRecord(
            attempt=attempt,
            purpose="answer",
            level=level,
            model=completion.model or model.model,
            started_ns=started_ns,
            ended_ns=time.time_ns(),
            latency_ms=completion.latency_ms or int((time.perf_counter() - started) * 1000),
            input=fitted,
            output=completion.content,
            tool_calls=[
                {"id": c.id, "name": c.name, "arguments": c.arguments}
                for c in completion.tool_calls
            ],
            prompt_tokens=completion.usage.prompt_tokens,
            completion_tokens=completion.usage.completion_tokens,
            finish_reason=completion.finish_reason,
            max_tokens=self.max_tokens,
        )
        record.handle = handle
        self.result.attempts.append(record)
        return completion

    async def _run_tool(self, call: ToolCall) -> ToolResult:
        handle = self.observer.tool_started(call)
        result = await self.agent.tools.run(call)
        self.observer.tool_finished(handle, result)
        return result

    async def _run_tools(self, completion: Completion, calls: list) -> None:
        self.result.tool_rounds += 1
        self.messages.append(
            assistant(
                completion.content if completion.tool_calls else "",
                [
                    {
                        "id": c.id,
                        "type": "function",
                        "function": {"name": c.name, "arguments": c.arguments or "{}"},
                    }
                    for c in calls
                ],
            )
        )
        started_ns = time.time_ns()
        results = await asyncio.gather(*(self._run_tool(call) for call in calls))
        for result in results:
            self.messages.append(tool_result(result.call.id, result.content))
            self.grounded |= result.references
            self.tool_results.append(result)
            ended_ns = started_ns + result.latency_ms * 1_000_000
            self.result.tools.append(
                ToolRecord(result, started_ns, ended_ns, self.result.tool_rounds)
            )
