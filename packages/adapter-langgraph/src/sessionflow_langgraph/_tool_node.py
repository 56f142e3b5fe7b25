"""One tool call run by the graph's own tool node, inside its tool step.

The model step paused before a tool node and left its checkpoint as the run state. The
tool step restores that checkpoint with the latest AI message narrowed to this one call,
lets LangGraph run the tool node (its error handling, post-processing, `Command`s,
injected state, store and runtime context), and stops right after it. The node is
streamed as a model step is (`STREAM_MODES`), so what it and its tools hand to
``get_stream_writer()`` becomes the tool step's ``custom_event``s. What the node
wrote (its channel writes, edges included) is the call's state update; the next model
step hands the writes of every call, in model order, back to LangGraph as the tool
node's pending writes, so they reach the state through the graph's reducers and its
edges decide where the graph goes on. A tool node inside a subgraph runs the same way from
every namespace's checkpoint (`_run_in_subgraph_tool_node`, `_subgraphs`).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import ToolException
from langgraph.checkpoint.base import Checkpoint
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.serde.base import SerializerProtocol
from langgraph.types import Command, Interrupt, Send, StateSnapshot

from sessionflow import SessionStateError
from sessionflow.kit import AgentEventWriter, DeferredToolExecution, ToolExecutionError, ToolExecutionResult
from sessionflow_langgraph._graph import PreparedGraph
from sessionflow_langgraph._messages import message_text
from sessionflow_langgraph._run_state import RunState, dump_value, load_value, namespace_config
from sessionflow_langgraph._stream import STREAM_MODES, write_stream_part
from sessionflow_langgraph._subgraphs import ToolStepFence, ancestor_task_ids, graph_path

__all__ = ["NodeWrites", "resume_in_tool_node", "run_in_tool_node", "task_of_each_call"]

# LangGraph's reserved channels (langgraph._internal._constants, not public).
_ERROR = "__error__"
_INTERRUPT = "__interrupt__"
_TASKS = "__pregel_tasks"
_PUSH = "__pregel_push"
_RESUME = "__resume__"
_SKIPPED = frozenset({_ERROR, _INTERRUPT, _RESUME})
_NS_SEP = "|"

UPDATE_VERSION = 2
"""Version 2 adds optional fields: ``ns``, the checkpoint namespace of the task that wrote
(a subgraph's), and ``paused``/``unrun`` (the run of the node stopped at ``interrupt()``,
or never finished). An update without them is still written, and read, as version 1; a
worker from before refuses version 2 with its version error rather than misread it."""
_READ_UPDATE_VERSIONS = (1, 2)


@dataclass(frozen=True, kw_only=True)
class NodeWrites:
    """The channel writes one call's run of the tool node made: the call's state update.

    A run that called ``interrupt()`` wrote nothing to the state yet: `paused` holds that
    task's own writes (the interrupt, the answers given so far), which resuming it needs.
    """

    node: str
    writes: list[tuple[str, Any]]
    ns: str = ""
    """The checkpoint namespace of the graph the writing task belongs to (``""``: the top graph)."""
    paused: list[tuple[str, str, Any]] = dataclasses.field(default_factory=lambda: [])
    """``(task ID, channel, value)`` of a run stopped by ``interrupt()``; empty: it finished."""
    unrun: bool = False
    """The call never finished in the tool node (its question was declined): `writes` is
    only the `ToolMessage` the model sees, written as for a call that did not run."""

    @property
    def interrupts(self) -> list[Interrupt]:
        found: list[Interrupt] = []
        for _, channel, value in self.paused:
            if channel == _INTERRUPT:
                found += [i for i in cast(list[Any], value) if isinstance(i, Interrupt)]
        return found

    def dumps(self, serde: SerializerProtocol) -> str:
        raw: dict[str, Any] = {"v": 1, "node": self.node}
        if self.ns:
            raw["ns"] = self.ns
        raw["writes"] = [{"channel": c, "value": dump_value(serde, v)} for c, v in self.writes]
        if self.unrun:
            raw["unrun"] = True
        if self.paused:
            raw["paused"] = [
                {"task": t, "channel": c, "value": dump_value(serde, v)} for t, c, v in self.paused
            ]
        if self.ns or self.unrun or self.paused:
            raw["v"] = (
                UPDATE_VERSION  # version 1 when it suffices, so a worker of the version before reads it
            )
        return json.dumps(raw, separators=(",", ":"))

    @classmethod
    def loads(cls, text: str, serde: SerializerProtocol) -> NodeWrites:
        raw = cast(dict[str, Any], json.loads(text))
        if raw.get("v") not in _READ_UPDATE_VERSIONS:
            raise SessionStateError(
                f"unsupported sessionflow-langgraph state update version {raw.get('v')!r}"
            )
        writes = [(str(w["channel"]), load_value(serde, w["value"])) for w in cast(list[Any], raw["writes"])]
        paused = [
            (str(w["task"]), str(w["channel"]), load_value(serde, w["value"]))
            for w in cast(list[Any], raw.get("paused") or [])
        ]
        return cls(
            node=str(raw["node"]),
            writes=writes,
            ns=str(raw.get("ns", "")),
            paused=paused,
            unrun=bool(raw.get("unrun")),
        )


class _RecordingSaver(InMemorySaver):
    """Keeps the writes of the watched tasks as LangGraph commits them."""

    def __init__(self, serde: SerializerProtocol) -> None:
        super().__init__(serde=serde)  # pyright: ignore[reportUnknownMemberType] - defaultdict in its signature
        self.watched: set[str] = set()
        self.recorded: list[tuple[str, str, Any]] = []

    async def aput_writes(
        self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str = ""
    ) -> None:
        if task_id in self.watched:
            self.recorded.extend((task_id, channel, value) for channel, value in writes)
        await super().aput_writes(config, writes, task_id, task_path)


async def run_in_tool_node(
    prepared: PreparedGraph,
    serde: SerializerProtocol,
    call: DeferredToolExecution,
    config: RunnableConfig,
    context: Any,
) -> ToolExecutionResult | None:
    """Run ``call`` through the tool node the run state paused before; None: not a graph call.

    None when the step has no run state of this adapter's graph, or the call is not one of
    the latest AI message's tool calls (an invalid call): the caller runs it itself. A run
    that calls ``interrupt()`` returns its paused writes as the update: the next model step
    asks the person, and the answer's tool step resumes it (`resume_in_tool_node`).

    Raises:
        ToolExecutionError: The tool raised `ToolException` or `ToolExecutionError`.
        Exception: Anything else the node raised; the session treats it as a crash.
    """
    if call.run_state is None:
        return None
    state = RunState.loads(call.run_state, serde)
    if state.tool_ns:
        return await _run_in_subgraph_tool_node(prepared, serde, state, call, config, context)
    if state.tool_node not in prepared.tool_nodes:
        return None
    if state.tool_ns:
        return await _run_in_subgraph_tool_node(prepared, serde, state, call, config, context)
    return await _run_call(
        prepared, serde, state, call.tool_call.tool_call_id, config, context, events=call.events
    )


async def resume_in_tool_node(
    prepared: PreparedGraph,
    serde: SerializerProtocol,
    run_state: str,
    waiting_call: str,
    paused: NodeWrites,
    resume: Mapping[str, Any],
    config: RunnableConfig,
    context: Any,
    events: AgentEventWriter | None = None,
) -> ToolExecutionResult:
    """Run ``waiting_call`` through its tool node again, from the same checkpoint, resumed.

    LangGraph runs an interrupted node again from its start, and ``interrupt()`` returns
    the answer (``resume``: interrupt ID to value); its writes become the call's writes.
    """
    state = RunState.loads(run_state, serde)
    result = await _run_call(
        prepared,
        serde,
        state,
        waiting_call,
        config,
        context,
        paused=paused.paused,
        resume=resume,
        events=events,
    )
    if result is None:
        raise SessionStateError(f"the run state has no tool call {waiting_call!r} to resume")
    return result


async def _run_call(
    prepared: PreparedGraph,
    serde: SerializerProtocol,
    state: RunState,
    tool_call_id: str,
    config: RunnableConfig,
    context: Any,
    *,
    paused: Sequence[tuple[str, str, Any]] = (),
    resume: Mapping[str, Any] | None = None,
    events: AgentEventWriter | None = None,
) -> ToolExecutionResult | None:
    checkpoint = _narrowed(state.checkpoint, prepared.tool_nodes, state.messages_key, tool_call_id)
    if checkpoint is None:
        return None
    saver = _RecordingSaver(serde)
    restored = await dataclasses.replace(state, checkpoint=checkpoint).restore(saver, None)
    by_task: dict[str, list[tuple[str, Any]]] = {}
    for task_id, channel, value in paused:
        by_task.setdefault(task_id, []).append((channel, value))
    for task_id, writes in by_task.items():
        await saver.aput_writes(restored, writes, task_id)
    graph = prepared.with_saver(saver)
    snapshot = await graph.aget_state(config)
    saver.watched = {task.id for task in snapshot.tasks if task.name in prepared.tool_nodes}
    graph_input: Command[Any] | None = Command(resume=dict(resume)) if resume is not None else None
    try:
        # astream's overloads mention Command without its type argument in LangGraph's stubs.
        parts = graph.astream(  # pyright: ignore[reportUnknownMemberType]
            graph_input,
            config,
            stream_mode=STREAM_MODES,  # get_stream_writer() in the node and its tools (_stream)
            subgraphs=True,
            interrupt_after=list(prepared.tool_nodes),
            version="v2",
            context=context,
        )
        async for part in parts:
            if events is not None:
                write_stream_part(events, part)
    except ToolException as error:
        raise ToolExecutionError(str(error) or type(error).__name__) from None
    if any(channel == _INTERRUPT for _, channel, _ in saver.recorded):
        # Waits for a person: what resuming needs, and nothing for the state yet.
        update = NodeWrites(node=state.tool_node, writes=[], paused=list(saver.recorded))
        return ToolExecutionResult(
            output="interrupt(): waiting for a person's answer", state_update=update.dumps(serde)
        )
    writes = [(channel, value) for _, channel, value in saver.recorded if channel not in _SKIPPED]
    update = NodeWrites(node=state.tool_node, writes=writes)
    return ToolExecutionResult(
        output=_output_text(writes, state.messages_key, tool_call_id), state_update=update.dumps(serde)
    )


async def _run_in_subgraph_tool_node(
    prepared: PreparedGraph,
    serde: SerializerProtocol,
    state: RunState,
    call: DeferredToolExecution,
    config: RunnableConfig,
    context: Any,
) -> ToolExecutionResult | None:
    """`run_in_tool_node` for a tool node inside a subgraph (see `_subgraphs`).

    The top graph runs from the restored checkpoints; the subgraph resumes at its tool
    node, whose task is the only one let run (`ToolStepFence`). Its writes are the update;
    when the tool handed off with ``Command(graph=Command.PARENT)`` the tool node's task
    wrote nothing and the parent's task wrote the command, so that is the update.
    """
    sub = prepared.subgraphs.get(graph_path(state.tool_ns))
    if sub is None or state.tool_node not in sub.tool_nodes:
        return None
    tool_call_id = call.tool_call.tool_call_id
    inner = state.checkpoint_at(state.tool_ns)
    checkpoint = _narrowed(inner, sub.tool_nodes, sub.messages_key, tool_call_id) if inner else None
    if checkpoint is None:
        return None
    saver = _RecordingSaver(serde)
    await state.with_checkpoint(state.tool_ns, checkpoint).restore(saver, None)
    graph = prepared.with_saver(saver)
    snapshot = await graph.aget_state(namespace_config(state.tool_ns))
    tool_tasks = {task.id for task in snapshot.tasks if task.name == state.tool_node}
    ancestors = ancestor_task_ids(state.tool_ns)
    saver.watched = tool_tasks | set(ancestors)
    kept = list(cast(list[Any], config.get("callbacks") or []))  # the approved-arguments guard
    fenced: RunnableConfig = {**config, "callbacks": [*kept, ToolStepFence((*sub.path, state.tool_node))]}
    try:
        # astream's overloads mention Command without its type argument in LangGraph's stubs.
        parts = graph.astream(  # pyright: ignore[reportUnknownMemberType]
            None,
            fenced,
            stream_mode=STREAM_MODES,  # get_stream_writer() in the node and its tools (_stream)
            subgraphs=True,
            version="v2",
            context=context,
        )
        async for part in parts:
            write_stream_part(call.events, part)
    except ToolException as error:
        raise ToolExecutionError(str(error) or type(error).__name__) from None
    own = [(c, v) for task, c, v in saver.recorded if task in tool_tasks]
    if any(channel == _INTERRUPT for channel, _ in own):
        raise ToolExecutionError(
            f"the tool node {state.tool_node!r} called interrupt(); sessionflow does not resume interrupts "
            "inside tool nodes yet (use a tool policy for approval)"
        )
    update = NodeWrites(
        node=state.tool_node, ns=state.tool_ns, writes=[(c, v) for c, v in own if c not in _SKIPPED]
    )
    # The innermost parent task that took a Command(graph=PARENT): its writes are the update.
    parts = [part for part in state.tool_ns.split(_NS_SEP) if ":" in part]  # as `ancestor_task_ids`
    for depth in range(len(ancestors) - 1, -1, -1):
        taken = [(c, v) for task, c, v in saver.recorded if task == ancestors[depth] and c not in _SKIPPED]
        if taken:
            node = graph_path(parts[depth])[0]
            update = NodeWrites(node=node, ns=_NS_SEP.join(parts[:depth]), writes=taken)
            break
    messages_key = sub.messages_key if update.ns == state.tool_ns else state.messages_key
    return ToolExecutionResult(
        output=_output_text(update.writes, messages_key, tool_call_id), state_update=update.dumps(serde)
    )


def _narrowed(
    checkpoint: Checkpoint, tool_nodes: Sequence[str], messages_key: str, tool_call_id: str
) -> Checkpoint | None:
    """The checkpoint with only ``tool_call_id`` left to run; None if no tool call has that ID.

    The latest AI message keeps only this call (a `ToolNode` runs every call of it), and
    of the pending `Send`s to a tool node (one per call, as ``create_agent`` sends them)
    only this call's stays.
    """
    values = dict(checkpoint["channel_values"])
    found = False
    messages = cast(list[BaseMessage], list(values.get(messages_key) or []))
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if isinstance(message, AIMessage):
            calls = [c for c in message.tool_calls if c.get("id") == tool_call_id]
            found = bool(calls)
            messages[index] = message.model_copy(update={"tool_calls": calls, "invalid_tool_calls": []})
            values[messages_key] = messages
            break
    sends = values.get(_TASKS)
    if isinstance(sends, list):
        kept: list[Any] = []
        for send in cast(list[Any], sends):
            ids = _send_call_ids(send, tool_nodes)
            if ids is None or tool_call_id in ids:
                kept.append(send)
                found = found or ids is not None
        values[_TASKS] = kept
    if not found:
        return None
    return cast(Checkpoint, {**checkpoint, "channel_values": values})


def task_of_each_call(
    snapshot: StateSnapshot, checkpoint: Checkpoint, tool_node: str, tool_nodes: Sequence[str]
) -> dict[str, str]:
    """The pending task of ``tool_node`` that holds each tool call ID; ``""``: the node's one
    edge-triggered task (it holds every call of the latest AI message)."""
    sends: Any = checkpoint["channel_values"].get(_TASKS) or []
    found: dict[str, str] = {}
    for task in snapshot.tasks:
        if task.name != tool_node:
            continue
        path = cast(tuple[Any, ...], task.path)  # pyright: ignore[reportUnknownMemberType] - nested tuples
        if len(path) > 1 and path[0] == _PUSH and isinstance(path[1], int) and path[1] < len(sends):
            for tool_call_id in _send_call_ids(cast(list[Any], sends)[path[1]], tool_nodes) or ():
                found[tool_call_id] = task.id
        else:
            found.setdefault("", task.id)
    return found


def _send_call_ids(send: object, tool_nodes: Sequence[str]) -> set[str] | None:
    """The tool call IDs a `Send` to a tool node carries; None for any other `Send`."""
    if not isinstance(send, Send) or send.node not in tool_nodes:
        return None
    arg: Any = send.arg
    if isinstance(arg, dict) and cast(dict[str, Any], arg).get("__type") == "tool_call_with_context":
        return {str(cast(dict[str, Any], arg)["tool_call"].get("id"))}
    if isinstance(arg, list):
        return {str(cast(dict[str, Any], c).get("id")) for c in cast(list[Any], arg) if isinstance(c, dict)}
    return None


def _output_text(writes: list[tuple[str, Any]], messages_key: str, tool_call_id: str) -> str:
    """The call's text as the session records it: its `ToolMessage`, as the model will see it."""
    found: list[ToolMessage] = []
    for channel, value in writes:
        if channel != messages_key:
            continue
        items = cast(list[Any], value) if isinstance(value, list) else [value]
        found += [m for m in items if isinstance(m, ToolMessage) and m.tool_call_id == tool_call_id]
    return "\n".join(message_text(m) for m in found)
