"""The hooks a run calls as it goes, defined here so that the agent depends on nothing outside
it; `observability` implements them for Langfuse."""

from __future__ import annotations

from typing import Any, Protocol

from sommelier.agent.messages import Message
from sommelier.agent.model import ToolCall
from sommelier.agent.records import AttemptRecord
from sommelier.agent.tools import ToolResult


class TurnObserver(Protocol):
    """Live hooks of one turn. Handles returned by *_started go back to *_finished."""

    def model_started(
        self, attempt: int, level: int, model: str, messages: list[Message]
    ) -> Any: ...

    def model_finished(self, handle: Any, record: AttemptRecord) -> None: ...

    def tool_started(self, call: ToolCall) -> Any: ...

    def tool_finished(self, handle: Any, result: ToolResult) -> None: ...


class NoObserver:
    def model_started(self, attempt: int, level: int, model: str, messages: list[Message]) -> Any:
        return None

    def model_finished(self, handle: Any, record: AttemptRecord) -> None:
        return None

    def tool_started(self, call: ToolCall) -> Any:
        return None

    def tool_finished(self, handle: Any, result: ToolResult) -> None:
        return None


NO_OBSERVER = NoObserver()
