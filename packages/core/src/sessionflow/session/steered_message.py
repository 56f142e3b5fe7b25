"""A user message that joined a running turn (double-texting `steer`)."""

from __future__ import annotations

from dataclasses import dataclass

from sessionflow.session.messages import FrameworkMessage

__all__ = ["SteeredMessage"]


@dataclass(frozen=True, kw_only=True)
class SteeredMessage:
    """One steered message as a model step got it: its framework message, and which step."""

    message: FrameworkMessage
    step: str
    """The model step (its step execution ID) that first saw it."""
    message_id: str | None = None
