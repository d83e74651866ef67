"""`sommelier eval`: the evaluation's command-line face."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from sommelier.config import AgentStrategy, OutputProtocol, Settings
from sommelier.evaluation.blind import BLIND
from sommelier.evaluation.cold import COLD
from sommelier.evaluation.dialogs import DIALOGS, PROFILE, SMOKE, Dialog
from sommelier.evaluation.fresh import FRESH
from sommelier.evaluation.held_out import HELD_OUT
from sommelier.evaluation.report import LANGUAGE_COLUMNS, Summary, by_language, summarize
from sommelier.evaluation.runner import TurnOutcome, run_config
from sommelier.evaluation.unseen import UNSEEN
from sommelier.evaluation.world import SMOKE_WORLD, WORLD

# The sets, in the order a full run takes them (`--set NAME` runs one).
SETS: dict[str, tuple[Dialog, ...]] = {
    "english": DIALOGS,
    "world": WORLD,
    "held_out": HELD_OUT,
    "fresh": FRESH,
    "unseen": UNSEEN,
    "blind": BLIND,
    "cold": COLD,
}


def _table(summaries: list[Summary]) -> Table:
    table = Table(title="Real-model evaluation", title_justify="left")
    table.add_column("figure")
    for summary in summaries:
        table.add_column(summary.config)
    rows = [s.rows() for s in summaries]
    for index, (name, _) in enumerate(rows[0]):
        table.add_row(name, *(r[index][1] for r in rows))
    return table


def _languages(name: str, outcomes: list[TurnOutcome]) -> Table:
    table = Table(title=f"{name}, per language", title_justify="left")
    for column in LANGUAGE_COLUMNS:
        table.add_column(column)
    for row in by_language(outcomes):
        table.add_row(*row.cells())
    return table


def smoke_failures(outcomes: list[TurnOutcome]) -> list[str]:
    """What the runtime guarantees with any model: a clean end, a catalog search and no invented
    wine. How well the model writes (the person's language, an answer rather than an echo) is
    the 1.5B evaluation's figure: a 0.5B model gets it wrong now and then, and a CI gate that
    fails at random teaches people to ignore it."""
    problems = []
    for o in outcomes:
        if o.status in ("failed", "timeout", "error", "interrupted", "cancelled"):
            problems.append(f"{o.text!r}: the turn ended with {o.status}")
        if o.wine_request and not o.searched:
            problems.append(f"{o.text!r}: no catalog search ran")
        if o.invented:
            problems.append(f"{o.text!r}: {o.invented} invented wine(s) shown")
    return problems


def choose_dialogs(
    smoke: bool, profile: bool, world: bool, limit: int | None, only: str | None = None
) -> tuple[Dialog, ...]:
    if smoke:
        return (*SMOKE, SMOKE_WORLD)
    if profile:
        return PROFILE
    if only is not None:
        return SETS[only][:limit]
    names = [name for name in SETS if not (world and name == "english")]
    return tuple(d for name in names for d in SETS[name])[:limit]


def _printer(console: Console) -> Callable[[TurnOutcome], None]:
    def show(outcome: TurnOutcome) -> None:
        mark = "searched" if outcome.searched else "no search"
        verdict = "good" if outcome.good else "BAD " + "; ".join(outcome.violations)[:60]
        console.print(
            f"  [{outcome.seconds:5.1f} s] {outcome.language}>{outcome.reply_language} "
            f"{outcome.result:<16} {mark:<9} {verdict} {outcome.text[:50]!r}"
            f" -> {outcome.reply[:90]!r}",
            highlight=False,
            markup=False,
        )

    return show


def run_evaluation(
    settings: Settings,
    *,
    protocols: list[str],
    strategies: list[str],
    limit: int | None,
    smoke: bool,
    output: Path | None,
    console: Console,
    profile: bool = False,
    world: bool = False,
    only: str | None = None,
) -> int:
    for protocol in protocols:
        OutputProtocol(protocol)
    for strategy in strategies:
        AgentStrategy(strategy)
    dialogs = choose_dialogs(smoke, profile, world, limit, only)
    summaries, everything, languages = [], {}, {}
    for protocol in protocols:
        for strategy in strategies:
            name = f"{protocol} / {strategy}"
            console.print(f"{name}: {len(dialogs)} dialogs", highlight=False)
            run = run_config(settings, dialogs, protocol, strategy, _printer(console))
            outcomes = asyncio.run(run)
            summaries.append(summarize(name, outcomes))
            everything[name] = [_row(o) for o in outcomes]
            languages[name] = [dataclasses.asdict(row) for row in by_language(outcomes)]
            console.print(_languages(name, outcomes))
    console.print(_table(summaries))
    if output is not None:
        data = {"summaries": [s.to_json() for s in summaries], "languages": languages}
        output.write_text(json.dumps({**data, "turns": everything}, indent=2, ensure_ascii=False))
    if not smoke:
        return 0
    problems = [p for name in everything for p in smoke_failures(_outcomes(everything[name]))]
    for problem in problems:
        console.print(f"[red]smoke failed:[/red] {problem}", highlight=False)
    return 1 if problems else 0


def _row(outcome: TurnOutcome) -> dict[str, object]:
    return {name: getattr(outcome, name) for name in TurnOutcome.__slots__}


def _outcomes(rows: list[dict[str, Any]]) -> list[TurnOutcome]:
    return [TurnOutcome(**row) for row in rows]
