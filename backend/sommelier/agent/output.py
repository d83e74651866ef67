"""The final answer: ParseResult, JSON extraction, and the answer spec the runtime validates with.

Errors are values here: the loop branches on `ParseResult.error_kind`, and `error_message` is
precise enough to be fed back to the model as repair feedback.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol


class ErrorKind(StrEnum):
    invalid_json = "invalid_json"
    schema = "schema"
    semantic = "semantic"
    grounding = "grounding"
    truncated = "truncated"
    refused = "refused"
    missing_delimiter = "missing_delimiter"


@dataclass(slots=True)
class ParseResult:
    text: str = ""
    ids: list[str] = field(default_factory=list)
    reply: Any = None
    error_kind: ErrorKind | None = None
    error_message: str | None = None
    raw: str = ""

    @property
    def ok(self) -> bool:
        return self.error_kind is None and bool(self.text.strip())

    @classmethod
    def failure(cls, kind: ErrorKind, message: str, raw: str = "") -> ParseResult:
        return cls(error_kind=kind, error_message=message, raw=raw)

    def describe(self) -> str:
        return f"{self.error_kind}: {self.error_message}" if self.error_kind else "ok"


class AnswerSpec(Protocol):
    """What the final answer must be; supplied by the domain (chat/reply.py)."""

    name: str

    def json_schema(self) -> dict[str, Any]: ...

    def validate(self, data: Any, grounded_ids: Collection[str], raw: str) -> ParseResult: ...


_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


def extract_json(text: str) -> tuple[Any, str | None]:
    """The JSON object in `text`, tolerating code fences and words around it.

    Returns (data, None) or (None, what went wrong).
    """
    stripped = text.strip()
    if not stripped:
        return None, "the answer was empty; reply with one JSON object"
    candidates = [stripped, *(m.group(1).strip() for m in _FENCE.finditer(stripped))]
    first, last = stripped.find("{"), stripped.rfind("}")
    if first != -1 and last > first:
        candidates.append(stripped[first : last + 1])
    error = None
    for candidate in candidates:
        try:
            data = json.loads(candidate)
        except json.JSONDecodeError as exc:
            error = error or f"{exc.msg} at line {exc.lineno} column {exc.colno}"
            continue
        if isinstance(data, dict):
            return data, None
        error = "the answer must be a JSON object, not a " + type(data).__name__
    if first == -1:
        return None, "no JSON object found; reply with one JSON object only"
    return None, f"invalid JSON: {error}"


def parse_answer(
    raw: str | None,
    *,
    spec: AnswerSpec,
    grounded_ids: Collection[str],
    finish_reason: str | None = None,
    refusal: str | None = None,
) -> ParseResult:
    """Turn one model answer into a ParseResult (the `json` output protocol)."""
    text = raw or ""
    if refusal:
        return ParseResult.failure(ErrorKind.refused, refusal, text)
    if finish_reason == "length":
        return ParseResult.failure(
            ErrorKind.truncated,
            "the answer was cut off by the output token limit; answer again, shorter, "
            "as one complete JSON object",
            text,
        )
    data, problem = extract_json(text)
    if problem:
        return ParseResult.failure(ErrorKind.invalid_json, problem, text)
    return spec.validate(data, grounded_ids, text)
