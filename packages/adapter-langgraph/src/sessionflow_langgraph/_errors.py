"""The errors of the LangGraph adapter, within sessionflow's hierarchy."""

from __future__ import annotations

from typing import ClassVar

from sessionflow import SessionRunError

__all__ = ["StepViolation"]


class StepViolation(SessionRunError, RuntimeError):
    """The graph did something one RunModel step must not do (a second model call, a tool run).

    The step monitor raises it to stop the call before it starts, and the runner fails the
    turn with `TurnAborted`. Not retryable: the graph's shape, not luck, decides it. Also a
    `RuntimeError`, which it was before it joined the hierarchy.
    """

    retryable: ClassVar[bool] = False
