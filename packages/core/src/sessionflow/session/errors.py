"""Errors raised by the pure session model."""

from __future__ import annotations

__all__ = ["InvalidToolCallError", "SessionError", "SessionStateError", "TurnAborted"]


class SessionError(Exception):
    """Base of every sessionflow error; `message` holds the text."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class SessionStateError(SessionError):
    """An operation the session's state machine does not allow."""


class InvalidToolCallError(SessionError):
    """A model response asked for tool calls the session cannot record."""


class TurnAborted(SessionError):
    """Raise from `run_model_step` to fail the turn at once, without retrying the model call.

    For outcomes a retry cannot change, such as a guardrail tripwire. The message becomes
    the turn's `last_turn_error` and the `turn_failed` event's error.
    """
