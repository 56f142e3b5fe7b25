"""The error a non-conforming framework causes."""

from __future__ import annotations

from sessionflow.session import SessionRunError

__all__ = ["ConformanceFailure"]


class ConformanceFailure(SessionRunError, AssertionError):
    """The framework did not behave as the case expects; the message lists every difference."""
