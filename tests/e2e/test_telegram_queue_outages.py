"""The queue's processes when their database goes away or a worker freezes (issue 46): real
`sommelier bot` and `sommelier worker` processes, reaching PostgreSQL through a proxy that the
test cuts as a restart or an outage would, the Telegram emulator and a scripted model."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from sqlalchemy import select, text

from sommelier.db.models import InboundMessage
from tests.support.pg_proxy import Proxy
from tests.support.processes import unanswered, workers_ready
from tests.support.telegram import TelegramUser
from tests.support.waiting import until

pytestmark = pytest.mark.postgres

KEPT = "Your message is kept"
SUPERSEDED = "was run again elsewhere while this run stalled"
RESTART_SECONDS = 4


@pytest_asyncio.fixture
async def proxy(pg_app, processes) -> AsyncIterator[Proxy]:  # type: ignore[no-untyped-def]
    """The processes' way to the database, which the test cuts; closed after they stop."""
    proxy = await Proxy(pg_app.settings.database_url).start()
    processes.env["SOMMELIER_DATABASE_URL"] = proxy.proxied_url
    yield proxy
    await processes.stop_all()
    await proxy.cut()


async def _settled(app) -> bool:  # type: ignore[no-untyped-def]
    async with app.sessions() as session:
        rows = (await session.scalars(select(InboundMessage))).all()
    return all(row.status == "ok" and row.parts_sent == len(row.reply_parts or []) for row in rows)


async def _queue_empty(app) -> bool:  # type: ignore[no-untyped-def]
    async with app.sessions() as session:
        waiting = await session.scalar(
            text("SELECT count(*) FROM procrastinate_jobs WHERE status IN ('todo', 'doing')")
        )
    return waiting == 0


def _texts(messages: list[dict]) -> list[str]:  # type: ignore[type-arg]
    return [m["text"] for m in messages]


async def test_workers_outlive_a_database_restart(
    pg_app, telegram_emulator, processes, proxy
) -> None:  # type: ignore[no-untyped-def]
    token = processes.env["SOMMELIER_TELEGRAM_BOT_TOKEN"]
    workers = [await processes.start("worker") for _ in range(2)]
    await workers_ready(pg_app, 2)
    await processes.start("bot")
    users = [TelegramUser(telegram_emulator, token, 5400 + n) for n in range(3)]
    for user in users:
        await user.say(f"msg-{user.user_id}a")
    for user in users:
        assert _texts(await user.wait_for(1, timeout=60)) == [f"re: msg-{user.user_id}a"]

    await proxy.cut()  # the database restarts: every connection breaks, none is accepted
    for user in users:
        await user.say(f"msg-{user.user_id}b")
    await asyncio.sleep(RESTART_SECONDS)  # how long the database is away: the scenario itself
    await proxy.restore()

    for user in users:
        await user.say(f"msg-{user.user_id}c")
    for user in users:
        answered = _texts(await user.wait_for(3, timeout=120))
        assert answered == [f"re: msg-{user.user_id}{x}" for x in "abc"], processes.output()
    assert all(worker.returncode is None for worker in workers), processes.output()
    await workers_ready(pg_app, 2)  # both took their place in the queue again
    assert await unanswered(pg_app) == 0


async def test_a_message_waiting_for_the_database_is_kept_and_its_sender_told(
    pg_app, telegram_emulator, processes, proxy
) -> None:  # type: ignore[no-untyped-def]
    processes.env["SOMMELIER_TELEGRAM_WAIT_NOTICE_AFTER"] = "2"
    token = processes.env["SOMMELIER_TELEGRAM_BOT_TOKEN"]
    await processes.start("worker")
    await workers_ready(pg_app, 1)
    receiver = await processes.start("bot")
    ana = TelegramUser(telegram_emulator, token, 5500)
    await ana.say("msg-first")
    await ana.wait_for(1, timeout=60)
    await until(lambda: _settled(pg_app), timeout=30)  # its turn is stored to the end

    await proxy.cut()
    await ana.say("msg-second")
    told = await ana.wait_for(2, timeout=30)
    assert KEPT in told[-1]["text"], processes.output()
    # The receiver dies while it waits: the update was never confirmed to Telegram, so the
    # next receiver gets it again.
    receiver.send_signal(signal.SIGKILL)
    await receiver.wait()
    await proxy.restore()
    await processes.start("bot")

    answered = _texts(await ana.wait_for(3, timeout=120))
    assert answered[0] == "re: msg-first" and KEPT in answered[1], processes.output()
    assert answered[2:] == ["re: msg-second"], processes.output()
    # Nothing more can come once no job is left and every turn is stored to its end: the
    # second message was queued once.
    await until(lambda: _queue_empty(pg_app), timeout=30)
    await until(lambda: _settled(pg_app), timeout=30)
    assert len(await ana.bot_messages()) == 3
    assert await unanswered(pg_app) == 0


async def test_a_worker_that_froze_mid_turn_sends_no_second_reply(
    pg_app, telegram_emulator, slow_model, processes
) -> None:  # type: ignore[no-untyped-def]
    token = processes.env["SOMMELIER_TELEGRAM_BOT_TOKEN"]
    frozen = await processes.start("worker")
    await workers_ready(pg_app, 1)
    await processes.start("bot")
    ana = TelegramUser(telegram_emulator, token, 5600)
    await ana.say("msg-only")
    await until(lambda: len(slow_model.requests) >= 1, timeout=60)
    os.kill(frozen.pid, signal.SIGSTOP)  # a long GC pause, a frozen VM: mid-turn
    try:
        await processes.start("worker")
        # The frozen worker's heartbeat stops: its job runs again on the other worker.
        assert _texts(await ana.wait_for(1, timeout=90)) == ["re: msg-only"], processes.output()
    finally:
        os.kill(frozen.pid, signal.SIGCONT)
    # The frozen worker wakes, gets its model answer, and finds its run taken over.
    await until(lambda: processes.logged(SUPERSEDED), timeout=60)
    assert _texts(await ana.bot_messages()) == ["re: msg-only"], processes.output()
    async with pg_app.sessions() as session:
        row = (await session.scalars(select(InboundMessage))).one()
    assert (row.status, row.run) == ("ok", 2)
