"""LangGraph's ``interrupt()`` as the session's questions and approvals.

A run of the graph that stops with interrupts becomes *interrupt calls*: deferred tool
calls the session asks a person about, and whose tool step runs no tool of the graph.

* A plain ``interrupt(value)`` is one question (the value's text: a string as is, anything
  else as JSON), named `INTERRUPT_TOOL`. Its answer is what ``interrupt()`` returns.
* A `HumanInTheLoopMiddleware` request (``action_requests`` and ``review_configs``) is
  one approval per action, named after the real tool with its real arguments, so a
  person sees what they approve. The decision sent back is LangChain's own: approve
  (approved without an answer), edit, reject or respond (approved with that decision as
  JSON), or reject with the rejection message (declined). A per-call
  ``ToolApprovalRequest`` is one such approval, answered with one decision.

The next model step resumes the graph with ``Command(resume={interrupt_id: value})``,
LangGraph's own way, so the graph goes on exactly as it would without sessionflow.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast

from langgraph.types import Interrupt

from sessionflow import AgentToolCall, AgentToolCallStatus, ToolEffect, ToolPolicy
from sessionflow.kit import (
    DeferredToolCall,
    ToolExecutionError,
    canonical_arguments,
    describe_tool_call_outcome,
)

__all__ = [
    "INTERRUPT_TOOL",
    "INTERRUPT_TOOL_SCHEMA",
    "InterruptCall",
    "answer_output",
    "decision_of",
    "defer_interrupts",
    "resume_map",
    "resume_value",
]

INTERRUPT_TOOL = "langgraph_interrupt"
"""The tool name of a plain ``interrupt()``'s question; the graph has no tool behind it."""

INTERRUPT_TOOL_SCHEMA: Mapping[str, Any] = {"type": "object"}

InterruptKind = Literal["question", "decisions", "decision"]
"""``question``: a plain ``interrupt(value)``. ``decisions``: one action of a batched
`HITLRequest` (answered together as ``{"decisions": [...]}``). ``decision``: a per-call
``ToolApprovalRequest`` (answered with one decision)."""

_DECISIONS = frozenset({"approve", "edit", "reject", "respond"})

# An interrupt call runs nothing, so the session's floor has nothing to guard: the
# framework's ask is the one wait. The real call, when the graph reaches its tool node,
# is deferred with its own policy like any call.
_POLICY = ToolPolicy(effect=ToolEffect.READ)


@dataclass(frozen=True, kw_only=True)
class InterruptCall:
    """One interrupt call, as the run state keeps it."""

    tool_call_id: str
    interrupt_id: str
    kind: InterruptKind
    index: int = 0
    """The action's position in a batched `HITLRequest`."""
    waiting_call: str | None = None
    """The real tool call whose tool-node run called ``interrupt()``; None: a node did."""

    def to_json(self) -> dict[str, Any]:
        raw: dict[str, Any] = {"id": self.tool_call_id, "interrupt": self.interrupt_id, "kind": self.kind}
        if self.index:
            raw["index"] = self.index
        if self.waiting_call is not None:
            raw["waiting"] = self.waiting_call
        return raw

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> InterruptCall:
        kind = str(raw["kind"])
        if kind not in ("question", "decisions", "decision"):
            raise ValueError(f"unknown interrupt call kind {kind!r}")
        waiting = raw.get("waiting")
        return cls(
            tool_call_id=str(raw["id"]),
            interrupt_id=str(raw["interrupt"]),
            kind=kind,
            index=int(raw.get("index", 0)),
            waiting_call=str(waiting) if waiting is not None else None,
        )


