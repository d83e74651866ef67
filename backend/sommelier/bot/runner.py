"""Running the Telegram bot: long polling, or a webhook that checks Telegram's secret token on
every request; with SOMMELIER_TELEGRAM_WORKERS above 1, this process receives for every worker
and answers the first shard (shards.py)."""

from __future__ import annotations

import logging

from telegram import Update
from telegram.ext import Application

from sommelier.app import App
from sommelier.bot.application import build_application, sommelier_bot
from sommelier.bot.workers import Sharding
from sommelier.config import Settings

WEBHOOK_PATH = "telegram"


def run_bot(settings: Settings) -> None:
    """Blocking: runs until interrupted. PTB owns the event loop; the app lives inside it.

    A start that fails (a refused token, no network) raises; the command says why in one line.
    PTB's own multi-line report of the same failure is held back until the bot has started."""
    app = App.build(settings)
    bot = sommelier_bot(app)
    sharding = Sharding(app, bot) if settings.telegram_workers > 1 else None
    ptb = logging.getLogger("telegram.ext")
    level = ptb.level
    ptb.setLevel(logging.CRITICAL)

    async def post_init(_: Application) -> None:
        ptb.setLevel(level)
        await app.prepare()
        # Built after prepare(): the stored endpoint profile picks the strategy and format.
        bot.chat = app.chat_service()
        if sharding is not None:
            sharding.start(application)

    async def post_stop(_: Application) -> None:
        if sharding is not None:
            await sharding.stop()

    async def post_shutdown(_: Application) -> None:
        await app.aclose()

    application = build_application(settings, bot, sharding.forwarder if sharding else None)
    application.post_init = post_init
    application.post_stop = post_stop
    application.post_shutdown = post_shutdown
    if settings.telegram_webhook_url:
        url = settings.telegram_webhook_url.rstrip("/")
        if not url.endswith(f"/{WEBHOOK_PATH}"):
            url = f"{url}/{WEBHOOK_PATH}"
        application.run_webhook(
            listen=settings.telegram_webhook_listen,
            port=settings.telegram_webhook_port,
            url_path=WEBHOOK_PATH,
            webhook_url=url,
            secret_token=settings.telegram_webhook_secret,
            allowed_updates=Update.ALL_TYPES,
        )
    else:
        application.run_polling(allowed_updates=Update.ALL_TYPES)
