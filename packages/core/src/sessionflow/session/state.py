"""Session-level state shown to clients: status, interrupts, snapshots, pages."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal

from sessionflow.session.approval_preview import ApprovalPreview
from sessionflow.session.double_texting import DoubleTexting
from sessionflow.session.fork import ForkedFrom
from sessionflow.session.messages import AgentMessage
from sessionflow.session.superseded import SupersededRange
from sessionflow.session.tools import AgentToolCall, ApprovalSource
from sessionflow.session.usage import AgentUsage

__all__ = [
    "AgentInterrupt",
    "AgentMessagesPage",
    "AgentSnapshot",
    "AgentState",
    "AgentStatus",
    "InterruptKind",
]

InterruptKind = Literal["approval", "question"]
"""An approval is answered yes or no; a question is answered with a value (`answer`)."""


class AgentStatus(StrEnum):
    WAITING_FOR_USER_MESSAGE = "waiting_for_user_message"
    RUNNING_MODEL = "running_model"
    RUNNING_TOOLS = "running_tools"


@dataclass(frozen=True, kw_only=True)
class AgentState:
    """Where the session stands. `last_turn_error` is cleared when a later turn completes."""

    status: AgentStatus = AgentStatus.WAITING_FOR_USER_MESSAGE
    turn_id: str | None = None
    turn_count: int = 0
    last_turn_error: str | None = None
    last_turn_outcome: str | None = None
    """How the last ended turn ended (`TurnOutcome` value: ``completed``, ``failed``,
    ``cancelled``, ``stopped``); None before any turn ended."""


@dataclass(frozen=True, kw_only=True)
class AgentInterrupt:
    """A tool call waiting for a person's approval or answer. Times are ISO 8601 in UTC."""

    interrupt_id: str
    turn_id: str
    tool_call_id: str
    tool_name: str
    arguments: str
    raised_at: str
    deadline: str | None = None
    kind: InterruptKind = "approval"
    question: str | None = None
    """The question text, for `kind="question"`."""
    source: ApprovalSource = "session"
    """Who asked: the session's floor (effect, explicit policy, `approval.always`) or only
    the framework (its own approval rule, or a question)."""
    digest: str | None = None
    """`approval_digest` of the call as shown (tool, effect, arguments). An answer that names
    another digest is refused; the approval binds the tool step to these arguments."""
    previous_arguments: str | None = None
    """What the arguments were before a rewrite (a hook, an edit, a middleware in the tool
    step), so a person sees the change as a diff; None when nothing rewrote them."""
    effect: str | None = None
    """The call's effect (`ToolEffect` value), as the digest covers it."""
    reason: str | None = None
    """Why the call waits, in words (`sessionflow.session.approvals.approval_reason`): the
    effect's default, an explicit policy, a harness's rule, the framework's own rule."""
    preview: ApprovalPreview | None = None
    """How the call reads for a person (a file write's diff), made by the worker; None when
    the flow makes none, and a client then shows the arguments."""


@dataclass(frozen=True, kw_only=True)
class AgentSnapshot:
    """Everything a client needs to draw a session. `state` is None before the session starts."""

    session_id: str
    state: AgentState | None
    messages: list[AgentMessage]
    message_count: int
    pending_interrupts: list[AgentInterrupt]
    tool_calls: list[AgentToolCall]
    usage: AgentUsage
    queued_message_count: int
    stopped: bool = False
    environment: dict[str, str] = field(default_factory=lambda: {})
    """Where the session was started (host, user, workspace...), as its start input recorded."""
    carried_state_preview: str | None = None
    """The state the next turn starts from (`TurnCompleted.carry`): its first 2,048
    characters, with a marker saying how much was cut; None when nothing is carried."""
    carried_state_by_reference: bool = False
    """The carried state is in the payload store (it was larger than the inline limit)."""
    framework_state: dict[str, Any] | None = None
    """The framework's state after the last completed turn, as JSON values by key (a
    LangGraph thread's state keys); None when the runner shows none. At most 64 KiB of
    JSON (`FRAMEWORK_STATE_BYTES`): a key that did not fit is in `framework_state_omitted`."""
    framework_state_omitted: list[str] = field(default_factory=lambda: [])
    """Keys of the framework's state left out of `framework_state` because of its size."""
    double_texting: DoubleTexting = DoubleTexting.ENQUEUE
    """What the session does with a message sent while it is busy, unless the message says."""
    forked_from: ForkedFrom | None = None
    """The session and turn this session was forked from (`fork_session`); None otherwise."""
    steered_message_count: int = 0
    """Messages sent to steer the running turn that its next model step has not taken yet."""


@dataclass(frozen=True, kw_only=True)
class AgentMessagesPage:
    """One page of stored messages, oldest first. Pass `next_after` to get the next page."""

    messages: list[AgentMessage]
    next_after: int | None
    superseded: list[SupersededRange] = field(default_factory=lambda: [])
    """Superseded ranges that overlap this page's messages, when it holds superseded ones
    too (`include_superseded`): what the framework's history no longer holds, and which
    turn dropped it. Empty on a page of live messages only."""
