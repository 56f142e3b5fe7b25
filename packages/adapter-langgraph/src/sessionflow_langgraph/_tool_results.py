"""The model step's side of the tool steps: their results given to the tool node, as LangGraph would have.

`apply_tool_results` writes every deferred call's result into the restored checkpoint;
`resumer` runs a waiting call's tool node again inside the model step, for a declined
approval (`_tool_interrupts`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from langchain_core.messages import ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.serde.base import SerializerProtocol
from langgraph.graph.state import CompiledStateGraph

from sessionflow import SessionStateError
from sessionflow.kit import AgentTurnContext
from sessionflow_langgraph._graph import PreparedGraph
from sessionflow_langgraph._interrupts import InterruptCall
from sessionflow_langgraph._monitor import StepMonitor
from sessionflow_langgraph._run_state import THREAD_CONFIG, RunState
from sessionflow_langgraph._settings import GraphSettings
from sessionflow_langgraph._subgraph_steps import apply_subgraph_tool_results
from sessionflow_langgraph._tool_interrupts import Resume
from sessionflow_langgraph._tool_node import NodeWrites, resume_in_tool_node, task_of_each_call

__all__ = ["apply_tool_results", "resumer"]


async def apply_tool_results(
    prepared: PreparedGraph,
    graph: CompiledStateGraph[Any, Any, Any, Any],
    saver: InMemorySaver,
    config: RunnableConfig,
    state: RunState,
    updates: Mapping[str, str],
    tool_message: Callable[[str], ToolMessage],
    serde: SerializerProtocol,
) -> bool:
    """Give the tool node every call's result, in model order, as LangGraph would have.

    A call that ran in the tool node wrote its channel writes (its update); they become
    the tool node's pending writes, so LangGraph applies them with the reducers and
    follows the node's edges (and any `Command(goto=...)`). A call that did not run
    there (failed, rejected, refused, or run by a worker before this) gets its
    `ToolMessage` (``tool_message``) instead; with no update at all the messages are
    written as the node. True when the results wait as the tool node's pending writes (the
    run applies them when it goes on), False when they are in the checkpoint already.
    """
    if state.tool_ns:
        await apply_subgraph_tool_results(
            graph, saver, state, prepared.subgraphs, dict(updates), tool_message, serde
        )
        return False
    snapshot = await graph.aget_state(config)
    saved = await saver.aget_tuple(config)
    assert saved is not None
    tasks = task_of_each_call(snapshot, saved.checkpoint, state.tool_node, prepared.tool_nodes)
    by_task: dict[str, list[tuple[str, Any]]] = {}
    ran = False
    for tool_call_id in state.pending:
        update = updates.get(tool_call_id)
        node_writes = NodeWrites.loads(update, serde) if update is not None else None
        if node_writes is not None:
            writes = node_writes.writes
            ran = ran or not node_writes.unrun
        else:
            writes = [(prepared.messages_key, [tool_message(tool_call_id)])]
        task_id = tasks.get(tool_call_id) or tasks.get("")
        if task_id is None:
            raise SessionStateError(f"the run state has no pending task of tool node {state.tool_node!r}")
        by_task.setdefault(task_id, []).extend(writes)
    if not ran:
        messages = [value for writes in by_task.values() for _, items in writes for value in items]
        await graph.aupdate_state(config, {prepared.messages_key: messages}, as_node=state.tool_node)
        return False
    for task_id, writes in by_task.items():
        await saver.aput_writes(saved.config, writes, task_id)
    return True


def resumer(
    prepared: PreparedGraph,
    serde: SerializerProtocol,
    recursion_limit: int,
    turn: AgentTurnContext,
    settings: GraphSettings,
    monitor: StepMonitor,
) -> Resume:
    """Resumes a waiting call's tool node inside this model step, for a declined approval.

    The monitor still forbids tool runs, so a middleware that would run the tool on a
    reject fails the step rather than run it here.
    """

    async def resume(held: InterruptCall, paused: NodeWrites, value: Any) -> str:
        assert held.waiting_call is not None and turn.framework_run_state is not None
        config: RunnableConfig = {
            "configurable": {**settings.configurable, **THREAD_CONFIG.get("configurable", {})},
            "callbacks": [monitor],
            "recursion_limit": recursion_limit,
        }
        result = await resume_in_tool_node(
            prepared,
            serde,
            turn.framework_run_state,
            held.waiting_call,
            paused,
            {held.interrupt_id: value},
            config,
            settings.context,
            turn.events,
        )
        if result.state_update is None:  # pragma: no cover - resume_in_tool_node always writes one
            raise SessionStateError(f"tool call {held.waiting_call!r} resumed without an update")
        return result.state_update

    return resume
