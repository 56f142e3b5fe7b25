"""The error a non-conforming framework causes."""

from __future__ import annotations

__all__ = ["ConformanceFailure"]


class ConformanceFailure(AssertionError):
    """The framework did not behave as the case expects; the message lists every difference."""