def defer_interrupts(
    interrupts: Iterable[Interrupt], *, taken: Iterable[str], where: str, waiting_call: str | None = None
) -> list[tuple[InterruptCall, DeferredToolCall]]:
    """The interrupt calls for ``interrupts``, with tool call IDs none of ``taken`` has.

    ``where`` names what interrupted (a node, or a tool node's call) in a plain question's
    arguments, so a person sees where the question comes from.
    """
    used = set(taken)
    calls: list[tuple[InterruptCall, DeferredToolCall]] = []

    def add(interrupt: Interrupt, kind: InterruptKind, index: int, deferred: DeferredToolCall) -> None:
        # An ID of its own: the same task interrupts with the same ID each time it runs.
        base = f"interrupt-{interrupt.id[:16]}"
        number = 1
        while f"{base}-{number}" in used:
            number += 1
        tool_call_id = f"{base}-{number}"
        used.add(tool_call_id)
        record = InterruptCall(
            tool_call_id=tool_call_id,
            interrupt_id=interrupt.id,
            kind=kind,
            index=index,
            waiting_call=waiting_call,
        )
        calls.append((record, _with_id(deferred, tool_call_id)))

    for interrupt in interrupts:
        value: Any = interrupt.value
        if _is_hitl_request(value):
            actions = cast(list[Mapping[str, Any]], cast(Mapping[str, Any], value)["action_requests"])
            for index, action in enumerate(actions):
                add(interrupt, "decisions", index, _approval(action))
        elif _is_tool_approval(value):
            add(interrupt, "decision", 0, _approval(cast(Mapping[str, Any], value)))
        else:
            add(interrupt, "question", 0, _question(value, where))
    return calls


def _is_hitl_request(value: object) -> bool:
    return (
        isinstance(value, Mapping)
        and isinstance(cast(Mapping[str, Any], value).get("action_requests"), list)
        and "review_configs" in cast(Mapping[str, Any], value)
    )


def _is_tool_approval(value: object) -> bool:
    return isinstance(value, Mapping) and cast(Mapping[str, Any], value).get("type") == "tool_approval"


def _approval(action: Mapping[str, Any]) -> DeferredToolCall:
    return DeferredToolCall(
        tool_call_id="",
        tool_name=str(action.get("name") or ""),
        arguments=json.dumps(action.get("args") or {}, ensure_ascii=False, default=str),
        policy=_POLICY,
        framework_approval="required",
    )


def _question(value: Any, where: str) -> DeferredToolCall:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    if not text.strip():
        text = f"{where} asks for an answer."  # the session refuses a blank question
    arguments = json.dumps({"where": where, "value": value}, ensure_ascii=False, default=str)
    return DeferredToolCall(
        tool_call_id="", tool_name=INTERRUPT_TOOL, arguments=arguments, policy=_POLICY, question=text
    )


def _with_id(call: DeferredToolCall, tool_call_id: str) -> DeferredToolCall:
    return DeferredToolCall(
        tool_call_id=tool_call_id,
        tool_name=call.tool_name,
        arguments=call.arguments,
        policy=call.policy,
        framework_approval=call.framework_approval,
        question=call.question,
    )


# -- answers -----------------------------------------------------------------------------


def decision_of(answer: str | None) -> dict[str, Any]:
    """LangChain's decision for an approved HITL call: approve, or the answer's decision JSON.

    Raises:
        ToolExecutionError: The answer is not a LangChain decision.
    """
    if answer is None or not answer.strip():
        return {"type": "approve"}
    try:
        parsed: Any = json.loads(answer)
    except ValueError:
        parsed = None
    if not isinstance(parsed, dict) or cast(dict[str, Any], parsed).get("type") not in _DECISIONS:
        raise ToolExecutionError(
            "the answer to a HumanInTheLoopMiddleware approval must be a LangChain decision as JSON, "
            f'such as {{"type": "edit", "edited_action": {{"name": ..., "args": {{...}}}}}}; got {answer!r}'
        )
    return cast(dict[str, Any], parsed)


