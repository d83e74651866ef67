"""Several bot workers on one PostgreSQL database (SOMMELIER_TELEGRAM_WORKERS): every chat is
answered by one worker, in the order its messages were sent, and nothing is lost or doubled."""

import asyncio
import os
import signal
import socket
import sys
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
import pytest_asyncio
from sqlalchemy import func, select, text
from telegram import Chat, Message, Update

from sommelier.app import App
from sommelier.bot import shards
from sommelier.bot.shards import Forwarder, ShardWorker, asyncpg_dsn, shard_of
from sommelier.catalog.starter import load_starter_catalog_if_empty
from sommelier.config import ConfigError, load_settings
from sommelier.db.models import InboundMessage, QueuedUpdate
from sommelier.db.session import create_engine
from tests.conftest import make_settings
from tests.support.databases import DatabaseFactory
from tests.support.scripted import ScriptedModel, answer, reply
from tests.support.telegram import TelegramUser, new_token, running_sharded_bot

pytestmark = pytest.mark.postgres


@pytest_asyncio.fixture
async def pg_app(db_factory: DatabaseFactory) -> AsyncIterator[App]:
    url = await db_factory.postgres()
    app = App.build(make_settings(url))
    await load_starter_catalog_if_empty(app.sessions)
    yield app
    await app.aclose()
    await db_factory.release(url)


class Recording(ScriptedModel):
    """Answers "re: <text>" after a pause for "first", and notes which worker ran each call."""

    def __init__(self, name: str, seen: list[tuple[str, str]]) -> None:
        super().__init__([])
        self.name, self.seen = name, seen

    async def complete(self, request, on_delta=None):  # type: ignore[no-untyped-def]
        text = request.messages[-1]["content"]
        self.seen.append((self.name, f"start {text}"))
        await asyncio.sleep(0.4 if text.startswith("first") else 0)
        self.seen.append((self.name, f"end {text}"))
        return answer(reply([], "informational", intro=f"re: {text}", closing=""))


async def test_each_chat_is_answered_in_order_by_its_shard_worker(
    pg_app, telegram_emulator
) -> None:  # type: ignore[no-untyped-def]
    token = new_token()
    even, odd = (TelegramUser(telegram_emulator, token, uid) for uid in (5002, 5003))
    seen: list[tuple[str, str]] = []
    models = [Recording("worker 0", seen), Recording("worker 1", seen)]
    async with running_sharded_bot(pg_app, models, telegram_emulator, token):
        for text in ("first", "second", "third"):
            await even.say(f"{text} (even)")
            await odd.say(f"{text} (odd)")
        replies = {user.chat_id: await user.wait_for(3) for user in (even, odd)}
    for user, parity in ((even, "even"), (odd, "odd")):
        texts = [f"{t} ({parity})" for t in ("first", "second", "third")]
        # The slow first answer does not let the quicker second one overtake it.
        assert [m["text"] for m in replies[user.chat_id]] == [f"re: {t}" for t in texts]
        worker = f"worker {user.chat_id % 2}"
        steps = [step for name, step in seen if step.endswith(f"({parity})")]
        assert steps == [f"{edge} {t}" for t in texts for edge in ("start", "end")]
        assert {name for name, step in seen if step.endswith(f"({parity})")} == {worker}
    # The two chats ran side by side: the odd chat's first turn did not wait for the even's.
    assert seen.index(("worker 1", "start first (odd)")) < seen.index(
        ("worker 0", "end first (even)")
    )
    async with pg_app.sessions() as session:
        assert await session.scalar(select(func.count()).select_from(QueuedUpdate)) == 0
        statuses = (await session.scalars(select(InboundMessage.status))).all()
    assert statuses == ["ok"] * 6  # each update answered once


async def test_a_second_worker_for_a_shard_waits_for_the_first(pg_app) -> None:  # type: ignore[no-untyped-def]
    from telegram.ext import Application

    from sommelier.bot.ordering import PerChatUpdateProcessor

    dsn = asyncpg_dsn(pg_app.settings.database_url)
    application = Application.builder().token("1:x").updater(None).build()
    first, second = (ShardWorker(application, PerChatUpdateProcessor(4), dsn, 1) for _ in "12")
    first.start()
    await asyncio.wait_for(first.ready.wait(), 10)
    second.start()
    try:
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(asyncio.shield(second.ready.wait()), 0.5)
        await first.stop()  # its connection, and with it the shard's lock, goes
        await asyncio.wait_for(second.ready.wait(), 10)
    finally:
        await first.stop()
        await second.stop()


