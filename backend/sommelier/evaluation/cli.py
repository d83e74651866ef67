"""`sommelier eval`: run dialog sets against the model, or judge a stored run again."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from sommelier.config import AgentStrategy, OutputProtocol, Settings
from sommelier.evaluation.record import read_records, run_sets
from sommelier.evaluation.report import (
    COLUMNS,
    Judged,
    guard_figures,
    judge_records,
    rows,
    rule_firings,
    transcript,
    with_readings,
)
from sommelier.evaluation.sets import DialogSet, available, load

FAILED = ("failed", "timeout", "error", "interrupted", "cancelled", "exhausted", "reset")


def choose_sets(names: Sequence[str], smoke: bool, limit: int | None) -> list[DialogSet]:
    chosen = ["smoke"] if smoke else list(names) or [n for n in available() if n != "smoke"]
    sets = [load(name) for name in chosen]
    if limit is not None:
        sets = [s.model_copy(update={"dialogs": s.dialogs[:limit]}) for s in sets]
    return sets


def smoke_failures(judged: Sequence[Judged]) -> list[str]:
    """What the runtime guarantees with any model: a clean end, a catalog search and no invented
    wine. How well a model writes is the 1.5B evaluation's figure: a 0.5B model slips now and
    then, and a CI gate that fails at random teaches people to ignore it."""
    problems = []
    for item in judged:
        r, say = item.record, repr(item.record["say"])
        if r["status"] in FAILED:
            problems.append(f"{say}: the turn ended with {r['status']}")
        if item.verdict.searched is False:
            problems.append(f"{say}: no catalog search ran")
        if not item.verdict.grounded:
            problems.append(f"{say}: a card that no tool of the turn returned")
    return problems


def _table(title: str, judged: Sequence[Judged]) -> Table:
    table = Table(title=title, title_justify="left")
    for column in COLUMNS:
        table.add_column(column)
    for row in rows(judged):
        table.add_row(*row.cells())
    return table


def _printer(console: Console) -> Callable[[dict[str, Any]], None]:
    def show(record: dict[str, Any]) -> None:
        mark = "searched" if record.get("searched") else "no search"
        console.print(
            f"  [{record.get('seconds', 0):5.1f} s] {record['language']} {record['kind']:<10} "
            f"{mark:<9} {record['say'][:50]!r} -> {str(record.get('text'))[:90]!r}",
            highlight=False,
            markup=False,
        )

    return show


def report(
    console: Console,
    judged: Sequence[Judged],
    title: str,
    show_transcript: bool = False,
) -> None:
    if show_transcript:
        for line in transcript(judged):
            console.print(line, highlight=False, markup=False)
    console.print(_table(title, judged))
    caught, attempts, alarms, innocent = guard_figures(judged)
    if attempts:
        console.print(
            f"attempts on the rules detected: {caught}/{attempts}; "
            f"innocent messages taken for attempts: {alarms}/{innocent}"
        )
    firings = rule_firings(item.record for item in judged)
    if firings:
        console.print("rules fired: " + ", ".join(f"{k} {v}" for k, v in firings.items()))


def run_evaluation(
    settings: Settings,
    *,
    sets: Sequence[DialogSet],
    protocols: list[str],
    strategies: list[str],
    smoke: bool,
    output: Path | None,
    console: Console,
    readings: Path | None = None,
    show_transcript: bool = False,
) -> int:
    for protocol in protocols:
        OutputProtocol(protocol)
    for strategy in strategies:
        AgentStrategy(strategy)
    problems: list[str] = []
    for protocol in protocols:
        for strategy in strategies:
            name = f"{protocol} / {strategy}"
            turns = sum(len(d.turns) for s in sets for d in s.dialogs)
            console.print(f"{name}: {turns} turns", highlight=False)
            run = run_sets(settings, sets, protocol, strategy, output, _printer(console))
            judged = judge_records(asyncio.run(run), sets)
            with_readings(judged, readings)
            report(console, judged, f"Real-model evaluation, {name}", show_transcript)
            problems += smoke_failures(judged) if smoke else []
    for problem in problems:
        console.print(f"[red]smoke failed:[/red] {problem}", highlight=False)
    return 1 if problems else 0


def judge_stored(
    path: Path,
    console: Console,
    readings: Path | None = None,
    show_transcript: bool = False,
) -> int:
    """A stored run (`--output`) judged again, with no model: per configuration."""
    records = read_records(path)
    names = list(dict.fromkeys(r["set"] for r in records))
    sets = [load(name) for name in names]
    configs = list(dict.fromkeys((r.get("protocol"), r.get("strategy")) for r in records))
    for protocol, strategy in configs:
        mine = [
            r for r in records if (r.get("protocol"), r.get("strategy")) == (protocol, strategy)
        ]
        judged = judge_records(mine, sets)
        with_readings(judged, readings)
        report(console, judged, f"{path.name}, {protocol} / {strategy}", show_transcript)
    return 0
