"""Building and running the Telegram application: long polling, or a webhook that checks
Telegram's secret token on every request."""

from __future__ import annotations

import logging

from telegram import Update
from telegram.ext import AIORateLimiter, Application, ApplicationBuilder

from sommelier.app import App
from sommelier.bot.handlers import BotOptions, SommelierBot
from sommelier.bot.ledger import Ledger
from sommelier.bot.ordering import PerChatUpdateProcessor
from sommelier.config import Settings

WEBHOOK_PATH = "telegram"
FLOOD_RETRIES = 3
POOL_TIMEOUT = 10.0


def build_application(settings: Settings, bot: SommelierBot) -> Application:
    if not settings.telegram_bot_token:
        raise ValueError("SOMMELIER_TELEGRAM_BOT_TOKEN is not set")
    builder: ApplicationBuilder = (
        Application.builder()
        .token(settings.telegram_bot_token)
        .concurrent_updates(
            PerChatUpdateProcessor(settings.telegram_max_concurrent_updates, admit=bot.admit)
        )
        # Under bursts every chat's sends and "typing…" share the pool: wait, don't fail.
        .pool_timeout(POOL_TIMEOUT)
        # Keeps under Telegram's limits, waits out flood limits (RetryAfter) and repeats.
        .rate_limiter(
            AIORateLimiter(
                overall_max_rate=settings.telegram_max_messages_per_second,
                max_retries=FLOOD_RETRIES,
            )
        )
    )
    if settings.telegram_base_url:
        root = settings.telegram_base_url.rstrip("/")
        builder = builder.base_url(f"{root}/bot").base_file_url(f"{root}/file/bot")
    application = builder.build()
    bot.install(application)
    return application


def sommelier_bot(app: App) -> SommelierBot:
    s = app.settings
    return SommelierBot(
        app.chat_service(),
        Ledger(app.sessions),
        BotOptions(
            rate_limit_per_minute=s.telegram_rate_limit_per_minute,
            max_input_chars=s.telegram_max_input_chars,
            typing_interval=s.telegram_typing_interval,
            streaming=s.streaming,
        ),
    )


def run_bot(settings: Settings) -> None:
    """Blocking: runs until interrupted. PTB owns the event loop; the app lives inside it.

    A start that fails (a refused token, no network) raises; the command says why in one line.
    PTB's own multi-line report of the same failure is held back until the bot has started."""
    app = App.build(settings)
    bot = sommelier_bot(app)
    ptb = logging.getLogger("telegram.ext")
    level = ptb.level
    ptb.setLevel(logging.CRITICAL)

    async def post_init(_: Application) -> None:
        ptb.setLevel(level)
        await app.prepare()
        # Built after prepare(): the stored endpoint profile picks the strategy and format.
        bot.chat = app.chat_service()

    async def post_shutdown(_: Application) -> None:
        await app.aclose()

    application = build_application(settings, bot)
    application.post_init = post_init
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
