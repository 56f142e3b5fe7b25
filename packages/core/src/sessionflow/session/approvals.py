"""Whether a deferred call waits for a person, and as what: the session's floor and the framework's own rules.

The session's policy is a floor. The floor is `ToolPolicy.is_approval_required`: an
explicit `ToolPolicy.requires_approval`, else the effect's default (a non-idempotent or
unclassified write asks). A harness folds its own always-ask rules into that policy (the
CLI's ``approval.always`` becomes ``requires_approval=True`` in its call policy), so they
are part of the floor too.

The framework may add to the floor, never take from it:

- ``framework_approval="required"`` (OpenAI ``needs_approval``, Pydantic AI
  ``requires_approval``, LangChain's ``HumanInTheLoopMiddleware``) asks even where the
  floor would not, for a read for example; the interrupt's ``source`` is then
  ``"framework"``.
- ``framework_approval="pre_approved"`` (Claude ``allowed_tools``) changes nothing about
  whether the call waits: every approval the session asks for is the floor's. It is kept
  on the record and in the ``tool_call_deferred`` event, so a person sees that the
  framework would have run the call and the session's floor asked anyway.
- A ``question`` always waits, as an interrupt of kind ``"question"`` answered with a
  value (`check_answer`).

``approval_source`` says who demanded the wait: ``"session"`` when the floor does (even if
the framework asked too), ``"framework"`` when only the framework did, None when nobody.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from sessionflow.session.bodies import INLINE_BODY_BYTES, utf8_size
from sessionflow.session.errors import SessionStateError, UserError
from sessionflow.session.state import InterruptKind
from sessionflow.session.tools import ApprovalSource, DeferredToolCall, ToolPolicy

__all__ = [
    "MAX_ANSWER_BYTES",
    "ApprovalDecision",
    "InvalidAnswerError",
    "StaleApprovalError",
    "approval_reason",
    "as_session_approval",
    "check_answer",
    "decide_approval",
]

MAX_ANSWER_BYTES = INLINE_BODY_BYTES
"""Bytes of UTF-8 an answer to a question may have. The answer stays on the call's record
and travels inline to every later step of the turn, so it is held to the inline limit; a
longer answer is refused with a clear error, not cut."""

_FRAMEWORK_APPROVALS = (None, "required", "pre_approved")


class InvalidAnswerError(UserError, ValueError):
    """A question was approved without an answer, or with one longer than `MAX_ANSWER_BYTES`.

    The session refuses the answer and the question stays pending, so it can be answered again.
    """


class StaleApprovalError(UserError, ValueError):
    """An answer named the digest of other arguments than the interrupt shows now.

    The person approved what an older screen showed (the call was rewritten and asks
    again). The interrupt stays pending, so it can be answered for what it shows.
    """


@dataclass(frozen=True, kw_only=True)
class ApprovalDecision:
    """The session's decision for one deferred call."""

    waits: bool
    kind: InterruptKind = "approval"
    source: ApprovalSource | None = None
    reason: str | None = None
    """Why it waits, in words (`approval_reason`); None when it does not."""


def decide_approval(call: DeferredToolCall) -> ApprovalDecision:
    """Whether `call` waits for a person, as an approval or a question, and who demanded it.

    Raises:
        SessionStateError: The runner sent a framework approval the contract does not know,
            or a blank question.
    """
    if call.framework_approval not in _FRAMEWORK_APPROVALS:
        raise SessionStateError(
            f"tool call {call.tool_call_id!r}: framework_approval must be 'required', 'pre_approved' "
            f"or None, got {call.framework_approval!r}"
        )
    floor = call.policy.is_approval_required
    if call.question is not None:
        if not call.question.strip():
            raise SessionStateError(f"tool call {call.tool_call_id!r}: the question is blank")
        source: ApprovalSource = "session" if floor else "framework"
        return ApprovalDecision(
            waits=True, kind="question", source=source, reason="the agent asks a question"
        )
    if floor:
        return ApprovalDecision(waits=True, source="session", reason=approval_reason(call.policy))
    if call.framework_approval == "required":
        return ApprovalDecision(waits=True, source="framework", reason=FRAMEWORK_RULE)
    return ApprovalDecision(waits=False)


FRAMEWORK_RULE = "the framework's own rule asks for approval (the session's policy would not)"


def approval_reason(policy: ToolPolicy) -> str:
    """Why the session's floor asks for `policy`'s call, as a person reads it beside the approval.

    A harness's own words come first (`ToolPolicy.approval_reason`: the CLI says which of
    its rules asked), then an explicit policy, then the effect's default.
    """
    if policy.approval_reason:
        return policy.approval_reason
    if policy.requires_approval is True:
        return "an explicit policy for this tool requires approval"
    return f"`{policy.effect.value}` calls ask for approval by default"


def as_session_approval(call: DeferredToolCall) -> DeferredToolCall:
    """`call` for a workflow that predates framework approvals and questions.

    Such a workflow reads only the policy, so a call that waits because the framework asks
    (or asks a question) gets ``requires_approval=True``: it still waits, as an approval
    whose answer travels as before (`AgentToolCall.answer`).
    """
    if call.framework_approval is None and call.question is None:
        return call
    if decide_approval(call).waits and not call.policy.is_approval_required:
        return replace(call, policy=replace(call.policy, requires_approval=True))
    return call


def check_answer(kind: InterruptKind, *, approved: bool, answer: str | None) -> None:
    """Refuse an answer a question cannot take; approvals take any answer, as before.

    A question answered ``approved=True`` needs an ``answer`` (an empty string is an
    answer): approving a question without one would hand the framework nothing to resume
    with, so it is refused rather than guessed. ``approved=False`` declines it.

    Raises:
        InvalidAnswerError: The question was approved without an answer, or the answer is
            longer than `MAX_ANSWER_BYTES`.
    """
    if kind != "question" or not approved:
        return
    if answer is None:
        raise InvalidAnswerError(
            "this interrupt is a question: answer it with answer=..., or decline it with approved=False"
        )
    size = utf8_size(answer)
    if size > MAX_ANSWER_BYTES:
        raise InvalidAnswerError(
            f"the answer is {size:,} bytes; a question takes at most {MAX_ANSWER_BYTES:,}"
        )
