"""Several bot processes answering one bot, on PostgreSQL (SOMMELIER_TELEGRAM_WORKERS > 1).

One process receives: PTB's updater (long polling or the webhook) hands each update to the
`Forwarder`, which writes it to `telegram_updates` with its shard, the chat's id modulo the
number of workers. Every process, the receiving one included, is the `ShardWorker` of one shard:
it reads its shard's rows in update order and gives them to its per-chat processor (ordering.py),
which runs a chat's updates one at a time. A chat always lands on the same worker, so its updates
are answered in Telegram's order whichever process received them, while different chats spread
over the processes and their CPUs.

A row is deleted once its update has been handled, so the rows of a worker that died are run
again by the next one; the ledger (update ids in inbound_messages) keeps that from answering an
update twice. One process at a time holds a shard, through a PostgreSQL advisory lock on the
worker's own connection: a second process started for the same shard waits until the first one
is gone. Workers wake on NOTIFY, and look again every second in case a notification was missed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Awaitable
from typing import Any

import asyncpg
from sqlalchemy import bindparam, func, text
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine
from telegram import Update
from telegram.ext import Application, BaseUpdateProcessor

from sommelier.bot.ordering import UNBOUNDED, PerChatUpdateProcessor, chat_key
from sommelier.db.models import QueuedUpdate

log = logging.getLogger("sommelier.bot.shards")

NOTIFY_CHANNEL = "sommelier_telegram_updates"
LOCK_CLASS = 0x50_4D  # advisory locks (class, shard): "SM"
LOOK_AGAIN = 1.0  # seconds between reads when no notification came
RETRY_AFTER = 1.0  # seconds before writing or reading again after a database error
BATCH = 200
STOP_WAIT = 10.0  # seconds the receiving process waits at exit to queue what it received


def shard_of(update: object, workers: int) -> int:
    """The worker that answers an update: its chat's; chat-less updates go to the first."""
    key = chat_key(update)
    return key % workers if key is not None else 0


def asyncpg_dsn(database_url: str) -> str:
    """The SQLAlchemy URL as asyncpg wants it (no "+asyncpg" in the scheme)."""
    return make_url(database_url).set(drivername="postgresql").render_as_string(False)


_ENQUEUE = (
    insert(QueuedUpdate)
    .values(
        update_id=bindparam("update_id"),
        shard=bindparam("shard"),
        payload=bindparam("payload"),
        received_at=func.now(),
    )
    .on_conflict_do_nothing(index_elements=["update_id"])  # Telegram sent it again
)
_NOTIFY = text(f"SELECT pg_notify('{NOTIFY_CHANNEL}', :shard)")


class Forwarder(BaseUpdateProcessor):
    """The receiving process's update processor: instead of answering an update it queues it
    for its shard's worker. One writer keeps the rows' commits in arrival order, so a worker
    never sees an update before an earlier one of the same chat."""

    def __init__(self, engine: AsyncEngine, workers: int) -> None:
        super().__init__(UNBOUNDED)
        self.engine = engine
        self.workers = workers
        self._queue: asyncio.Queue[Update | None] = asyncio.Queue()
        self._writer: asyncio.Task[None] | None = None
        self.unwritten = 0  # received, not in the table yet

    async def do_process_update(self, update: object, coroutine: Awaitable[Any]) -> None:
        if asyncio.iscoroutine(coroutine):
            coroutine.close()  # answered by a worker, not here
        if isinstance(update, Update):
            self.unwritten += 1
            self._queue.put_nowait(update)

    async def initialize(self) -> None:
        self._writer = asyncio.create_task(self._write_all(), name="telegram-update-writer")

    async def shutdown(self) -> None:
        """Writes what was received before stopping, waiting a while for a database that is
        down; what still could not be written is logged."""
        if self._writer is None:
            return
        self._queue.put_nowait(None)
        try:
            await asyncio.wait_for(self._writer, STOP_WAIT)
        except TimeoutError:
            log.error(
                "stopped with Telegram updates not queued (the database is unreachable)",
                extra={"event": "update_queue_lost", "updates": self.unwritten},
            )
        self._writer = None

    async def _write_all(self) -> None:
        while True:
            batch = [await self._queue.get()]
            while len(batch) < BATCH and not self._queue.empty():
                batch.append(self._queue.get_nowait())
            updates = [u for u in batch if u is not None]
            if updates:
                await self._write(updates)
            if len(updates) < len(batch):
                return

    async def _write(self, updates: list[Update]) -> None:
        shards = [shard_of(u, self.workers) for u in updates]
        rows = [
            {"update_id": u.update_id, "shard": shard, "payload": u.to_dict()}
            for u, shard in zip(updates, shards, strict=True)
        ]
        while True:  # a database that is down is waited for: the updates are not lost
            try:
                async with self.engine.begin() as connection:
                    await connection.execute(_ENQUEUE, rows)
                    for shard in sorted(set(shards)):
                        await connection.execute(_NOTIFY, {"shard": str(shard)})
                self.unwritten -= len(rows)
                return
            except Exception as exc:  # any failure: keep the updates and try again
                log.warning(
                    "cannot queue %d Telegram updates (%s); retrying",
                    len(rows),
                    exc,
                    extra={"event": "update_queue_failed"},
                )
                await asyncio.sleep(RETRY_AFTER)


