"""A model step stopped at ``interrupt()``: each of the graph's interrupts as an interrupt call.

The step returns these calls, and keeps the `InterruptCall` records in its run state so
that the next step resumes the graph with their answers (`_interrupts`).
"""

from __future__ import annotations

from collections.abc import Iterable

from langchain_core.messages import AIMessage, BaseMessage
from langgraph.types import StateSnapshot

from sessionflow.kit import DeferredToolCall
from sessionflow_langgraph._interrupts import InterruptCall, defer_interrupts

__all__ = ["interrupt_calls"]


def interrupt_calls(
    snapshot: StateSnapshot, messages: list[BaseMessage], recorded: Iterable[str]
) -> tuple[list[InterruptCall], list[DeferredToolCall]]:
    """The records and calls of every interrupt, node by node, with IDs no call has yet.

    ``recorded``: the IDs of the calls the session has recorded this turn.
    """
    taken = set(recorded)
    for message in messages:
        if isinstance(message, AIMessage):
            taken.update(str(c.get("id")) for c in message.tool_calls)
    held: list[InterruptCall] = []
    calls: list[DeferredToolCall] = []
    seen: set[str] = set()
    by_node = [(f"node {task.name!r}", task.interrupts) for task in snapshot.tasks]
    # Any interrupt no task shows (LangGraph lists each under its task) is asked too.
    by_node.append(("the graph", snapshot.interrupts))
    for where, interrupts in by_node:
        fresh = [i for i in interrupts if i.id not in seen]
        seen.update(i.id for i in fresh)
        for record, call in defer_interrupts(fresh, taken=taken, where=where):
            taken.add(record.tool_call_id)
            held.append(record)
            calls.append(call)
    return held, calls
