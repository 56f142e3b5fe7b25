"""A durable journal for the work a tool step does inside itself: one variable for every adapter.

A tool whose function runs another agent (Pydantic AI's agent delegation, a handler that
awaits a nested run) cannot be cut into steps from outside: the nested run happens inside
user code. The adapter records each nested model call and tool call here instead, keyed
by the parent call and their order in it, and a retried step (after a worker died) reads
back what the journal holds instead of doing it again.

The engine binding sets `current_step_journal()` while a tool step runs; the journal is
durable before `StepJournal.write` returns, and it lives as long as the step's attempts do
(a later attempt of the same call reads it; another call, or the next turn, never does).
No engine import here: adapters stay free of temporalio.
"""

from __future__ import annotations

from collections.abc import Generator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Protocol

__all__ = ["StepJournal", "current_step_journal", "step_journal_scope"]


class StepJournal(Protocol):
    """Text entries by key, durable across the attempts of one tool step."""

    async def read(self, key: str) -> str | None:
        """The entry written under ``key`` by this attempt or an earlier one, or None."""
        ...

    async def write(self, key: str, value: str) -> None:
        """Record ``value`` under ``key``; when this returns, a later attempt reads it."""
        ...


_CURRENT: ContextVar[StepJournal | None] = ContextVar("sessionflow_step_journal", default=None)


def current_step_journal() -> StepJournal | None:
    """The journal of the tool step running now, or None outside one (or on an engine without one)."""
    return _CURRENT.get()


@contextmanager
def step_journal_scope(journal: StepJournal | None) -> Generator[StepJournal | None]:
    """Make ``journal`` the current one inside the ``with`` block (the tool activity, or a test)."""
    token = _CURRENT.set(journal)
    try:
        yield journal
    finally:
        _CURRENT.reset(token)
