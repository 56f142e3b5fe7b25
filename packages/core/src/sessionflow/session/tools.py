"""Tool effects, policies, and the record kept for each tool call of a turn."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any, ClassVar, Literal, cast

from sessionflow.session.approval_preview import ApprovalPreview
from sessionflow.session.bodies import BodyRef
from sessionflow.session.errors import InvalidToolCallError, SessionRunError, SessionStateError

__all__ = [
    "MAX_LOCAL_TIMEOUT",
    "AgentToolCall",
    "AgentToolCallStatus",
    "ApprovalRecord",
    "ApprovalSource",
    "DeferredToolCall",
    "FrameworkApproval",
    "ToolEffect",
    "ToolExecutionError",
    "ToolExecutionResult",
    "ToolPolicy",
    "describe_tool_call_outcome",
    "parse_tool_arguments",
    "tool_arguments_object",
    "validate_tool_call_ids",
]


FrameworkApproval = Literal["required", "pre_approved"]
"""What the framework itself says about approving a call (`DeferredToolCall.framework_approval`)."""

ApprovalSource = Literal["session", "framework"]
"""Who asked for a call's approval: the session's floor, or only the framework."""


class ToolEffect(StrEnum):
    """What running a tool does to the world. It decides retries and approval.

    The members are listed in their order of caution (`caution`): ``read`` <
    ``idempotent_write`` < ``non_idempotent_write`` < ``unclassified``.
    """

    READ = "read"
    IDEMPOTENT_WRITE = "idempotent_write"
    NON_IDEMPOTENT_WRITE = "non_idempotent_write"
    UNCLASSIFIED = "unclassified"

    @property
    def caution(self) -> int:
        """The rank of this effect in the order of caution; a higher rank is more cautious.

        `UNCLASSIFIED` ranks above `NON_IDEMPOTENT_WRITE`: a tool nobody classified may do
        whatever a known non-idempotent write does, or worse, so knowing less about a tool
        never makes its call look safer. Both run once and ask by default; the rank decides
        which effect a call keeps when two sources disagree (`more_cautious`).
        """
        return _CAUTION[self]

    def more_cautious(self, other: ToolEffect) -> ToolEffect:
        """The more cautious of this effect and `other` (this one when they are equal)."""
        return self if self.caution >= other.caution else other

    @property
    def max_attempts_allowed(self) -> int:
        """3 for effects that are safe to repeat, else exactly 1."""
        return 3 if self in (ToolEffect.READ, ToolEffect.IDEMPOTENT_WRITE) else 1

    @property
    def is_retryable(self) -> bool:
        return self.max_attempts_allowed > 1

    @property
    def requires_approval_by_default(self) -> bool:
        return not self.is_retryable


MAX_LOCAL_TIMEOUT = 30.0
"""The longest `ToolPolicy.local_timeout`, in seconds. A local step longer than Temporal's
workflow-task timeout (10 s by default) makes the worker heartbeat that task, which adds
events to the history; beyond this, a regular step is the better choice."""


@dataclass(frozen=True, kw_only=True)
class ToolPolicy:
    """How the session treats one tool. `requires_approval=None` uses the effect's default."""

    effect: ToolEffect
    requires_approval: bool | None = None
    allow_repeats: bool = False
    """Allow the same call (same tool, same arguments) more than once in a turn."""
    max_output_bytes: int | None = None
    """Bytes of this tool's output the model sees; None uses the session default
    (`AgentSessionOptions.max_tool_output_bytes`). The whole output is always stored."""
    approval_reason: str | None = field(default=None, compare=False)
    """Why this policy asks for approval, in words a person reads beside the approval (a
    harness's own rule: "`approval.always` names write_file"); None says it by the policy
    (`sessionflow.session.approvals.approval_reason`). It changes nothing about whether the
    call waits, and two policies that differ only in it are equal."""
    local_timeout: float | None = None
    """Seconds a call may take as a local step; None runs it as a regular step (the default).

    A local step is a Temporal local activity: still durable and retried, recorded as one
    marker, but run on the session's own worker without a round trip through the task
    queue, so a short read costs less time and history. Reads only, since a worker that
    dies mid-step repeats it; at most `MAX_LOCAL_TIMEOUT`, since a local step has no
    heartbeat and a long one holds the session's workflow task open.
    """

    def __post_init__(self) -> None:
        if self.max_output_bytes is not None and self.max_output_bytes < 1:
            raise ValueError(f"max_output_bytes must be at least 1, got {self.max_output_bytes!r}")
        if self.local_timeout is not None:
            if self.effect is not ToolEffect.READ:
                raise ValueError(f"local_timeout is for read tools only, not {self.effect.value!r} ones")
            if not 0 < self.local_timeout <= MAX_LOCAL_TIMEOUT:
                # The comparison is false for NaN as well.
                raise ValueError(
                    f"local_timeout must be more than 0 and at most {MAX_LOCAL_TIMEOUT:g} seconds, "
                    f"got {self.local_timeout!r}"
                )
            # One spelling in payloads whether it was given as 5 or 5.0.
            object.__setattr__(self, "local_timeout", float(self.local_timeout))

    @property
    def is_approval_required(self) -> bool:
        if self.requires_approval is None:
            return self.effect.requires_approval_by_default
        return self.requires_approval


