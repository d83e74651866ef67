"""Sommelier: a Telegram sommelier on a strict agent runtime."""

__version__ = "0.1.0"
