"""``interrupt()`` inside a tool: the call waits as a question, and its answer resumes it.

A tool step cannot wait for a person. When a call's run of the tool node stops at
``interrupt()``, its update holds that run's paused writes (`NodeWrites.paused`). The
next model step does not go on: it defers an interrupt call for it, with the same
checkpoint as its run state, and keeps the updates of the calls that did finish
(`RunState.done`). The answer's tool step runs that tool-node call again, from the same
checkpoint, resumed with the answer (`resume_in_tool_node`); its writes take the place of
the paused ones. When no call waits any more, the model step applies every call's writes
in model order, as if each had run once.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import ToolMessage
from langgraph.checkpoint.serde.base import SerializerProtocol

from sessionflow import AgentToolCall, AgentToolCallStatus
from sessionflow.kit import (
    AgentTurnContext,
    DeferredToolCall,
    ToolCallsRequested,
    TurnAborted,
    describe_tool_call_outcome,
)
from sessionflow_langgraph._interrupts import InterruptCall, defer_interrupts, resume_value
from sessionflow_langgraph._run_state import RunState
from sessionflow_langgraph._tool_node import NodeWrites

__all__ = ["CallResults", "Resume", "ask_for_waiting_calls", "call_results"]


@dataclass(frozen=True)
class CallResults:
    """The update of each pending call, after the answers to its interrupts."""

    updates: dict[str, str]
    """Call ID to its update (`NodeWrites`, encoded)."""
    waiting: list[tuple[str, NodeWrites]]
    """Calls still stopped at ``interrupt()``, in model order."""


Resume = Callable[[InterruptCall, NodeWrites, Any], Awaitable[str]]
"""Runs a waiting call's tool node again, resumed with a value, and returns its update."""


async def call_results(
    state: RunState, turn: AgentTurnContext, serde: SerializerProtocol, resume: Resume
) -> CallResults:
    """The updates this step applies: the calls that finished earlier, then this step's.

    An interrupt call's update is the resumed run of the call it waited for, so it takes
    that call's place. A declined approval (`HumanInTheLoopMiddleware`'s per-call mode)
    resumes the tool node here with LangChain's reject decision, which runs no tool: the
    middleware answers with its own message. A question declined (or failed) leaves the
    call unrun: the model sees the outcome of the question as the call's result, because
    resuming would run the tool again inside a model step.
    """
    updates = dict(state.done)
    updates.update(turn.state_updates())
    for held in state.interrupts:
        if held.waiting_call is None:
            continue
        update = updates.pop(held.tool_call_id, None)
        if update is not None:
            updates[held.waiting_call] = update
            continue
        waited = _paused(updates.get(held.waiting_call), serde)
        record = turn.tool_calls.get(held.tool_call_id)
        if waited is None or record is None:
            updates.pop(held.waiting_call, None)
        elif held.kind != "question":
            updates[held.waiting_call] = await resume(held, waited, resume_value(held, record))
        else:
            message = _unrun_message(
                record, turn.tool_calls.get(held.waiting_call), held.waiting_call, state.messages_key
            )
            updates[held.waiting_call] = NodeWrites(node=waited.node, writes=[message], unrun=True).dumps(
                serde
            )
    waiting: list[tuple[str, NodeWrites]] = []
    for tool_call_id in state.pending:
        writes = _paused(updates.get(tool_call_id), serde)
        if writes is not None and writes.paused:
            waiting.append((tool_call_id, writes))
    return CallResults(updates=updates, waiting=waiting)


def _paused(update: str | None, serde: SerializerProtocol) -> NodeWrites | None:
    return NodeWrites.loads(update, serde) if update is not None else None


def _unrun_message(
    record: AgentToolCall, waiting: AgentToolCall | None, tool_call_id: str, messages_key: str
) -> tuple[str, list[ToolMessage]]:
    status = "success" if record.status is AgentToolCallStatus.SUCCEEDED else "error"
    message = ToolMessage(
        content=describe_tool_call_outcome(record),
        tool_call_id=tool_call_id,
        name=waiting.tool_name if waiting is not None else record.tool_name,
        status=status,
    )
    return (messages_key, [message])


def ask_for_waiting_calls(
    state: RunState, results: CallResults, taken: Iterable[str], serde: SerializerProtocol
) -> ToolCallsRequested:
    """Defer one interrupt call per waiting call; the run state keeps every update so far."""
    used = set(taken) | set(state.pending)
    calls: list[DeferredToolCall] = []
    held: list[InterruptCall] = []
    for tool_call_id, writes in results.waiting:
        interrupts = writes.interrupts
        if len(interrupts) != 1:
            raise TurnAborted(
                f"tool call {tool_call_id!r} stopped at {len(interrupts)} interrupts in one run of "
                f"tool node {state.tool_node!r}; sessionflow resumes one interrupt per tool call at a time"
            )
        deferred = defer_interrupts(
            interrupts,
            taken=used,
            where=f"tool call {tool_call_id!r} in node {state.tool_node!r}",
            waiting_call=tool_call_id,
        )
        for record, call in deferred:
            used.add(record.tool_call_id)
            held.append(record)
            calls.append(call)
    done = tuple((c, results.updates[c]) for c in state.pending if c in results.updates)
    waiting_state = dataclasses.replace(state, interrupts=tuple(held), done=done)
    return ToolCallsRequested(framework_run_state=waiting_state.dumps(serde), tool_calls=calls)
