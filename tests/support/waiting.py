"""Waiting on a condition, never on the clock: a loaded 2-core machine makes any fixed sleep
either too short (flaky) or too long (slow)."""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable


async def until(check: Callable[[], bool | Awaitable[bool]], timeout: float = 15.0) -> None:  # noqa: ASYNC109
    """Return once `check()` is true; fail the test if it never is within `timeout`."""
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if await result if inspect.isawaitable(result) else result:
            return
        assert time.monotonic() < deadline, "the condition never came true"
        await asyncio.sleep(0.01)
