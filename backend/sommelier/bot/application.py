"""Building the Telegram application: PTB with the bot's handlers, per-chat ordering, the
send-rate limiter, and Telegram's address."""

from __future__ import annotations

import logging
from datetime import timedelta

from telegram import Bot
from telegram.ext import AIORateLimiter, Application, ApplicationBuilder, BaseUpdateProcessor

from sommelier.app import App
from sommelier.bot.handlers import BotOptions, SommelierBot
from sommelier.bot.ordering import HeldUpdates, PerChatUpdateProcessor
from sommelier.config import Settings

FLOOD_RETRIES = 3
POOL_TIMEOUT = 10.0


def per_chat(
    settings: Settings, bot: SommelierBot, held: HeldUpdates | None = None
) -> PerChatUpdateProcessor:
    return PerChatUpdateProcessor(
        settings.telegram_max_concurrent_updates,
        admit=bot.admit,
        urgent=bot.urgent,
        settled=held.settle if held is not None else None,
    )


def build_application(
    settings: Settings,
    bot: SommelierBot,
    processor: BaseUpdateProcessor | None = None,
    *,
    receives: bool = True,
) -> Application:
    """PTB's application for the bot. `processor` answers updates (per chat, by default); a
    process that `receives` nothing from Telegram itself (a queue worker) has no updater."""
    if not settings.telegram_bot_token:
        raise ValueError("SOMMELIER_TELEGRAM_BOT_TOKEN is not set")
    # A queueing receiver confirms an update to Telegram only once it is queued (ordering.py).
    held = HeldUpdates() if receives and settings.telegram_queue else None
    builder: ApplicationBuilder = (
        Application.builder()
        .token(settings.telegram_bot_token)
        .concurrent_updates(processor or per_chat(settings, bot, held))
        # Under bursts every chat's sends and "typing…" share the pool: wait, don't fail.
        .pool_timeout(POOL_TIMEOUT)
        # Stopping, PTB asks once more to confirm what it fetched; its pool's one connection
        # may still be freeing from the cancelled poll, and after 1 s (the default) it gives
        # up: the next start fetches those updates again, and answers them twice.
        .get_updates_pool_timeout(POOL_TIMEOUT)
        # Keeps under Telegram's limits, waits out flood limits (RetryAfter) and repeats.
        .rate_limiter(
            AIORateLimiter(
                overall_max_rate=settings.telegram_max_messages_per_second,
                max_retries=FLOOD_RETRIES,
            )
        )
    )
    if settings.telegram_base_url:
        builder = builder.base_url(api_url(settings)).base_file_url(api_url(settings, "file/"))
    if not receives:
        builder = builder.updater(None)
    if held is not None:
        builder = builder.update_queue(held)
    application = builder.build()
    bot.install(application)
    if receives:
        logging.getLogger("telegram.ext.Updater").addFilter(_foreign_body)
    return application


def _foreign_body(record: logging.LogRecord) -> bool:
    """PTB logs a webhook body that is no update (`[]`, a string) as CRITICAL with a
    traceback; it is a stranger's request, answered 400: one warning line is enough."""
    if record.levelno == logging.CRITICAL and "was *not* processed" in record.getMessage():
        record.levelno, record.levelname = logging.WARNING, "WARNING"
        record.msg, record.args, record.exc_info = (
            "webhook body that is no update refused",
            (),
            None,
        )
    return True


def api_url(settings: Settings, kind: str = "") -> str:
    """Telegram's Bot API address (an emulator's, or a local Bot API server's, when set)."""
    root = (settings.telegram_base_url or "https://api.telegram.org").rstrip("/")
    return f"{root}/{kind}bot"


async def check_token(settings: Settings) -> None:
    """Telegram's getMe, before anything else starts: a refused token or an unreachable
    Telegram is said at once (InvalidToken, NetworkError), before migrations run."""
    assert settings.telegram_bot_token is not None
    async with Bot(settings.telegram_bot_token, base_url=api_url(settings)):
        pass


def sommelier_bot(app: App) -> SommelierBot:
    s = app.settings
    return SommelierBot(
        app.chat_service(),
        BotOptions(
            rate_limit_per_minute=s.telegram_rate_limit_per_minute,
            max_input_chars=s.telegram_max_input_chars,
            typing_interval=s.telegram_typing_interval,
            streaming=s.streaming,
            cellar_ask_after=timedelta(hours=s.telegram_cellar_ask_after_hours),
        ),
    )
