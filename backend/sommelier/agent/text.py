"""Text that can be stored and shown anywhere: no NUL (PostgreSQL rejects it in text), no lone
surrogates (no database or terminal can encode them), no other C0 control characters except
tab and line breaks."""

from __future__ import annotations

import re
from typing import Any

_UNSTORABLE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff]")


def clean_text(text: str) -> str:
    return _UNSTORABLE.sub("", text)


def clean_value(value: Any) -> Any:
    """`clean_text` applied to every string inside JSON-like data (keys too)."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, list):
        return [clean_value(v) for v in value]
    if isinstance(value, dict):
        return {clean_text(str(k)): clean_value(v) for k, v in value.items()}
    return value