# Written out rather than taken from the declaration order, so that a new member must be
# ranked on purpose (a KeyError in `caution` otherwise).
_CAUTION = {
    ToolEffect.READ: 0,
    ToolEffect.IDEMPOTENT_WRITE: 1,
    ToolEffect.NON_IDEMPOTENT_WRITE: 2,
    ToolEffect.UNCLASSIFIED: 3,
}


class AgentToolCallStatus(StrEnum):
    """Where one tool call record stands. The last four are final."""

    PENDING = "pending"
    AWAITING_APPROVAL = "awaiting_approval"
    APPROVED = "approved"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    REJECTED = "rejected"
    OUTCOME_UNKNOWN = "outcome_unknown"

    @property
    def is_final(self) -> bool:
        return self in _FINAL_STATUSES


_FINAL_STATUSES = frozenset(
    {
        AgentToolCallStatus.SUCCEEDED,
        AgentToolCallStatus.FAILED,
        AgentToolCallStatus.REJECTED,
        AgentToolCallStatus.OUTCOME_UNKNOWN,
    }
)

_S = AgentToolCallStatus
LEGAL_STATUS_MOVES: dict[AgentToolCallStatus, frozenset[AgentToolCallStatus]] = {
    # A pending or approved call may be rejected without running when its turn is cancelled.
    _S.PENDING: frozenset({_S.RUNNING, _S.REJECTED}),
    _S.AWAITING_APPROVAL: frozenset({_S.APPROVED, _S.REJECTED}),
    _S.APPROVED: frozenset({_S.RUNNING, _S.REJECTED}),
    # A running call whose framework rewrote its approved arguments waits for a new approval;
    # the rewritten call has not run (`AgentToolCall.rebound_arguments`).
    _S.RUNNING: frozenset({_S.SUCCEEDED, _S.FAILED, _S.OUTCOME_UNKNOWN, _S.AWAITING_APPROVAL}),
    _S.SUCCEEDED: frozenset(),
    _S.FAILED: frozenset(),
    _S.REJECTED: frozenset(),
    _S.OUTCOME_UNKNOWN: frozenset(),
}


@dataclass(frozen=True, kw_only=True)
class DeferredToolCall:
    """A tool call the model asked for, returned by the runner instead of running it."""

    tool_call_id: str
    tool_name: str
    arguments: str
    policy: ToolPolicy
    proposal_error: str | None = None
    """Set by the session's proposal check (`<code>: <message>`); such a call never runs."""
    framework_approval: FrameworkApproval | None = None
    """The framework's own approval rule for this call (OpenAI `needs_approval`, Claude
    `allowed_tools`, ...): ``"required"`` adds an approval; ``"pre_approved"`` is recorded
    but never removes one the session's floor demands (see `sessionflow.session.approvals`)."""
    question: str | None = None
    """The framework asks the person this question (a LangGraph `interrupt(value)`, the
    CLI's `ask_user`): the call waits as a question, answered with a value."""
    verifiable: bool = False
    """The runner can verify this call's outcome (`AgentFrameworkRunner.verify_tool_call`): a
    write whose step dies mid-call is then checked by a verify step instead of ending
    ``outcome_unknown`` at once."""
    verify_basis: str | None = None
    """What the verify needs from before the write (hashes, an ID), recorded now, when the
    call is deferred, so it is durable; at most `MAX_VERIFY_BASIS_BYTES`."""
    previous_arguments: str | None = None
    """The arguments before the framework rewrote them on the way to the session (a Claude
    hook's ``updatedInput``, a LangChain edit decision), so an approval shows the change
    as a diff. None when nothing rewrote them."""
    skip_run_state: bool = False
    """The runner's `execute_deferred_tool_call` reads nothing of the run state for this call,
    so its tool step is given none (`DeferredToolExecution.run_state` is None): the step's
    input stays small and the step does not read a stored run state."""
    preview: ApprovalPreview | None = None
    """How the call reads for a person, set by the worker's `AgentSessionOptions.approval_preview`
    for a call that waits (a file write's diff against the workspace); the interrupt shows it."""

    def parsed_arguments(self) -> dict[str, Any]:
        """The arguments as a JSON object; see `parse_tool_arguments`."""
        return parse_tool_arguments(self.arguments)


