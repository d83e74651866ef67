"""Output protocols: how the model writes its final answer. One object per protocol owns
everything that depends on it: the answer instruction, the enforced format, the stream parser,
the repair reminder, the compaction request, and how a stored reply is replayed into history.

- `json`: one JSON object; `intro` is shown while it streams.
- `delimited`: text for the person, a line `---`, then one JSON object with the rest. The text
  streams; the delimiter never shows. A `---` line is the delimiter only when `{` follows
  (otherwise it was a markdown rule and is text).
- `ndjson`: one JSON object per line ({"type": "intro"|"wine"|"closing"|"meta", ...}); each line
  is checked when complete, bad lines are skipped, the items are validated as a whole at the end.

Parsers are pure and never raise on model output, whatever it is.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from sommelier.agent.grammar import lines_grammar, text_then_json_grammar
from sommelier.agent.model import OutputFormat
from sommelier.agent.output import AnswerContext, AnswerSpec, Facts
from sommelier.agent.parsers import (
    DELIMITER,
    DelimitedParser,
    JsonParser,
    NdjsonParser,
    StreamParser,
)

TEXT_FIELD = "intro"  # the reply's text for the person: streamed first, written first
MAX_TEXT_LINE = 160  # per line of a delimited answer's text, where a grammar enforces it


def _without(schema: dict[str, Any], name: str) -> dict[str, Any]:
    properties = {k: v for k, v in schema["properties"].items() if k != name}
    required = [k for k in schema.get("required", []) if k != name]
    return {**schema, "properties": properties, "required": required}


def replay_text(reply: dict[str, Any]) -> str:
    """A stored reply as history, whatever the protocol. A recommendation replays as the wines
    it named (ids, so "the first one" means something, and reasons); anything else as its
    text. Never the protocol's JSON, nor a recommendation's prose: a small model given its
    previous answer copies it word for word into the next one."""
    wines = [w for w in reply.get("wines") or [] if isinstance(w, dict)]
    if wines:
        named = "; ".join(f"{w.get('wine_id')} ({w.get('why', '')})" for w in wines)
        return f"[I suggested: {named}]"
    text = [str(reply.get(TEXT_FIELD) or "").strip(), str(reply.get("closing") or "").strip()]
    return "\n".join(line for line in text if line)


class OutputProtocol(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def schema_enforced(self) -> bool:
        """Whether the server-enforced format of this protocol is a JSON schema (else a
        grammar)."""
        ...

    def output_format(
        self, spec: AnswerSpec[Any], grounded: Sequence[str], facts: Facts | None = None
    ) -> OutputFormat: ...

    def format_section(self, spec: AnswerSpec[Any]) -> str:
        """How to write an answer: static, so it goes in the system prompt's stable prefix."""
        ...

    def instruction(self, spec: AnswerSpec[Any], grounded: Sequence[str]) -> str:
        """The short request at the end of an answer call."""
        ...

    def parser(self, spec: AnswerSpec[Any], context: AnswerContext) -> StreamParser: ...

    @property
    def reminder(self) -> str: ...

    def compaction_request(self, request: str) -> str: ...

    def replay(self, reply: dict[str, Any]) -> str: ...


class _PlainReplay:
    def replay(self, reply: dict[str, Any]) -> str:
        return replay_text(reply)


@dataclass(frozen=True)
class JsonProtocol(_PlainReplay):
    name: str = "json"
    schema_enforced: bool = True

    def output_format(
        self, spec: AnswerSpec[Any], grounded: Sequence[str], facts: Facts | None = None
    ) -> OutputFormat:
        return OutputFormat(spec.name, schema=spec.json_schema(grounded, facts))

    def format_section(self, spec: AnswerSpec[Any]) -> str:
        return f"When asked to answer, reply with one JSON object: {spec.describe()}"

    def instruction(self, spec: AnswerSpec[Any], grounded: Sequence[str]) -> str:
        return f"Answer now, as one JSON object. {spec.constraint(grounded)}"

    def parser(self, spec: AnswerSpec[Any], context: AnswerContext) -> StreamParser:
        return JsonParser(spec, context)

    @property
    def reminder(self) -> str:
        return "Reply again with one JSON object that follows the schema exactly."

    def compaction_request(self, request: str) -> str:
        return (
            "Answer my latest request now, as one JSON object only, using only the tool results "
            f"above. My latest request: {request}"
        )


