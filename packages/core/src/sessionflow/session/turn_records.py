"""What each turn did, kept after it ends: its steps' text, its tool calls, how it ended.

The stored messages are the framework's history: a turn adds them only when it completes,
and they say nothing of effects, approvals or durations. A `TurnRecord` is the session's
own account, for people: it grows as the turn runs (each model step's text is recorded as
the step ends, with the calls it asked for), and it stays when the turn completes, fails,
is cancelled or stopped. Every client reads the same record, whether it connected late,
reloaded, or follows a turn another process's worker runs.

Records are bounded, since they ride in the workflow's state and its continue-as-new
input: each text is cut at a set size (saying how much), outputs larger than the inline
limit stay in the payload store (`has_stored_output`; `AgentSessionClient.tool_output`
reads them whole), and only the newest turns are kept (`MAX_TURN_RECORDS`,
`MAX_TURN_RECORD_BYTES`). A long turn's own record is bounded too, as it runs: it lists its
newest steps and calls (`MAX_TURN_STEPS_KEPT`, `MAX_TURN_CALLS_KEPT`, the others counted), and the texts of its oldest steps
and calls give way first (`TURN_STEP_TEXT_CHARS`, `TURN_CALL_TEXT_CHARS`), so a turn of any
length has a record of bounded size.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, replace
from enum import StrEnum

from sessionflow.session.bodies import BodyRef
from sessionflow.session.tools import AgentToolCall, ApprovalRecord
from sessionflow.session.usage import AgentUsage

__all__ = [
    "MAX_TURN_CALLS_KEPT",
    "MAX_TURN_RECORDS",
    "MAX_TURN_RECORD_BYTES",
    "MAX_TURN_STEPS_KEPT",
    "RECORD_ARGUMENTS_CHARS",
    "RECORD_OUTPUT_CHARS",
    "STEP_TEXT_CHARS",
    "TURN_CALL_TEXT_CHARS",
    "TURN_STEP_TEXT_CHARS",
    "RecordedToolCall",
    "TurnOutcome",
    "TurnRecord",
    "TurnStep",
    "bounded_call_texts",
    "cut",
    "recorded_tool_call",
]

STEP_TEXT_CHARS = 16_000
"""Characters of a model step's text a record keeps."""
RECORD_ARGUMENTS_CHARS = 8_000
"""Characters of a call's arguments a record keeps."""
RECORD_OUTPUT_CHARS = 8_000
"""Characters of an inline output a record keeps (a larger one is in the payload store)."""
MAX_TURN_RECORDS = 100
"""Ended turns kept; the oldest go first. The stored messages keep every turn."""
MAX_TURN_RECORD_BYTES = 512 * 1024
"""Approximate JSON bytes of the ended turns kept; the oldest go first (the newest stays)."""
MAX_TURN_STEPS_KEPT = 400
"""Model steps one turn's record lists, the newest; older ones are counted (`steps_dropped`)."""
MAX_TURN_CALLS_KEPT = 400
"""Tool calls one turn's record lists, the newest; older ones are counted (`tool_calls_dropped`)."""
TURN_STEP_TEXT_CHARS = 128_000
"""Characters of step text one turn's record keeps in all; the oldest steps' texts go first."""
TURN_CALL_TEXT_CHARS = 256_000
"""Characters of call arguments and inline outputs one turn's record keeps in all; the
oldest calls' go first (a stored output stays readable whole through `output_ref`)."""


class TurnOutcome(StrEnum):
    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"
    STOPPED = "stopped"
    """The session stopped the turn on its own (a budget, a loop, a continue limit)."""


@dataclass(frozen=True, kw_only=True)
class TurnStep:
    """One model step of a turn, as it ended.

    Attributes:
        step: Its step execution ID (``turn-3/model-2``).
        text: What the model wrote in it (its last attempt's text), cut at `STEP_TEXT_CHARS`.
        text_cut: Characters cut from `text` (0: whole).
        tool_call_ids: The calls it asked for, in order.
        ended_at: When the session recorded it (ISO 8601, UTC).
    """

    step: str
    text: str = ""
    text_cut: int = 0
    tool_call_ids: list[str] = field(default_factory=lambda: [])
    ended_at: str = ""


