"""Answers from the catalog alone, for when no model answers.

The reading of the person's words, the search and the cards need no model. A wine request
that meets an unreachable model (none installed yet, a server down, a wrong address) still gets
the search's best wines as cards, under a plain line, with one line on how to get richer
answers. Only a wine request: anything else still gets the "can't reach" message.
"""

from __future__ import annotations

import logging
import time
import uuid
from dataclasses import replace

from sommelier.agent.model import ToolCall
from sommelier.agent.records import AgentResult, Status, ToolRecord
from sommelier.agent.turn import TurnInput
from sommelier.catalog.reading import Reading
from sommelier.catalog.tools import CatalogTools
from sommelier.chat.answer import ASKED_WINES, Reply, ResponseType, WinePick, accepted
from sommelier.chat.labels import found_intro
from sommelier.i18n.translations import N_, translator

log = logging.getLogger("sommelier.chat")

SEARCH = "search_wines"
NO_MODEL = N_(
    "No model is answering right now, so these wines come from the catalog alone. "
    "Answers get richer once a model is connected (see “sommelier model check”)."
)


def no_model_line(language: str) -> str:
    return translator(language)(NO_MODEL)


async def from_catalog(
    result: AgentResult, turn: TurnInput, reading: Reading, catalog: CatalogTools
) -> AgentResult:
    """`result` (a run the model could not serve) answered from the catalog when the person
    asked for wine and the search finds some; else `result` unchanged."""
    if result.status != Status.error or not reading.wine_request:
        return result
    call = ToolCall(f"catalog-{uuid.uuid4().hex[:8]}", SEARCH, "{}")
    started = time.time_ns()
    found = await catalog.registry().run(call, turn)
    ids = [wine_id for wine_id in found.facts if wine_id in found.references][:ASKED_WINES]
    if not found.ok or not ids:
        return result
    log.warning(
        "model unavailable: answered from the catalog alone",
        extra={"event": "catalog_only_answer", "wines": ids},
    )
    reply = Reply(
        response_type=ResponseType.recommendation,
        intro=found_intro(reading.language),
        wines=[WinePick(wine_id=wine_id, why="") for wine_id in ids],
        closing="",
        guard=None,
    )
    record = ToolRecord(found, started, time.time_ns(), result.tool_rounds + 1)
    return replace(
        result, status=Status.ok, parse=accepted(reply, raw=""), tools=[*result.tools, record]
    )