def test_workers_above_one_need_postgresql(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOMMELIER_DATABASE_URL", "sqlite:///x.db")
    monkeypatch.setenv("SOMMELIER_TELEGRAM_WORKERS", "2")
    with pytest.raises(ConfigError, match=r"SOMMELIER_TELEGRAM_WORKERS.*PostgreSQL"):
        load_settings()


async def test_bot_command_runs_restarts_and_stops_its_worker_processes(  # type: ignore[no-untyped-def]
    pg_app, telegram_emulator, tmp_path: Path
) -> None:
    token = new_token()
    env = {k: v for k, v in os.environ.items() if not k.startswith("SOMMELIER_")}
    env.update(
        {
            "SOMMELIER_TELEGRAM_BOT_TOKEN": token,
            "SOMMELIER_TELEGRAM_BASE_URL": telegram_emulator.url,
            "SOMMELIER_DATABASE_URL": pg_app.settings.database_url,
            "SOMMELIER_TELEGRAM_WORKERS": "2",
        }
    )
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "sommelier.cli", "bot", cwd=tmp_path, env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    try:
        users = [TelegramUser(telegram_emulator, token, uid) for uid in (5004, 5005)]
        for user in users:
            await user.command("/start")
        answered = [await user.wait_for(1, timeout=60) for user in users]
        children = _children(process.pid)
        # A worker that dies is started again, and its shard's chats are answered.
        os.kill(children[0], signal.SIGKILL)
        replaced = await _replaced(process.pid, children[0])
        await users[1].command("/help")
        after_restart = await users[1].wait_for(2, timeout=60)
    finally:
        process.send_signal(signal.SIGINT)
        _, err = await asyncio.wait_for(process.communicate(), 60)
    stderr = err.decode()
    assert all(m and "I'm Sommelier" in m[0]["text"] for m in answered), stderr[-3000:]
    assert "serving shard 1 of 2" in stderr  # the odd chat's worker is a process of its own
    assert process.returncode == 0, stderr[-3000:]
    assert len(children) == 1
    assert replaced and replaced != children
    assert len(after_restart) == 2 and "/new" in after_restart[1]["text"], stderr[-3000:]
    assert "shard_worker_exited" in stderr
    assert _children(process.pid) == []  # stopped with the bot, not left behind


async def _replaced(pid: int, dead: int) -> list[int]:
    for _ in range(100):
        await asyncio.sleep(0.1)
        now = [c for c in _children(pid) if c != dead]
        if now:
            return now
    return []


def _children(pid: int) -> list[int]:
    found = []
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            fields = dict(
                line.split(":\t", 1) for line in status.read_text().splitlines() if ":\t" in line
            )
        except OSError:
            continue
        if fields.get("PPid", "").strip() == str(pid):
            found.append(int(status.parent.name))
    return found


def test_a_chat_always_has_the_same_shard_and_group_ids_fit_too() -> None:
    private, group = _update(1, 5003), _update(2, -1001234567891)
    # Python's modulo of a negative group id is still one of the shards.
    assert [shard_of(u, 3) for u in (private, group, _update(3, 5003))] == [2, 1, 2]
    assert shard_of(Update(update_id=4), 3) == 0  # no chat: the first shard


async def test_updates_that_cannot_be_queued_are_retried_and_reported(  # type: ignore[no-untyped-def]
    monkeypatch: pytest.MonkeyPatch, caplog
) -> None:
    monkeypatch.setattr(shards, "STOP_WAIT", 1.0)
    monkeypatch.setattr(shards, "RETRY_AFTER", 0.2)
    engine = create_engine(f"postgresql+asyncpg://nobody@127.0.0.1:{_closed_port()}/none")
    forwarder = Forwarder(engine, 2)
    await forwarder.initialize()
    await forwarder.do_process_update(_update(7, 5003), asyncio.sleep(0))
    await forwarder.shutdown()
    await engine.dispose()
    assert "cannot queue 1 Telegram updates" in caplog.text  # retried, not dropped
    lost = [r for r in caplog.records if getattr(r, "event", "") == "update_queue_lost"]
    assert [r.updates for r in lost] == [1]  # type: ignore[attr-defined]


def _update(update_id: int, chat_id: int) -> Update:
    chat = Chat(id=chat_id, type="private" if chat_id > 0 else "supergroup")
    message = Message(message_id=1, date=datetime.now(UTC), chat=chat, text="hi")
    return Update(update_id=update_id, message=message)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_a_worker_whose_connection_drops_reconnects_and_answers(
    pg_app, telegram_emulator
) -> None:  # type: ignore[no-untyped-def]
    token = new_token()
    user = TelegramUser(telegram_emulator, token, 5007)
    seen: list[tuple[str, str]] = []
    models = [Recording("worker 0", seen), Recording("worker 1", seen)]
    async with running_sharded_bot(pg_app, models, telegram_emulator, token):
        await user.say("before")
        await user.wait_for(1)
        async with pg_app.sessions() as session:  # the server ends the shards' connections
            ended = await session.scalar(
                text(
                    "SELECT count(pg_terminate_backend(pid)) FROM pg_locks "
                    "WHERE locktype = 'advisory' AND pid <> pg_backend_pid()"
                )
            )
        await user.say("after")
        messages = await user.wait_for(2, timeout=20)
    assert ended == 2
    assert [m["text"] for m in messages] == ["re: before", "re: after"]