@dataclass(frozen=True, kw_only=True)
class RecordedToolCall:
    """One tool call of a turn, as a person reads it afterwards.

    Attributes:
        effect: The call's final effect (`ToolEffect` value).
        arguments: The arguments that ran (or were proposed), cut at `RECORD_ARGUMENTS_CHARS`.
        status: Its `AgentToolCallStatus` value.
        started_at, finished_at: When its step started and ended; None when it never ran.
        output: Its output, when inline, cut at `RECORD_OUTPUT_CHARS`; its preview when stored.
        output_cut: Characters of the output not in `output` (0: whole).
        has_stored_output: The whole output is in the payload store (`output_ref`).
        approval: How its approval was answered (who, when, the reason); None when it did not wait.
        approval_reason: Why it waited for approval; None when it did not.
    """

    tool_call_id: str
    tool_name: str
    effect: str
    arguments: str
    arguments_cut: int = 0
    status: str
    started_at: str | None = None
    finished_at: str | None = None
    output: str | None = None
    output_cut: int = 0
    has_stored_output: bool = False
    output_ref: BodyRef | None = None
    error: str | None = None
    approval: ApprovalRecord | None = None
    approval_reason: str | None = None


@dataclass(frozen=True, kw_only=True)
class TurnRecord:
    """One turn, running or ended.

    Attributes:
        turn_id: ``turn-<number>``.
        message_id: The ID its user message was sent with.
        outcome: How it ended, or ``running``.
        started_at, ended_at: ISO 8601, UTC; `ended_at` is None while it runs.
        error: Why it failed or stopped.
        user_sequence: The stored sequence of its user message.
        note_sequence: The stored sequence of the note it left for the next turn's model (a
            message with the user's role that the session wrote, not the person).
        steps: Its model steps that ended, in order (the newest `MAX_TURN_STEPS_KEPT`).
        steps_dropped: Its older steps not listed in `steps`.
        tool_calls: Its tool calls, in the order the model asked for them (the newest
            `MAX_TURN_CALLS_KEPT`).
        tool_calls_dropped: Its older calls not listed in `tool_calls`.
        usage: The usage of its model calls.
        cost: Their cost by the budget's prices (0 without prices).
    """

    turn_id: str
    number: int
    message_id: str | None = None
    outcome: TurnOutcome = TurnOutcome.RUNNING
    started_at: str = ""
    ended_at: str | None = None
    error: str | None = None
    user_sequence: int | None = None
    note_sequence: int | None = None
    steps: list[TurnStep] = field(default_factory=lambda: [])
    steps_dropped: int = 0
    tool_calls: list[RecordedToolCall] = field(default_factory=lambda: [])
    tool_calls_dropped: int = 0
    usage: AgentUsage = field(default_factory=AgentUsage)
    cost: float = 0.0

    def approximate_bytes(self) -> int:
        return len(json.dumps(asdict(self), default=str))


def cut(text: str, limit: int) -> tuple[str, int]:
    """`text` cut at `limit` characters, and how many were cut."""
    if len(text) <= limit:
        return text, 0
    return text[:limit], len(text) - limit


def recorded_tool_call(record: AgentToolCall, times: list[str], reason: str | None) -> RecordedToolCall:
    """The turn's account of one call record, with its step's start and end times."""
    arguments, arguments_cut = cut(record.arguments, RECORD_ARGUMENTS_CHARS)
    output: str | None = None
    output_cut = 0
    if record.output is not None:
        output, output_cut = cut(record.output, RECORD_OUTPUT_CHARS)
    return RecordedToolCall(
        tool_call_id=record.tool_call_id,
        tool_name=record.tool_name,
        effect=record.policy.effect.value,
        arguments=arguments,
        arguments_cut=arguments_cut,
        status=record.status.value,
        started_at=times[0] if times else None,
        finished_at=times[1] if len(times) > 1 else None,
        output=output,
        output_cut=output_cut,
        has_stored_output=record.output_ref is not None,
        output_ref=record.output_ref,
        error=record.error or record.rejection_message,
        approval=record.approval,
        approval_reason=reason,
    )


def bounded_call_texts(calls: list[RecordedToolCall]) -> list[RecordedToolCall]:
    """``calls`` with the oldest ones' arguments and outputs emptied (and counted as cut)
    until the texts of all fit `TURN_CALL_TEXT_CHARS`; the newest call keeps its texts."""
    total = sum(len(c.arguments) + len(c.output or "") for c in calls)
    bounded = list(calls)
    for index, call in enumerate(calls[:-1]):
        if total <= TURN_CALL_TEXT_CHARS:
            break
        output = call.output or ""
        total -= len(call.arguments) + len(output)
        bounded[index] = replace(
            call,
            arguments="",
            arguments_cut=call.arguments_cut + len(call.arguments),
            output=None if call.output is None else "",
            output_cut=call.output_cut + len(output),
        )
    return bounded
