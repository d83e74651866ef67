"""Per-turn overhead of Langfuse tracing: the same turns with tracing off and on (the real SDK
exporting to an in-memory OpenTelemetry exporter), scripted zero-latency model, as a ratio.

    .venv/bin/python bench/tracing_bench.py [--turns 300]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "bench"), str(ROOT)]

from common import Timer, fresh_app, percentiles, report, run  # noqa: E402
from turn_bench import TwoRoundModel  # noqa: E402

from sommelier.catalog.starter import load_starter_catalog_if_empty  # noqa: E402
from sommelier.db.repositories import Person  # noqa: E402
from sommelier.observability.tracing import NoTracer  # noqa: E402
from tests.support.tracing import capture  # noqa: E402


async def timed_turns(app, tracer, turns: int) -> list[float]:  # type: ignore[no-untyped-def]
    service = app.chat_service(TwoRoundModel(0.0), tracer)
    samples = []
    for i in range(turns):
        person = Person(channel="cli", local_name=f"user{i % 20}")
        with Timer() as timer:
            assert (await service.turn(person, "a red for steak")).ok
        samples.append(timer.seconds * 1000)
    return samples[10:]


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=300)
    args = parser.parse_args()
    async with fresh_app("sqlite", agent_strategy="native") as app:
        await load_starter_catalog_if_empty(app.sessions)
        captured = capture()
        # Interleave the two, so that database growth and warm-up affect both alike.
        off, on = [], []
        for _ in range(3):
            off += await timed_turns(app, NoTracer(), args.turns // 3)
            on += await timed_turns(app, captured.tracer, args.turns // 3)
        spans = len(captured.spans())
    off_median, off_p95 = percentiles(off)
    on_median, on_p95 = percentiles(on)
    report(
        "per-turn time, 2 tool rounds, zero-latency model (SQLite)",
        [
            ("tracing off, median ms", f"{off_median:.2f}"),
            ("tracing on, median ms", f"{on_median:.2f}"),
            ("ratio on/off (median)", f"{on_median / off_median:.2f}"),
            ("tracing off, p95 ms", f"{off_p95:.2f}"),
            ("tracing on, p95 ms", f"{on_p95:.2f}"),
            ("spans exported", str(spans)),
        ],
    )


if __name__ == "__main__":
    run(main)
