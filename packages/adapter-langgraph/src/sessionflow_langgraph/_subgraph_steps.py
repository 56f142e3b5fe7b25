"""The model step's side of tool nodes inside subgraphs: the pause it returns, the results it applies.

A model step that stopped at a subgraph's tool node (`NestedToolPause`) reads the tool calls
from the subgraph's own state, and keeps the checkpoint of every live namespace in its run
state. The next model step puts each call's update back where its task lives: a subgraph
tool node's writes become that task's pending writes in the subgraph's namespace; a
``Command(graph=Command.PARENT)`` becomes the pending writes of the parent's task. The top
graph then runs on from there, as LangGraph resumes a subgraph.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import BaseMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import CheckpointTuple
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.serde.base import SerializerProtocol
from langgraph.graph.state import CompiledStateGraph

from sessionflow import SessionStateError
from sessionflow.kit import TurnAborted
from sessionflow_langgraph._run_state import RunState, namespace_config
from sessionflow_langgraph._subgraphs import (
    NestedToolPause,
    SubgraphPath,
    SubgraphToolNodes,
    ancestor_task_ids,
    graph_path,
    live_nested_checkpoints,
)
from sessionflow_langgraph._tool_node import NodeWrites, task_of_each_call

__all__ = ["SubgraphPause", "apply_subgraph_tool_results", "live_checkpoints", "subgraph_pause"]

Graph = CompiledStateGraph[Any, Any, Any, Any]


@dataclass(frozen=True, kw_only=True)
class SubgraphPause:
    """Where a model step stopped inside a subgraph: its namespace, tool node and messages."""

    ns: str
    tool_node: str
    messages: list[BaseMessage]
    nested: list[CheckpointTuple]


async def live_checkpoints(
    graph: Graph, saver: InMemorySaver, config: RunnableConfig, *, drop_errors: bool = False
) -> list[CheckpointTuple]:
    """The latest checkpoint of each subgraph namespace a pending task of the top graph owns."""
    snapshot = await graph.aget_state(config)
    return await live_nested_checkpoints(saver, {t.id for t in snapshot.tasks}, drop_errors=drop_errors)


async def subgraph_pause(
    graph: Graph,
    saver: InMemorySaver,
    config: RunnableConfig,
    pause: NestedToolPause,
    subgraphs: Mapping[SubgraphPath, SubgraphToolNodes],
) -> SubgraphPause:
    """What the step returns for the subgraph tool node it stopped before.

    Raises:
        TurnAborted: Tool nodes of more than one subgraph (or more than one tool node)
            were stopped at once: a run state pauses before one tool node.
    """
    stopped = sorted(set(pause.paused))
    if len(stopped) != 1:
        where = ", ".join(f"{node!r} in {ns!r}" for ns, node in stopped)
        raise TurnAborted(
            f"the graph reached several tool nodes inside subgraphs at once ({where}); a RunModel step may "
            "only pause before one tool node"
        )
    ns, node = stopped[0]
    sub = subgraphs[graph_path(ns)]
    snapshot = await graph.aget_state(namespace_config(ns))
    messages: list[BaseMessage] = list(snapshot.values.get(sub.messages_key) or [])
    return SubgraphPause(
        ns=ns, tool_node=node, messages=messages, nested=await live_checkpoints(graph, saver, config)
    )


async def apply_subgraph_tool_results(
    graph: Graph,
    saver: InMemorySaver,
    state: RunState,
    subgraphs: Mapping[SubgraphPath, SubgraphToolNodes],
    updates: Mapping[str, str],
    tool_message: Callable[[str], ToolMessage],
    serde: SerializerProtocol,
) -> None:
    """Put every call's update (or, for a call that did not run there, its `ToolMessage`) back.

    ``updates`` are the calls' state updates by tool call ID; ``tool_message`` makes the
    message of a call without one.
    """
    sub = subgraphs.get(graph_path(state.tool_ns))
    if sub is None or state.tool_node not in sub.tool_nodes:
        raise SessionStateError(
            f"the run state paused before tool node {state.tool_node!r} of subgraph {state.tool_ns!r}, "
            "which this graph does not have"
        )
    by_task: dict[tuple[str, str], list[tuple[str, Any]]] = {}
    ran = False
    own_tasks: dict[str, str] | None = None
    for tool_call_id in state.pending:
        update = updates.get(tool_call_id)
        if update is not None:
            writes = NodeWrites.loads(update, serde)
            ran = True
        else:
            writes = NodeWrites(
                node=state.tool_node,
                ns=state.tool_ns,
                writes=[(sub.messages_key, [tool_message(tool_call_id)])],
            )
        if writes.ns == state.tool_ns and writes.node == state.tool_node:
            if own_tasks is None:
                own_tasks = await _tool_tasks(graph, saver, state, sub)
            task_id = own_tasks.get(tool_call_id) or own_tasks.get("")
        else:
            task_id = _parent_task(state.tool_ns, writes.ns)
        if task_id is None:
            raise SessionStateError(
                f"the run state has no pending task of node {writes.node!r} in {writes.ns!r}"
            )
        by_task.setdefault((writes.ns, task_id), []).extend(writes.writes)
    if not ran:
        # No call ran in the tool node: write its messages as the node, edges and all.
        messages = [value for writes in by_task.values() for _, items in writes for value in items]
        await graph.aupdate_state(
            namespace_config(state.tool_ns), {sub.messages_key: messages}, as_node=state.tool_node
        )
        return
    for (ns, task_id), writes in by_task.items():
        saved = await saver.aget_tuple(namespace_config(ns))
        if saved is None:
            raise SessionStateError(f"the run state has no checkpoint in namespace {ns!r}")
        await saver.aput_writes(saved.config, writes, task_id)


async def _tool_tasks(
    graph: Graph, saver: InMemorySaver, state: RunState, sub: SubgraphToolNodes
) -> dict[str, str]:
    config = namespace_config(state.tool_ns)
    snapshot = await graph.aget_state(config)
    saved = await saver.aget_tuple(config)
    if saved is None:
        raise SessionStateError(f"the run state has no checkpoint in namespace {state.tool_ns!r}")
    return task_of_each_call(snapshot, saved.checkpoint, state.tool_node, sub.tool_nodes)


def _parent_task(tool_ns: str, ns: str) -> str | None:
    """The task of the graph at ``ns`` that the subgraph at ``tool_ns`` runs inside."""
    depth = len([part for part in ns.split("|") if ":" in part]) if ns else 0
    ids = ancestor_task_ids(tool_ns)
    return ids[depth] if depth < len(ids) else None
