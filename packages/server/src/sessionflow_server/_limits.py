"""A per-key token bucket: each user, each client's logins and each client's failed authentications.

Memory is bounded: a bucket untouched for as long as it takes to refill completely is the
same as a fresh one and is dropped, and past `max_keys` buckets the least recently used
go first.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["DEFAULT_MAX_KEYS", "RateLimiter"]

DEFAULT_MAX_KEYS = 10_000


@dataclass
class RateLimiter:
    """`burst` requests at once, refilled at `per_second`; `take` says how long to wait when empty."""

    per_second: float = 20.0
    burst: int = 60
    clock: Callable[[], float] = time.monotonic
    max_keys: int = DEFAULT_MAX_KEYS
    _buckets: dict[str, tuple[float, float]] = field(default_factory=lambda: {})
    _next_sweep: float = field(default=float("-inf"))

    def __len__(self) -> int:
        return len(self._buckets)

    @property
    def refill_seconds(self) -> float:
        """How long an empty bucket takes to be full again (an hour at a zero rate)."""
        return self.burst / self.per_second if self.per_second > 0 else 3600.0

    def take(self, key: str) -> float:
        """0 when the request may go; otherwise the seconds until one may."""
        now = self.clock()
        self._sweep(now)
        # Popped and put back, so the dict's order is least recently used first.
        tokens, then = self._buckets.pop(key, (float(self.burst), now))
        tokens = min(float(self.burst), tokens + (now - then) * self.per_second)
        if tokens >= 1.0:
            self._buckets[key] = (tokens - 1.0, now)
            wait = 0.0
        else:
            self._buckets[key] = (tokens, now)
            wait = (1.0 - tokens) / self.per_second if self.per_second > 0 else 3600.0
        while len(self._buckets) > self.max_keys:
            del self._buckets[next(iter(self._buckets))]
        return wait

    def _sweep(self, now: float) -> None:
        """Drop the buckets that have refilled completely (at most once per refill time)."""
        if now < self._next_sweep:
            return
        horizon = self.refill_seconds
        self._next_sweep = now + horizon
        self._buckets = {k: v for k, v in self._buckets.items() if now - v[1] < horizon}
