"""The processes of a sharded bot (shards.py): the receiving process starts the other shards'
workers and starts again one that exits; `serve_shard` is such a worker's own main."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import subprocess
import sys

from telegram.ext import Application

from sommelier.app import App
from sommelier.bot.application import build_application, per_chat, sommelier_bot
from sommelier.bot.handlers import SommelierBot
from sommelier.bot.shards import Forwarder, ShardWorker, asyncpg_dsn
from sommelier.config import Settings

log = logging.getLogger("sommelier.bot.workers")

WATCH_EVERY = 2.0  # seconds between checks that every worker still runs
STOP_WAIT = 30.0  # seconds a worker gets to finish its turns before it is killed


class Sharding:
    """The receiving process's part: the forwarder PTB hands every update to and, once the
    database is ready, the first shard's worker and the other shards' processes."""

    def __init__(self, app: App, bot: SommelierBot) -> None:
        settings = app.settings
        self.forwarder = Forwarder(app.engine, settings.telegram_workers)
        self.processor = per_chat(settings, bot)
        self.processes = WorkerProcesses(settings.telegram_workers)
        self.dsn = asyncpg_dsn(settings.database_url)
        self.worker: ShardWorker | None = None

    def start(self, application: Application) -> None:
        self.worker = ShardWorker(application, self.processor, self.dsn, 0)
        self.worker.start()
        self.processes.start()

    async def stop(self) -> None:
        if self.worker is not None:
            await self.worker.stop()
            await self.worker.forget_finished()
        await self.processes.stop()


class WorkerProcesses:
    """Shards 1…N-1, each a `sommelier bot --shard K` process with the same environment."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self._processes: dict[int, subprocess.Popen[bytes]] = {}
        self._watch: asyncio.Task[None] | None = None

    def start(self) -> None:
        for shard in range(1, self.workers):
            self._processes[shard] = self._spawn(shard)
        self._watch = asyncio.create_task(self._keep_running(), name="shard-workers")

    async def stop(self) -> None:
        if self._watch is not None:
            self._watch.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watch
        for process in self._processes.values():
            if process.poll() is None:
                process.terminate()  # a worker stops on SIGTERM after its running turns
        for process in self._processes.values():
            try:
                await asyncio.to_thread(process.wait, STOP_WAIT)
            except subprocess.TimeoutExpired:
                process.kill()
                await asyncio.to_thread(process.wait)

    @staticmethod
    def _spawn(shard: int) -> subprocess.Popen[bytes]:
        command = [sys.executable, "-m", "sommelier.cli", "bot", "--shard", str(shard)]
        return subprocess.Popen(command)

    async def _keep_running(self) -> None:
        while True:
            await asyncio.sleep(WATCH_EVERY)
            for shard, process in self._processes.items():
                if process.poll() is not None:
                    log.error(
                        "the worker of shard %d exited with code %s; starting it again",
                        shard,
                        process.returncode,
                        extra={"event": "shard_worker_exited", "shard": shard},
                    )
                    self._processes[shard] = self._spawn(shard)


async def serve_shard(settings: Settings, shard: int) -> None:
    """Answers one shard's updates until SIGINT or SIGTERM, then finishes its running turns."""
    app = App.build(settings)
    bot = sommelier_bot(app)
    processor = per_chat(settings, bot)
    application = build_application(settings, bot, processor, receives=False)
    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stopping.set)
    try:
        await app.prepare()
        bot.chat = app.chat_service()
        async with application:
            await application.start()
            worker = ShardWorker(application, processor, asyncpg_dsn(settings.database_url), shard)
            worker.start()
            log.info(
                "serving shard %d of %d",
                shard,
                settings.telegram_workers,
                extra={"event": "shard_serving", "shard": shard},
            )
            await stopping.wait()
            await worker.stop()
            await application.stop()
            await worker.forget_finished()
    finally:
        await app.aclose()
