"""Cancelling a turn: the reason it records, the error that unwinds it, and the steps cancelled with it."""

from __future__ import annotations

import asyncio
from typing import Any

from temporalio import workflow
from temporalio.exceptions import ActivityError, is_cancelled_exception

with workflow.unsafe.imports_passed_through():
    from sessionflow.session.errors import SessionRunError

TURN_CANCELLED = "turn cancelled"


class TurnCancelled(SessionRunError):
    """Raised inside the turn when a client cancels it."""

    def __init__(self, message: str = TURN_CANCELLED) -> None:
        super().__init__(message)


class TurnCancellation:
    """Whether a client cancelled the running turn, and the steps that end at once when it does."""

    def __init__(self) -> None:
        self.requested = False
        self._steps: set[asyncio.Future[Any]] = set()

    def request(self) -> None:
        self.requested = True
        for task in list(self._steps):
            task.cancel()

    def raise_if_requested(self) -> None:
        if self.requested:
            raise TurnCancelled

    def caused(self, error: ActivityError) -> bool:
        """The step failed because this cancel cancelled it."""
        return self.requested and is_cancelled_exception(error)

    async def step(self, task: asyncio.Future[Any]) -> Any:
        """Await a step the turn's cancel cancels (reads only: a write may already have taken effect)."""
        self._steps.add(task)
        try:
            return await task
        finally:
            self._steps.discard(task)
