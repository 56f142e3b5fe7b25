"""One deferred call's tool step: an interrupt call's answer, or the call run in the graph's tool node."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langgraph.checkpoint.serde.base import SerializerProtocol

from sessionflow import SessionStateError
from sessionflow.kit import DeferredToolExecution, ToolExecutionResult
from sessionflow_langgraph._approved_arguments import ApprovedArgumentsGuard
from sessionflow_langgraph._execution import invocation_metadata, run_tool
from sessionflow_langgraph._graph import PreparedGraph
from sessionflow_langgraph._interrupts import InterruptCall, answer_output, decision_of
from sessionflow_langgraph._run_state import THREAD_CONFIG, RunState
from sessionflow_langgraph._settings import GraphSettings
from sessionflow_langgraph._stream import tool_stream_writer
from sessionflow_langgraph._tool_node import NodeWrites, resume_in_tool_node, run_in_tool_node

__all__ = ["run_tool_step"]


async def run_tool_step(
    prepared: PreparedGraph,
    serde: SerializerProtocol,
    tools: Mapping[str, BaseTool],
    recursion_limit: int,
    call: DeferredToolExecution,
) -> ToolExecutionResult:
    """Run ``call`` in the graph's tool node, from the model step's checkpoint.

    A call the tool node cannot run (an invalid call, no run state, or one naming a tool
    node the graph no longer has) runs the tool directly, as before.
    """
    settings = GraphSettings.of(call.session_settings)
    config: RunnableConfig = {
        "configurable": {**settings.configurable, **THREAD_CONFIG.get("configurable", {})},
        "metadata": invocation_metadata(call.invocation),
        "recursion_limit": recursion_limit,
    }
    held = _interrupt_call(call, serde)
    if held is not None:
        if held[1].kind != "question":
            # A HITL decision resumes the call it reviewed: it runs only what was approved
            # (an edit asks again). A question's answer authorizes no arguments.
            config["callbacks"] = [ApprovedArgumentsGuard(tools)]
        return await _answer(prepared, serde, call, held, config, settings.context)
    # Inherited by the tool node's tools: each runs only its approved arguments.
    config["callbacks"] = [ApprovedArgumentsGuard(tools)]
    result = await run_in_tool_node(prepared, serde, call, config, settings.context)
    if result is not None:
        return result
    with tool_stream_writer(call.events):  # streaming: get_stream_writer() in a tool (_stream)
        output = await run_tool(
            tools.get(call.tool_call.tool_name), call, guard=ApprovedArgumentsGuard(tools)
        )
    return ToolExecutionResult(output=output)


def _interrupt_call(
    call: DeferredToolExecution, serde: SerializerProtocol
) -> tuple[RunState, InterruptCall] | None:
    """The interrupt call ``call`` is, by the run state of the step that deferred it."""
    if call.run_state is None:
        return None
    state = RunState.loads(call.run_state, serde)
    held = state.interrupt_call(call.tool_call.tool_call_id)
    return (state, held) if held is not None else None


async def _answer(
    prepared: PreparedGraph,
    serde: SerializerProtocol,
    call: DeferredToolExecution,
    held: tuple[RunState, InterruptCall],
    config: RunnableConfig,
    context: Any,
) -> ToolExecutionResult:
    """An interrupt call's tool step: runs no tool, unless a tool node's call waits for it.

    A node's interrupt is resumed by the next model step, so this step only checks the
    answer and returns it. A tool's interrupt is resumed here: that tool-node call runs
    again from its checkpoint, and ``interrupt()`` returns the answer.
    """
    state, interrupt = held
    answer = call.tool_call.answer
    output = answer_output(interrupt, answer)  # raises ToolExecutionError for a bad decision
    if interrupt.waiting_call is None:
        return ToolExecutionResult(output=output)
    paused = dict(state.done).get(interrupt.waiting_call)
    if paused is None or call.run_state is None:
        raise SessionStateError(f"the run state has no paused run of tool call {interrupt.waiting_call!r}")
    value: Any = (
        (answer if answer is not None else "") if interrupt.kind == "question" else decision_of(answer)
    )
    return await resume_in_tool_node(
        prepared,
        serde,
        call.run_state,
        interrupt.waiting_call,
        NodeWrites.loads(paused, serde),
        {interrupt.interrupt_id: value},
        config,
        context,
        call.events,
    )
