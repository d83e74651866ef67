"""Logging: human-readable console lines for people, one JSON object per line for services.

Extra fields given to a log call (`extra={"event": ..., ...}`) become JSON keys. Secrets never
appear: values that look like the configured API key or bot token are replaced.
"""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

from sommelier.config import Settings

_STANDARD = set(vars(logging.makeLogRecord({}))) | {"message", "asctime", "taskName"}


class JsonFormatter(logging.Formatter):
    def __init__(self, secrets: list[str] | None = None) -> None:
        super().__init__()
        self.secrets = [s for s in (secrets or []) if s and len(s) >= 6]

    def format(self, record: logging.LogRecord) -> str:
        data: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, value in vars(record).items():
            if key not in _STANDARD and not key.startswith("_"):
                data[key] = value
        if record.exc_info:
            data["exception"] = self.formatException(record.exc_info)
        return self.redact(json.dumps(data, ensure_ascii=False, default=str))

    def redact(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret, "***")
        return text


class ConsoleFormatter(logging.Formatter):
    def __init__(self, secrets: list[str] | None = None, stamped: bool = False) -> None:
        stamp = "%(asctime)s " if stamped else ""
        super().__init__(f"{stamp}%(levelname)s %(name)s: %(message)s")
        self.secrets = [s for s in (secrets or []) if s and len(s) >= 6]

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        for secret in self.secrets:
            text = text.replace(secret, "***")
        return text


def secrets_of(settings: Settings) -> list[str]:
    values = [settings.llm_api_key, getattr(settings, "telegram_bot_token", None)]
    return [v for v in values if v and v != "not-needed"]


def configure_logging(
    settings: Settings,
    *,
    console: bool,
    extra_secrets: list[str] | None = None,
    stream: TextIO | None = None,
    log_file: Path | None = None,
) -> None:
    """`console`: readable lines at WARNING (sommelier chat); else JSON at the set level.
    With `log_file`, lines go there instead of the terminal (the chat's own screen stays
    clean)."""
    handler: logging.Handler = logging.StreamHandler(stream or sys.stderr)
    if log_file is not None:
        handler = logging.FileHandler(log_file, encoding="utf-8")
    secrets = secrets_of(settings) + (extra_secrets or [])
    if console and settings.log_format != "json":
        handler.setFormatter(ConsoleFormatter(secrets, stamped=log_file is not None))
        level = logging.WARNING if settings.log_level == "INFO" else settings.log_level
    else:
        handler.setFormatter(JsonFormatter(secrets))
        level = settings.log_level
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    for noisy in ("httpx", "httpcore", "httpx2", "openai", "telegram", "apscheduler"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
