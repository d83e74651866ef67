"""Many people, one model: N chats each send three messages at once to the real model
(SOMMELIER_LLM_BASE_URL), through the same ChatService and queue as the bot, on a temporary
SQLite database with the starter catalog. A chat's messages run in order, as Telegram's
per-chat ordering runs them; chats run side by side and take turns at the endpoint.

Prints: turns interrupted (a stream the server cut) and unanswered (goal 0 each); each turn's
wait in the queue and total time; the longest wait against the fair bound (turns ahead when it
queued × the median turn); how often the first place a waiting person was shown was their real
place, and how far the first estimate was from the real wait.

    .venv/bin/python bench/queue_bench.py --chats 4,8 --turns 3

Nothing else may run beside it (the model server alone): see bench/README.md.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "backend"))

from sommelier.agent.parsers import DisplayEvent, Phase, Waiting
from sommelier.app import App
from sommelier.chat.service import ChatService
from sommelier.config import Settings
from sommelier.db.repositories import Person

REQUESTS = (
    "A red under 20 euros for steak",
    "Einen trockenen Weißwein zu Fisch, bitte",
    "Un rosé pour l'apéro",
    "Algo espumoso para celebrar, no más de 30 €",
    "Un rosso per la pizza",
    "Um tinto português para o jantar",
    "Белое вино к курице",
    "Een zoete wijn bij het dessert",
)


@dataclass
class Watch:
    """A sink that notes when the turn was queued, admitted, and the places it was told."""

    started: float = field(default_factory=time.perf_counter)
    admitted: float | None = None
    places: list[Waiting] = field(default_factory=list)

    def emit(self, event: DisplayEvent) -> None:
        if isinstance(event, Waiting):
            self.places.append(event)
        elif isinstance(event, Phase) and self.admitted is None:
            self.admitted = time.perf_counter()


@dataclass
class Turn:
    chat: int
    status: str
    queued: float  # when the turn asked for the model
    admitted: float
    ended: float
    first_place: Waiting | None

    @property
    def wait(self) -> float:
        return self.admitted - self.queued

    @property
    def total(self) -> float:
        return self.ended - self.queued


def real_ahead(turn: Turn, turns: list[Turn]) -> int:
    """Turns that ran before this one once it queued: running then, or admitted before it."""
    return sum(
        1
        for other in turns
        if other is not turn and other.admitted < turn.admitted and other.ended > turn.queued
    )


async def chat(service: ChatService, index: int, turns: int, out: list[Turn]) -> None:
    person = Person(channel="cli", local_name=f"bench-{index}", display_name=f"bench {index}")
    for n in range(turns):
        text = REQUESTS[(index + n) % len(REQUESTS)]
        watch = Watch()
        reply = await service.turn(person, text, sink=watch)
        ended = time.perf_counter()
        admitted = watch.admitted or watch.started
        first = watch.places[0] if watch.places else None
        out.append(Turn(index, reply.status, watch.started, admitted, ended, first))


async def run(chats: int, turns: int) -> list[Turn]:
    with tempfile.TemporaryDirectory() as folder:
        settings = Settings(  # type: ignore[call-arg]
            database_url=f"sqlite+aiosqlite:///{Path(folder) / 'bench.db'}",
            auto_migrate=True,
            load_starter_catalog=True,
            agent_strategy="planner",
        )
        app = App.build(settings)
        await app.prepare()
        service = app.chat_service()
        out: list[Turn] = []
        try:
            await asyncio.gather(*(chat(service, i, turns, out) for i in range(chats)))
        finally:
            await app.aclose()
        return out


def show(chats: int, turns: list[Turn]) -> None:
    statuses = [t.status for t in turns]
    waits = [t.wait for t in turns]
    totals = sorted(t.total for t in turns)
    median_turn = statistics.median(t.total - t.wait for t in turns)
    told = [t for t in turns if t.first_place is not None]
    right = sum(1 for t in told if t.first_place and t.first_place.ahead == real_ahead(t, turns))
    errors = [abs(t.first_place.seconds - t.wait) for t in told if t.first_place]
    worst = max(turns, key=lambda t: t.wait)
    ahead = worst.first_place.ahead if worst.first_place else 0
    bound = ahead * median_turn
    print(f"\n{chats} chats × {len(turns) // chats} turns, sent at once")
    print(f"  turns: {len(turns)}; statuses: { {s: statuses.count(s) for s in set(statuses)} }")
    print(f"  interrupted: {statuses.count('interrupted')}; unanswered: "
          f"{sum(s != 'ok' for s in statuses)}")  # fmt: skip
    print(f"  queue wait, median / max: {statistics.median(waits):.1f} / {max(waits):.1f} s")
    print(f"  turn total, median / max: {statistics.median(totals):.1f} / {totals[-1]:.1f} s")
    print(f"  model time per turn, median: {median_turn:.1f} s")
    print(f"  longest wait {worst.wait:.1f} s against the fair bound {bound:.1f} s "
          f"({ahead} ahead × {median_turn:.1f} s)")  # fmt: skip
    if told:
        print(f"  first place shown was right: {right}/{len(told)}; first estimate off by "
              f"{statistics.median(errors):.1f} s (median)")  # fmt: skip
    for t in sorted(turns, key=lambda t: (t.chat, t.total)):
        place = (
            f"{t.first_place.ahead} ahead, ~{t.first_place.seconds:.0f} s" if t.first_place else "-"
        )
        print(f"    chat {t.chat}: {t.status:<11} waited {t.wait:5.1f} s, total {t.total:5.1f} s, "
              f"told {place}, real {real_ahead(t, turns)} ahead")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chats", default="4,8")
    parser.add_argument("--turns", type=int, default=3)
    args = parser.parse_args()
    for chats in (int(c) for c in args.chats.split(",")):
        show(chats, asyncio.run(run(chats, args.turns)))


if __name__ == "__main__":
    main()
