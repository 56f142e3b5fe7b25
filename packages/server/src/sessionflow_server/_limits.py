"""A per-key token bucket: each bearer token (and the login route) gets a steady request rate."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["RateLimiter"]


@dataclass
class RateLimiter:
    """`burst` requests at once, refilled at `per_second`; `take` says how long to wait when empty."""

    per_second: float = 20.0
    burst: int = 60
    clock: Callable[[], float] = time.monotonic
    _buckets: dict[str, tuple[float, float]] = field(default_factory=lambda: {})

    def take(self, key: str) -> float:
        """0 when the request may go; otherwise the seconds until one may."""
        now = self.clock()
        tokens, then = self._buckets.get(key, (float(self.burst), now))
        tokens = min(float(self.burst), tokens + (now - then) * self.per_second)
        if tokens >= 1.0:
            self._buckets[key] = (tokens - 1.0, now)
            return 0.0
        self._buckets[key] = (tokens, now)
        if len(self._buckets) > 10_000:  # bounded: forget the fullest buckets' keys first
            self._buckets = {k: v for k, v in self._buckets.items() if v[0] < self.burst - 1}
        return (1.0 - tokens) / self.per_second if self.per_second > 0 else 3600.0
