"""Blocking file work in a thread that stops when its call is cancelled or out of time.

A thread cannot be killed, so the work checks a `Stop` between bounded steps (a chunk
read, a directory listed, a file searched). Cancelling the awaiting task sets the stop,
and the thread ends at its next check instead of reading on for minutes.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from typing import TypeVar

from sessionflow.kit import ToolExecutionError

__all__ = ["FILE_TOOL_SECONDS", "Stop", "in_thread"]

FILE_TOOL_SECONDS = 60.0
"""The most a file tool may work; it stops with an error after this."""

T = TypeVar("T")


class Stop:
    """Tells blocking work to end: cancelled by its caller, or past its deadline."""

    def __init__(self, seconds: float = FILE_TOOL_SECONDS) -> None:
        self._cancelled = threading.Event()
        self._seconds = seconds
        self._deadline = time.monotonic() + seconds

    def cancel(self) -> None:
        self._cancelled.set()

    def check(self) -> None:
        """Raise `ToolExecutionError` if the work must end now."""
        if self._cancelled.is_set():
            raise ToolExecutionError("the tool call was cancelled")
        if time.monotonic() > self._deadline:
            raise ToolExecutionError(f"the tool gave up after {self._seconds:g} s; narrow the request")


async def in_thread(work: Callable[[Stop], T], seconds: float = FILE_TOOL_SECONDS) -> T:
    """Run ``work(stop)`` in a thread; cancelling this coroutine stops the work too."""
    stop = Stop(seconds)
    try:
        return await asyncio.to_thread(work, stop)
    except asyncio.CancelledError:
        stop.cancel()
        raise
