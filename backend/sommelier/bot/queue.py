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
import contextlib
import logging
import os
import signal
import socket
from collections.abc import Iterator
from functools import partial
from typing import Any

import procrastinate
import psycopg
from procrastinate.exceptions import ConnectorException
from sqlalchemy.engine import make_url
from telegram import Update
from telegram.error import TelegramError
from telegram.ext import Application, ApplicationHandlerStop, ContextTypes, TypeHandler
from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception_type,
    wait_exponential,
    wait_fixed,
)

from sommelier.bot.asks import ASK_CRON, follow_ups
from sommelier.bot.handlers import SommelierBot, language_of
from sommelier.bot.ordering import HeldUpdates, chat_key
from sommelier.i18n.translations import N_, translator

log = logging.getLogger("sommelier.bot.queue")

TASK = "sommelier.telegram_update"
HEARTBEAT = 2.0  # seconds between a worker's heartbeats
STALLED = 10.0  # seconds without a heartbeat after which a worker counts as dead
RETRY_STALLED = "* * * * * */5"  # cron, with seconds: look for dead workers' jobs every 5 s
DEFER_RETRY = 1.0  # seconds between tries to queue an update while the database is away
RESTART_FIRST = 1.0  # seconds before a worker that stopped by itself starts again; doubling
RESTART_LONGEST = 15.0  # … up to this
AWAY_ERRORS = (ConnectorException, OSError)
KEPT_WAITING = N_(
    "I have a problem on my side right now. Your message is kept, and I will answer it as soon "
    "as the problem is solved."
)
APPLICATION, BOT = "application", "bot"  # the worker's job context
RECEIVER_GROUP = -100  # before every handler of the bot's own


def chat_lock(chat_id: int) -> str:
    return f"telegram-chat:{chat_id}"


def conninfo(database_url: str) -> str:
    """The SQLAlchemy URL as libpq wants it (no "+asyncpg" in the scheme)."""
    return make_url(database_url).set(drivername="postgresql").render_as_string(False)


def queue_app(database_url: str) -> procrastinate.App:
    # Autocommit: each of procrastinate's statements commits on the server. Without it the
    # pool's connections commit in a second round trip, and a worker frozen between the two
    # (a GC pause, a stopped VM) kept the rows it had fetched locked: the other workers' start
    # and their retry of its job waited for it to wake.
    # (Set as each connection opens: procrastinate's listener passes autocommit itself.)
    connector = procrastinate.PsycopgConnector(
        conninfo=conninfo(database_url), max_size=4, configure=_autocommit
    )
    queue = procrastinate.App(connector=connector)
    _register(queue)
    return queue


async def _autocommit(connection: psycopg.AsyncConnection[Any]) -> None:
    await connection.set_autocommit(True)


def _register(queue: procrastinate.App) -> None:
    @queue.task(name=TASK, pass_context=True)
    async def answer(context: procrastinate.JobContext, update: dict[str, Any]) -> None:
        extra = context.additional_context
        await handle(extra[APPLICATION], extra[BOT], update)

    @queue.periodic(cron=ASK_CRON)
    @queue.task(name="sommelier.cellar_asks", queueing_lock="cellar_asks", pass_context=True)
    async def cellar_asks(context: procrastinate.JobContext, timestamp: int) -> None:
        extra = context.additional_context
        await follow_ups(extra[BOT], extra[APPLICATION].bot)

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
    application: Application, queue: procrastinate.App, bot: SommelierBot, notice_after: float
) -> Receiver:
    """The receiving process: updates go to the queue first, and Stop reaches the workers."""
    held = application.update_queue
    receiver = Receiver(queue, bot, held if isinstance(held, HeldUpdates) else None, notice_after)
    application.add_handler(TypeHandler(Update, receiver), group=RECEIVER_GROUP)
    bot.stop_elsewhere = receiver.stop
    return receiver