_READ = """
SELECT update_id, payload FROM telegram_updates
WHERE shard = $1 AND NOT (update_id = ANY($2::bigint[]))
ORDER BY update_id LIMIT $3
"""
_DELETE = "DELETE FROM telegram_updates WHERE update_id = ANY($1::bigint[])"


class ShardWorker:
    """Answers one shard's queued updates in update order, through a per-chat processor."""

    def __init__(
        self,
        application: Application,
        processor: PerChatUpdateProcessor,
        dsn: str,
        shard: int,
    ) -> None:
        self.application = application
        self.processor = processor
        self.dsn = dsn
        self.shard = shard
        self._running: set[int] = set()  # update ids handed over, not finished
        self._finished: list[int] = []
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self.ready = asyncio.Event()  # set once the shard's lock is held

    def start(self) -> None:
        self._task = asyncio.create_task(self._serve(), name=f"telegram-shard-{self.shard}")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def forget_finished(self) -> None:
        """Deletes the rows of updates handled since the last read (after stop: the last ones)."""
        if not self._finished:
            return
        with contextlib.suppress(OSError, asyncpg.PostgresError):
            connection = await asyncpg.connect(self.dsn)
            try:
                await self._delete(connection)
            finally:
                await connection.close()

    async def _serve(self) -> None:
        while True:
            try:
                connection = await asyncpg.connect(self.dsn)
            except (OSError, asyncpg.PostgresError) as exc:
                log.warning("shard %d: cannot reach the database (%s)", self.shard, exc)
                await asyncio.sleep(RETRY_AFTER)
                continue
            try:
                await self._hold(connection)
            except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError) as exc:
                log.warning("shard %d: database connection lost (%s)", self.shard, exc)
                await asyncio.sleep(RETRY_AFTER)
            finally:
                with contextlib.suppress(Exception):
                    await asyncio.shield(connection.close(timeout=2))

    async def _hold(self, connection: asyncpg.Connection) -> None:
        await connection.add_listener(NOTIFY_CHANNEL, self._notified)
        # Waits while another process holds this shard; released when the connection closes.
        await connection.execute("SELECT pg_advisory_lock($1, $2)", LOCK_CLASS, self.shard)
        self.ready.set()
        while True:
            self._wake.clear()
            await self._delete(connection)
            # Finished rows not deleted yet are left out too: they ended during the delete.
            taken = [*self._running, *self._finished]
            rows = await connection.fetch(_READ, self.shard, taken, BATCH)
            for row in rows:
                self._hand_over(row["update_id"], json.loads(row["payload"]))
            if len(rows) < BATCH:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), LOOK_AGAIN)

    async def _delete(self, connection: asyncpg.Connection) -> None:
        finished, self._finished = self._finished, []
        try:
            if finished:
                await connection.execute(_DELETE, finished)
        except BaseException:
            self._finished.extend(finished)
            raise

    def _notified(self, _connection: object, _pid: int, _channel: str, payload: str) -> None:
        if payload == str(self.shard):
            self._wake.set()

    def _hand_over(self, update_id: int, payload: dict[str, Any]) -> None:
        if not self.application.running:  # stopping: the row stays for the next worker
            return
        update = Update.de_json(payload, self.application.bot)
        self._running.add(update_id)
        self.application.create_task(self._answer(update_id, update), update=update)

    async def _answer(self, update_id: int, update: Update) -> None:
        try:
            await self.processor.process_update(update, self.application.process_update(update))
        finally:
            self._running.discard(update_id)
            self._finished.append(update_id)
