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
from typing import Any

from sommelier.agent.context import ContextBudget, EstimatingCounter, TiktokenCounter, fit_messages
from sommelier.agent.llm import Completion, ModelClient, ModelUnavailable, ResponseSchema, ToolCall
from sommelier.agent.messages import Message, assistant, tool_result, user
from sommelier.agent.output import AnswerSpec, ErrorKind, ParseResult, parse_answer
from sommelier.agent.records import AgentResult, AttemptRecord, ToolRecord
from sommelier.agent.recovery import FEEDBACK_PREFIX, Summarizer, compaction_context
from sommelier.agent.tools import ToolRegistry, ToolResult, tool_calls_in_text

log = logging.getLogger("sommelier.agent")


class _Silent:
    """The observer when nobody listens: every hook does nothing."""

    def __getattr__(self, _name: str) -> Callable[..., None]:
        return lambda *_args, **_kwargs: None


_SILENT = _Silent()


@dataclass(frozen=True, slots=True)
class AgentLimits:
    max_iterations: int = 5
    max_retries: int = 2
    max_output_tokens: int = 1024
    context_tokens: int = 8192
    compaction: bool = True


def feedback_for(result: ParseResult, grounded: Sequence[str]) -> str:
    message = f"{FEEDBACK_PREFIX} {result.error_kind}: {result.error_message}"
    if result.error_kind == ErrorKind.grounding:
        choices = ", ".join(sorted(grounded)) or "none yet: search the catalog first"
        message += f" Wine ids from this turn's tool results: {choices}."
    return message + " Reply again with one JSON object that follows the schema exactly."


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
        on_stage: Callable[[str], None] | None = None,
    ) -> None:
        self.model = model
        self.tools = tools
        self.spec = spec
        self.limits = limits
        self.summarize = summarize
        self.counter = counter or EstimatingCounter()
        self.schema = ResponseSchema(spec.name, spec.json_schema())
        self.on_stage = on_stage

    async def run(self, messages: Sequence[Message], observer: Any = None) -> AgentResult:
        """Run one turn. `observer` gets live hooks (see observability.tracing.TurnTrace)."""
        run = _Run(self, list(messages), observer or _SILENT)
        try:
            return await run.execute()
        except ModelUnavailable as exc:
            run.result.status = "error"
            run.result.error = exc
            return run.result


class _Run:
    """State of one agent run: the messages so far and the budgets spent."""

    def __init__(self, agent: Agent, messages: list[Message], observer: Any) -> None:
        self.agent = agent
        self.observer = observer
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
            self._prompt_budgets[key] = budget.for_prompt(
                self.agent.counter, tools, self.agent.schema.schema
            )
        return self._prompt_budgets[key]

    async def execute(self) -> AgentResult:
        answers = 0
        widened = False
        while True:
            tools_allowed = self.result.tool_rounds < self.limits.max_iterations
            level = 1 if answers else 0
            completion, record = await self._call(self.messages, tools_allowed, level)
            calls = completion.tool_calls or tool_calls_in_text(
                completion.content, self.agent.tools
            )
            if calls and tools_allowed:
                record.purpose, record.outcome = "tool_round", "tool_calls"
                self.observer.model_finished(record.handle, record)
                await self._run_tools(completion, calls)
                continue
            answers += 1
            record.purpose = "answer" if answers == 1 else "repair"
            parsed = self._parse(completion, calls)
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
            if self.agent.on_stage:
                self.agent.on_stage("repair")
            self.messages.append(assistant(completion.content or ""))
            self.messages.append(user(feedback_for(parsed, sorted(self.grounded))))
            if parsed.error_kind == ErrorKind.truncated and not widened:
                self.max_tokens *= 2  # once: a bigger budget for the retry
                widened = True

    def _parse(self, completion: Completion, calls: list) -> ParseResult:
        if calls and not completion.content:
            return ParseResult.failure(
                ErrorKind.schema,
                "no more tool calls are possible in this turn; give the final answer now",
            )
        return parse_answer(
            completion.content,
            spec=self.agent.spec,
            grounded_ids=self.grounded,
            finish_reason=completion.finish_reason,
            refusal=completion.refusal,
        )

    async def _after_exhaustion(self) -> AgentResult:
        if not self.limits.compaction:
            return self._finish("exhausted", None)
        self.result.level = 2
        self.result.retries += 1
        log.warning(
            "structured output compaction: rebuilding the context",
            extra={"event": "structured_output_compaction", "level": 2},
        )
        if self.agent.on_stage:
            self.agent.on_stage("repair")
        compact = compaction_context(self.messages, self.tool_results, self.agent.summarize)
        completion, record = await self._call(compact, False, 2)
        record.purpose = "compaction"
        parsed = self._parse(completion, [])
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
    ) -> tuple[Completion, AttemptRecord]:
        tools = self.agent.tools.specs() if tools_allowed else None
        counter = self.agent.counter
        fitted = fit_messages(messages, self.prompt_budget(tools), counter)
        attempt = len(self.result.attempts) + 1
        handle = self.observer.model_started(attempt, level, self.agent.model.model, fitted)
        started_ns, started = time.time_ns(), time.perf_counter()
        try:
            completion = await self.agent.model.complete(
                fitted, tools=tools, response_schema=self.agent.schema, max_tokens=self.max_tokens
            )
        except ModelUnavailable as exc:
            failed = AttemptRecord(
                attempt=attempt,
                purpose="answer",
                level=level,
                model=self.agent.model.model,
                started_ns=started_ns,
                ended_ns=time.time_ns(),
                latency_ms=exc.latency_ms or int((time.perf_counter() - started) * 1000),
                input=fitted,
                outcome="error",
                error_kind=exc.kind,
                error_message=str(exc),
                max_tokens=self.max_tokens,
            )
            self.result.attempts.append(failed)
            self.observer.model_finished(handle, failed)
            raise
        counter.calibrate(fitted, completion.usage.prompt_tokens)
        record = AttemptRecord(
            attempt=attempt,
            purpose="answer",
            level=level,
            model=completion.model or self.agent.model.model,
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
        self.result.attempts.append(record)
        record.handle = handle
        return completion, record

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
