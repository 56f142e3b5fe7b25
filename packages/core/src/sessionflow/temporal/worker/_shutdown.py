"""Graceful worker shutdown: the grace period running steps get, and how a step cut short fails.

On SIGTERM a worker stops polling and gives the steps it runs `shutdown_grace` to finish.
Steps still running then are cancelled: the SDK cancels the activity's task, and the
cancellation reaches the framework call through `with_heartbeats` (`_step_context`), which
awaits it in the same task. Such a step must not end as *cancelled* (the workflow did not
ask for that): it fails retryably, naming the worker, so the server hands a model step or
a retryable tool step to another worker at once, while a single-attempt write (maximum one
attempt) ends `outcome_unknown` and never runs again.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Generator, Mapping
from contextlib import contextmanager
from datetime import timedelta
from typing import NoReturn

from temporalio import activity
from temporalio.exceptions import ApplicationError

from sessionflow._environment import read_env
from sessionflow.temporal._process_exit import exit_without_teardown

__all__ = [
    "DEFAULT_SHUTDOWN_GRACE",
    "SHUTDOWN_GRACE_ENV",
    "WORKER_SHUTDOWN_ERROR",
    "exit_worker_process",
    "shutdown_fails_retryably",
    "shutdown_grace",
]

SHUTDOWN_GRACE_ENV = "SESSIONFLOW_SHUTDOWN_GRACE"
"""Seconds a running step gets to finish after SIGTERM."""

DEFAULT_SHUTDOWN_GRACE = timedelta(seconds=20)
"""Below the 30 s most orchestrators wait between SIGTERM and SIGKILL (Kubernetes, systemd
90 s, ECS 30 s), so the steps cut short are reported as failed before the SIGKILL comes."""

WORKER_SHUTDOWN_ERROR = "WorkerShutdown"
"""The failure type of a step its worker cut short at shutdown."""


def shutdown_grace(
    grace: timedelta | float | None = None, environ: Mapping[str, str] | None = None
) -> timedelta:
    """`grace` (seconds or a timedelta), else ``$SESSIONFLOW_SHUTDOWN_GRACE``, else 20 s."""
    if grace is None:
        raw = read_env(SHUTDOWN_GRACE_ENV, "", environ=environ).strip()
        if not raw:
            return DEFAULT_SHUTDOWN_GRACE
        try:
            grace = float(raw)
        except ValueError:
            raise ValueError(f"{SHUTDOWN_GRACE_ENV}={raw!r} is not a number of seconds") from None
    seconds = grace.total_seconds() if isinstance(grace, timedelta) else float(grace)
    if not math.isfinite(seconds) or seconds < 0:
        raise ValueError(f"the shutdown grace period must be 0 or more seconds, got {seconds!r}")
    return timedelta(seconds=seconds)


@contextmanager
def shutdown_fails_retryably(worker_identity: str) -> Generator[None]:
    """Turn the cancellation of a step by its worker's shutdown into a retryable failure.

    A cancellation the workflow asked for (a cancelled turn) stays a cancellation.
    """
    try:
        yield
    except asyncio.CancelledError:
        details = activity.cancellation_details()
        by_shutdown = details.worker_shutdown if details is not None else activity.is_worker_shutdown()
        if not by_shutdown or (details is not None and details.cancel_requested):
            raise
        info = activity.info()
        raise ApplicationError(
            f"worker {worker_identity} shut down before attempt {info.attempt} of this step finished",
            type=WORKER_SHUTDOWN_ERROR,
        ) from None


def exit_worker_process(code: int = 0) -> NoReturn:
    """End a worker process that has stopped, without the interpreter's teardown.

    By now every step the worker ran is reported. The threads of temporalio's Rust bridge
    can outlive the event loop, and one that touches the GIL while CPython finalizes aborts
    the process (``Fatal Python error: PyGILState_Release``, SIGABRT; temporalio/sdk-python
    issue 300): a rolling restart would see a clean shutdown exit -6 about one time in six
    under load (`tests/temporal/worker/test_graceful_shutdown.py`). Output and logs are flushed first.
    """
    exit_without_teardown(code)
