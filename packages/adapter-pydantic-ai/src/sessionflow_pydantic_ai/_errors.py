"""The errors of the Pydantic AI adapter, within sessionflow's hierarchy."""

from __future__ import annotations

from sessionflow import SessionRunError

__all__ = ["OutputRejectedError"]


class OutputRejectedError(SessionRunError, RuntimeError):
    """Pydantic AI rejected the model's answer and wants to ask the model again.

    No longer raised: the retry request Pydantic AI makes is now the next model step (a
    "continue"), as the plain run sends it. Kept so code that catches it still imports.
    """
