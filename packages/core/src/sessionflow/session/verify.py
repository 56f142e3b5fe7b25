"""Verified outcomes: what a tool's `verify` answers after its write's step died mid-call.

A write that runs once (or ran out of attempts) and whose step dies has an unknown
outcome: it may or may not have taken effect. A tool that can look (a file's hash, a
payment's ID) declares a verify. The session then runs it as its own read step, with the
write's idempotency key, and records what it says instead of ``outcome_unknown``:

| verify answers         | the record                    | the model sees                  |
| ---------------------- | ----------------------------- | ------------------------------- |
| `TookEffect(output)`   | ``succeeded``, verified       | ``output``                      |
| `NoEffect(message)`    | ``failed``, verified          | the failure, so it may retry    |
| `EffectUnknown(...)`   | ``outcome_unknown``           | the usual "check before" text   |

A verify step that fails every attempt also leaves ``outcome_unknown``. No I/O here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from sessionflow.session.errors import SessionStateError
from sessionflow.session.tools import AgentToolCallStatus

if TYPE_CHECKING:
    from sessionflow.session.runner import DeferredToolExecution
    from sessionflow.session.tools import DeferredToolCall

__all__ = [
    "MAX_VERIFY_BASIS_BYTES",
    "EffectUnknown",
    "NoEffect",
    "TookEffect",
    "VerifyCall",
    "VerifyResult",
    "checked_verify_basis",
    "settled_by_verify",
    "verify_answer",
]

MAX_VERIFY_BASIS_BYTES = 4096
"""The most a `DeferredToolCall.verify_basis` may hold: hashes and IDs, kept inline in the record."""


@dataclass(frozen=True, kw_only=True)
class TookEffect:
    """The write took effect; ``output`` is what the model sees as the call's result."""

    output: str


@dataclass(frozen=True, kw_only=True)
class NoEffect:
    """The write did not take effect; ``message`` is the failure the model sees (it may try again)."""

    message: str


@dataclass(frozen=True, kw_only=True)
class EffectUnknown:
    """Verify cannot tell; the call stays ``outcome_unknown``. ``reason`` goes to events and the record."""

    reason: str = ""


VerifyResult = TookEffect | NoEffect | EffectUnknown
"""What `AgentFrameworkRunner.verify_tool_call` (and a `ToolSpec.verify`) answers."""

VerifyAnswer = Literal["succeeded", "failed", "unknown"]


def verify_answer(result: VerifyResult | None) -> VerifyAnswer:
    """The answer's name, as the `tool_call_verified` event and the step's output carry it."""
    if isinstance(result, TookEffect):
        return "succeeded"
    if isinstance(result, NoEffect):
        return "failed"
    return "unknown"


def checked_verify_basis(call: DeferredToolCall) -> str | None:
    """The call's `verify_basis` for its record; a verify basis only travels with a verifiable call.

    Raises:
        SessionStateError: The basis is larger than `MAX_VERIFY_BASIS_BYTES` (it is kept
            inline in every record; hashes and IDs fit).
    """
    basis = call.verify_basis
    if basis is None or not call.verifiable:
        return None
    size = len(basis.encode("utf-8", "surrogateescape"))
    if size > MAX_VERIFY_BASIS_BYTES:
        raise SessionStateError(
            f"tool call {call.tool_call_id!r}: verify_basis is {size} bytes, at most {MAX_VERIFY_BASIS_BYTES}"
        )
    return basis


def settled_by_verify(
    result: VerifyResult | None, write_error: str
) -> tuple[AgentToolCallStatus, dict[str, Any]]:
    """The final status of a write whose step died (``write_error``), and the record's changes.

    None (the runner had no verify after all) and `EffectUnknown` keep ``outcome_unknown``
    with the step's error, and verify's reason after it; only a definite answer is
    `verified`.
    """
    if isinstance(result, TookEffect):
        return AgentToolCallStatus.SUCCEEDED, {"output": result.output, "verified": True}
    if isinstance(result, NoEffect):
        error = f"{result.message} (the tool's verify found this after its step died: {write_error})"
        return AgentToolCallStatus.FAILED, {"error": error, "verified": True}
    reason = result.reason if result is not None else "the runner has no verify for this tool"
    error = f"{write_error}; verify could not tell: {reason}" if reason else write_error
    return AgentToolCallStatus.OUTCOME_UNKNOWN, {"error": error}


@dataclass(frozen=True, kw_only=True)
class VerifyCall:
    """What a tool's verify is told about the write it checks (the handler's `ToolInvocation`, for verify).

    Attributes:
        tool_call_id: The model's ID for the write.
        idempotency_key: The write's key (the same on every attempt of the write and of
            its verify), so a verify can ask the system written to about exactly that write.
        attempt: The verify step's attempt (1, then higher on retries; it runs like a read).
        session_id: The session (workflow) ID.
        turn_id: The turn that made the call.
        tool_name: The tool's name as the model called it.
        session_settings: Settings of the turn that made the call.
        basis: What the runner recorded when it deferred the call (`DeferredToolCall.verify_basis`),
            e.g. the hashes of a file before and after an edit; None when it recorded nothing.
    """

    tool_call_id: str
    idempotency_key: str
    attempt: int
    session_id: str = ""
    turn_id: str = ""
    tool_name: str = ""
    session_settings: Mapping[str, Any] = field(default_factory=lambda: {})
    basis: str | None = None

    @classmethod
    def of(cls, call: DeferredToolExecution) -> VerifyCall:
        """The verify's view of the execution the session hands `verify_tool_call`."""
        record = call.tool_call
        return cls(
            tool_call_id=record.tool_call_id,
            idempotency_key=call.idempotency_key,
            attempt=call.attempt,
            session_id=call.session_id,
            turn_id=call.turn_id,
            tool_name=record.tool_name,
            session_settings=call.session_settings,
            basis=record.verify_basis,
        )
