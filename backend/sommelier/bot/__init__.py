"""The Telegram bot: handlers, rendering, delivery, per-chat ordering."""
