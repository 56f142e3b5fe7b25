"""`LangGraphRunner`: a LangGraph graph driven one model call per step, every tool deferred."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langgraph.checkpoint.base import CheckpointTuple
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.serde.base import SerializerProtocol
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.errors import GraphRecursionError
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command, StateSnapshot

from sessionflow import AgentToolCallStatus, ImageInput, SessionStateError
from sessionflow.kit import (
    AgentFrameworkRunner,
    AgentTurnContext,
    AgentTurnOutcome,
    CarryHook,
    ContinueRequested,
    DeferredToolCall,
    DeferredToolExecution,
    FrameworkMessage,
    ToolCallsRequested,
    ToolExecutionResult,
    ToolSpec,
    TurnAborted,
    TurnCompleted,
    describe_tool_call_outcome,
    with_tool_asks,
)
from sessionflow_langgraph._carry import ThreadCarry
from sessionflow_langgraph._effects import tool_effect, tool_schema
from sessionflow_langgraph._execution import invocation_metadata, run_tool
from sessionflow_langgraph._graph import AgentGraph, PreparedGraph
from sessionflow_langgraph._interrupts import (
    INTERRUPT_TOOL,
    INTERRUPT_TOOL_SCHEMA,
    InterruptCall,
    answer_output,
    decision_of,
    defer_interrupts,
    resume_map,
)
from sessionflow_langgraph._messages import (
    framework_message,
    history_message,
    message_text,
    user_message,
    user_message_with_images,
)
from sessionflow_langgraph._monitor import StepMonitor
from sessionflow_langgraph._run_state import THREAD_CONFIG, RunState, history_digest
from sessionflow_langgraph._settings import CARRY_CONFIG_KEY, GraphSettings
from sessionflow_langgraph._stream import STREAM_MODES, tool_stream_writer, write_stream_part
from sessionflow_langgraph._subgraph_steps import (
    apply_subgraph_tool_results,
    live_checkpoints,
    subgraph_pause,
)
from sessionflow_langgraph._subgraphs import NestedToolPause, tool_nodes_at
from sessionflow_langgraph._thread_view import thread_view
from sessionflow_langgraph._tool_interrupts import Resume, ask_for_waiting_calls, call_results
from sessionflow_langgraph._tool_node import (
    NodeWrites,
    resume_in_tool_node,
    run_in_tool_node,
    task_of_each_call,
)

__all__ = ["LangGraphRunner"]

DEFAULT_RECURSION_LIMIT = 25
ERROR_CHANNEL = "__error__"  # LangGraph's channel for a task's error (not public)


class LangGraphRunner(AgentFrameworkRunner):
    """Runs a LangGraph graph for sessionflow: one model call per step, every tool deferred.

    Each `run_model_step` runs the graph, with a fresh in-memory checkpointer, until it is
    about to enter one of its tool nodes (``interrupt_before``) or reaches the end. Every
    node on the way runs inside the step. A second model call from another node is stopped
    before its request and the step continues there (`ContinueRequested`); one from the
    same run of a node, or a tool run outside a tool node, fails the turn with
    `TurnAborted`. A run that stops at ``interrupt()`` defers interrupt calls (questions and
    approvals, `_interrupts`), and the next step resumes it with ``Command(resume=...)``. At a tool node the step returns the latest AI message's tool calls and
    the checkpoint as the run state. Each tool step runs the graph's tool node for its one
    call from that checkpoint (`run_in_tool_node`) and returns the node's writes as its
    state update; the next step hands the writes of every call, in model order, to
    LangGraph as the tool node's pending writes, and runs on. A completed turn carries the
    thread's state into the next (`ThreadCarry`) and shows it in the snapshot (`thread_view`).

    The runner keeps no state between calls; concurrent calls share nothing but the
    compiled graph.
    """

    def __init__(
        self,
        graph: AgentGraph,
        *,
        tool_node: str | None = None,
        tools: Iterable[BaseTool] = (),
        messages_key: str | None = None,
        recursion_limit: int = DEFAULT_RECURSION_LIMIT,
        serializer: SerializerProtocol | None = None,
        carry: CarryHook | None = None,
        tool_specs: Iterable[ToolSpec] = (),
    ) -> None:
        """Wrap ``graph``.

        Args:
            graph: A `StateGraph` builder, or a compiled graph without a checkpointer
                (sessionflow keeps the checkpoint; a checkpointer is refused).
            tool_node: The node that executes tools, when it is a node of your own. Every
                `ToolNode` of the graph (and a node named ``"tools"``) is found by itself.
            tools: Tools the session runs. The tools of a `ToolNode` are found by
                themselves; list tools here when the tool node is your own node (these win
                over the node's on a name clash).
            messages_key: The state key of the message list; defaults to the `ToolNode`'s
                ``messages_key`` or ``"messages"``.
            recursion_limit: LangGraph's super-step limit for one step.
            serializer: Serializes the checkpoint. Defaults to `JsonPlusSerializer` that
                only loads LangChain, LangGraph and standard types (``allowed_msgpack_modules``
                is how to allow your own state types).
            carry: Decides the carry itself (`CarryHook`, the harness's); the graph reads
                the carry the turn started with as ``config["configurable"]["sessionflow_carry"]``.
                Without one the thread's state carries (`ThreadCarry`).
            tool_specs: The neutral `ToolSpec`s some of ``tools`` were made from: their own
                approval rule and question (`ToolSpec.needs_approval`, ``pre_approved``,
                ``question``) go on their deferred calls, as the builtin runner's do.
        """
        self._graph = PreparedGraph.of(graph, tool_node=tool_node, messages_key=messages_key)
        self.tools: dict[str, BaseTool] = {**self._graph.node_tools, **{t.name: t for t in tools}}
        self._effects = {name: tool_effect(t) for name, t in self.tools.items()}  # validates metadata early
        self._catalog = {name: tool_schema(t) for name, t in self.tools.items()}
        # A plain interrupt()'s question is a call of its own that no model proposes.
        self._catalog.setdefault(INTERRUPT_TOOL, INTERRUPT_TOOL_SCHEMA)
        self._specs = {spec.name: spec for spec in tool_specs}
        self.recursion_limit = recursion_limit
        self._serde: SerializerProtocol = serializer or JsonPlusSerializer(allowed_msgpack_modules=None)
        self._carry_hook = carry

    @property
    def tool_node(self) -> str:
        return self._graph.tool_node

    @property
    def tool_nodes(self) -> tuple[str, ...]:
        """Every node that runs tools; the graph is interrupted before each."""
        return self._graph.tool_nodes

    @property
    def messages_key(self) -> str:
        return self._graph.messages_key

    # -- messages ------------------------------------------------------------------------

    def build_user_message(self, text: str) -> FrameworkMessage:
        return user_message(text)

    def build_user_message_with_images(self, text: str, images: Sequence[ImageInput]) -> FrameworkMessage:
        return user_message_with_images(text, images)

    # -- model ---------------------------------------------------------------------------

    async def run_model_step(self, turn: AgentTurnContext) -> AgentTurnOutcome:
        history = [history_message(stored) for stored in turn.messages]
        digest = history_digest(turn.messages)
        saver = InMemorySaver(serde=self._serde)
        graph = self._graph.with_saver(saver)
        monitor = StepMonitor(self.tool_node)
        # Subgraphs' tool nodes: interrupt_before does not reach them (_subgraphs).
        pause = NestedToolPause(self._graph.subgraphs) if self._graph.subgraphs else None
        settings = GraphSettings.of(turn.session_settings)
        configurable = {**settings.configurable, **THREAD_CONFIG.get("configurable", {})}
        if self._carry_hook is not None:
            configurable[CARRY_CONFIG_KEY] = turn.carried_state
        config: RunnableConfig = {
            "configurable": configurable,
            "callbacks": [monitor] if pause is None else [monitor, pause],
            "recursion_limit": self.recursion_limit,
        }
        graph_input: dict[str, Any] | Command[Any] | None = {self.messages_key: history}
        if turn.framework_run_state is not None:
            state = RunState.loads(turn.framework_run_state, self._serde)
            if state.history_digest != digest:
                raise SessionStateError("the run state was made for other stored messages than this step's")
            known = tool_nodes_at(self._graph.subgraphs, state.tool_ns) if state.tool_ns else self.tool_nodes
            if state.messages_key != self.messages_key or (state.pending and state.tool_node not in known):
                raise SessionStateError(
                    f"the run state was made by a graph with tool node {state.tool_node!r} and messages key "
                    f"{state.messages_key!r}; this runner has {self.tool_nodes!r} and {self.messages_key!r}"
                )
            graph_input = None
            updates: dict[str, str] = {}
            if state.pending:
                results = await call_results(state, turn, self._serde, self._resumer(turn, settings, monitor))
                if results.waiting:  # interrupt() in a tool: ask first (_tool_interrupts)
                    return ask_for_waiting_calls(state, results, turn.tool_calls, self._serde)
                updates = results.updates
            await state.restore(saver, history)
            if state.pending:
                await self._apply_tool_results(graph, saver, config, turn, state, updates)
            elif state.interrupts:  # the person's answers, as LangGraph resumes (_interrupts)
                graph_input = Command(resume=resume_map(state.interrupts, turn.tool_calls))
        elif turn.carried_state and self._carry_hook is None:
            graph_input = await self._restore_thread(saver, turn.carried_state, history)
        try:
            # astream's overloads mention Command without its type argument in LangGraph's stubs.
            parts = graph.astream(  # pyright: ignore[reportUnknownMemberType]
                graph_input,
                config,
                stream_mode=STREAM_MODES,  # streaming: messages and custom, subgraphs included (_stream)
                subgraphs=True,
                interrupt_before=list(self.tool_nodes),
                version="v2",
                context=settings.context,
            )
            async for part in parts:
                write_stream_part(turn.events, part)  # streaming (_stream)
        except GraphRecursionError as error:
            raise TurnAborted(
                f"the graph hit its recursion limit within one RunModel step: {error}"
            ) from None
        except Exception as error:
            if monitor.continue_node is not None and monitor.violation is None:
                return await self._continue(saver, config, history, digest, monitor)
            if monitor.violation is not None:
                raise TurnAborted(monitor.violation) from error
            raise
        if monitor.violation is not None:
            raise TurnAborted(monitor.violation)
        if monitor.continue_node is not None:
            raise TurnAborted(
                f"node {monitor.continue_node!r} caught the stop of its second model call in one step; "
                "let the exception through so that the call runs in a step of its own"
            )
        if pause is not None and pause.paused:
            return await self._paused_in_subgraph(turn, graph, saver, config, pause, history, digest, monitor)
        snapshot = await graph.aget_state(config)
        messages: list[BaseMessage] = list(snapshot.values.get(self.messages_key) or [])
        if snapshot.interrupts:
            return await self._ask(turn, saver, config, snapshot, messages, history, digest, monitor)
        if not snapshot.next:
            produced = self._new_messages(history, messages)
            return TurnCompleted(
                new_messages=produced,
                usage=monitor.usage,
                carry=await self._carry(turn, saver, config, messages, history, len(history) + len(produced)),
                framework_state=thread_view(snapshot.values, self.messages_key, history),  # the snapshot's
            )
        tool_node = self._check_paused_at_tool_node(snapshot)
        calls = self._deferred_calls(turn, messages, tool_node)
        return await self._requested(saver, config, calls, history, digest, monitor, tool_node=tool_node)

    async def _requested(
        self,
        saver: InMemorySaver,
        config: RunnableConfig,
        calls: list[DeferredToolCall],
        history: list[BaseMessage],
        digest: str,
        monitor: StepMonitor,
        *,
        tool_node: str,
        tool_ns: str = "",
        nested: Sequence[CheckpointTuple] = (),
    ) -> ToolCallsRequested:
        """The step stopped before ``tool_node``: its calls, with the checkpoint as the run state."""
        saved = await saver.aget_tuple(config)
        if saved is None:  # pragma: no cover - the graph has just checkpointed
            raise SessionStateError("the graph paused without a checkpoint")
        run_state = RunState.capture(
            saved,
            pending=[call.tool_call_id for call in calls],
            history=history,
            digest=digest,
            messages_key=self.messages_key,
            tool_node=tool_node,
            tool_ns=tool_ns,
            nested=nested,
        )
        return ToolCallsRequested(
            framework_run_state=run_state.dumps(self._serde), tool_calls=calls, usage=monitor.usage
        )

    async def _apply_tool_results(
        self,
        graph: CompiledStateGraph[Any, Any, Any, Any],
        saver: InMemorySaver,
        config: RunnableConfig,
        turn: AgentTurnContext,
        state: RunState,
        updates: Mapping[str, str],
    ) -> None:
        """Give the tool node every call's result, in model order, as LangGraph would have.

        A call that ran in the tool node wrote its channel writes (its update); they become
        the tool node's pending writes, so LangGraph applies them with the reducers and
        follows the node's edges (and any `Command(goto=...)`). A call that did not run
        there (failed, rejected, refused, or run by a worker before this) gets its
        `ToolMessage` instead; with no update at all the messages are written as the node.
        """
        if state.tool_ns:
            await apply_subgraph_tool_results(
                graph,
                saver,
                state,
                self._graph.subgraphs,
                dict(updates),
                lambda tool_call_id: self._tool_message(turn, tool_call_id),
                self._serde,
            )
            return
        snapshot = await graph.aget_state(config)
        saved = await saver.aget_tuple(config)
        assert saved is not None
        tasks = task_of_each_call(snapshot, saved.checkpoint, state.tool_node, self.tool_nodes)
        by_task: dict[str, list[tuple[str, Any]]] = {}
        ran = False
        for tool_call_id in state.pending:
            update = updates.get(tool_call_id)
            node_writes = NodeWrites.loads(update, self._serde) if update is not None else None
            if node_writes is not None:
                writes = node_writes.writes
                ran = ran or not node_writes.unrun
            else:
                writes = [(self.messages_key, [self._tool_message(turn, tool_call_id)])]
            task_id = tasks.get(tool_call_id) or tasks.get("")
            if task_id is None:
                raise SessionStateError(f"the run state has no pending task of tool node {state.tool_node!r}")
            by_task.setdefault(task_id, []).extend(writes)
        if not ran:
            messages = [value for writes in by_task.values() for _, items in writes for value in items]
            await graph.aupdate_state(config, {self.messages_key: messages}, as_node=state.tool_node)
            return
        for task_id, writes in by_task.items():
            await saver.aput_writes(saved.config, writes, task_id)

    async def _paused_in_subgraph(
        self,
        turn: AgentTurnContext,
        graph: CompiledStateGraph[Any, Any, Any, Any],
        saver: InMemorySaver,
        config: RunnableConfig,
        pause: NestedToolPause,
        history: list[BaseMessage],
        digest: str,
        monitor: StepMonitor,
    ) -> ToolCallsRequested:
        """The step stopped before a tool node inside a subgraph: its calls, every namespace's checkpoint."""
        paused = await subgraph_pause(graph, saver, config, pause, self._graph.subgraphs)
        calls = self._deferred_calls(turn, paused.messages, paused.tool_node)
        return await self._requested(
            saver,
            config,
            calls,
            history,
            digest,
            monitor,
            tool_node=paused.tool_node,
            tool_ns=paused.ns,
            nested=paused.nested,
        )

    async def _ask(
        self,
        turn: AgentTurnContext,
        saver: InMemorySaver,
        config: RunnableConfig,
        snapshot: StateSnapshot,
        messages: list[BaseMessage],
        history: list[BaseMessage],
        digest: str,
        monitor: StepMonitor,
    ) -> ToolCallsRequested:
        """The graph stopped at interrupt(): each interrupt becomes an interrupt call (`_interrupts`)."""
        taken = set(turn.tool_calls)
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
        saved = await saver.aget_tuple(config)
        if saved is None:  # pragma: no cover - the graph has just checkpointed
            raise SessionStateError("the graph interrupted without a checkpoint")
        # An interrupt inside a subgraph resumes from that subgraph's own checkpoint.
        graph = self._graph.with_saver(saver)
        nested = await live_checkpoints(graph, saver, config) if self._graph.subgraphs else []
        run_state = RunState.capture(
            saved,
            pending=[],
            history=history,
            digest=digest,
            messages_key=self.messages_key,
            tool_node="",
            interrupts=held,
            nested=nested,
        )
        return ToolCallsRequested(
            framework_run_state=run_state.dumps(self._serde), tool_calls=calls, usage=monitor.usage
        )

    async def _restore_thread(
        self, saver: InMemorySaver, carried: str, history: list[BaseMessage]
    ) -> dict[str, Any]:
        """Start from the last turn's checkpoint; the input is the messages stored since."""
        thread = ThreadCarry.loads(carried, self._serde)
        checkpoint, new = thread.restored(self.messages_key, history)
        await saver.aput(THREAD_CONFIG, checkpoint, thread.metadata, checkpoint["channel_versions"])
        return {self.messages_key: new}

    async def _carry(
        self,
        turn: AgentTurnContext,
        saver: InMemorySaver,
        config: RunnableConfig,
        messages: list[BaseMessage],
        history: list[BaseMessage],
        stored: int,
    ) -> str | None:
        """The next turn's carry; ``stored``: how many messages the session holds after this turn."""
        if self._carry_hook is not None:
            last = messages[-1] if messages else None
            return self._carry_hook(turn.carried_state, message_text(last) if last is not None else "")
        saved = await saver.aget_tuple(config)
        thread = ThreadCarry.capture(saved, self.messages_key, history, stored) if saved is not None else None
        return thread.dumps(self._serde) if thread is not None else None

    async def _continue(
        self,
        saver: InMemorySaver,
        config: RunnableConfig,
        history: list[BaseMessage],
        digest: str,
        monitor: StepMonitor,
    ) -> ContinueRequested:
        """The node that called the model again runs in the next step, from the last checkpoint."""
        saved = await saver.aget_tuple(config)
        if saved is None:  # pragma: no cover - the graph checkpoints its input first
            raise SessionStateError("the graph called the model again before its first checkpoint")
        # The stopped task's error is not kept: the next step runs that task again.
        kept = [w for w in saved.pending_writes or [] if w[1] != ERROR_CHANNEL]
        graph = self._graph.with_saver(saver)
        nested = (
            await live_checkpoints(graph, saver, config, drop_errors=True) if self._graph.subgraphs else []
        )
        run_state = RunState.capture(
            saved._replace(pending_writes=kept),
            pending=[],
            history=history,
            digest=digest,
            messages_key=self.messages_key,
            tool_node="",
            nested=nested,
        )
        return ContinueRequested(
            framework_run_state=run_state.dumps(self._serde),
            note=f"node {monitor.continue_node!r} calls the model in a step of its own",
            usage=monitor.usage,
        )

    def _tool_message(self, turn: AgentTurnContext, tool_call_id: str) -> ToolMessage:
        record = turn.recorded_tool_call(tool_call_id)
        status = "success" if record.status is AgentToolCallStatus.SUCCEEDED else "error"
        return ToolMessage(
            content=describe_tool_call_outcome(record),
            tool_call_id=tool_call_id,
            name=record.tool_name,
            status=status,
        )

    def _check_paused_at_tool_node(self, snapshot: StateSnapshot) -> str:
        paused = sorted(set(snapshot.next))
        others = [node for node in paused if node not in self.tool_nodes]
        if others or len(paused) != 1:
            raise TurnAborted(
                f"the graph stopped before node(s) {', '.join(repr(n) for n in paused)}; a RunModel step may "
                f"only pause before one tool node ({', '.join(repr(n) for n in self.tool_nodes)}), alone"
            )
        return paused[0]

    def _deferred_calls(
        self, turn: AgentTurnContext, messages: list[BaseMessage], tool_node: str
    ) -> list[DeferredToolCall]:
        # A ToolNode runs the latest AI message's calls, wherever it is in the list.
        last = next((m for m in reversed(messages) if isinstance(m, AIMessage)), None)
        if last is None or not (last.tool_calls or last.invalid_tool_calls):
            raise TurnAborted(
                f"the graph reached its tool node {tool_node!r} but the last message is not an AI "
                "message with tool calls"
            )
        calls: list[DeferredToolCall] = []
        for call in last.tool_calls:
            arguments = json.dumps(call["args"], ensure_ascii=False)
            calls.append(self._deferred(turn, call["id"] or "", call["name"], arguments))
        for invalid in last.invalid_tool_calls:
            # Malformed arguments are deferred as sent; running them reports the error to the model.
            calls.append(
                self._deferred(turn, invalid["id"] or "", invalid["name"] or "", invalid["args"] or "")
            )
        return calls

    def _deferred(
        self, turn: AgentTurnContext, tool_call_id: str, name: str, arguments: str
    ) -> DeferredToolCall:
        policy = turn.resolve_tool_policy(name, self._effects.get(name))
        call = DeferredToolCall(tool_call_id=tool_call_id, tool_name=name, arguments=arguments, policy=policy)
        return with_tool_asks(call, self._specs.get(name))

    @staticmethod
    def _new_messages(history: list[BaseMessage], messages: list[BaseMessage]) -> list[FrameworkMessage]:
        """What the turn added: the channel after the history (or every message not in it)."""
        if messages[: len(history)] == history:
            produced = messages[len(history) :]
        else:
            known = {m.id for m in history}
            produced = [m for m in messages if m.id not in known]
        return [framework_message(m) for m in produced]

    # -- tools ---------------------------------------------------------------------------

    def tool_catalog(self, session_settings: Mapping[str, Any]) -> Mapping[str, Mapping[str, Any]]:
        """Every tool the session may run, with its JSON schema (for the session's proposal check)."""
        return self._catalog

    async def execute_deferred_tool_call(self, call: DeferredToolExecution) -> ToolExecutionResult:
        """Run the call in the graph's tool node, from the model step's checkpoint.

        A call the tool node cannot run (an invalid call, no run state, or one naming a tool
        node the graph no longer has) runs the tool directly, as before.
        """
        settings = GraphSettings.of(call.session_settings)
        config: RunnableConfig = {
            "configurable": {**settings.configurable, **THREAD_CONFIG.get("configurable", {})},
            "metadata": invocation_metadata(call.invocation),
            "recursion_limit": self.recursion_limit,
        }
        held = self._interrupt_call(call)
        if held is not None:
            return await self._answer(call, held, config, settings.context)
        result = await run_in_tool_node(self._graph, self._serde, call, config, settings.context)
        if result is not None:
            return result
        with tool_stream_writer(call.events):  # streaming: get_stream_writer() in a tool (_stream)
            output = await run_tool(self.tools.get(call.tool_call.tool_name), call)
        return ToolExecutionResult(output=output)

    def _resumer(self, turn: AgentTurnContext, settings: GraphSettings, monitor: StepMonitor) -> Resume:
        """Resumes a waiting call's tool node inside this model step, for a declined approval.

        The monitor still forbids tool runs, so a middleware that would run the tool on a
        reject fails the step rather than run it here.
        """

        async def resume(held: InterruptCall, paused: NodeWrites, value: Any) -> str:
            assert held.waiting_call is not None and turn.framework_run_state is not None
            config: RunnableConfig = {
                "configurable": {**settings.configurable, **THREAD_CONFIG.get("configurable", {})},
                "callbacks": [monitor],
                "recursion_limit": self.recursion_limit,
            }
            result = await resume_in_tool_node(
                self._graph,
                self._serde,
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

    def _interrupt_call(self, call: DeferredToolExecution) -> tuple[RunState, InterruptCall] | None:
        """The interrupt call ``call`` is, by the run state of the step that deferred it."""
        if call.run_state is None:
            return None
        state = RunState.loads(call.run_state, self._serde)
        held = state.interrupt_call(call.tool_call.tool_call_id)
        return (state, held) if held is not None else None

    async def _answer(
        self,
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
            raise SessionStateError(
                f"the run state has no paused run of tool call {interrupt.waiting_call!r}"
            )
        value: Any = (
            (answer if answer is not None else "") if interrupt.kind == "question" else decision_of(answer)
        )
        return await resume_in_tool_node(
            self._graph,
            self._serde,
            call.run_state,
            interrupt.waiting_call,
            NodeWrites.loads(paused, self._serde),
            {interrupt.interrupt_id: value},
            config,
            context,
            call.events,
        )