@dataclass(frozen=True, kw_only=True)
class ApprovalRecord:
    """How a call's approval was answered: by whom, when, and for exactly what.

    Attributes:
        interrupt_id: The interrupt that asked.
        approved: The answer.
        digest: `approval_digest` of the call as the interrupt showed it.
        answered_by: Who answered, as the client said (the server: the signed-in user;
            the CLI: ``<user>@<host> (cli)``); None when nobody did (a deadline, a cancel).
        answered_at: When the session applied the answer (ISO 8601, UTC).
        expired: The deadline passed first.
        reason: The rejection's message, when one was given.
    """

    interrupt_id: str
    approved: bool
    digest: str | None
    answered_by: str | None
    answered_at: str
    expired: bool = False
    reason: str | None = None


@dataclass(frozen=True, kw_only=True)
class AgentToolCall:
    """The session's record of one tool call in the active turn."""

    tool_call_id: str
    tool_name: str
    arguments: str
    policy: ToolPolicy
    deferral_order: int
    status: AgentToolCallStatus
    output: str | None = None
    error: str | None = None
    rejection_message: str | None = None
    interrupt_id: str | None = None
    answer: str | None = None
    """A person's answer given with the approval (for question tools such as `ask_user`)."""
    output_ref: BodyRef | None = None
    """The whole output, when it was too large to keep in the session; `output` is then a
    preview, and the model step reads the output (capped) from the store."""
    state_update: str | None = None
    """The framework state update the tool returned with a success (framework-encoded), for
    the next model step; None when it returned none. A call that did not succeed has none."""
    state_update_ref: BodyRef | None = None
    """The update, when it was too large to keep in the session; `state_update` is then None."""
    approval_source: ApprovalSource | None = None
    """Who asked for the approval (None: the call did not wait), so a runner can show a
    rejection of the framework's own approval as the framework would."""
    framework_approval: FrameworkApproval | None = None
    """The framework's own rule as the runner reported it (`DeferredToolCall.framework_approval`)."""
    question: str | None = None
    """The question the call waits on (`DeferredToolCall.question`); `answer` holds the reply."""
    verifiable: bool = False
    """From `DeferredToolCall.verifiable`: a verify step may settle a write whose step died."""
    verify_basis: str | None = None
    """From `DeferredToolCall.verify_basis`, handed to the verify."""
    verified: bool = False
    """The final status came from the tool's verify, not from the write's own step."""
    skip_run_state: bool = False
    """From `DeferredToolCall.skip_run_state`: the tool step is given no run state."""
    approval: ApprovalRecord | None = None
    """The last answer to this call's approval; None when it never waited."""
    rebound_arguments: str | None = None
    """The arguments the framework rewrote the call to in its tool step, after the person
    approved the model's: the new approval is for these, and the step runs only them."""
    rebinds: int = 0
    """How many times the call's arguments were rewritten after an approval."""

    @property
    def is_final(self) -> bool:
        return self.status.is_final

    def parsed_arguments(self) -> dict[str, Any]:
        """The arguments as a JSON object; see `parse_tool_arguments`."""
        return parse_tool_arguments(self.arguments)

    def moved_to(self, status: AgentToolCallStatus, **changes: Any) -> AgentToolCall:
        """Return this record in `status`, refusing moves the state machine forbids."""
        if status not in LEGAL_STATUS_MOVES[self.status]:
            raise SessionStateError(
                f"tool call {self.tool_call_id!r} cannot move from {self.status.value!r} to {status.value!r}"
            )
        return replace(self, status=status, **changes)


