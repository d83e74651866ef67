"""The tracing interface the chat service uses, its no-op default, and text masking."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import Any, Protocol

from sommelier.agent.llm import ToolCall
from sommelier.agent.messages import Message
from sommelier.agent.records import AgentResult, AttemptRecord
from sommelier.agent.tools import ToolResult

_WORD = re.compile(r"\w")


def mask_text(text: str) -> str:
    """Same length and structure (spaces, punctuation, line breaks), no words."""
    return _WORD.sub("x", text)


def mask_value(value: Any) -> Any:
    if isinstance(value, str):
        return mask_text(value)
    if isinstance(value, list):
        return [mask_value(v) for v in value]
    if isinstance(value, dict):
        return {
            k: (
                mask_value(v)
                if k in {"content", "text", "intro", "closing", "why", "query"}
                or not isinstance(v, str)
                else v
            )
            for k, v in value.items()
        }
    return value


def mask_messages(messages: Sequence[Message]) -> list[Message]:
    return [mask_value(dict(m)) for m in messages]


class TurnTrace(Protocol):
    """Live hooks of one turn. Handles returned by *_started go back to *_finished."""

    def model_started(
        self, attempt: int, level: int, model: str, messages: list[Message]
    ) -> Any: ...

    def model_finished(self, handle: Any, record: AttemptRecord) -> None: ...

    def tool_started(self, call: ToolCall) -> Any: ...

    def tool_finished(self, handle: Any, result: ToolResult) -> None: ...

    def record(self, result: AgentResult, status: str, shown_text: str) -> None: ...


class Tracer(Protocol):
    def turn(
        self, *, turn_id: str, user_id: str, session_id: str, channel: str, text: str
    ) -> AbstractContextManager[TurnTrace]: ...

    def flush(self) -> None: ...

    def shutdown(self) -> None: ...


class NoTurn:
    def model_started(self, attempt: int, level: int, model: str, messages: list[Message]) -> Any:
        return None

    def model_finished(self, handle: Any, record: AttemptRecord) -> None:
        return None

    def tool_started(self, call: ToolCall) -> Any:
        return None

    def tool_finished(self, handle: Any, result: ToolResult) -> None:
        return None

    def record(self, result: AgentResult, status: str, shown_text: str) -> None:
        return None


NO_TURN = NoTurn()


class NoTracer:
    """Tracing off: costs one context manager per turn."""

    @contextmanager
    def turn(self, **_: str) -> Iterator[TurnTrace]:
        yield NO_TURN

    def flush(self) -> None:
        return None

    def shutdown(self) -> None:
        return None
