"""Errors raised by the pure session model."""

from __future__ import annotations

__all__ = ["InvalidToolCallError", "SessionError", "SessionStateError"]


class SessionError(Exception):
    """Base of every sessionflow error; `message` holds the text."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class SessionStateError(SessionError):
    """An operation the session's state machine does not allow."""


class InvalidToolCallError(SessionError):
    """A model response asked for tool calls the session cannot record."""
