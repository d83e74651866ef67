"""SQLite runs on the event loop's thread (db/inline_sqlite.py). What a person would notice if
that went wrong: the bot freezing for everyone while another process writes (a catalog import
next to the bot), or a turn that hangs because it read the catalog inside its own transaction."""

from __future__ import annotations

import asyncio
import sys
import time

from sqlalchemy import func, select
from sqlalchemy.engine import make_url

from sommelier.db.models import Message, Wine
from tests.support.chat import ANA, native, stored_messages
from tests.support.scripted import ScriptedModel, from_results, tools

HOLD_SECONDS = 1.0

# Another process takes SQLite's write lock, says so, and keeps it for a while.
LOCK_HOLDER = """
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("BEGIN IMMEDIATE")
print("locked", flush=True)
time.sleep(float(sys.argv[2]))
db.execute("COMMIT")
"""


async def test_a_turn_waits_out_another_process_s_write_lock_without_freezing_the_bot(
    sqlite_app, sqlite_url
) -> None:  # type: ignore[no-untyped-def]
    path = make_url(sqlite_url).database
    holder = await asyncio.create_subprocess_exec(
        sys.executable, "-c", LOCK_HOLDER, str(path), str(HOLD_SECONDS),
        stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert holder.stdout is not None
    assert (await holder.stdout.readline()).strip() == b"locked"

    ticks = 0

    async def other_work() -> None:  # what the rest of the bot does meanwhile
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    ticker = asyncio.create_task(other_work())
    model = ScriptedModel([tools(("search_wines", {"query": "red for steak"})), from_results(1)])
    started = time.perf_counter()
    reply = await native(sqlite_app, model).turn(ANA, "a red for steak")
    waited = time.perf_counter() - started
    ticks_during_turn = ticks
    ticker.cancel()
    assert await holder.wait() == 0

    assert reply.ok and reply.cards, reply
    # The turn's writes waited for the lock (the other process held it for HOLD_SECONDS) ...
    assert waited >= HOLD_SECONDS * 0.5
    # ... while the loop kept serving everything else (a blocked loop would not tick at all).
    assert ticks_during_turn >= 10
    assert [m.role for m in await stored_messages(sqlite_app)] == ["user", "assistant"]


async def test_a_session_opened_inside_a_transaction_is_served(sqlite_app) -> None:  # type: ignore[no-untyped-def]
    """The engine keeps one connection; a read opened while a write transaction is open gets
    another one instead of waiting for a connection that is never given back."""

    async with sqlite_app.sessions() as session:
        wines = await session.scalar(select(func.count()).select_from(Wine))

    async def nested() -> int:
        async with sqlite_app.sessions() as outer, outer.begin():
            await outer.execute(select(func.count()).select_from(Message))
            async with sqlite_app.sessions() as inner:
                return (await inner.scalar(select(func.count()).select_from(Wine))) or 0

    assert wines and await asyncio.wait_for(nested(), timeout=10) == wines