def answer_output(call: InterruptCall, answer: str | None) -> str:
    """What an interrupt call's tool step returns: the answer, or the decision as JSON.

    Raises:
        ToolExecutionError: A HITL answer that is not a LangChain decision.
    """
    if call.kind == "question":
        return answer if answer is not None else ""
    return json.dumps(decision_of(answer), ensure_ascii=False)


def resume_value(call: InterruptCall, record: AgentToolCall | None) -> Any:
    """What ``interrupt()`` returns for ``call``, from the session's record of it."""
    succeeded = record is not None and record.status is AgentToolCallStatus.SUCCEEDED
    if call.kind == "question":
        if succeeded:
            assert record is not None
            return record.answer if record.answer is not None else ""
        return _declined_text(record)
    if succeeded:
        assert record is not None
        return decision_of(record.answer)
    if record is not None and record.status is AgentToolCallStatus.REJECTED:
        message = record.rejection_message
        return {"type": "reject", "message": message} if message else {"type": "reject"}
    return {"type": "reject", "message": _declined_text(record)}


def _declined_text(record: AgentToolCall | None) -> str:
    """A declined (or failed) question resumes with the rejection message, else the session's wording."""
    if record is None:
        return "The question was not answered."
    if record.status is AgentToolCallStatus.REJECTED and record.rejection_message:
        return record.rejection_message
    return describe_tool_call_outcome(record)


def resume_map(calls: Sequence[InterruptCall], records: Mapping[str, AgentToolCall]) -> dict[str, Any]:
    """``Command(resume=...)``'s map: each interrupt's value; a batched HITL request's decisions in action order."""
    values: dict[str, Any] = {}
    for call in sorted(calls, key=lambda c: (c.interrupt_id, c.index)):
        value = resume_value(call, records.get(call.tool_call_id))
        if call.kind == "decisions":
            values.setdefault(call.interrupt_id, {"decisions": []})["decisions"].append(value)
        else:
            values[call.interrupt_id] = value
    return values


def edited_actions(
    calls: Sequence[InterruptCall], records: Mapping[str, AgentToolCall]
) -> dict[tuple[str, str], tuple[str, str]]:
    """A person's ``edit`` decisions: (tool name, canonical model arguments) to (edited, model) arguments.

    LangChain keeps the model's call in the AI message and runs the edited one in its
    place (``wrap_tool_call``). The session defers that call with the edited arguments and
    asks once more, showing the edit as a diff (`confirm_edits`), so what runs is bound to
    an approval of exactly those arguments.
    """
    edits: dict[tuple[str, str], tuple[str, str]] = {}
    for call in calls:
        record = records.get(call.tool_call_id)
        if call.kind == "question" or record is None or record.status is not AgentToolCallStatus.SUCCEEDED:
            continue
        try:
            decision = decision_of(record.answer)
        except ToolExecutionError:
            continue
        action: Any = decision.get("edited_action")
        if decision.get("type") != "edit" or not isinstance(action, dict):
            continue
        edited = cast(dict[str, Any], action)
        if str(edited.get("name") or record.tool_name) != record.tool_name:
            continue  # another tool: the tool step refuses to run it (check_run_arguments)
        edited_arguments = json.dumps(edited.get("args") or {}, ensure_ascii=False)
        edits[(record.tool_name, canonical_arguments(record.arguments))] = (
            edited_arguments,
            record.arguments,
        )
    return edits


def confirm_edits(
    calls: Sequence[DeferredToolCall], edits: Mapping[tuple[str, str], tuple[str, str]]
) -> list[DeferredToolCall]:
    """``calls`` with each call a person edited deferred as edited, asking again with the diff."""
    confirmed: list[DeferredToolCall] = []
    for call in calls:
        edit = edits.get((call.tool_name, canonical_arguments(call.arguments)))
        if edit is not None and canonical_arguments(edit[0]) != canonical_arguments(call.arguments):
            call = dataclasses.replace(
                call, arguments=edit[0], framework_approval="required", previous_arguments=edit[1]
            )
        confirmed.append(call)
    return confirmed
