"""The errors of the LangGraph adapter, within sessionflow's hierarchy."""

from __future__ import annotations

from sessionflow.session import SessionRunError

__all__ = ["StepViolation"]


class StepViolation(SessionRunError, RuntimeError):
    """The graph did something one RunModel step must not do (a second model call, a tool run).

    Retryable, as before: the model may choose differently on the next attempt. Also a
    `RuntimeError`, which it was before it joined the hierarchy.
    """
