"""The sommelier's answer: its shape (what the model writes), its JSON schema (which a server
turns into a grammar, with the choices this turn allows) and its plain-text rendering. Facts on
a card (name, producer, region, grapes, price, rating) come from the catalog row, never from
model text: the model chooses `wine_id`, a reason its row supports, and writes one sentence.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from sommelier.agent.output import Facts, ParseResult
from sommelier.catalog.support import REASONS, Reason

MAX_WINES = 3  # accepted; the answer format asks for at most ASKED_WINES
# Each wine costs a small local model about 3 s of writing: the format asks for two.
ASKED_WINES = 2
# Enforced where the server takes a schema or grammar: a small model otherwise runs on, and
# every token costs it time (on 2 cores about 0.05 s; a German or Russian word is more tokens
# than an English one). Yet a small model writes to the cap whatever it is told: at why 80
# and closing 60, 12 of 28 English closings and a fifth of the whys were cut to nothing, and
# the same sets ran no slower at 120 and 100 (fewer repairs). A field the grammar stops
# mid-sentence is mended at once (trimmed), and the next turn asks for shorter text.
MAX_INTRO, MAX_WHY, MAX_CLOSING = 120, 120, 100
CAPPED_NOTE = "Your last answer ran over its length limits: keep every field shorter."
# The answer format's own rule for a turn without wines, about the field only: "No wine was
# found in this turn" came back translated as the answer to general questions ("non ho
# trovato nessun vino in questo turno" for "how strong is a prosecco?"). Small models copy
# it out, so it is cut from the text like the format's other words.
NO_WINES = "Set wines to []."
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


_LIST_NUMBER = re.compile(r"^\d+[.)]\s+")


class WinePick(BaseModel):
    model_config = ConfigDict(extra="forbid")

    wine_id: str = Field(description="The id of a wine from this turn's tool results.")
    # The reason, of those its row supports (catalog/support.py), the reply gives first, said
    # from data by chat/reasons.py; the grammar offers only those. One, not a list: asked for
    # two, a small model wrote the same one twice.
    reason: Reason | None = None
    why: str = Field(description="One or two sentences: why this wine fits the request.")

    @field_validator("why")
    @classmethod
    def _as_a_sentence(cls, why: str) -> str:
        """Opens like a sentence: without the list number the model put before it ("1. it has
        a medium body…": the cards are numbered already), with a capital."""
        why = _LIST_NUMBER.sub("", why.lstrip())
        return why[:1].upper() + why[1:]


class Reply(BaseModel):
    model_config = ConfigDict(extra="forbid")

    response_type: ResponseType
    intro: str = Field(description="The opening text shown to the person.")
    wines: list[WinePick] = Field(description="Up to 3 wines; empty unless recommending.")
    closing: str = Field(description="A closing line, usually a short follow-up question.")
    guard: Guard | None = Field(description="null, or why the request was declined.")
    # Set by validation, never by the model (not in the answer's schema): a field ran over its
    # cap, so the next turn asks for shorter text.
    capped: bool = False


def _text(limit: int | None) -> dict[str, Any]:
    return {"type": "string"} if limit is None else {"type": "string", "maxLength": limit}


def _object(properties: dict[str, Any]) -> dict[str, Any]:
    # OpenAI strict mode: every property required, no extra properties.
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


def reply_json_schema(
    grounded: Sequence[str] | None = None, facts: Facts | None = None, why: int = MAX_WHY
) -> dict[str, Any]:
    """The reply's schema, inline (no $ref) so that every server can turn it into a grammar.
    With `grounded`, `wine_id` can only be one of those ids, and without any, no wine at all;
    with `facts`, each wine's reason only one its row supports (one shape per wine), and no
    intro or closing: a recommendation's are said from data, and each token costs a small model
    a tenth of a second on two cores. `why`: the length of each wine's own sentence (0: the
    reasons said from data alone)."""
    wines: dict[str, Any] = {
        "type": "array", "items": _pick(grounded, why=why), "maxItems": ASKED_WINES
    }  # fmt: skip
    intro, closing = _text(MAX_INTRO), _text(MAX_CLOSING)
    if grounded is not None and not grounded:
        wines["maxItems"] = 0
    elif grounded and facts:
        shapes = [_pick([i], facts.get(i, {}).get("reasons") or [], why) for i in grounded]
        wines["items"] = shapes[0] if len(shapes) == 1 else {"anyOf": shapes}
        if said_from_data(grounded, facts):
            # Said from data as well (chat/reasons.py): the model's intro was thrown away, and
            # its 30-40 tokens were a third of the answer's (unseen46).
            intro = closing = _text(0)
    return _object(
        {
            "response_type": {"type": "string", "enum": [t.value for t in ResponseType]},
            "intro": intro,
            "wines": wines,
            "closing": closing,
            "guard": {
                "anyOf": [{"type": "string", "enum": [g.value for g in Guard]}, {"type": "null"}]
            },
        }
    )


def said_from_data(grounded: Collection[str] | None, facts: Facts | None) -> bool:
    """Whether a recommendation's intro and closing will be said from data: the turn's wines
    come with the reasons their rows support."""
    return bool(grounded) and any(f.get("reasons") for f in (facts or {}).values())


def _pick(
    ids: Sequence[str] | None, reasons: Sequence[str] = REASONS, why: int = MAX_WHY
) -> dict[str, Any]:
    wine_id = {"type": "string", "enum": list(ids)} if ids else {"type": "string"}
    reason = {"type": "string", "enum": list(reasons)} if reasons else {"type": "null"}
    return _object({"wine_id": wine_id, "reason": reason, "why": _text(why)})


FIELDS = (
    "response_type: recommendation (1 or 2 wines), informational, clarification (one question, "
    "no wines) or off_topic (not about wine or food: a one-line answer and an offer, no "
    "wines); intro: one short sentence to the person; wines: [{wine_id, reason: the listed "
    "reason that fits best, why: one short sentence of your own}]; "
    "closing: a short question; guard: null, or off_topic, prompt_injection or "
    "social_engineering."
)
# Words, not counts: told "at most 10 words", a small model writes more than told "a few".


def is_empty(text: str | None) -> bool:
    return text is None or text.strip().lower().strip(".!") in PLACEHOLDERS


def render_text(reply: Reply) -> str:
    """The reply as plain text: intro, the picks, closing (front ends add catalog facts)."""
    parts = [] if is_empty(reply.intro) else [reply.intro.strip()]
    parts += [f"{i}. {w.why.strip()}" for i, w in enumerate(reply.wines, 1) if not is_empty(w.why)]
    if not is_empty(reply.closing):
        parts.append(reply.closing.strip())
    return "\n\n".join(parts)


def accepted(reply: Reply, raw: str, fired: Sequence[str] = ()) -> ParseResult[Reply]:
    return ParseResult(
        text=render_text(reply),
        ids=[p.wine_id for p in reply.wines],
        reply=reply,
        raw=raw,
        rules=list(fired),
    )