@dataclass(frozen=True, kw_only=True)
class ToolExecutionResult:
    """What a tool returned, as the text the model will see.

    `state_update` is a change to the framework's run state (framework-encoded text, such
    as a LangGraph `Command(update=...)`), which the next model step applies; see
    `AgentTurnContext.state_updates`.
    """

    output: str
    state_update: str | None = None


class ToolExecutionError(SessionRunError):
    """Raise from a tool to report a failure the model should see. It is never retried.

    `state_update` is the framework's own account of the failure (framework-encoded text,
    such as Pydantic AI's "retry with this prompt" as opposed to "failed"), kept on the
    failed call's record for the next model step to read; it changes no run state
    (`AgentTurnContext.state_updates` lists successful calls only).
    """

    retryable: ClassVar[bool] = False

    def __init__(self, message: str, *, state_update: str | None = None) -> None:
        super().__init__(message)
        self.state_update = state_update


def parse_tool_arguments(arguments: str) -> dict[str, Any]:
    """A tool call's arguments as the JSON object a tool takes; empty text is ``{}``.

    Every adapter runs a tool through this, so the model sees the same text for the same
    mistake whichever framework runs the session.

    Raises:
        ToolExecutionError: The text is not JSON, or is JSON but not an object.
    """
    try:
        parsed: object = json.loads(arguments or "{}")
    except ValueError as error:
        raise ToolExecutionError(f"arguments are not valid JSON: {error}") from None
    if not isinstance(parsed, dict):
        raise ToolExecutionError("arguments must be a JSON object")
    return cast(dict[str, Any], parsed)


def tool_arguments_object(arguments: str) -> dict[str, Any] | None:
    """The arguments as a JSON object, or None when they are not one.

    For readers that must not fail on a malformed call (displays, policy checks, the
    session's own memory tools); a tool that runs uses `parse_tool_arguments`.
    """
    try:
        return parse_tool_arguments(arguments)
    except ToolExecutionError:
        return None


def describe_tool_call_outcome(record: AgentToolCall) -> str:
    """The model-visible text for a final tool call record."""
    match record.status:
        case AgentToolCallStatus.SUCCEEDED:
            return record.output or ""
        case AgentToolCallStatus.FAILED:
            return f"Tool call failed: {record.error or 'unknown error'}"
        case AgentToolCallStatus.REJECTED:
            if record.rejection_message:
                return f"Tool call rejected by the user: {record.rejection_message}"
            if record.error:
                # Nobody said no (e.g. the approval expired): say why it did not run.
                return f"Tool call not run: {record.error}"
            return "Tool call rejected by the user."
        case AgentToolCallStatus.OUTCOME_UNKNOWN:
            detail = f" ({record.error})" if record.error else ""
            return (
                "The outcome of this tool call is unknown: it may or may not have taken effect"
                f"{detail}. Check before repeating it."
            )
        case _:
            raise SessionStateError(
                f"tool call {record.tool_call_id!r} is not final (status {record.status.value!r})"
            )


def validate_tool_call_ids(calls: Iterable[DeferredToolCall], earlier_ids: Iterable[str] = ()) -> None:
    """Check the IDs of one model response against each other and the turn's earlier calls.

    IDs must be non-empty, contain no `/` (the idempotency key uses it as a separator),
    and be unique within one turn.
    """
    seen = set(earlier_ids)
    for call in calls:
        tool_call_id = call.tool_call_id
        if not tool_call_id.strip():
            raise InvalidToolCallError(f"tool call ID for tool {call.tool_name!r} is empty")
        if "/" in tool_call_id:
            raise InvalidToolCallError(f"tool call ID {tool_call_id!r} contains '/'")
        if tool_call_id in seen:
            raise InvalidToolCallError(f"tool call ID {tool_call_id!r} is used twice in one turn")
        seen.add(tool_call_id)


def render_arguments(arguments: str) -> str:
    """Compact one-line JSON for notes and displays; non-JSON text is returned as is."""
    try:
        return json.dumps(json.loads(arguments), separators=(",", ":"), ensure_ascii=False)
    except ValueError:
        return " ".join(arguments.split())
