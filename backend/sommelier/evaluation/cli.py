"""`sommelier eval`: the evaluation's command-line face."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from sommelier.config import AgentStrategy, OutputProtocol, Settings
from sommelier.evaluation.dialogs import DIALOGS, PROFILE, SMOKE
from sommelier.evaluation.report import Summary, summarize
from sommelier.evaluation.runner import TurnOutcome, run_config


def _table(summaries: list[Summary]) -> Table:
    table = Table(title="Real-model evaluation", title_justify="left")
    table.add_column("figure")
    for summary in summaries:
        table.add_column(summary.config)
    rows = [s.rows() for s in summaries]
    for index, (name, _) in enumerate(rows[0]):
        table.add_row(name, *(r[index][1] for r in rows))
    return table


def smoke_failures(outcomes: list[TurnOutcome]) -> list[str]:
    """What must hold for any model: a clean end, a catalog search, no invented wine."""
    problems = []
    for o in outcomes:
        if o.status in ("failed", "timeout", "error", "interrupted", "cancelled"):
            problems.append(f"{o.text!r}: the turn ended with {o.status}")
        if o.wine_request and not o.searched:
            problems.append(f"{o.text!r}: no catalog search ran")
        if o.invented:
            problems.append(f"{o.text!r}: {o.invented} invented wine(s) shown")
    return problems


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
) -> int:
    for protocol in protocols:
        OutputProtocol(protocol)
    for strategy in strategies:
        AgentStrategy(strategy)
    dialogs = SMOKE if smoke else PROFILE if profile else DIALOGS[:limit]

    def show(outcome: TurnOutcome) -> None:
        mark = "searched" if outcome.searched else "no search"
        console.print(
            f"  [{outcome.seconds:5.1f} s] {outcome.result:<16} {mark:<9} {outcome.text[:60]!r}"
            f" -> {outcome.reply[:90]!r}",
            highlight=False,
            markup=False,
        )

    summaries, everything = [], {}
    for protocol in protocols:
        for strategy in strategies:
            name = f"{protocol} / {strategy}"
            console.print(f"{name}: {len(dialogs)} dialogs", highlight=False)
            outcomes = asyncio.run(run_config(settings, dialogs, protocol, strategy, show))
            summaries.append(summarize(name, outcomes))
            everything[name] = [_row(o) for o in outcomes]
    console.print(_table(summaries))
    if output is not None:
        data = {"summaries": [s.to_json() for s in summaries], "turns": everything}
        output.write_text(json.dumps(data, indent=2, ensure_ascii=False))
    if smoke:
        problems = [p for name in everything for p in smoke_failures(_outcomes(everything[name]))]
        for problem in problems:
            console.print(f"[red]smoke failed:[/red] {problem}", highlight=False)
        return 1 if problems else 0
    return 0


def _row(outcome: TurnOutcome) -> dict[str, object]:
    return {name: getattr(outcome, name) for name in TurnOutcome.__slots__}


def _outcomes(rows: list[dict[str, Any]]) -> list[TurnOutcome]:
    return [TurnOutcome(**row) for row in rows]
