"""What one agent run leaves behind: every model attempt and tool call, and the outcome."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from sommelier.agent.llm import ModelUnavailable
from sommelier.agent.messages import Message
from sommelier.agent.output import ParseResult
from sommelier.agent.tools import ToolResult

Status = Literal["ok", "refused", "exhausted", "reset", "error", "interrupted"]


@dataclass(slots=True)
class AttemptRecord:
    """One model call; becomes a `model_calls` row and a Langfuse generation."""

    attempt: int
    purpose: str  # tool_round | answer | repair | compaction
    level: int  # 0 first pass, 1 repair, 2 compaction
    model: str
    started_ns: int
    ended_ns: int
    latency_ms: int
    input: list[Message]
    output: str | None = None
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    finish_reason: str | None = None
    outcome: str = "ok"  # tool_calls | ok | invalid | refused | error
    error_kind: str | None = None
    error_message: str | None = None
    max_tokens: int | None = None
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
    parse: ParseResult | None = None
    attempts: list[AttemptRecord] = field(default_factory=list)
    tools: list[ToolRecord] = field(default_factory=list)
    tool_rounds: int = 0
    retries: int = 0  # structured-output repairs (level 1) and compaction (level 2)
    errors: list[str] = field(default_factory=list)  # every structured-output error, in order
    level: int = 0  # the highest recovery level reached (3 = reset)
    error: ModelUnavailable | None = None
    transcript: list[Message] = field(default_factory=list)  # the last context sent
