"""Runtime figures for a turn, model time excluded, and throughput against a slow model, in
one process and (PostgreSQL) in several worker processes sharing the conversations.

.venv/bin/python bench/turn_bench.py [--turns 200] [--conversations 200] [--workers 2]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from asyncio.subprocess import PIPE
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "bench"), str(ROOT)]

from common import Timer, bench_settings, fresh_app, percentiles, report, run  # noqa: E402
from sqlalchemy import event  # noqa: E402

from sommelier.agent.messages import wire  # noqa: E402
from sommelier.agent.model import Completion, ModelRequest  # noqa: E402
from sommelier.app import App  # noqa: E402
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


Ready = Callable[[], Awaitable[None]]


async def converse_all(
    app: App, people: list[Person], latency: float, ready: Ready | None = None
) -> dict[str, float]:
    """Each person has one turn to warm up (connections opened, the server's caches filled, as
    in a bot that has been running), then two timed turns; this process's figures, as numbers
    JSON can carry. `ready` waits for the other processes to be warm too."""
    service = app.chat_service(TwoRoundModel(latency))

    async def converse(person: Person, turns: int) -> None:
        for _ in range(turns):
            assert (await service.turn(person, "a red for steak")).ok

    await asyncio.gather(*(converse(p, 1) for p in people))
    if ready is not None:
        await ready()
    started, cpu, busy = time.time(), time.process_time(), machine_busy()
    await asyncio.gather(*(converse(p, 2) for p in people))
    return {
        "started": started,
        "ended": time.time(),
        "busy_start": busy,
        "busy_end": machine_busy(),
        "turns": 2 * len(people),
        "cpu": time.process_time() - cpu,
    }


async def throughput(
    kind: str, conversations: int, latency: float, workers: int = 1
) -> list[tuple[str, str]]:
    """`workers` > 1: that many processes on one database, each with its share of the
    conversations (as several bot workers share the chats)."""
    async with fresh_app(kind, agent_strategy="native") as app:
        await load_starter_catalog_if_empty(app.sessions)
        people = [Person(channel="cli", local_name=f"c{i}") for i in range(conversations)]
        if workers == 1:
            runs = [await converse_all(app, people, latency)]
        else:
            runs = await in_processes(app.settings.database_url, conversations, latency, workers)
    seconds = max(r["ended"] for r in runs) - min(r["started"] for r in runs)
    turns, cpu = sum(r["turns"] for r in runs), sum(r["cpu"] for r in runs)
    busy = max(r["busy_end"] for r in runs) - min(r["busy_start"] for r in runs)
    # Each turn makes 3 model calls in sequence; a model-bound run takes 2 * 3 * latency.
    ideal = 2 * 3 * latency
    return [
        ("turns", str(turns)),
        ("seconds", f"{seconds:.2f}"),
        ("turns/s", f"{turns / seconds:.1f}"),
        # The bot's processes only: the database server's own CPU is not in it.
        ("process CPU ms/turn", f"{cpu / turns * 1000:.2f}"),
        # Every process on the machine, the database server's included (from /proc/stat):
        # how many cores the ideal would need is this times the ideal's turns per second.
        ("machine CPU ms/turn", f"{busy / turns * 1000:.2f}"),
        ("cores the ideal needs", f"{busy / turns * conversations / latency / 3:.1f}"),
        ("model-bound ideal s", f"{ideal:.2f}"),
        ("overhead vs ideal", f"{(seconds / ideal - 1) * 100:.0f}%"),
        ("share of the ideal", f"{ideal / seconds * 100:.0f}%"),
    ]


def machine_busy() -> float:
    """CPU seconds the whole machine has spent busy since boot (Linux's /proc/stat)."""
    fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(f) for f in fields[:8])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


async def in_processes(
    url: str, conversations: int, latency: float, workers: int
) -> list[dict[str, float]]:
    """One process per share of the conversations; the timed turns start together once every
    process is warm."""
    processes = []
    for number in range(workers):
        command = [
            __file__, "--shard-of", f"{number},{workers}", "--url", url,
            "--conversations", str(conversations), "--latency", str(latency),
        ]  # fmt: skip
        processes.append(
            await asyncio.create_subprocess_exec(sys.executable, *command, stdin=PIPE, stdout=PIPE)
        )
    for process in processes:  # each says "warm" once its warm-up turns are done
        assert process.stdout is not None
        await process.stdout.readline()
    for process in processes:
        assert process.stdin is not None
        process.stdin.write(b"go\n")
        await process.stdin.drain()
    outputs = await asyncio.gather(*(p.communicate() for p in processes))
    return [json.loads(out.decode().strip().splitlines()[-1]) for out, _ in outputs]


async def shard(args: argparse.Namespace) -> None:
    number, workers = (int(x) for x in args.shard_of.split(","))
    people = [
        Person(channel="cli", local_name=f"c{i}")
        for i in range(number, args.conversations, workers)
    ]
    loop = asyncio.get_running_loop()

    async def ready() -> None:
        print("warm", flush=True)
        await loop.run_in_executor(None, sys.stdin.readline)

    app = App.build(bench_settings(args.url, agent_strategy="native"))
    try:
        print(json.dumps(await converse_all(app, people, args.latency, ready)))
    finally:
        await app.aclose()


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--conversations", type=int, default=200)
    parser.add_argument("--databases", default="sqlite,postgres")
    parser.add_argument(
        "--workers",
        type=int,
        default=2,
        help="processes for the multi-worker row (PostgreSQL, the largest conversation count)",
    )
    # A shard's process, started by in_processes().
    parser.add_argument("--shard-of", help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--latency", type=float, default=0.2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.shard_of:
        return await shard(args)
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
        if kind == "postgres" and args.workers > 1:
            report(
                f"{args.conversations} concurrent conversations, 200 ms model, "
                f"{args.workers} worker processes ({kind})",
                await throughput(kind, args.conversations, 0.2, args.workers),
            )


if __name__ == "__main__":
    run(main)
