"""The reply schema and its validation: schema, semantics, grounding.

Facts on a card (name, producer, region, grapes, price, rating) come from the catalog row, never
from model text: the model only chooses `wine_id` and says `why`.
"""

from __future__ import annotations

from collections.abc import Collection
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from sommelier.agent.output import ErrorKind, ParseResult

MAX_WINES = 3
PLACEHOLDERS = frozenset({"", "none", "null", "n/a", "na", "-", "...", "…", "tbd", "todo"})


class ResponseType(StrEnum):
    recommendation = "recommendation"
    informational = "informational"
    clarification = "clarification"
    off_topic = "off_topic"


class Guard(StrEnum):
    off_topic = "off_topic"
    prompt_injection = "prompt_injection"
    social_engineering = "social_engineering"


class WinePick(BaseModel):
    model_config = ConfigDict(extra="forbid")

    wine_id: str = Field(description="The id of a wine from this turn's tool results.")
    why: str = Field(description="One or two sentences: why this wine fits the request.")


class Reply(BaseModel):
    model_config = ConfigDict(extra="forbid")

    response_type: ResponseType
    intro: str = Field(description="The opening text shown to the person.")
    wines: list[WinePick] = Field(description="Up to 3 wines; empty unless recommending.")
    closing: str = Field(description="A closing line, usually a short follow-up question.")
    guard: Guard | None = Field(description="null, or why the request was declined.")


def _strict(schema: dict[str, Any]) -> dict[str, Any]:
    """OpenAI strict mode: every property required, no extra properties, no titles."""
    if isinstance(schema, dict):
        schema.pop("title", None)
        if "$ref" in schema:  # strict mode allows no siblings next to $ref
            schema.pop("description", None)
        if schema.get("type") == "object" and "properties" in schema:
            schema["required"] = list(schema["properties"])
            schema["additionalProperties"] = False
        for value in schema.values():
            if isinstance(value, dict):
                _strict(value)
            elif isinstance(value, list):
                for item in value:
                    _strict(item)
    return schema


def reply_json_schema() -> dict[str, Any]:
    return _strict(Reply.model_json_schema())


def is_empty(text: str | None) -> bool:
    return text is None or text.strip().lower().strip(".!") in PLACEHOLDERS


def render_text(reply: Reply) -> str:
    """The reply as plain text: intro, the picks, closing (front ends add catalog facts)."""
    parts = [] if is_empty(reply.intro) else [reply.intro.strip()]
    parts += [f"{i}. {w.why.strip()}" for i, w in enumerate(reply.wines, 1) if not is_empty(w.why)]
    if not is_empty(reply.closing):
        parts.append(reply.closing.strip())
    return "\n\n".join(parts)


class ReplySpec:
    """The AnswerSpec of the sommelier's reply."""

    name = "sommelier_reply"

    def json_schema(self) -> dict[str, Any]:
        return reply_json_schema()

    def validate(self, data: Any, grounded_ids: Collection[str], raw: str) -> ParseResult:
        try:
            reply = Reply.model_validate(data)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'reply'}: {e['msg']}"
                for e in exc.errors()[:6]
            )
            return ParseResult.failure(ErrorKind.schema, problems, raw)
        problem = semantic_problem(reply)
        if problem:
            return ParseResult.failure(ErrorKind.semantic, problem, raw)
        picks: list[WinePick] = []
        for pick in reply.wines:
            if pick.wine_id not in {p.wine_id for p in picks}:
                picks.append(pick)
        unknown = [p.wine_id for p in picks if p.wine_id not in grounded_ids]
        if unknown:
            return ParseResult.failure(
                ErrorKind.grounding,
                f"wine_id {', '.join(unknown)} did not appear in a tool result of this turn; "
                "recommend only wines returned by search_wines or get_wine",
                raw,
            )
        reply = reply.model_copy(update={"wines": picks[:MAX_WINES]})
        return ParseResult(
            text=render_text(reply),
            ids=[p.wine_id for p in reply.wines],
            reply=reply,
            raw=raw,
        )


def semantic_problem(reply: Reply) -> str | None:
    texts = [reply.intro, reply.closing, *(w.why for w in reply.wines)]
    if all(is_empty(t) for t in texts):
        return "intro, closing and every why are empty; write the answer for the person"
    if reply.response_type == ResponseType.recommendation and not reply.wines:
        return "a recommendation needs at least one wine from the tool results"
    if reply.response_type == ResponseType.off_topic and is_empty(reply.intro):
        return "an off_topic reply needs an intro that politely steers back to wine"
    if reply.response_type == ResponseType.clarification and "?" not in (
        reply.intro + reply.closing
    ):
        return "a clarification must ask at least one question"
    empty_why = [w.wine_id for w in reply.wines if is_empty(w.why)]
    if empty_why:
        return f"every wine needs a why; empty for {', '.join(empty_why)}"
    return None