class Receiver:
    """The receiving process's first handler: it queues every update its own handlers do not
    answer at once. An update is confirmed to Telegram once it is settled (`held`): queued,
    or about to be answered here."""

    def __init__(
        self,
        queue: procrastinate.App,
        bot: SommelierBot,
        held: HeldUpdates | None = None,
        notice_after: float = 60.0,
    ) -> None:
        self.queue = queue
        self.bot = bot
        self.held = held
        self.notice_after = notice_after

    async def __call__(self, update: object, _: ContextTypes.DEFAULT_TYPE) -> None:
        if not isinstance(update, Update) or self.bot.urgent(update) or self.bot.limited(update):
            self._settle(update)
            return  # answered here, by the bot's own handlers
        if await self.bot.ignored(update):
            raise ApplicationHandlerStop  # group chatter: not queued, not stored
        await self.defer(update)
        raise ApplicationHandlerStop

    def _settle(self, update: object) -> None:
        if self.held is not None:
            self.held.settle(update)

    async def defer(self, update: Update) -> None:
        """Queue the update. A database that is away is waited for as long as it takes: the
        update is not confirmed to Telegram meanwhile (Telegram keeps it for a day), and a
        person kept waiting past `notice_after` is told once."""
        key = chat_key(update)
        job = self.queue.configure_task(TASK, lock=chat_lock(key) if key is not None else None)
        loop = asyncio.get_running_loop()
        started = loop.time()
        telling = asyncio.create_task(self._tell_waiting(update))
        try:
            async for attempt in AsyncRetrying(
                retry=retry_if_exception_type(AWAY_ERRORS),
                wait=wait_fixed(DEFER_RETRY),
                before_sleep=partial(_cannot_queue, update.update_id),
            ):
                with attempt:
                    await job.defer_async(update=update.to_dict())
        finally:
            telling.cancel()
        if loop.time() - started >= self.notice_after:
            log.warning(
                "update %s queued after %.0f s",
                update.update_id,
                loop.time() - started,
                extra={"event": "update_queued_late", "update_id": update.update_id},
            )

    async def _tell_waiting(self, update: Update) -> None:
        """After `notice_after` seconds, the person whose message waits hears why, once."""
        await asyncio.sleep(self.notice_after)
        chat = update.effective_chat
        if chat is None:
            return
        text = translator(language_of(update))(KEPT_WAITING)
        try:
            await update.get_bot().send_message(chat.id, text)
        except TelegramError as exc:
            log.warning(
                "cannot tell a chat it waits: %s", exc, extra={"event": "wait_notice_failed"}
            )

    async def stop(self, chat_id: int) -> bool:
        """Ask the worker running the chat's job to abort it; False when none runs."""
        manager = self.queue.job_manager
        running = await manager.list_jobs_async(task=TASK, lock=chat_lock(chat_id), status="doing")
        stopped = False
        for job in running:
            assert job.id is not None
            stopped |= await manager.cancel_job_by_id_async(job.id, abort=True)
        return stopped


def _cannot_queue(update_id: int, state: RetryCallState) -> None:
    if state.attempt_number == 1 and state.outcome is not None:
        log.warning(
            "cannot queue update %s (%s); trying until the database is back",
            update_id,
            state.outcome.exception(),
            extra={"event": "update_queue_retry", "update_id": update_id},
        )


async def run_worker(
    queue: procrastinate.App,
    application: Application,
    bot: SommelierBot,
    concurrency: int,
    *,
    signals: bool = True,
) -> None:
    """Takes jobs until SIGINT or SIGTERM (with `signals`; else until cancelled), then lets
    the running ones finish. A worker that stops by itself (procrastinate stops one whose
    database connection broke: a restart, an outage) starts again once the database answers,
    so a database restart never leaves the chats without workers."""
    asked = asyncio.Event()
    with _stopping_on_signals(asked) if signals else contextlib.nullcontext():
        async for attempt in AsyncRetrying(
            retry=retry_if_exception_type((DatabaseAway, *AWAY_ERRORS)),
            wait=wait_exponential(multiplier=RESTART_FIRST, max=RESTART_LONGEST),
            sleep=partial(_nap, asked),
            before_sleep=_restarting,
        ):
            with attempt:
                await _work_once(queue, application, bot, concurrency, asked)


class DatabaseAway(Exception):
    """The worker stopped without being asked to: its database went away."""


async def _work_once(
    queue: procrastinate.App,
    application: Application,
    bot: SommelierBot,
    concurrency: int,
    asked: asyncio.Event,
) -> None:
    if asked.is_set():
        return  # stopped while it waited to start again
    worker = asyncio.create_task(
        queue.run_worker_async(
            install_signal_handlers=False,
            name=f"sommelier@{socket.gethostname()}:{os.getpid()}",
            concurrency=concurrency,
            additional_context={APPLICATION: application, BOT: bot},
            update_heartbeat_interval=HEARTBEAT,
            stalled_worker_timeout=STALLED,
            delete_jobs="always",  # inbound_messages keeps each update's story
        )
    )
    told = asyncio.create_task(asked.wait())
    try:
        await asyncio.wait({worker, told}, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
        asked.set()
        raise
    finally:
        told.cancel()
        if asked.is_set() and not worker.done():
            worker.cancel()  # procrastinate's graceful stop: running turns finish
            with contextlib.suppress(asyncio.CancelledError, *AWAY_ERRORS):
                await worker
    if asked.is_set():
        return
    worker.result()  # its own error, if it failed
    raise DatabaseAway("the worker stopped by itself")


async def _nap(asked: asyncio.Event, seconds: float) -> None:
    """The wait before a worker starts again, which SIGTERM ends."""
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(asked.wait(), seconds)


def _restarting(state: RetryCallState) -> None:
    outcome = state.outcome
    error = outcome.exception() if outcome is not None else None
    delay = state.next_action.sleep if state.next_action is not None else 0.0
    log.warning(
        "the queue's worker stopped (%s); it starts again in %.0f s",
        error,
        delay,
        extra={"event": "queue_worker_restart", "attempt": state.attempt_number},
    )


@contextlib.contextmanager
def _stopping_on_signals(asked: asyncio.Event) -> Iterator[None]:
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, asked.set)
    try:
        yield
    finally:
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(signum)
