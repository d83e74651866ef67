"""Stream parsers: fed chunk by chunk, pure, testable without a model, and never raising on
model output. Each turns output into display events (text to show now, items ready, a discard)
and, at the end, one ParseResult through the answer spec's validation.

Streamed JSON text is decoded by jiter's partial mode, so escapes, surrogate pairs split across
chunks and invalid escapes are handled by a real JSON parser. The work per chunk is bounded
(the shown text is capped), so a huge or hostile stream costs linear time.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, Protocol

import jiter

from sommelier.agent.output import (
    AnswerContext,
    AnswerSpec,
    ErrorKind,
    ParseResult,
    early_failure,
    extract_json,
    loads,
    parse_answer,
    validated,
)

log = logging.getLogger("sommelier.protocols")

DELIMITER = "---"
MAX_SHOWN = 4000  # characters of streamed text shown live; the validated reply comes after
NDJSON_TYPES = ("intro", "wine", "closing", "meta")


@dataclass(frozen=True, slots=True)
class TextDelta:
    text: str


@dataclass(frozen=True, slots=True)
class ItemReady:
    kind: str  # wine | intro | closing | meta
    data: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Discard:
    reason: str


@dataclass(frozen=True, slots=True)
class Waiting:
    """The turn waits for the model: `ahead` turns run first, for about `seconds`."""

    ahead: int
    seconds: float


@dataclass(frozen=True, slots=True)
class Phase:
    """What the turn does now, for a sign of life: "waiting", "searching", "writing"."""

    name: str


DisplayEvent = TextDelta | ItemReady | Discard | Waiting | Phase


class StreamParser(Protocol):
    def feed(self, chunk: str) -> list[DisplayEvent]: ...

    def finish(
        self, finish_reason: str | None = None, refusal: str | None = None
    ) -> ParseResult[Any]: ...

    @property
    def raw(self) -> str: ...

    def reset(self) -> None:
        """Forget everything fed so far: the answer starts again from the top."""
        ...


@dataclass
class _Base:
    spec: AnswerSpec[Any]
    context: AnswerContext
    _raw: list[str] = field(default_factory=list)

    @property
    def raw(self) -> str:
        return "".join(self._raw)

    def reset(self) -> None:
        """Forget everything fed so far (a stream retried from the top must not be appended to
        the broken one): the state of a parser just made."""
        self.__dict__.update(type(self)(self.spec, self.context).__dict__)


class PartialString:
    """The decoded prefix of a JSON string whose text arrives in pieces."""

    def __init__(self) -> None:
        self._source: list[str] = ['"']
        self._size = 0
        self.decoded = ""
        self.done = False  # closed, invalid, or long enough

    def feed(self, text: str) -> str:
        """Add raw characters; returns the newly decoded text."""
        if self.done:
            return ""
        self._source.append(text)
        self._size += len(text)
        source = "".join(self._source)
        close = _string_end(source)
        if close is not None or self._size > MAX_SHOWN:
            self.done = True
        try:
            if close is not None:
                value = jiter.from_json(source[: close + 1].encode())
            else:
                value = jiter.from_json(source.encode(), partial_mode="trailing-strings")
        except ValueError:  # an invalid escape: show no more; the final parse will say why
            self.done = True
            return ""
        if not isinstance(value, str) or not value.startswith(self.decoded):
            return ""
        new, self.decoded = value[len(self.decoded) :], value
        return new


def _string_end(source: str) -> int | None:
    """The index of the quote that closes the JSON string starting at source[0]."""
    escaped = False
    for index in range(1, len(source)):
        char = source[index]
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == '"':
            return index
    return None


@dataclass
class JsonParser(_Base):
    """The `json` protocol; shows the `intro` string while it streams."""

    _seen: str = ""
    _intro: PartialString | None = None

    def feed(self, chunk: str) -> list[DisplayEvent]:
        self._raw.append(chunk)
        if self._intro is None:
            if len(self._seen) > MAX_SHOWN:
                return []
            self._seen += chunk
            start = _value_start(self._seen, '"intro"')
            if start is None:
                return []
            self._intro = PartialString()
            chunk = self._seen[start:]
        text = self._intro.feed(chunk)
        return [TextDelta(text)] if text else []

    def finish(
        self, finish_reason: str | None = None, refusal: str | None = None
    ) -> ParseResult[Any]:
        return parse_answer(
            self.raw,
            spec=self.spec,
            context=self.context,
            finish_reason=finish_reason,
            refusal=refusal,
        )


def _value_start(text: str, key: str) -> int | None:
    """Where the characters of the string value of `key` begin, once its quote has arrived."""
    marker = text.find(key)
    if marker == -1:
        return None
    rest = text[marker + len(key) :]
    after = rest.lstrip()
    if not after.startswith(":"):
        return None
    value = after[1:].lstrip()
    if not value.startswith('"'):
        return None
    return len(text) - len(value) + 1


@dataclass
class DelimitedParser(_Base):
    """Text, a `---` line, then JSON. Output that opens with `{` or a code fence is not text
    for the person (a tool call written as text, or JSON without the text): never shown."""

    _text: list[str] = field(default_factory=list)  # shown so far
    _pending: str = ""  # not yet decided: it may be (the start of) the delimiter line
    _line_start: bool = True  # `_pending` begins at the start of a line
    _json: list[str] = field(default_factory=list)
    _found: bool = False
    _shown_chars: int = 0
    _opening: bool | None = None  # None until the first visible character: prose or not
    _held: list[str] = field(default_factory=list)  # fed while `_opening` is not True

    def feed(self, chunk: str) -> list[DisplayEvent]:
        self._raw.append(chunk)
        if self._found:
            self._json.append(chunk)
            return []
        if self._opening is None and chunk.strip():  # the chunk, not all of it: linear
            self._opening = chunk.lstrip()[0] not in "{`"
        if not self._opening:
            # Held as chunks: `+=` on an attribute copies the string each time (quadratic).
            self._held.append(chunk)
            return []
        self._pending += self._take_held() + chunk
        shown = self._advance(final=False)
        return [TextDelta(shown)] if shown else []

    def _take_held(self) -> str:
        held = "".join(self._held)
        self._held.clear()
        return held

    def _advance(self, *, final: bool) -> str:
        """Move what is certainly text out of `_pending`, or find the delimiter. It walks an
        index: slicing the rest off line by line would copy it once per line (quadratic)."""
        shown: list[str] = []
        pending, at = self._pending, 0
        while at < len(pending):
            if self._line_start:
                verdict = _line_verdict(pending[at : at + _WINDOW], final)
                if verdict == "wait":
                    break
                if verdict == "delimiter":
                    end = pending.index(DELIMITER, at) + len(DELIMITER)
                    self._json.append(pending[end:])
                    at, self._found = len(pending), True
                    break
            newline = pending.find("\n", at)
            if newline == -1:  # the rest of this line is text
                shown.append(pending[at:])
                at, self._line_start = len(pending), False
                break
            shown.append(pending[at : newline + 1])
            at, self._line_start = newline + 1, True
        self._pending = pending[at:]
        text = "".join(shown)
        self._text.append(text)
        room = max(MAX_SHOWN - self._shown_chars, 0)
        self._shown_chars += len(text)
        return text[:room]

    def finish(
        self, finish_reason: str | None = None, refusal: str | None = None
    ) -> ParseResult[Any]:
        failure = early_failure(self.raw, finish_reason, refusal)
        if failure:
            return failure
        if not self._found:
            self._pending += self._take_held()
            self._advance(final=True)
        if not self._found:
            return ParseResult.failure(
                ErrorKind.missing_delimiter,
                "no line '---' followed by the JSON object; write the text, then a line with "
                "only ---, then the JSON object",
                self.raw,
            )
        data, problem = extract_json("".join(self._json))
        if problem:
            return ParseResult.failure(ErrorKind.invalid_json, f"after ---: {problem}", self.raw)
        data["intro"] = self.shown_text.strip()
        return validated(self.spec, data, self.context, self.raw)

    @property
    def shown_text(self) -> str:
        return "".join(self._text)


# A delimiter line is "---" after a few spaces at most, followed by the JSON after a few blank
# lines at most. Past these runs the line is decided, so undecided text stays short: a stream
# of spaces fed a character at a time costs linear time, not quadratic.
MAX_INDENT, MAX_GAP = 16, 256
# The most of a line's start a verdict reads: the indent, the delimiter, the gap, one more.
_WINDOW = MAX_INDENT + len(DELIMITER) + MAX_GAP + 2


def _line_verdict(line: str, final: bool) -> str:
    """For text that starts a line: "delimiter", "text", or "wait" for more characters."""
    stripped = line.lstrip(" \t")
    if len(line) - len(stripped) > MAX_INDENT:
        return "text"
    if not stripped:
        return "text" if final else "wait"
    if not DELIMITER.startswith(stripped[: len(DELIMITER)]):
        return "text"
    if len(stripped) < len(DELIMITER):
        return "text" if final else "wait"
    rest = stripped[len(DELIMITER) :]
    same_line = rest.lstrip(" \t")
    if same_line and same_line[0] not in "\r\n{":
        return "text"  # "----", "--- note": not the delimiter
    following = rest.lstrip()
    if not following:
        return "delimiter" if final or len(rest) > MAX_GAP else "wait"
    # A markdown rule is followed by more text; the delimiter by the JSON object.
    return "delimiter" if following[0] == "{" else "text"


@dataclass
class NdjsonParser(_Base):
    _buffer: list[str] = field(default_factory=list)  # the unfinished line's parts
    _line_number: int = 0
    intro: list[str] = field(default_factory=list)
    wines: list[dict[str, Any]] = field(default_factory=list)
    closing: list[str] = field(default_factory=list)
    meta: dict[str, Any] | None = None
    bad_lines: list[str] = field(default_factory=list)

    def feed(self, chunk: str) -> list[DisplayEvent]:
        self._raw.append(chunk)
        # Only the new chunk is searched for line ends, and a line's parts are joined once:
        # a long line fed in small chunks costs linear time.
        *ended, rest = chunk.split("\n")
        events: list[DisplayEvent] = []
        for part in ended:
            self._buffer.append(part)
            line = "".join(self._buffer)
            self._buffer.clear()
            events += self._line(line)
        self._buffer.append(rest)
        return events

    def _line(self, line: str) -> list[DisplayEvent]:
        self._line_number += 1
        text = line.strip()
        if not text:
            return []
        problem, item = self._validate_line(text)
        if problem or item is None:
            log.warning(
                "ndjson line skipped",
                extra={
                    "event": "ndjson_line_skipped",
                    "line": self._line_number,
                    "text": text[:200],
                    "error": problem,
                },
            )
            self.bad_lines.append(f"line {self._line_number}: {problem}")
            return []
        return self._take(item)

    def _take(self, item: dict[str, Any]) -> list[DisplayEvent]:
        kind = item["type"]
        if kind == "intro":
            self.intro.append(item["text"])
            return [
                TextDelta(("\n\n" if len(self.intro) > 1 else "") + item["text"]),
                ItemReady(kind, item),
            ]
        if kind == "wine":
            if any(w["wine_id"] == item["wine_id"] for w in self.wines):
                return []
            self.wines.append({"wine_id": item["wine_id"], "why": item["why"]})
        elif kind == "closing":
            self.closing.append(item["text"])
        else:
            self.meta = {"response_type": item.get("response_type"), "guard": item.get("guard")}
        return [ItemReady(kind, item)]

    def _validate_line(self, text: str) -> tuple[str | None, dict[str, Any] | None]:
        item, problem = loads(text)
        if problem:
            return f"not valid JSON ({problem})", None
        if not isinstance(item, dict) or item.get("type") not in NDJSON_TYPES:
            return f"type must be one of {', '.join(NDJSON_TYPES)}", None
        kind = item["type"]
        if kind in ("intro", "closing") and not isinstance(item.get("text"), str):
            return f"a {kind} line needs a text string", None
        if kind == "wine":
            if not isinstance(item.get("wine_id"), str) or not isinstance(item.get("why"), str):
                return "a wine line needs wine_id and why strings", None
            if item["wine_id"] not in self.context.grounded:
                return (
                    f"wine_id {item['wine_id']} did not appear in a tool result of this turn",
                    None,
                )
        if kind == "meta" and not isinstance(item.get("response_type"), str):
            return "a meta line needs response_type", None
        return None, item

    def finish(
        self, finish_reason: str | None = None, refusal: str | None = None
    ) -> ParseResult[Any]:
        failure = early_failure(self.raw, finish_reason, refusal)
        if failure:
            return failure
        last = "".join(self._buffer)
        self._buffer.clear()
        if last.strip():
            self._line(last)  # a last line without a newline, or cut mid-line
        problems = list(self.bad_lines)
        if self.meta is None:
            problems.append('no {"type": "meta", "response_type": …} line')
        if problems:
            kind = (
                ErrorKind.grounding
                if any("did not appear" in p for p in problems)
                else ErrorKind.schema
            )
            return ParseResult.failure(kind, "; ".join(problems), self.raw)
        data = {
            "response_type": self.meta.get("response_type") if self.meta else None,
            "intro": "\n\n".join(self.intro),
            "wines": self.wines,
            "closing": "\n\n".join(self.closing),
            "guard": self.meta.get("guard") if self.meta else None,
        }
        return validated(self.spec, data, self.context, self.raw)
