"""A user message waiting for the session to start its turn."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sessionflow.session.messages import FrameworkMessage

__all__ = ["QueuedUserMessage"]


@dataclass(frozen=True, kw_only=True)
class QueuedUserMessage:
    """A user message waiting for the current turn to end. Images are store paths.

    `settings` are the session settings the client sent with the message; they apply to
    the turn the message starts (the CLI uses them to narrow its configuration per turn).
    """

    text: str
    images: list[str] = field(default_factory=lambda: [])
    settings: dict[str, Any] = field(default_factory=lambda: {})
    message_id: str | None = None
    """A client-chosen ID: sending the same ID again queues nothing (a safe retry)."""
    message: FrameworkMessage | None = None
    """The framework's message for `text`, when the client built it (`AgentSessionClient`:
    no images, small enough to stay inline); None: the turn builds it in a step."""
