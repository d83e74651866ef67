"""Runtime figures for a turn, model time excluded, and throughput against a slow model.

.venv/bin/python bench/turn_bench.py [--turns 200] [--conversations 200]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "bench"), str(ROOT)]

from common import Timer, fresh_app, percentiles, report, run  # noqa: E402
from sqlalchemy import event  # noqa: E402

from sommelier.agent.messages import wire  # noqa: E402
from sommelier.agent.model import Completion, ModelRequest  # noqa: E402
from sommelier.catalog.starter import load_starter_catalog_if_empty  # noqa: E402
from sommelier.db.repositories import Person  # noqa: E402
from tests.support.scripted import ScriptedModel, answer, reply, tools  # noqa: E402


class TwoRoundModel(ScriptedModel):
    """Stateless, so concurrent conversations can share it: the step follows from the messages
    of this turn (search, then details, then the answer)."""

    def __init__(self, delay: float) -> None:
        super().__init__([], delay=delay)

    async def complete(self, request: ModelRequest, on_delta: Any = None) -> Completion:
        messages = [wire(m) for m in request.messages]
        last_user = max(i for i, m in enumerate(messages) if m["role"] == "user")
        rounds = sum(1 for m in messages[last_user:] if m.get("tool_calls"))
        step = [
            tools(("search_wines", {"type": "red", "max_price": 20, "food": "steak"})),
            tools(("get_wine", {"ids": ["sm-059"]})),
            # A fresh intro each turn: a reply repeated word for word is sent back.
            answer(reply(["sm-059"], intro=f"Turn {last_user}: the Catena.")),
        ][2 if not request.tools else min(rounds, 2)]
        if self.delay:
            await asyncio.sleep(self.delay)
        return step


async def overhead(kind: str, turns: int) -> list[tuple[str, str]]:
    async with fresh_app(kind, agent_strategy="native") as app:
        await load_starter_catalog_if_empty(app.sessions)
        service = app.chat_service(TwoRoundModel(0.0))
        statements = Counter()
        event.listen(app.engine.sync_engine, "before_cursor_execute", statements.count)
        samples, per_turn = [], []
        for i in range(turns):
            person = Person(channel="cli", local_name=f"user{i % 20}")
            before = statements.n
            with Timer() as timer:
                result = await service.turn(person, "a red under 20 euros for steak")
            assert result.ok
            samples.append(timer.seconds * 1000)
            per_turn.append(statements.n - before)
        median, p95 = percentiles(samples[20:])  # skip warm-up (each person's first turn)
        return [
            ("median ms/turn", f"{median:.2f}"),
            ("p95 ms/turn", f"{p95:.2f}"),
            ("SQL statements/turn (median)", f"{statistics.median(per_turn[20:]):.0f}"),
        ]


class Counter:
    """SQL statements sent to the database (SQLAlchemy's before_cursor_execute)."""

    def __init__(self) -> None:
        self.n = 0

    def count(self, *_: Any) -> None:
        self.n += 1


async def throughput(kind: str, conversations: int, latency: float) -> list[tuple[str, str]]:
    async with fresh_app(kind, agent_strategy="native") as app:
        await load_starter_catalog_if_empty(app.sessions)
        service = app.chat_service(TwoRoundModel(latency))
        people = [Person(channel="cli", local_name=f"c{i}") for i in range(conversations)]

        async def converse(person: Person) -> None:
            for _ in range(2):
                assert (await service.turn(person, "a red for steak")).ok

        started, cpu = time.perf_counter(), time.process_time()
        await asyncio.gather(*(converse(p) for p in people))
        seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
        turns = conversations * 2
        # Each turn makes 3 model calls in sequence; a model-bound run takes 2 * 3 * latency.
        ideal = 2 * 3 * latency
        return [
            ("turns", str(turns)),
            ("seconds", f"{seconds:.2f}"),
            ("turns/s", f"{turns / seconds:.1f}"),
            # This process only: the database server's own CPU is not in it.
            ("process CPU ms/turn", f"{cpu / turns * 1000:.2f}"),
            ("model-bound ideal s", f"{ideal:.2f}"),
            ("overhead vs ideal", f"{(seconds / ideal - 1) * 100:.0f}%"),
            ("share of the ideal", f"{ideal / seconds * 100:.0f}%"),
        ]


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--conversations", type=int, default=200)
    parser.add_argument("--databases", default="sqlite,postgres")
    args = parser.parse_args()
    for kind in args.databases.split(","):
        report(
            f"turn overhead, 2 tool rounds, zero-latency model ({kind})",
            await overhead(kind, args.turns),
        )
        for conversations in sorted({20, 50, args.conversations}):
            report(
                f"{conversations} concurrent conversations, 200 ms model ({kind})",
                await throughput(kind, conversations, 0.2),
            )


if __name__ == "__main__":
    run(main)
