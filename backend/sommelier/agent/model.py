"""What the runtime asks of a model, and what comes back: the seam between the agent and any
client (the OpenAI-compatible one in `openai_client.py`, or a scripted one in tests)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from sommelier.agent.messages import Message


@dataclass(frozen=True, slots=True)
class ToolCall:
    id: str
    name: str
    arguments: str  # JSON text as the model wrote it


@dataclass(frozen=True, slots=True)
class Usage:
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    # Of the prompt tokens, those the server took from its prompt cache (None: not reported).
    cached_tokens: int | None = None


def cached_tokens(payload: Any) -> int | None:
    """The cached prompt tokens a completion or its last chunk reports: OpenAI's and vLLM's
    `usage.prompt_tokens_details.cached_tokens`, or llama.cpp's `timings.cache_n`."""
    details = getattr(getattr(payload, "usage", None), "prompt_tokens_details", None)
    extra = getattr(payload, "model_extra", None)
    timings = extra.get("timings") if isinstance(extra, dict) else None
    for found in (
        getattr(details, "cached_tokens", None),
        timings.get("cache_n") if isinstance(timings, dict) else None,
    ):
        if isinstance(found, int) and not isinstance(found, bool):
            return found
    return None


@dataclass(slots=True)
class Completion:
    content: str | None
    tool_calls: list[ToolCall] = field(default_factory=list)
    finish_reason: str | None = None
    refusal: str | None = None
    usage: Usage = field(default_factory=Usage)
    latency_ms: int = 0
    model: str = ""


@dataclass(frozen=True, slots=True)
class OutputFormat:
    """The format a call's answer must have, for the client to enforce where the server can:
    a JSON schema (response_format), and for text protocols a GBNF grammar (llama.cpp)."""

    name: str
    schema: dict[str, Any] | None = None
    grammar: str | None = None


@dataclass(frozen=True, slots=True)
class ModelRequest:
    messages: Sequence[Message]
    tools: list[dict[str, Any]] | None = None
    # None lets the model decide; a tool name forces a call of that tool.
    tool_choice: str | None = None
    output: OutputFormat | None = None
    max_tokens: int | None = None


class ModelUnavailable(Exception):
    """The model could not be reached after the network retries; `kind` says how."""

    def __init__(self, kind: str, message: str, latency_ms: int = 0) -> None:
        super().__init__(message)
        self.kind = (
            kind  # timeout | connection | rate_limited | server_error | rejected | bad_response
        )
        self.latency_ms = latency_ms


class StreamBroken(ModelUnavailable):
    """A stream that started and then broke (connection reset, read timeout, cut short)."""

    def __init__(self, message: str, partial: str, chunks: int, latency_ms: int = 0) -> None:
        super().__init__("stream_broken", message, latency_ms)
        self.partial = partial
        self.chunks = chunks


DeltaCallback = Callable[[str], None]


class ModelClient(Protocol):
    """One call to a model. With `on_delta`, content is passed on as it is generated."""

    model: str

    async def complete(
        self, request: ModelRequest, on_delta: DeltaCallback | None = None
    ) -> Completion: ...
