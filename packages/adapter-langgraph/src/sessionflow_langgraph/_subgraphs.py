"""Tool nodes inside subgraphs: found at build, paused before in a model step, fenced in a tool step.

A subgraph is a compiled graph added as a node, or one a node function calls (LangGraph
finds both: `PregelNode.subgraphs`). Its tasks run in a checkpoint namespace of their own
(``parent:<task id>|child:<task id>``), and ``interrupt_before`` given to the top graph does
not reach it. So a model step stops a nested tool node's task as it starts (`NestedToolPause`
raises LangGraph's own `GraphInterrupt` from the task's first callback, before the node
runs): the subgraph keeps its checkpoint before the tool node, the parent's task stays
pending, and the run state holds the checkpoint of every namespace. A tool step restores
them all, narrows the subgraph's checkpoint to its one call, runs the top graph, and stops
whatever task starts after the tool node's (`ToolStepFence`). What the tool node's task wrote,
or, for a ``Command(graph=Command.PARENT)``, what the parent's task wrote with the command,
is the call's state update.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.tools import BaseTool
from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple
from langgraph.errors import GraphInterrupt
from langgraph.prebuilt import ToolNode
from langgraph.pregel import Pregel

from sessionflow import UnsupportedOptionError
from sessionflow_langgraph._run_state import THREAD_ID

__all__ = [
    "NestedToolPause",
    "SubgraphToolNodes",
    "ToolStepFence",
    "ancestor_task_ids",
    "find_subgraph_tool_nodes",
    "graph_path",
    "live_nested_checkpoints",
    "tool_nodes_at",
]

_NS_SEP = "|"  # LangGraph's checkpoint namespace separators (langgraph._internal._constants)
_NS_END = ":"
_ERROR = "__error__"

SubgraphPath = tuple[str, ...]
"""The node names from the top graph down to a subgraph (``("supervisor",)``)."""


@dataclass(frozen=True, kw_only=True)
class SubgraphToolNodes:
    """The tool nodes of one subgraph."""

    path: SubgraphPath
    tool_nodes: tuple[str, ...]
    messages_key: str


def find_subgraph_tool_nodes(
    graph: Pregel[Any, Any, Any, Any], node_tools: dict[str, BaseTool]
) -> dict[SubgraphPath, SubgraphToolNodes]:
    """Every subgraph (at any depth) with a `ToolNode`; their tools go into ``node_tools``.

    Raises:
        UnsupportedOptionError: A subgraph with tool nodes was compiled with a checkpointer
            of its own (its thread would not be the session's).
    """
    found: dict[SubgraphPath, SubgraphToolNodes] = {}
    _walk(graph, (), node_tools, found)
    return found


def _walk(
    graph: Pregel[Any, Any, Any, Any],
    path: SubgraphPath,
    node_tools: dict[str, BaseTool],
    found: dict[SubgraphPath, SubgraphToolNodes],
) -> None:
    for name, node in graph.nodes.items():
        subs = cast(Sequence[object], node.subgraphs)  # pyright: ignore[reportUnknownMemberType] - unparameterized
        for sub in subs:
            if not isinstance(sub, Pregel):
                continue  # a remote graph: it runs elsewhere, its tools with it
            subgraph = cast(Pregel[Any, Any, Any, Any], sub)
            inner = (*path, name)
            tool_nodes: list[str] = []
            key: str | None = None
            for inner_name, inner_node in subgraph.nodes.items():
                bound: object = inner_node.bound
                if isinstance(bound, ToolNode):
                    tool_nodes.append(inner_name)
                    for tool_name, tool in bound.tools_by_name.items():
                        node_tools.setdefault(tool_name, tool)
                    key = key or bound._messages_key  # pyright: ignore[reportPrivateUsage] - no public accessor
            if tool_nodes:
                _check_no_own_checkpointer(inner, subgraph)
                found[inner] = SubgraphToolNodes(
                    path=inner, tool_nodes=tuple(tool_nodes), messages_key=key or "messages"
                )
            _walk(subgraph, inner, node_tools, found)


def _check_no_own_checkpointer(path: SubgraphPath, subgraph: Pregel[Any, Any, Any, Any]) -> None:
    checkpointer: object = getattr(subgraph, "checkpointer", None)  # its saver type is unparameterized
    if isinstance(checkpointer, BaseCheckpointSaver) or checkpointer is True:
        raise UnsupportedOptionError(
            "checkpointer",
            f"the subgraph at {'/'.join(path)!r} has tool nodes and was compiled with a checkpointer of its "
            "own; the session keeps the checkpoints of every subgraph it pauses in, so compile it without one",
        )


def graph_path(checkpoint_ns: str) -> SubgraphPath:
    """The node names of a checkpoint namespace (its task IDs left out), as LangGraph recasts it."""
    if not checkpoint_ns:
        return ()
    return tuple(part.split(_NS_END)[0] for part in checkpoint_ns.split(_NS_SEP) if not part.isdigit())


def ancestor_task_ids(checkpoint_ns: str) -> list[str]:
    """The task IDs in a namespace, outermost first: the tasks the subgraph runs inside."""
    return [part.split(_NS_END, 1)[1] for part in checkpoint_ns.split(_NS_SEP) if _NS_END in part]


def _task_of(metadata: Mapping[str, Any] | None) -> tuple[str, str]:
    """The namespace of the task a callback belongs to, and its node."""
    meta = metadata or {}
    return str(meta.get("langgraph_checkpoint_ns") or ""), str(meta.get("langgraph_node") or "")


class NestedToolPause(BaseCallbackHandler):
    """In a model step: stops each task of a subgraph's tool node as it starts.

    LangGraph treats the `GraphInterrupt` as the task's interrupt: no writes, the subgraph
    keeps its checkpoint, and the interrupt bubbles up through every parent task.
    """

    raise_error = True
    run_inline = False  # as `StepMonitor`: raising from a gathered handler leaves none un-awaited

    def __init__(self, subgraphs: Mapping[SubgraphPath, SubgraphToolNodes]) -> None:
        self._subgraphs = subgraphs
        self._lock = threading.Lock()
        self.paused: list[tuple[str, str]] = []
        """(namespace of the subgraph, tool node) of each stopped task."""

    def on_chain_start(
        self,
        serialized: dict[str, Any],
        inputs: dict[str, Any],
        *,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        ns, node = _task_of(metadata)
        path = graph_path(ns)
        if len(path) < 2 or path[-1] != node:
            return
        sub = self._subgraphs.get(path[:-1])
        if sub is None or node not in sub.tool_nodes:
            return
        with self._lock:
            self.paused.append((ns.rsplit(_NS_SEP, 1)[0], node))
        raise GraphInterrupt()


class ToolStepFence(BaseCallbackHandler):
    """In a tool step: lets the tool node's task (and the tasks it runs inside) run, nothing else.

    The first task to start on another path, or any model call, is stopped with a
    `GraphInterrupt`, so the graph goes no further than the tool node (or than the parent
    task that took the tool's ``Command(graph=Command.PARENT)``).
    """

    raise_error = True
    run_inline = False

    def __init__(self, tool_path: SubgraphPath) -> None:
        self._tool_path = tool_path

    def on_chain_start(
        self,
        serialized: dict[str, Any],
        inputs: dict[str, Any],
        *,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        ns, _ = _task_of(metadata)
        path = graph_path(ns)
        depth = min(len(path), len(self._tool_path))
        if path[:depth] != self._tool_path[:depth]:
            raise GraphInterrupt()

    def on_chat_model_start(
        self, serialized: dict[str, Any], messages: list[list[Any]], **kwargs: Any
    ) -> None:
        raise GraphInterrupt()

    def on_llm_start(self, serialized: dict[str, Any], prompts: list[str], **kwargs: Any) -> None:
        raise GraphInterrupt()


async def live_nested_checkpoints(
    saver: BaseCheckpointSaver[Any], live_task_ids: set[str], *, drop_errors: bool = False
) -> list[CheckpointTuple]:
    """The latest checkpoint of each subgraph namespace whose top task is still pending.

    A finished subgraph's namespace is left out (its task ran whole; no step resumes it).
    ``drop_errors`` leaves out the tasks' errors: the next step runs those tasks again.
    """
    found: list[CheckpointTuple] = []
    seen: set[str] = set()
    async for saved in saver.alist({"configurable": {"thread_id": THREAD_ID}}):
        ns = str(saved.config.get("configurable", {}).get("checkpoint_ns", ""))
        if not ns or ns in seen:
            continue
        seen.add(ns)  # newest first within a namespace
        ids = ancestor_task_ids(ns)
        if not ids or ids[0] not in live_task_ids:
            continue
        if drop_errors:
            saved = saved._replace(pending_writes=[w for w in saved.pending_writes or [] if w[1] != _ERROR])
        found.append(saved)
    return found


def tool_nodes_at(subgraphs: Mapping[SubgraphPath, SubgraphToolNodes], checkpoint_ns: str) -> Sequence[str]:
    """The tool nodes of the subgraph at ``checkpoint_ns`` (none if it has none)."""
    sub = subgraphs.get(graph_path(checkpoint_ns))
    return sub.tool_nodes if sub is not None else ()
