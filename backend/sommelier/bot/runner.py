"""Running the Telegram bot: long polling, or a webhook that checks Telegram's secret token on
every request. With SOMMELIER_TELEGRAM_QUEUE on, this process receives and queues, and
`sommelier worker` processes answer (queue.py).

The token is checked first (one line when Telegram refuses it); then the app is prepared
(migrations, the catalog, the model's stored profile) before the bot is built, so the bot is
built once, with the one model client of the process.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal

from telegram import Update
from telegram.ext import Application
from tornado.httpserver import HTTPServer

from sommelier.app import App
from sommelier.bot.application import build_application, check_token, sommelier_bot
from sommelier.bot.asks import schedule
from sommelier.bot.handlers import CHANNEL, STOP_UPDATE, SommelierBot
from sommelier.bot.queue import install_receiver, queue_app, run_worker
from sommelier.config import Settings
from sommelier.db.session import DATABASE_ERRORS, DatabaseUnreachable

WEBHOOK_PATH = "telegram"
# Telegram's updates are a few kilobytes; a larger body is not Telegram's (tornado drops it).
WEBHOOK_MAX_BODY = 1 << 20
SWEEP_EVERY = 300.0  # seconds between looks for turns cut short

log = logging.getLogger("sommelier.bot")

# Every update PTB knows, and Telegram's Stop on a streamed draft, which it does not yet.
UPDATES = [*Update.ALL_TYPES, STOP_UPDATE]


def run_bot(settings: Settings) -> None:
    """Blocking: receives and answers (or queues) until SIGINT or SIGTERM. A start that fails
    (a refused token, no network) raises; the command says why in one line."""
    asyncio.run(_serve(settings))


def run_queue_worker(settings: Settings) -> None:
    """Blocking: answers queued updates until SIGINT or SIGTERM, then finishes its turns."""
    asyncio.run(_work(settings))


async def _serve(settings: Settings) -> None:
    await check_token(settings)
    app = App.build(settings)
    try:
        await _prepared(app)
        await app.warmed()  # before the Telegram handshake (App.warmed)
        bot = sommelier_bot(app)
        application = build_application(settings, bot)
        queue = queue_app(settings.database_url) if settings.telegram_queue else None
        async with contextlib.AsyncExitStack() as stack:
            if queue is not None:
                await stack.enter_async_context(queue.open_async())
                install_receiver(application, queue, bot, settings.telegram_wait_notice_after)
            else:  # the queue's workers ask the cellar's questions where it runs (bot/asks.py)
                schedule(application, bot)
            await stack.enter_async_context(_quiet_start(application))
            await application.start()
            await _receive(application, settings)
            sweeping = asyncio.create_task(_sweep(app, bot, application))
            stack.callback(sweeping.cancel)
            await _until_signalled()
            assert application.updater is not None
            await application.updater.stop()
            await application.stop()
    finally:
        await app.aclose()


async def _prepared(app: App) -> None:
    """Migrations and the catalog; a database that cannot be reached is said as such."""
    try:
        await app.prepare()
    except DATABASE_ERRORS as exc:
        raise DatabaseUnreachable(str(exc)) from exc


async def _sweep(app: App, bot: SommelierBot, application: Application) -> None:
    """At start and then every few minutes: turns cut short (db/turns.py `sweep`), their
    chats offered a retry."""
    while True:
        try:
            stale = await bot.chat.turns.sweep(CHANNEL, app.stale_after())
            await bot.offer_retries(application.bot, stale)
        except DATABASE_ERRORS as exc:  # the next sweep will do
            log.warning("stale turns not swept: %s", exc, extra={"event": "sweep_failed"})
        await asyncio.sleep(SWEEP_EVERY)


async def _work(settings: Settings) -> None:
    await check_token(settings)
    app = App.build(settings)
    try:
        await _prepared(app)
        await app.warmed()  # before the Telegram handshake (App.warmed)
        bot = sommelier_bot(app)
        application = build_application(settings, bot, receives=False)
        queue = queue_app(settings.database_url)
        async with _quiet_start(application), queue.open_async():
            await application.start()
            concurrency = settings.telegram_max_concurrent_updates
            await run_worker(queue, application, bot, concurrency)
            await application.stop()
    finally:
        await app.aclose()


@contextlib.asynccontextmanager
async def _quiet_start(application: Application):
    """The application, initialised: PTB's own multi-line report of a failed start is held
    back (the command says why in one line)."""
    ptb = logging.getLogger("telegram.ext")
    level = ptb.level
    ptb.setLevel(logging.CRITICAL)
    try:
        await application.initialize()
    finally:
        ptb.setLevel(level)
    try:
        yield application
    finally:
        await application.shutdown()


async def _receive(application: Application, settings: Settings) -> None:
    updater = application.updater
    assert updater is not None
    if not settings.telegram_webhook_url:
        await updater.start_polling(allowed_updates=UPDATES)
        return
    url = settings.telegram_webhook_url.rstrip("/")
    if not url.endswith(f"/{WEBHOOK_PATH}"):
        url = f"{url}/{WEBHOOK_PATH}"
    HTTPServer.configure(None, max_body_size=WEBHOOK_MAX_BODY)
    await updater.start_webhook(
        listen=settings.telegram_webhook_listen,
        port=settings.telegram_webhook_port,
        url_path=WEBHOOK_PATH,
        webhook_url=url,
        secret_token=settings.telegram_webhook_secret,
        allowed_updates=UPDATES,
    )


async def _until_signalled() -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    try:
        await stop.wait()
    finally:
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(signum)
