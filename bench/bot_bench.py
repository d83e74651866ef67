"""Telegram bot figures: updates per second across 100 chats with a 200 ms model, with and
without one chat sending a burst, and the latency the bot adds per update (median, p95).

The real PTB Application polls the Bot API emulator (tests/telegram_emulator; run
`npm ci --prefix tests/telegram_emulator` first).

    .venv/bin/python bench/bot_bench.py [--chats 100] [--messages 3] [--burst 50]
        [--database postgres [--workers 2]]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "bench"), str(ROOT)]

from common import fresh_app, percentiles, report, run  # noqa: E402

from sommelier.catalog.starter import load_starter_catalog_if_empty  # noqa: E402
from tests.support.scripted import ScriptedModel, answer, reply  # noqa: E402
from tests.support.telegram import (  # noqa: E402
    Emulator,
    TelegramUser,
    new_token,
    running_bot,
    running_queued_bot,
)

MODEL_LATENCY = 0.2


class SlowModel(ScriptedModel):
    async def complete(self, request, on_delta=None):  # type: ignore[no-untyped-def]
        await asyncio.sleep(MODEL_LATENCY)
        # Answers the message it got: a reply repeated word for word would be sent back.
        said = next(m["content"] for m in reversed(request.messages) if m["role"] == "user")
        return answer(reply([], "informational", intro=f"Noted: {said}.", closing=""))


async def scenario(
    emulator: Emulator,
    chats: int,
    messages: int,
    burst: int,
    rate: float,
    kind: str = "sqlite",
    workers: int = 1,
) -> list:
    async with fresh_app(kind) as app:
        await load_starter_catalog_if_empty(app.sessions)
        token = new_token()
        users = [TelegramUser(emulator, token, 10_000 + i) for i in range(chats)]
        burster = TelegramUser(emulator, token, 99_999) if burst else None
        settings = {"telegram_max_messages_per_second": rate}
        if workers > 1:  # the queue's workers in this process: the queue's hop is measured
            models = [SlowModel([]) for _ in range(workers)]
            bot = running_queued_bot(app, models, emulator, token, settings)
        else:
            bot = running_bot(app, SlowModel([]), emulator, token, settings)
        async with bot:
            started = time.perf_counter()
            sends = [u.say(f"message {m}") for m in range(messages) for u in users]
            if burster:
                sends += [burster.say(f"burst {i}") for i in range(burst)]
            await asyncio.gather(*sends)
            expected = chats * messages + burst
            history: list = []
            while time.perf_counter() - started < 300:
                history = (await emulator.post("/getUpdatesHistory", {"token": token}))["result"]
                answered = sum(1 for h in history if "chat_id" in h.get("message", {}))
                if answered >= expected:
                    break
                await asyncio.sleep(0.1)
            seconds = time.perf_counter() - started
    # Added latency per update: reply time minus arrival time minus the model's own time,
    # for the normal chats, pairing each chat's n-th message with its n-th reply.
    arrivals: dict[int, list[int]] = {}
    replies: dict[int, list[int]] = {}
    for item in history:
        message = item.get("message", {})
        if "chat_id" in message:
            replies.setdefault(int(message["chat_id"]), []).append(item["time"])
        elif "chat" in message:
            arrivals.setdefault(int(message["chat"]["id"]), []).append(item["time"])
    added = []
    for chat_id, times in arrivals.items():
        if chat_id == 99_999:
            continue
        for n, (arrived, answered) in enumerate(zip(times, replies.get(chat_id, []), strict=False)):
            # Within a chat turns run one at a time: the n-th waits for the earlier ones.
            waited = n * MODEL_LATENCY * 1000
            added.append(answered - arrived - MODEL_LATENCY * 1000 - waited)
    median, p95 = percentiles(added) if added else (float("nan"), float("nan"))
    updates = chats * messages + burst
    return [
        ("updates", str(updates)),
        ("seconds", f"{seconds:.2f}"),
        ("updates/s", f"{updates / seconds:.1f}"),
        ("added latency median ms", f"{median:.0f}"),
        ("added latency p95 ms", f"{p95:.0f}"),
    ]


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--chats", type=int, default=100)
    parser.add_argument("--messages", type=int, default=3)
    parser.add_argument("--burst", type=int, default=50)
    parser.add_argument("--database", default="sqlite", choices=["sqlite", "postgres"])
    parser.add_argument(
        "--workers",
        type=int,
        default=1,
        help="the queue (PostgreSQL): updates go through procrastinate to this many workers",
    )
    args = parser.parse_args()
    if args.workers > 1 and args.database != "postgres":
        parser.error("--workers above 1 needs --database postgres")
    emulator = Emulator()
    try:
        for rate, label in ((30.0, "Telegram's 30 msg/s limit"), (10_000.0, "no send limit")):
            title = f"{args.chats} chats x {args.messages} messages, 200 ms model, {label}"
            where = f"{args.database}, {args.workers} worker(s)"
            common = (args.chats, args.messages)
            report(
                f"{title} ({where})",
                await scenario(emulator, *common, 0, rate, args.database, args.workers),
            )
            report(
                f"same, plus one chat bursting {args.burst} messages",
                await scenario(emulator, *common, args.burst, rate, args.database, args.workers),
            )
    finally:
        emulator.stop()


if __name__ == "__main__":
    run(main)
