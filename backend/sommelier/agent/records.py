"""What one agent run leaves behind: every model attempt and tool call, and the outcome."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from enum import IntEnum, StrEnum
from typing import Any

from sommelier.agent.messages import Message
from sommelier.agent.model import ModelUnavailable
from sommelier.agent.output import ParseResult
from sommelier.agent.tools import ToolResult


class Purpose(StrEnum):
    """Why a model call was made (the `model_calls.purpose` column)."""

    tool_round = "tool_round"  # native strategy: the model may call tools
    plan = "plan"  # planner strategy: the constrained planning step
    screen = "screen"  # planner strategy: what kind of message it is, read on its own
    answer = "answer"  # the first attempt at the final answer
    repair = "repair"  # an answer after feedback on an invalid one
    compaction = "compaction"  # the one answer on a compacted context


class Outcome(StrEnum):
    tool_calls = "tool_calls"
    no_tool_calls = "no_tool_calls"  # a tool round in which the model wrote text instead
    planned = "planned"
    ok = "ok"
    invalid = "invalid"
    refused = "refused"
    error = "error"


class Level(IntEnum):
    """The recovery ladder."""

    first = 0
    repair = 1
    compaction = 2
    reset = 3


class Status(StrEnum):
    ok = "ok"
    refused = "refused"
    exhausted = "exhausted"
    reset = "reset"
    error = "error"
    interrupted = "interrupted"
    timeout = "timeout"  # the turn's deadline passed
    failed = "failed"  # something unexpected raised; the caller ends the turn cleanly
    cancelled = "cancelled"  # the person cancelled the turn (Ctrl-C, Stop)
    busy = "busy"  # the turn waited for the model past the queue's wait limit


@dataclass(slots=True)
class AttemptRecord:
    """One model call; becomes a `model_calls` row and a Langfuse generation."""

    attempt: int
    purpose: Purpose
    level: Level
    model: str
    started_ns: int
    ended_ns: int
    latency_ms: int
    input: list[Message]
    output: str | None = None
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cached_tokens: int | None = None  # of prompt_tokens, served from the server's prompt cache
    usage_estimated: bool = False  # the server reported none: counted with the context's counter
    finish_reason: str | None = None
    outcome: Outcome = Outcome.ok
    error_kind: str | None = None
    error_message: str | None = None
    max_tokens: int | None = None
    first_text_ms: int | None = None  # when the first visible text arrived, from the call's start
    rules: list[str] = field(default_factory=list)  # the domain's rules that fired on its answer
    handle: Any = None  # the observer's handle for this call (a tracing span)


@dataclass(slots=True)
class ToolRecord:
    result: ToolResult
    started_ns: int
    ended_ns: int
    round: int


@dataclass(slots=True)
class AgentResult:
    status: Status
    parse: ParseResult[Any] | None = None
    attempts: list[AttemptRecord] = field(default_factory=list)
    tools: list[ToolRecord] = field(default_factory=list)
    tool_rounds: int = 0
    retries: int = 0  # structured-output repairs (level 1) and compaction (level 2)
    errors: list[str] = field(default_factory=list)  # every structured-output error, in order
    level: Level = Level.first  # the highest recovery level reached
    error: ModelUnavailable | None = None
    transcript: list[Message] = field(default_factory=list)  # the last context sent
    strategy: str = ""
    plan: dict[str, Any] | None = None  # the planner's plan, as read
    mended: bool = False  # the answer is a repaired answer's fallback (false sentences dropped)

    @property
    def rules(self) -> dict[str, int]:
        """How often each of the domain's rules fired on the turn's answers."""
        return dict(Counter(name for a in self.attempts for name in a.rules))

    @property
    def tools_used(self) -> set[str]:
        return {t.result.call.name for t in self.tools if t.result.ok}
