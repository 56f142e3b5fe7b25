"""The bodies the API reads and writes. Responses reuse the Python client's own types.

Requests are `msgspec.Struct`s that forbid unknown fields (a typo is a 422, never silently
ignored). Responses are the client's dataclasses (`AgentSnapshot`, `AgentMessagesPage`,
`AgentEvent`, `AgentInterrupt`) wrapped where a list needs a name, so
the OpenAPI document (`_openapi`) is generated from exactly what the Python client returns.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from sessionflow import AgentInterrupt, TurnRecord
from sessionflow_server._session_list import SessionItem

__all__ = [
    "AcceptedResponse",
    "CancelResponse",
    "CreateSessionRequest",
    "CreatedResponse",
    "ErrorResponse",
    "ForkRequest",
    "ForkResponse",
    "ForkedFromResponse",
    "InterruptItem",
    "InterruptsResponse",
    "LoginRequest",
    "MeResponse",
    "ResolveInterruptRequest",
    "ResolvedResponse",
    "SendMessageRequest",
    "SessionsResponse",
    "StopResponse",
    "TokenResponse",
    "TurnsResponse",
]


class LoginRequest(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    code: str


DoubleTextingName = Literal["enqueue", "interrupt", "reject", "steer"]
"""What a message sent while a turn runs does (docs/server/double-texting-and-fork.md)."""


class CreateSessionRequest(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    message: str | None = None
    settings: dict[str, Any] | None = None
    session_id: str | None = None
    double_texting: DoubleTextingName | None = None
    """The session's policy; None is ``enqueue``."""


class SendMessageRequest(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    message_id: str
    """Retrying with the same ID queues the message once."""
    text: str
    settings: dict[str, Any] | None = None
    double_texting: DoubleTextingName | None = None
    """This message's policy; None uses the session's."""


class ForkRequest(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    turn: int
    """Fork after this ended turn (1-based)."""
    session_id: str | None = None
    """The new session's ID; None picks one."""


class ResolveInterruptRequest(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """``{"approved": bool, "reason"?: str}`` decides an approval; ``{"value": ...}`` answers a question.

    ``digest`` (optional, either form) is the interrupt's digest as the client showed it:
    an answer for arguments the call no longer has is refused with 409 ``stale_approval``.
    """

    approved: bool | msgspec.UnsetType = msgspec.UNSET
    reason: str | msgspec.UnsetType = msgspec.UNSET
    value: Any = msgspec.UNSET
    digest: str | msgspec.UnsetType = msgspec.UNSET


class TokenResponse(msgspec.Struct, kw_only=True):
    token: str
    user: str


class MeResponse(msgspec.Struct, kw_only=True):
    user: str
    namespace: str
    """The Temporal namespace of the sessions."""
    temporal_ui_url: str | None = None
    """The Temporal UI's base URL when one is configured; a session is at
    ``{temporal_ui_url}/namespaces/{namespace}/workflows/{session_id}``."""


class SessionsResponse(msgspec.Struct, kw_only=True):
    sessions: list[SessionItem]


class TurnsResponse(msgspec.Struct, kw_only=True):
    turns: list[TurnRecord]
    """The kept turns (the newest 100 or so), oldest first, the running turn last."""


class CreatedResponse(msgspec.Struct, kw_only=True):
    session_id: str


class ForkedFromResponse(msgspec.Struct, kw_only=True):
    session_id: str
    turn: int


class ForkResponse(msgspec.Struct, kw_only=True):
    session_id: str
    forked_from: ForkedFromResponse


class AcceptedResponse(msgspec.Struct, kw_only=True):
    message_id: str
    accepted: bool


class CancelResponse(msgspec.Struct, kw_only=True):
    cancelled: bool
    """False when no turn was running."""


class StopResponse(msgspec.Struct, kw_only=True):
    stopped: bool
    """False when the session had already stopped."""


class InterruptItem(msgspec.Struct, kw_only=True):
    session_id: str
    flow_type: str
    session_title: str
    """The session's title (its first user message, one line); "" when it has none."""
    waited_seconds: float
    """How long it has waited, from `interrupt.raised_at` to the answer's time."""
    interrupt: AgentInterrupt


class InterruptsResponse(msgspec.Struct, kw_only=True):
    interrupts: list[InterruptItem]


class ResolvedResponse(msgspec.Struct, kw_only=True):
    resolved: Literal[True] = True


class ErrorResponse(msgspec.Struct, kw_only=True):
    error: str
    """A stable code: ``unauthorized``, ``not_found``, ``already_resolved``, ``past_deadline``, ..."""
    detail: str
