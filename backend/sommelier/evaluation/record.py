"""Runs dialog sets against the configured model, through the chat service as a front end calls
it, and writes one record per turn: what the person saw (notice, text, cards with their whys),
what the turn did (searches, the ids the tools returned, model calls, tokens, seconds, the
rules that fired) and what the model wrote before anything was mended. Judging is the judge's
job (evaluation/judge.py), on the records alone, so a stored run can be judged again.

It relies only on what every front end relies on (`ChatService.turn`, `TurnReply`, the turn's
`AgentResult` through the tracer), so the same recorder measures code from before a redesign.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sommelier.agent.parsers import DisplayEvent, TextDelta
from sommelier.agent.records import AgentResult, Outcome, Purpose
from sommelier.app import App
from sommelier.catalog.search import get_wines
from sommelier.cellar.files import CellarRow
from sommelier.cellar.store import add_rows, cellar_of, forget, owner_of
from sommelier.chat.service import ChatService, TurnReply
from sommelier.config import AgentStrategy, OutputProtocol, Settings
from sommelier.db.repositories import Person
from sommelier.evaluation.sets import Bottle, Dialog, DialogSet
from sommelier.observability.tracing import Tracer, TurnTrace

SEARCH_TOOLS = frozenset({"search_wines", "get_wine"})
RAW_CHARS = 1500  # of each answer the model wrote: enough to see what it did


@dataclass(slots=True)
class FirstText:
    """A sink that notes when the person first saw text."""

    started: float = field(default_factory=time.perf_counter)
    at: float | None = None

    def emit(self, event: DisplayEvent) -> None:
        if self.at is None and isinstance(event, TextDelta) and event.text.strip():
            self.at = time.perf_counter() - self.started


class Capture:
    """A tracer that keeps each turn's AgentResult and passes everything on to the real one."""

    def __init__(self, inner: Tracer) -> None:
        self.inner = inner
        self.results: list[AgentResult] = []

    @contextmanager
    def turn(self, **fields: str) -> Iterator[TurnTrace]:
        with self.inner.turn(**fields) as trace:
            yield _Recording(trace, self.results)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class _Recording:
    def __init__(self, trace: TurnTrace, results: list[AgentResult]) -> None:
        self._trace = trace
        self._results = results

    def __getattr__(self, name: str) -> Any:
        return getattr(self._trace, name)

    def record(self, result: AgentResult, status: str, shown_text: str) -> None:
        self._results.append(result)
        self._trace.record(result, status, shown_text)


def turn_record(
    reply: TurnReply, result: AgentResult | None, seconds: float, first: float | None
) -> dict[str, Any]:
    """What one turn showed and did, as plain JSON."""
    record: dict[str, Any] = {
        "status": str(reply.status),
        "text": reply.text,
        "notice": getattr(reply, "notice", ""),
        "intro": reply.intro,
        "closing": reply.closing,
        "cards": [
            {"id": c.wine_id, "name": c.name, "why": c.why, "cellar": c.cellar} for c in reply.cards
        ],
        "seconds": round(seconds, 2),
        "first_text": round(first, 2) if first is not None else None,
        # The runtime's own label of an attempt on its rules (chat/guard.py): what the guard
        # evaluation counts as detected, or as a false alarm on an innocent message.
        "guard": str(reply.reply.guard) if reply.reply is not None and reply.reply.guard else None,
        "adding": reply.adding,  # bottles offered for the cellar (cellar/adding.py)
    }
    if result is not None:
        record |= _what_it_did(result)
    return record


