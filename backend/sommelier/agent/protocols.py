"""Output protocols: small parsers fed chunk by chunk, pure and testable without a model.

Each parser turns model output into display events (text to show now, items ready, a discard)
and, at the end, one ParseResult through the same validation (schema, semantics, grounding) as
every other answer.

- `json`: one JSON object under the strict schema; the `intro` string is shown as it arrives.
- `delimited`: conversational text, a line `---`, then one JSON object with the rest. The text
  streams; the delimiter never shows, even split across chunks. Rule for a `---` line inside the
  text: it is the delimiter only when the next non-blank character is `{`; otherwise it was a
  markdown rule and is shown as text.
- `ndjson`: one JSON object per line ({"type": "intro"|"wine"|"closing"|"meta", ...}). Each line
  is validated when complete (a wine line also against this turn's tool results); bad lines are
  logged and skipped; the items are assembled and validated as a whole at the end.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any, Protocol

from sommelier.agent.output import AnswerSpec, ErrorKind, ParseResult, extract_json, parse_answer

log = logging.getLogger("sommelier.protocols")

DELIMITER = "---"


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


DisplayEvent = TextDelta | ItemReady | Discard


class StreamParser(Protocol):
    def feed(self, chunk: str) -> list[DisplayEvent]: ...

    def finish(
        self, finish_reason: str | None = None, refusal: str | None = None
    ) -> ParseResult: ...

    @property
    def raw(self) -> str: ...


@dataclass
class _Base:
    spec: AnswerSpec
    grounded: Collection[str]
    _raw: list[str] = field(default_factory=list)

    @property
    def raw(self) -> str:
        return "".join(self._raw)

    def _early_failure(self, finish_reason: str | None, refusal: str | None) -> ParseResult | None:
        if refusal:
            return ParseResult.failure(ErrorKind.refused, refusal, self.raw)
        if finish_reason == "length":
            return ParseResult.failure(
                ErrorKind.truncated,
                "the answer was cut off by the output token limit; answer again, shorter",
                self.raw,
            )
        return None


class _StringField:
    """Decodes one JSON string value incrementally, given the characters after its quote."""

    def __init__(self) -> None:
        self.done = False
        self._escape = ""

    def feed(self, text: str) -> tuple[str, str]:
        """(decoded text, the rest after the closing quote)."""
        out: list[str] = []
        for index, char in enumerate(text):
            if self._escape:
                self._escape += char
                if self._escape.startswith("\\u"):
                    if len(self._escape) < 6:
                        continue
                    with contextlib.suppress(ValueError):  # a malformed escape shows nothing
                        out.append(chr(int(self._escape[2:], 16)))
                else:
                    out.append(json.loads(f'"{self._escape}"'))
                self._escape = ""
            elif char == "\\":
                self._escape = "\\"
            elif char == '"':
                self.done = True
                return "".join(out), text[index + 1 :]
            else:
                out.append(char)
        return "".join(out), ""


@dataclass
class JsonParser(_Base):
    """The `json` protocol; shows `intro` while it streams."""

    _seen: str = ""
    _intro: _StringField | None = None

    def feed(self, chunk: str) -> list[DisplayEvent]:
        self._raw.append(chunk)
        if self._intro is not None and self._intro.done:
            return []
        if self._intro is None:
            self._seen += chunk
            marker = self._seen.find('"intro"')
            if marker == -1:
                return []
            after = self._seen[marker + len('"intro"') :].lstrip()
            if not after.startswith(":"):
                return []
            value = after[1:].lstrip()
            if not value.startswith('"'):
                return []
            self._intro = _StringField()
            chunk = value[1:]
        text, _ = self._intro.feed(chunk)
        return [TextDelta(text)] if text else []

    def finish(self, finish_reason: str | None = None, refusal: str | None = None) -> ParseResult:
        return parse_answer(
            self.raw,
            spec=self.spec,
            grounded_ids=self.grounded,
            finish_reason=finish_reason,
            refusal=refusal,
        )


@dataclass
class DelimitedParser(_Base):
    _text: list[str] = field(default_factory=list)  # shown so far
    _pending: str = ""  # not yet decided: it may be (the start of) the delimiter line
    _line_start: bool = True  # `_pending` begins at the start of a line
    _json: list[str] = field(default_factory=list)
    _found: bool = False

    def feed(self, chunk: str) -> list[DisplayEvent]:
        self._raw.append(chunk)
        if self._found:
            self._json.append(chunk)
            return []
        self._pending += chunk
        shown = self._advance(final=False)
        return [TextDelta(shown)] if shown else []

    def _advance(self, *, final: bool) -> str:
        """Move what is certainly text out of `_pending`, or find the delimiter."""
        shown: list[str] = []
        while self._pending:
            if self._line_start:
                verdict = _line_verdict(self._pending, final)
                if verdict == "wait":
                    break
                if verdict == "delimiter":
                    end = self._pending.index(DELIMITER) + len(DELIMITER)
                    self._json.append(self._pending[end:])
                    self._pending, self._found = "", True
                    break
            newline = self._pending.find("\n")
            if newline == -1:  # the rest of this line is text
                shown.append(self._pending)
                self._pending, self._line_start = "", False
                break
            shown.append(self._pending[: newline + 1])
            self._pending, self._line_start = self._pending[newline + 1 :], True
        text = "".join(shown)
        self._text.append(text)
        return text

    def finish(self, finish_reason: str | None = None, refusal: str | None = None) -> ParseResult:
        failure = self._early_failure(finish_reason, refusal)
        if failure:
            return failure
        if not self._found:
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
        return self.spec.validate(data, self.grounded, self.raw)

    @property
    def shown_text(self) -> str:
        return "".join(self._text)


def _line_verdict(line: str, final: bool) -> str:
    """For text that starts a line: "delimiter", "text", or "wait" for more characters."""
    stripped = line.lstrip(" \t")
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
        return "delimiter" if final else "wait"
    # A markdown rule is followed by more text; the delimiter by the JSON object.
    return "delimiter" if following[0] == "{" else "text"


NDJSON_TYPES = ("intro", "wine", "closing", "meta")


@dataclass
class NdjsonParser(_Base):
    _buffer: str = ""
    _line_number: int = 0
    intro: list[str] = field(default_factory=list)
    wines: list[dict[str, Any]] = field(default_factory=list)
    closing: list[str] = field(default_factory=list)
    meta: dict[str, Any] | None = None
    bad_lines: list[str] = field(default_factory=list)

    def feed(self, chunk: str) -> list[DisplayEvent]:
        self._raw.append(chunk)
        self._buffer += chunk
        events: list[DisplayEvent] = []
        while "\n" in self._buffer:
            line, self._buffer = self._buffer.split("\n", 1)
            events += self._line(line)
        return events

    def _line(self, line: str) -> list[DisplayEvent]:
        self._line_number += 1
        text = line.strip()
        if not text:
            return []
        problem, item = self._validate_line(text)
        if problem:
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
        assert item is not None
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
        try:
            item = json.loads(text)
        except json.JSONDecodeError as exc:
            return f"not valid JSON ({exc.msg})", None
        if not isinstance(item, dict) or item.get("type") not in NDJSON_TYPES:
            return f"type must be one of {', '.join(NDJSON_TYPES)}", None
        kind = item["type"]
        if kind in ("intro", "closing") and not isinstance(item.get("text"), str):
            return f"a {kind} line needs a text string", None
        if kind == "wine":
            if not isinstance(item.get("wine_id"), str) or not isinstance(item.get("why"), str):
                return "a wine line needs wine_id and why strings", None
            if item["wine_id"] not in self.grounded:
                return (
                    f"wine_id {item['wine_id']} did not appear in a tool result of this turn",
                    None,
                )
        if kind == "meta" and not isinstance(item.get("response_type"), str):
            return "a meta line needs response_type", None
        return None, item

    def finish(self, finish_reason: str | None = None, refusal: str | None = None) -> ParseResult:
        failure = self._early_failure(finish_reason, refusal)
        if failure:
            return failure
        if self._buffer.strip():
            self._line(self._buffer)  # a last line without a newline, or cut mid-line
            self._buffer = ""
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
        return self.spec.validate(data, self.grounded, self.raw)


def parser_for(protocol: str, spec: AnswerSpec, grounded: Collection[str]) -> StreamParser:
    parsers = {"json": JsonParser, "delimited": DelimitedParser, "ndjson": NdjsonParser}
    return parsers[protocol](spec, grounded)  # type: ignore[return-value]
