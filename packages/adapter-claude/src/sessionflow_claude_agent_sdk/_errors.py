"""The errors of the Claude Agent SDK adapter, within sessionflow's hierarchy."""

from __future__ import annotations

from sessionflow import SessionRunError

__all__ = ["ClaudeStepError"]


class ClaudeStepError(SessionRunError, RuntimeError):
    """The CLI did not end the model step cleanly; the session retries the step.

    Also a `RuntimeError`, which it was before it joined the hierarchy.
    """
