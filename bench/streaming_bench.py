"""Time to first visible text and to first card, per output protocol, against a scripted stream
paced like a real model (20 tokens/s, ~4 characters a token), compared with not streaming.

    .venv/bin/python bench/streaming_bench.py [--tokens-per-second 20]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "bench"), str(ROOT)]

from common import fresh_app, report, run  # noqa: E402

from sommelier.agent.parsers import ItemReady, TextDelta  # noqa: E402
from sommelier.catalog.starter import load_starter_catalog_if_empty  # noqa: E402
from sommelier.db.repositories import Person  # noqa: E402
from tests.support.fake_openai import FakeOpenAI, completion, streamed  # noqa: E402

INTRO = "Two Argentinian reds that love a grilled steak, both comfortably under twenty euros."
WINES = [
    {"wine_id": "sm-059", "why": "Plush dark fruit and violet; made for beef."},
    {"wine_id": "sm-060", "why": "Peppery Carmenère with soft spice, a great value."},
]
CLOSING = "Would you like something even cheaper, or a bottle to age?"
SEARCH = ("get_wine", {"ids": ["sm-059", "sm-060"]})


def answer_for(protocol: str) -> str:
    if protocol == "json":
        return json.dumps(
            {
                "response_type": "recommendation",
                "intro": INTRO,
                "wines": WINES,
                "closing": CLOSING,
                "guard": None,
            }
        )
    if protocol == "delimited":
        return (
            INTRO
            + "\n---\n"
            + json.dumps(
                {
                    "response_type": "recommendation",
                    "wines": WINES,
                    "closing": CLOSING,
                    "guard": None,
                }
            )
        )
    lines = [
        {"type": "intro", "text": INTRO},
        *({"type": "wine", **w} for w in WINES),
        {"type": "closing", "text": CLOSING},
        {"type": "meta", "response_type": "recommendation", "guard": None},
    ]
    return "".join(json.dumps(line) + "\n" for line in lines)


class FirstSeen:
    def __init__(self, started: float) -> None:
        self.started = started
        self.text: float | None = None
        self.card: float | None = None

    def emit(self, event: object) -> None:
        now = time.perf_counter() - self.started
        if isinstance(event, TextDelta) and event.text.strip() and self.text is None:
            self.text = now
        if isinstance(event, ItemReady) and event.kind == "wine" and self.card is None:
            self.card = now


async def measure(protocol: str, stream: bool, chunk_delay: float) -> tuple[float, float, float]:
    fake = FakeOpenAI().start()
    try:
        settings = {"llm_base_url": fake.base_url, "output_protocol": protocol}
        async with fresh_app("sqlite", agent_strategy="native", **settings) as app:
            await load_starter_catalog_if_empty(app.sessions)
            content = answer_for(protocol)
            if stream:
                fake.add(
                    streamed(tool_calls=[SEARCH]),
                    streamed(content, chunk=4, chunk_delay=chunk_delay),
                )
            else:
                # The same generation time, delivered at once at the end.
                tokens = len(content) / 4
                fake.add(completion(tool_calls=[SEARCH]), completion(content))
                fake.steps[-1].delay = tokens * chunk_delay
            service = app.chat_service()
            started = time.perf_counter()
            seen = FirstSeen(started)
            reply = await service.turn(
                Person(channel="cli", local_name="bench"),
                "Tell me more about sm-059 and sm-060",  # a get_wine turn
                sink=seen if stream else None,
            )
            done = time.perf_counter() - started
            assert reply.ok, reply.text
    finally:
        fake.stop()
    first_text = seen.text if stream and seen.text is not None else done
    first_card = seen.card if stream and seen.card is not None else done
    return first_text, first_card, done


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tokens-per-second", type=float, default=20)
    args = parser.parse_args()
    delay = 1 / args.tokens_per_second
    rows = []
    for protocol in ("json", "delimited", "ndjson"):
        for stream in (False, True):
            text, card, done = await measure(protocol, stream, delay)
            label = f"{protocol}, {'streaming' if stream else 'not streaming'}"
            rows.append(
                (
                    label,
                    f"first text {text:5.2f} s   first card {card:5.2f} s   "
                    f"validated reply {done:5.2f} s",
                )
            )
    report(f"time to first visible text and first card, {args.tokens_per_second:g} tokens/s", rows)


if __name__ == "__main__":
    run(main)