def _what_it_did(result: AgentResult) -> dict[str, Any]:
    tools = [t.result for t in result.tools]
    answers = [a for a in result.attempts if a.purpose not in (Purpose.tool_round, Purpose.plan)]
    return {
        "searched": any(t.call.name in SEARCH_TOOLS and t.ok for t in tools),
        "tools": [
            {"name": t.call.name, "arguments": t.arguments, "notes": dict(t.notes)} for t in tools
        ],
        "returned": sorted({ref for t in tools for ref in t.references}),
        "plan": result.plan,
        "calls": len(result.attempts),
        "answer_calls": len(answers),
        "prompt_tokens": sum(a.prompt_tokens or 0 for a in result.attempts),
        "completion_tokens": sum(a.completion_tokens or 0 for a in result.attempts),
        "cached_tokens": sum(a.cached_tokens or 0 for a in result.attempts),
        "answer_tokens": [a.completion_tokens for a in answers],
        "raw": next((a.output or "" for a in reversed(answers) if a.outcome == Outcome.ok), "")[
            :RAW_CHARS
        ],
        "rejected": [
            f"{a.error_kind}: {a.error_message}" for a in answers if a.outcome != Outcome.ok
        ],
        "rules": dict(getattr(result, "rules", {}) or {}),
    }


def _json_default(value: Any) -> Any:
    if isinstance(value, set | frozenset | tuple):
        return sorted(value) if isinstance(value, set | frozenset) else list(value)
    return str(value)


async def run_sets(
    settings: Settings,
    sets: Sequence[DialogSet],
    protocol: str,
    strategy: str,
    out: Path | None,
    show: Callable[[dict[str, Any]], None] | None = None,
) -> list[dict[str, Any]]:
    """Every dialog of `sets` under one configuration, on a database of its own; one record
    per turn, appended to `out` (JSON lines) as it is made."""
    with tempfile.TemporaryDirectory() as folder:
        config = settings.model_copy(
            update={
                "database_url": f"sqlite+aiosqlite:///{Path(folder) / 'eval.db'}",
                "output_protocol": OutputProtocol(protocol),
                "agent_strategy": AgentStrategy(strategy),
                "auto_migrate": True,
                "load_starter_catalog": True,
            }
        )
        app = App.build(config)
        try:
            await app.prepare()
            await app.check_model()
            capture = Capture(app.tracer())
            service = app.chat_service(tracer=capture)
            records: list[dict[str, Any]] = []
            for dialog_set in sets:
                for dialog in dialog_set.dialogs:
                    head = {"set": dialog_set.name, "protocol": protocol, "strategy": strategy}
                    for record in await _dialog(service, capture, dialog, head):
                        records.append(record)
                        if out is not None:
                            with out.open("a", encoding="utf-8") as handle:
                                handle.write(
                                    json.dumps(record, ensure_ascii=False, default=_json_default)
                                    + "\n"
                                )
                        if show is not None:
                            show(record)
            return records
        finally:
            await app.aclose()


async def _dialog(
    service: ChatService, capture: Capture, dialog: Dialog, head: dict[str, Any]
) -> list[dict[str, Any]]:
    person = Person(
        channel="cli", local_name=f"eval-{head['set']}-{dialog.id}", display_name=dialog.id
    )
    if dialog.cellar:
        await _stock(service, person, dialog.cellar)
    records = []
    for index, turn in enumerate(dialog.turns):
        if turn.new:
            await service.new_conversation(person)
        sink = FirstText()
        before = len(capture.results)
        reply = await service.turn(person, turn.say, sink=sink)
        seconds = time.perf_counter() - sink.started
        result = capture.results[-1] if len(capture.results) > before else None
        record = {**head, "dialog": dialog.id, "turn": index, "language": dialog.language}
        record |= {"kind": turn.kind, "say": turn.say}
        records.append(record | turn_record(reply, result, seconds, sink.at))
    return records


async def _stock(service: ChatService, person: Person, bottles: list[Bottle]) -> None:
    """The dialog's cellar, as if the person had imported it (matched to the catalog by name);
    a run again on the same database starts from the same cellar."""
    async with service.sessions() as session:
        wines = {w.external_id: w for w in await get_wines(session, [b.wine for b in bottles])}
        rows = [
            CellarRow(i, wines[b.wine].name, b.bottles, wines[b.wine].producer, b.vintage, b.place)
            for i, b in enumerate(bottles, start=1)
            if b.wine in wines
        ]
        owner = await owner_of(session, person)
        await forget(session, owner)
        await add_rows(session, await cellar_of(session, owner), rows, None, "csv")
        await session.commit()


def read_records(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]