@dataclass(frozen=True)
class DelimitedProtocol(_PlainReplay):
    name: str = "delimited"
    schema_enforced: bool = False

    def output_format(
        self, spec: AnswerSpec[Any], grounded: Sequence[str], facts: Facts | None = None
    ) -> OutputFormat:
        schema = _without(spec.json_schema(grounded, facts), TEXT_FIELD)
        grammar = text_then_json_grammar(schema, delimiter=DELIMITER, max_chars=MAX_TEXT_LINE)
        return OutputFormat(spec.name, grammar=grammar)

    def format_section(self, spec: AnswerSpec[Any]) -> str:
        # No example answer: a small model copies an example's words into every reply.
        return (
            "When asked to answer, first write one or two sentences for the person, then a line "
            "with only ---, then one JSON object with the other fields (no intro): "
            f"{spec.describe()}"
        )

    def instruction(self, spec: AnswerSpec[Any], grounded: Sequence[str]) -> str:
        # Nothing here names the text itself: "your sentences" came back translated as a
        # label above the answer ("Вот ваши предложения, разделенные точкой с запятой").
        return (
            "Answer now: reply to the person first, then a line with only ---, then the JSON "
            f"object. {spec.constraint(grounded)}"
        )

    def parser(self, spec: AnswerSpec[Any], context: AnswerContext) -> StreamParser:
        return DelimitedParser(spec, context)

    @property
    def reminder(self) -> str:
        return (
            "Reply again in the required format: the reply to the person, then a line with only "
            "---, then one JSON object that follows the schema."
        )

    def compaction_request(self, request: str) -> str:
        return (
            "Answer my latest request now, using only the tool results above: reply to me first, "
            f"then a line with only ---, then the JSON object. My latest request: {request}"
        )


@dataclass(frozen=True)
class NdjsonProtocol(_PlainReplay):
    name: str = "ndjson"
    schema_enforced: bool = False

    def output_format(
        self, spec: AnswerSpec[Any], grounded: Sequence[str], facts: Facts | None = None
    ) -> OutputFormat:
        schema = spec.json_schema(grounded, facts)["properties"]
        line_schemas = ndjson_line_schemas(schema, grounded)
        return OutputFormat(spec.name, grammar=lines_grammar(line_schemas))

    def format_section(self, spec: AnswerSpec[Any]) -> str:
        return (
            "When asked to answer, reply with one JSON object per line, nothing else, in this "
            'order: {"type": "intro", "text": "..."}, then 0 to 3 lines {"type": "wine", '
            '"wine_id": "...", "why": "..."}, then {"type": "closing", "text": "..."}, then '
            '{"type": "meta", "response_type": "...", "guard": null}. '
            f"{spec.describe()}"
        )

    def instruction(self, spec: AnswerSpec[Any], grounded: Sequence[str]) -> str:
        return f"Answer now, one JSON object per line. {spec.constraint(grounded)}"

    def parser(self, spec: AnswerSpec[Any], context: AnswerContext) -> StreamParser:
        return NdjsonParser(spec, context)

    @property
    def reminder(self) -> str:
        return (
            "Reply again in the required format: one JSON object per line (intro, wine lines, "
            "closing, meta), nothing else."
        )

    def compaction_request(self, request: str) -> str:
        return (
            "Answer my latest request now, using only the tool results above, as one JSON object "
            f"per line (intro, wines, closing, meta). My latest request: {request}"
        )


def ndjson_line_schemas(
    fields: dict[str, Any], grounded: Sequence[str]
) -> list[tuple[dict[str, Any], int, int]]:
    """(schema, fewest, most) for each line of an ndjson answer, in order."""

    def line(kind: str, **properties: Any) -> dict[str, Any]:
        return {"type": "object", "properties": {"type": {"const": kind}, **properties}}

    wine = fields["wines"]["items"]
    # One shape per wine when what may be said differs by wine (anyOf): a line of any of them.
    shapes = [line("wine", **(o.get("properties") or {})) for o in wine.get("anyOf", [wine])]
    wine_line = shapes[0] if len(shapes) == 1 else {"anyOf": shapes}
    text = fields[TEXT_FIELD]
    return [
        (line("intro", text=text), 1, 1),
        (wine_line, 0, 3 if grounded else 0),
        (line("closing", text=fields["closing"]), 1, 1),
        (line("meta", response_type=fields["response_type"], guard=fields["guard"]), 1, 1),
    ]


PROTOCOLS: dict[str, OutputProtocol] = {
    "json": JsonProtocol(),
    "delimited": DelimitedProtocol(),
    "ndjson": NdjsonProtocol(),
}
