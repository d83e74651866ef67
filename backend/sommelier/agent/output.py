"""The final answer: ParseResult, JSON extraction, and the answer spec the runtime validates with.

Errors are values here: the loop branches on `ParseResult.error_kind`, and `error_message` is
precise enough to be fed back to the model as repair feedback.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Generic, Protocol, TypeVar

import jiter

from sommelier.agent.text import clean_value, fenced_blocks

R = TypeVar("R")

MAX_NESTING = 32  # deeper JSON is never an answer; refusing it early avoids RecursionError


class ErrorKind(StrEnum):
    invalid_json = "invalid_json"
    schema = "schema"
    semantic = "semantic"
    grounding = "grounding"
    truncated = "truncated"
    refused = "refused"
    missing_delimiter = "missing_delimiter"


@dataclass(slots=True)
class ParseResult(Generic[R]):
    text: str = ""
    ids: list[str] = field(default_factory=list)
    reply: R | None = None
    error_kind: ErrorKind | None = None
    error_message: str | None = None
    raw: str = ""
    # A failure's mended answer (false sentences dropped), taken when a repair did not mend it:
    # a flawed sentence less beats starting the conversation over.
    fallback: ParseResult[R] | None = None
    # The names of the domain's rules that fired while this answer was validated, in order.
    rules: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.error_kind is None and bool(self.text.strip())

    @classmethod
    def failure(
        cls, kind: ErrorKind, message: str, raw: str = "", fallback: ParseResult[R] | None = None
    ) -> ParseResult[R]:
        return cls(error_kind=kind, error_message=message, raw=raw, fallback=fallback)

    def describe(self) -> str:
        return f"{self.error_kind}: {self.error_message}" if self.error_kind else "ok"


Facts = Mapping[str, Mapping[str, Any]]  # id -> what the tools said of it


@dataclass(frozen=True, slots=True)
class AnswerContext:
    """What an answer is checked against, beyond its own schema."""

    grounded: Collection[str] = ()  # ids that appeared in this turn's tool results
    previous_answer: str | None = None  # the last reply's text: an answer must not repeat it
    tools_used: Collection[str] = ()
    labels: Mapping[str, str] = field(default_factory=dict)  # id -> name, from the tools
    tools_required: bool = False  # the domain required a tool this turn (a real request)
    request: str = ""  # the person's message this answer is for
    facts: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # id -> its facts
    turn: Mapping[str, Any] = field(default_factory=dict)  # the domain's context of the turn
    planned: str | None = None  # the plan's action, where a plan was made
    tool_results: Sequence[Any] = ()  # this turn's tool results (agent/tools.ToolResult)


class AnswerSpec(Protocol[R]):
    """What the final answer must be; supplied by the domain (chat/reply.py)."""

    name: str

    def json_schema(
        self, grounded: Sequence[str] | None = None, facts: Facts | None = None
    ) -> dict[str, Any]:
        """The answer's schema; with `grounded`, ids are limited to those (for enforcement),
        and with `facts`, what may be said of each to what its facts support."""
        ...

    def describe(self) -> str:
        """The answer's fields in a sentence or two (static: part of the system prompt)."""
        ...

    def constraint(self, grounded: Sequence[str]) -> str:
        """What this answer may use (the ids from this turn's tools), for the answer call."""
        ...

    def validate(self, data: Any, context: AnswerContext, raw: str) -> ParseResult[R]: ...

    def given(self, data: Any) -> ParseResult[R]:
        """An answer a tool wrote from data: checked against the schema only (no model text
        to mend)."""
        ...

    def fixed(self, context: AnswerContext) -> ParseResult[R] | None:
        """The domain's fixed answer for what the plan called the message (another subject,
        thanks), when no tool ran: then no model writes one. None: a model answers."""
        ...

    def preface(self, context: AnswerContext) -> str:
        """The text the answer will open with when the domain says it from data, known before
        the model writes ("" if none): shown at once, while the model writes the rest."""
        ...


# No answer is longer: a bigger one is refused before any parsing looks at it (every parser
# here is linear, and this bounds the constant too).
MAX_ANSWER_CHARS = 20_000


def loads(text: str) -> tuple[Any, str | None]:
    """Strict JSON, or (None, what is wrong). Never raises, whatever the text."""
    if _too_deep(text):
        return None, f"the JSON nests deeper than {MAX_NESTING} levels"
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: not text any server should send
        return None, "the text is not valid Unicode"
    try:
        return jiter.from_json(data), None
    except ValueError as exc:
        return None, str(exc)


def _too_deep(text: str) -> bool:
    depth = 0
    for char in text:
        if char in "[{":
            depth += 1
            if depth > MAX_NESTING:
                return True
        elif char in "]}":
            depth -= 1
    return False


def extract_json(text: str) -> tuple[Any, str | None]:
    """The JSON object in `text`, tolerating code fences and words around it.

    Returns (data, None) or (None, what went wrong).
    """
    if len(text) > MAX_ANSWER_CHARS:
        return None, f"the answer is longer than {MAX_ANSWER_CHARS} characters; answer briefly"
    stripped = text.strip()
    if not stripped:
        return None, "the answer was empty; reply with one JSON object"
    candidates = [stripped, *fenced_blocks(stripped)]
    first, last = stripped.find("{"), stripped.rfind("}")
    if first != -1 and last > first:
        candidates.append(stripped[first : last + 1])
    error = None
    for candidate in candidates:
        data, problem = loads(candidate)
        if problem:
            error = error or problem
            continue
        if isinstance(data, dict):
            return data, None
        error = "the answer must be a JSON object, not a " + type(data).__name__
    if first == -1:
        return None, "no JSON object found; reply with one JSON object only"
    return None, f"invalid JSON: {error}"


def early_failure(
    raw: str, finish_reason: str | None, refusal: str | None
) -> ParseResult[Any] | None:
    """A refusal or a cut-off answer, which no parsing can mend."""
    if refusal:
        return ParseResult.failure(ErrorKind.refused, refusal, raw)
    if finish_reason == "length":
        return ParseResult.failure(
            ErrorKind.truncated,
            "the answer was cut off by the output token limit; answer again, shorter",
            raw,
        )
    return None


def parse_answer(
    raw: str | None,
    *,
    spec: AnswerSpec[R],
    context: AnswerContext,
    finish_reason: str | None = None,
    refusal: str | None = None,
) -> ParseResult[R]:
    """One whole answer of the `json` protocol as a ParseResult."""
    text = raw or ""
    failure = early_failure(text, finish_reason, refusal)
    if failure is not None:
        if failure.error_kind == ErrorKind.truncated:
            failure.error_message = (
                "the answer was cut off by the output token limit; answer again, shorter, "
                "as one complete JSON object"
            )
        return failure
    data, problem = extract_json(text)
    if problem:
        return ParseResult.failure(ErrorKind.invalid_json, problem, text)
    return validated(spec, data, context, text)


def validated(spec: AnswerSpec[R], data: Any, context: AnswerContext, raw: str) -> ParseResult[R]:
    """The spec's verdict on the answer's data. An answer it accepts with no text left (its
    mends took every word) is sent back with feedback that says so, never with none."""
    result = spec.validate(clean_value(data), context, raw)
    if result.error_kind is None and not result.ok:
        return ParseResult.failure(
            ErrorKind.semantic, "the answer has no text for the person; write it", raw
        )
    return result
