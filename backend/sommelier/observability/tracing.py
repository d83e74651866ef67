"""The tracing interface the chat service uses, its no-op default, and text masking."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import Any, Protocol

from sommelier.agent.messages import Message
from sommelier.agent.observer import NoObserver, TurnObserver
from sommelier.agent.records import AgentResult

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


class TurnTrace(TurnObserver, Protocol):
    """The agent's hooks, plus the turn's outcome once it is known."""

    @property
    def trace_id(self) -> str | None: ...

    def record(self, result: AgentResult, status: str, shown_text: str) -> None: ...


class Tracer(Protocol):
    def turn(
        self,
        *,
        turn_id: str,
        user_id: str,
        session_id: str,
        channel: str,
        text: str,
        user_name: str = "",
    ) -> AbstractContextManager[TurnTrace]: ...

    def score(
        self, trace_id: str, name: str, value: float | str, comment: str | None = None
    ) -> None:
        """An evaluation of a turn (feedback, an evaluation result) attached to its trace."""
        ...

    def score_feedback(
        self, trace_id: str, name: str, value: float, comment: str | None, score_id: str
    ) -> None:
        """A person's 👍/👎 on a turn; the same `score_id` again replaces the score."""
        ...

    def flush(self) -> None: ...

    def shutdown(self) -> None: ...


class NoTurn(NoObserver):
    trace_id: str | None = None

    def record(self, result: AgentResult, status: str, shown_text: str) -> None:
        return None


NO_TURN = NoTurn()


class NoTracer:
    """Tracing off: costs one context manager per turn."""

    @contextmanager
    def turn(self, **_: str) -> Iterator[TurnTrace]:
        yield NO_TURN

    def score(
        self, trace_id: str, name: str, value: float | str, comment: str | None = None
    ) -> None:
        return None

    def score_feedback(
        self, trace_id: str, name: str, value: float, comment: str | None, score_id: str
    ) -> None:
        return None

    def flush(self) -> None:
        return None

    def shutdown(self) -> None:
        return None
