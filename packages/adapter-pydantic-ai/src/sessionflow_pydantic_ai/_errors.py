"""The errors of the Pydantic AI adapter, within sessionflow's hierarchy."""

from __future__ import annotations

from sessionflow.session import SessionRunError

__all__ = ["OutputRejectedError"]


class OutputRejectedError(SessionRunError, RuntimeError):
    """Pydantic AI rejected the model's answer and wants to ask the model again.

    That would be a second model call in one step, so the step fails instead and the
    session retries it (the same request, as a fresh model call). Raised for output that
    fails validation or an output validator, and for a response with no usable output.
    Also a `RuntimeError`, which it was before it joined the hierarchy.
    """
