"""A per-user sliding-window rate limit, in memory (one bot process).

People who have been quiet for a whole window are forgotten, so memory follows the number of
people active in the last minute, not everyone who ever wrote.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable

EVICT_EVERY = 256  # checks between sweeps of idle people


class RateLimiter:
    def __init__(
        self, per_minute: int, clock: Callable[[], float] = time.monotonic, window: float = 60.0
    ) -> None:
        self.per_minute = per_minute
        self.window = window
        self.clock = clock
        self._seen: dict[int, deque[float]] = {}
        self._checks = 0

    def check(self, user_id: int) -> float:
        """0 when the message may go ahead (and counts it), else seconds until it may."""
        now = self.clock()
        self._checks += 1
        if self._checks % EVICT_EVERY == 0:
            self._evict(now)
        seen = self._seen.setdefault(user_id, deque())
        while seen and now - seen[0] >= self.window:
            seen.popleft()
        if len(seen) >= self.per_minute:
            return self.window - (now - seen[0])
        seen.append(now)
        return 0.0

    def _evict(self, now: float) -> None:
        idle = [
            user for user, seen in self._seen.items() if not seen or now - seen[-1] >= self.window
        ]
        for user in idle:
            del self._seen[user]

    @property
    def tracked(self) -> int:
        return len(self._seen)
