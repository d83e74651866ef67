"""A per-user sliding-window rate limit, in memory (one bot process)."""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable


class RateLimiter:
    def __init__(
        self, per_minute: int, clock: Callable[[], float] = time.monotonic, window: float = 60.0
    ) -> None:
        self.per_minute = per_minute
        self.window = window
        self.clock = clock
        self._seen: dict[int, deque[float]] = {}

    def check(self, user_id: int) -> float:
        """0 when the message may go ahead (and counts it), else seconds until it may."""
        now = self.clock()
        seen = self._seen.setdefault(user_id, deque())
        while seen and now - seen[0] >= self.window:
            seen.popleft()
        if len(seen) >= self.per_minute:
            return self.window - (now - seen[0])
        seen.append(now)
        return 0.0
