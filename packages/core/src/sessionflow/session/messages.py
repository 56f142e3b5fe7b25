"""Messages stored by a session: what the user said and what each turn produced."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from enum import StrEnum
from typing import Any

from sessionflow.session.bodies import BodyRef

__all__ = ["AgentMessage", "FrameworkMessage", "MessageRole", "message_digest", "message_sequence_key"]


class MessageRole(StrEnum):
    """Who produced a message."""

    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"
    SYSTEM = "system"


@dataclass(frozen=True, kw_only=True)
class FrameworkMessage:
    """One item in a framework's own format, with a plain-text view for people.

    `framework_item` must be JSON-serializable: the session stores it as is and hands
    it back to the runner on later turns.

    A large message is kept by reference: `body` names the stored item and text, the
    session keeps `framework_item` as None and `text` as a preview, and a runner always
    receives the whole message again.
    """

    role: MessageRole
    framework_item: Any
    text: str | None = None
    body: BodyRef | None = None

    @property
    def is_stored(self) -> bool:
        """True when the session holds a reference and a preview instead of the message."""
        return self.body is not None


@dataclass(frozen=True, kw_only=True)
class AgentMessage:
    """A stored message. Sequences start at 1 and never repeat within a session."""

    sequence: int
    turn_id: str
    message: FrameworkMessage


def message_sequence_key(sequence: int) -> str:
    """Zero-padded key that sorts messages by sequence as text."""
    if sequence < 1:
        raise ValueError(f"message sequences start at 1, got {sequence!r}")
    return f"{sequence:012d}"


def message_digest(previous: str, message: AgentMessage) -> str:
    """Extend a rolling digest by one stored message.

    Workers cache a session's messages between model calls; the workflow passes the digest
    of the prefix it expects, so a stale or foreign cache is detected instead of trusted.
    """
    fields = asdict(message)
    if message.message.body is None:
        # Digests recorded before bodies could be stored left this field out: keep them equal.
        del fields["message"]["body"]
    encoded = json.dumps(fields, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(f"{previous}\n{encoded}".encode()).hexdigest()
