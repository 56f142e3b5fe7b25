"""The error the embedded dev server raises."""

from __future__ import annotations

from sessionflow.session.errors import SessionRunError

__all__ = ["DevServerError"]


class DevServerError(SessionRunError, RuntimeError):
    """The embedded Temporal dev server could not be found, started, reused or stopped."""
