"""How long a session's next workflow task waits for the worker that has it cached.

A worker keeps the sessions it ran in its workflow cache and polls a sticky queue of its
own for their next tasks. When that worker dies (SIGKILL, a lost host), the server holds
those tasks on the dead worker's sticky queue for this long before it hands them to any
worker of the flow type, which replays the session. Temporal's default is 10 s; a
deployment that replaces workers often, or a test that kills them on purpose, can set
less with ``$SESSIONFLOW_STICKY_QUEUE_TIMEOUT``. A live worker polls its sticky queue all
the time, so a short value costs a replay only when a worker is too busy to poll.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import timedelta

from sessionflow._environment import read_env

__all__ = ["DEFAULT_STICKY_QUEUE_TIMEOUT", "STICKY_QUEUE_TIMEOUT_ENV", "sticky_queue_timeout"]

STICKY_QUEUE_TIMEOUT_ENV = "SESSIONFLOW_STICKY_QUEUE_TIMEOUT"
"""Seconds a session's next workflow task waits on the sticky queue of the worker that cached it."""

DEFAULT_STICKY_QUEUE_TIMEOUT = timedelta(seconds=10)
"""temporalio's own default."""


def sticky_queue_timeout(environ: Mapping[str, str] | None = None) -> timedelta:
    """``$SESSIONFLOW_STICKY_QUEUE_TIMEOUT`` (seconds, more than 0), else 10 s."""
    raw = read_env(STICKY_QUEUE_TIMEOUT_ENV, "", environ=environ).strip()
    if not raw:
        return DEFAULT_STICKY_QUEUE_TIMEOUT
    try:
        seconds = float(raw)
    except ValueError:
        raise ValueError(f"{STICKY_QUEUE_TIMEOUT_ENV}={raw!r} is not a number of seconds") from None
    if not math.isfinite(seconds) or seconds <= 0:
        raise ValueError(f"{STICKY_QUEUE_TIMEOUT_ENV} must be more than 0 seconds, got {raw!r}")
    return timedelta(seconds=seconds)
