"""Several bot processes on PostgreSQL, through procrastinate (SOMMELIER_TELEGRAM_QUEUE=true).

`sommelier bot` receives (long polling or the webhook) and defers each update as a job locked
to its chat: procrastinate runs the jobs of one lock one at a time, oldest first, while any
worker takes any chat. `sommelier worker` processes, as many as compose (`deploy.replicas`) or
systemd run, take the jobs and hand each update to their own PTB application, as if Telegram
had sent it there.

Two things stay with the receiver: Stop and /stop (it asks the worker running the chat's job to
abort it, and that worker stops the turn as its own Stop would), and a person over the rate
limit (answered at once, not queued).

A worker that dies mid-turn stops its heartbeat; a periodic job puts its jobs back after
STALLED seconds, and another worker runs them: the turn runs again (db/turns.py takes a
`received` row met again for a run that died). Workers can come and go at any time: no job
belongs to a worker until it takes it.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
from typing import Any

import procrastinate
from procrastinate.exceptions import ConnectorException
from sqlalchemy.engine import make_url
from telegram import Update
from telegram.ext import Application, ApplicationHandlerStop, ContextTypes, TypeHandler

from sommelier.bot.handlers import SommelierBot
from sommelier.bot.ordering import chat_key

log = logging.getLogger("sommelier.bot.queue")

TASK = "sommelier.telegram_update"
HEARTBEAT = 2.0  # seconds between a worker's heartbeats
STALLED = 10.0  # seconds without a heartbeat after which a worker counts as dead
RETRY_STALLED = "* * * * * */5"  # cron, with seconds: look for dead workers' jobs every 5 s
DEFER_RETRY = 1.0  # seconds between tries to queue an update while the database is away
DEFER_PATIENCE = 120.0  # seconds an update is held for a database that is away, then lost
APPLICATION, BOT = "application", "bot"  # the worker's job context
RECEIVER_GROUP = -100  # before every handler of the bot's own


def chat_lock(chat_id: int) -> str:
    return f"telegram-chat:{chat_id}"


def conninfo(database_url: str) -> str:
    """The SQLAlchemy URL as libpq wants it (no "+asyncpg" in the scheme)."""
    return make_url(database_url).set(drivername="postgresql").render_as_string(False)


def queue_app(database_url: str) -> procrastinate.App:
    queue = procrastinate.App(
        connector=procrastinate.PsycopgConnector(conninfo=conninfo(database_url), max_size=4)
    )
    _register(queue)
    return queue


def _register(queue: procrastinate.App) -> None:
    @queue.task(name=TASK, pass_context=True)
    async def answer(context: procrastinate.JobContext, update: dict[str, Any]) -> None:
        extra = context.additional_context
        await handle(extra[APPLICATION], extra[BOT], update)

    @queue.periodic(cron=RETRY_STALLED)
    @queue.task(name="sommelier.retry_stalled", queueing_lock="retry_stalled", pass_context=True)
    async def retry_stalled(context: procrastinate.JobContext, timestamp: int) -> None:
        manager = context.app.job_manager
        for job in await manager.get_stalled_jobs(seconds_since_heartbeat=STALLED):
            log.warning(
                "a worker died running job %s (%s); it runs again",
                job.id,
                job.lock,
                extra={"event": "queue_job_stalled", "job_id": job.id},
            )
            await manager.retry_job(job)


async def handle(application: Application, bot: SommelierBot, data: dict[str, Any]) -> None:
    """One queued update, through the worker's own handlers."""
    update = Update.de_json(data, application.bot)
    work = asyncio.ensure_future(application.process_update(update))
    try:
        await asyncio.shield(work)
    except asyncio.CancelledError:
        # Aborted (Stop, from the receiver), or the worker's time to shut down ran out: the
        # turn stops as the person's own Stop stops it, and is stored before the job ends.
        bot.stop_here(chat_key(update))
        await work
        raise


def install_receiver(
    application: Application, queue: procrastinate.App, bot: SommelierBot
) -> Receiver:
    """The receiving process: updates go to the queue first, and Stop reaches the workers."""
    receiver = Receiver(queue, bot)
    application.add_handler(TypeHandler(Update, receiver), group=RECEIVER_GROUP)
    bot.stop_elsewhere = receiver.stop
    return receiver


class Receiver:
    """The receiving process's first handler: it queues every update its own handlers do not
    answer at once."""

    def __init__(self, queue: procrastinate.App, bot: SommelierBot) -> None:
        self.queue = queue
        self.bot = bot

    async def __call__(self, update: object, _: ContextTypes.DEFAULT_TYPE) -> None:
        if not isinstance(update, Update) or self.bot.urgent(update) or self.bot.limited(update):
            return  # answered here, by the bot's own handlers
        if await self.bot.ignored(update):
            raise ApplicationHandlerStop  # group chatter: not queued, not stored
        await self.defer(update)
        raise ApplicationHandlerStop

    async def defer(self, update: Update) -> None:
        """Queue the update; a database that is away is waited for, a while, not dropped."""
        key = chat_key(update)
        job = self.queue.configure_task(TASK, lock=chat_lock(key) if key is not None else None)
        deadline = asyncio.get_running_loop().time() + DEFER_PATIENCE
        while True:
            try:
                await job.defer_async(update=update.to_dict())
                return
            except (ConnectorException, OSError) as exc:
                if asyncio.get_running_loop().time() + DEFER_RETRY > deadline:
                    log.error(
                        "update %s lost: the queue's database was away for %.0f s (%s)",
                        update.update_id,
                        DEFER_PATIENCE,
                        exc,
                        extra={"event": "update_queue_lost", "update_id": update.update_id},
                    )
                    return
                log.warning(
                    "cannot queue update %s (%s); trying again",
                    update.update_id,
                    exc,
                    extra={"event": "update_queue_retry", "update_id": update.update_id},
                )
                await asyncio.sleep(DEFER_RETRY)

    async def stop(self, chat_id: int) -> bool:
        """Ask the worker running the chat's job to abort it; False when none runs."""
        manager = self.queue.job_manager
        running = await manager.list_jobs_async(task=TASK, lock=chat_lock(chat_id), status="doing")
        stopped = False
        for job in running:
            assert job.id is not None
            stopped |= await manager.cancel_job_by_id_async(job.id, abort=True)
        return stopped


async def run_worker(
    queue: procrastinate.App,
    application: Application,
    bot: SommelierBot,
    concurrency: int,
    *,
    signals: bool = True,
) -> None:
    """Takes jobs until SIGINT or SIGTERM (with `signals`; else until cancelled), then lets
    the running ones finish."""
    await queue.run_worker_async(
        install_signal_handlers=signals,
        name=f"sommelier@{socket.gethostname()}:{os.getpid()}",
        concurrency=concurrency,
        additional_context={APPLICATION: application, BOT: bot},
        update_heartbeat_interval=HEARTBEAT,
        stalled_worker_timeout=STALLED,
        delete_jobs="always",  # inbound_messages keeps each update's story
    )
