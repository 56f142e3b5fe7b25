"""State updates of tool steps: which a model step applies, and in what order.

A tool may return a change to the framework's run state with its output
(`ToolExecutionResult.state_update`). The session records it on the call
(`AgentToolCall.state_update`, or `state_update_ref` when stored), and the next model step
gets every update of the calls the step before it deferred, in model order.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from sessionflow.session.errors import SessionStateError
from sessionflow.session.tools import AgentToolCall, AgentToolCallStatus

__all__ = ["check_state_update", "state_updates_in_model_order", "without_applied_updates"]


def state_updates_in_model_order(records: Iterable[AgentToolCall]) -> list[tuple[str, str]]:
    """``(tool_call_id, update)`` of the successful calls that carry one, by `deferral_order`.

    Model order, not finish order: parallel calls finish in any order, and a replayed
    session must merge them the same way every time.
    """
    ordered = sorted(records, key=lambda r: r.deferral_order)
    return [
        (r.tool_call_id, r.state_update)
        for r in ordered
        if r.status is AgentToolCallStatus.SUCCEEDED and r.state_update is not None
    ]


def check_state_update(record: AgentToolCall) -> None:
    """Refuse an update on a call that neither succeeded nor failed by its own account: only
    a tool that returned, or raised `ToolExecutionError` with one, has one."""
    has_update = record.state_update is not None or record.state_update_ref is not None
    if has_update and record.status not in (AgentToolCallStatus.SUCCEEDED, AgentToolCallStatus.FAILED):
        raise SessionStateError(
            f"tool call {record.tool_call_id!r} is {record.status.value!r} and cannot carry a state update"
        )


def without_applied_updates(records: Iterable[AgentToolCall], applied_through: int) -> list[AgentToolCall]:
    """The records with the updates an earlier model step already applied taken out.

    Calls with `deferral_order` up to `applied_through` were deferred before the current
    run state was made, so that state holds their updates; applying them again would
    double a framework's additive merge (a LangGraph list reducer, say).
    """
    return [
        replace(r, state_update=None, state_update_ref=None)
        if r.deferral_order <= applied_through
        and (r.state_update is not None or r.state_update_ref is not None)
        else r
        for r in records
    ]
