"""One RunModel step: the graph run, with a fresh checkpointer, until a tool node, an interrupt or its end.

`ModelStep` restores where the last step stopped (its run state, with the tool steps'
results, or the thread the last turn carried), streams the graph's run, and returns where
it stopped: the tool calls and the checkpoint as the run state, a second model call to
run in a step of its own, or the completed turn with its carry.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.messages import BaseMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import CheckpointTuple
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.serde.base import SerializerProtocol
from langgraph.errors import GraphRecursionError
from langgraph.types import Command, StateSnapshot

from sessionflow import SessionStateError
from sessionflow.kit import (
    AgentTurnContext,
    AgentTurnOutcome,
    CarryHook,
    ContinueRequested,
    DeferredToolCall,
    ToolCallsRequested,
    TurnAborted,
    TurnCompleted,
)
from sessionflow_langgraph._asks import interrupt_calls
from sessionflow_langgraph._carry import ThreadCarry
from sessionflow_langgraph._deferred_calls import (
    CallDeferral,
    paused_tool_node,
    rewritten_turn_messages,
    tool_message,
)
from sessionflow_langgraph._graph import PreparedGraph
from sessionflow_langgraph._interrupts import confirm_edits, edited_actions, resume_map
from sessionflow_langgraph._messages import history_message, message_text
from sessionflow_langgraph._monitor import StepMonitor
from sessionflow_langgraph._run_scope import RunLimit
from sessionflow_langgraph._run_state import THREAD_CONFIG, RunState, history_digest
from sessionflow_langgraph._settings import CARRY_CONFIG_KEY, GraphSettings
from sessionflow_langgraph._steered import steered_messages
from sessionflow_langgraph._stream import STREAM_MODES, write_stream_part
from sessionflow_langgraph._subgraph_steps import live_checkpoints, subgraph_pause
from sessionflow_langgraph._subgraphs import NestedToolPause, tool_nodes_at
from sessionflow_langgraph._terminal import terminal_error
from sessionflow_langgraph._thread_view import thread_view
from sessionflow_langgraph._tool_interrupts import ask_for_waiting_calls, call_results
from sessionflow_langgraph._tool_node import task_of_each_call
from sessionflow_langgraph._tool_results import apply_tool_results, resumer
from sessionflow_langgraph._transcript import turn_transcript

__all__ = ["ModelStep"]

ERROR_CHANNEL = "__error__"  # LangGraph's channel for a task's error (not public)

GraphInput = dict[str, Any] | Command[Any] | None


class ModelStep:
    """One `run_model_step` of a `LangGraphRunner`: made for its turn, run once."""

    def __init__(
        self,
        prepared: PreparedGraph,
        turn: AgentTurnContext,
        *,
        serde: SerializerProtocol,
        deferral: CallDeferral,
        recursion_limit: int,
        carry_hook: CarryHook | None,
    ) -> None:
        self._prepared = prepared
        self._turn = turn
        self._serde = serde
        self._deferral = deferral
        self._recursion_limit = recursion_limit
        self._carry_hook = carry_hook
        self._history = [history_message(stored) for stored in turn.messages]
        self._digest = history_digest(turn.messages)
        self._saver = InMemorySaver(serde=serde)
        self._graph = prepared.with_saver(self._saver)
        self._monitor = StepMonitor(prepared.tool_node)
        # Subgraphs' tool nodes: interrupt_before does not reach them (_subgraphs).
        self._pause = NestedToolPause(prepared.subgraphs) if prepared.subgraphs else None
        self._edits: dict[tuple[str, str], tuple[str, str]] = {}
        """Calls a person's edit decisions made, resumed in this step: each asks once more."""
        self._stop = 0  # the run's stop super-step, set when the step starts (`_run_scope`)
        self._settings = GraphSettings.of(turn.session_settings)
        configurable = {**self._settings.configurable, **THREAD_CONFIG.get("configurable", {})}
        if carry_hook is not None:
            configurable[CARRY_CONFIG_KEY] = turn.carried_state
        self._config: RunnableConfig = {
            "configurable": configurable,
            "callbacks": [self._monitor] if self._pause is None else [self._monitor, self._pause],
            "recursion_limit": recursion_limit,
        }

    @property
    def _messages_key(self) -> str:
        return self._prepared.messages_key

    async def run(self) -> AgentTurnOutcome:
        turn = self._turn
        # Messages that joined the turn: after the tool results, as plain `update_state` adds them.
        steered = steered_messages(turn)
        graph_input: GraphInput = {self._messages_key: [*self._history, *steered]}
        limit = self._prepared.run_limit
        stop: int | None = None  # the run's stop; None: a run starts with this step
        if turn.framework_run_state is not None:
            state = self._run_state(turn.framework_run_state)
            graph_input = None
            updates: dict[str, str] = {}
            if state.pending:
                resume = resumer(
                    self._prepared, self._serde, self._recursion_limit, turn, self._settings, self._monitor
                )
                results = await call_results(state, turn, self._serde, resume)
                if results.waiting:  # interrupt() in a tool: ask first (_tool_interrupts)
                    # Plain LangGraph's run ends at that interrupt; the answer starts a new one.
                    fresh = state.for_a_new_run(self._prepared.untracked)
                    return ask_for_waiting_calls(fresh, results, turn.tool_calls, self._serde)
                updates = results.updates
            # A step resumed after tool steps or a continue goes on with the same run.
            stop = RunLimit.carried_stop(state.metadata) if not state.interrupts else None
            await state.restore(self._saver, self._history)
            if state.pending:
                writes_pending = await apply_tool_results(
                    self._prepared,
                    self._graph,
                    self._saver,
                    self._config,
                    state,
                    updates,
                    lambda tool_call_id: tool_message(turn, tool_call_id),
                    self._serde,
                )
                if steered:
                    await self._join_after_tools(state, writes_pending, steered)
            elif state.interrupts:  # the person's answers, as LangGraph resumes (_interrupts)
                resume = resume_map(state.interrupts, turn.tool_calls)
                graph_input = (
                    Command(resume=resume, update={self._messages_key: steered})
                    if steered
                    else Command(resume=resume)
                )
                self._edits = edited_actions(state.interrupts, turn.tool_calls)
            elif steered:  # a continue: the node that calls the model again sees them
                await self._graph.aupdate_state(self._config, {self._messages_key: steered})
        elif turn.carried_state and self._carry_hook is None:
            graph_input = await self._restore_thread(turn.carried_state)
            graph_input[self._messages_key] = [*graph_input[self._messages_key], *steered]
        start = await self._saver.aget_tuple(self._config)
        start_metadata = start.metadata if start is not None else None
        self._stop = stop if stop is not None else limit.stop_of(start_metadata)
        self._config["recursion_limit"] = limit.step_limit(start_metadata, self._stop)
        self._monitor.run_stop = self._stop
        continued = await self._stream(graph_input)
        if continued is not None:
            return continued
        return await self._stopped()

    async def _join_after_tools(
        self, state: RunState, writes_pending: bool, steered: list[BaseMessage]
    ) -> None:
        """Add the steered messages after the tool node's results, as plain ``update_state`` does.

        Results that wait as the tool node's pending writes are applied first: the run goes
        on through the tool node's super-step only (its writes exist, so no tool runs) and
        stops after it. The messages are then written as the tool node, so the run goes on
        along its edges to the model, which sees the results, then the messages.
        """
        if state.tool_ns:  # a subgraph's tool node: its results are in the subgraph's checkpoint
            await self._graph.aupdate_state(self._config, {self._messages_key: steered})
            return
        if writes_pending:
            parts = self._graph.astream(  # pyright: ignore[reportUnknownMemberType]
                None,
                self._config,
                stream_mode=STREAM_MODES,
                subgraphs=True,
                interrupt_after=[state.tool_node],
                version="v2",
                context=self._settings.context,
            )
            async for part in parts:
                write_stream_part(self._turn.events, part)
        await self._graph.aupdate_state(self._config, {self._messages_key: steered}, as_node=state.tool_node)

    def _run_state(self, raw: str) -> RunState:
        """The last step's run state, refused when made for other messages or another graph."""
        state = RunState.loads(raw, self._serde)
        if state.history_digest != self._digest:
            raise SessionStateError("the run state was made for other stored messages than this step's")
        tool_nodes = self._prepared.tool_nodes
        known = tool_nodes_at(self._prepared.subgraphs, state.tool_ns) if state.tool_ns else tool_nodes
        if state.messages_key != self._messages_key or (state.pending and state.tool_node not in known):
            raise SessionStateError(
                f"the run state was made by a graph with tool node {state.tool_node!r} and messages key "
                f"{state.messages_key!r}; this runner has {tool_nodes!r} and {self._messages_key!r}"
            )
        return state

    async def _stream(self, graph_input: GraphInput) -> ContinueRequested | None:
        """Run the graph until it stops; a second model call from another node continues."""
        monitor = self._monitor
        try:
            # astream's overloads mention Command without its type argument in LangGraph's stubs.
            parts = self._graph.astream(  # pyright: ignore[reportUnknownMemberType]
                graph_input,
                self._config,
                stream_mode=STREAM_MODES,  # streaming: messages and custom, subgraphs included (_stream)
                subgraphs=True,
                interrupt_before=list(self._prepared.tool_nodes),
                version="v2",
                context=self._settings.context,
            )
            async for part in parts:
                write_stream_part(self._turn.events, part)  # streaming (_stream)
        except GraphRecursionError:
            # Plain LangGraph's error for the whole run's limit (this step ran with what was left).
            raise TurnAborted(f"GraphRecursionError: {self._prepared.run_limit.error()}") from None
        except Exception as error:
            ended = terminal_error(error)
            if ended is not None:  # the framework ended the run by design: never retried
                raise TurnAborted(ended) from None
            if monitor.continue_node is not None and monitor.violation is None:
                return await self._continue()
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
        return None

    async def _stopped(self) -> AgentTurnOutcome:
        """Where the graph stopped: a subgraph's tool node, an interrupt, its end or a tool node."""
        if self._pause is not None and self._pause.paused:
            return await self._paused_in_subgraph(self._pause)
        snapshot = await self._graph.aget_state(self._config)
        messages: list[BaseMessage] = list(snapshot.values.get(self._messages_key) or [])
        if snapshot.interrupts:
            return await self._ask(snapshot, messages)
        if not snapshot.next:
            # A node rewrote the turn's own messages (a redaction): the transcript takes them.
            replaced, history = rewritten_turn_messages(self._turn, self._history, messages)
            # A node replaced the channel (a summary): the transcript becomes it (_transcript).
            produced, superseded = turn_transcript(self._turn, history, messages, self._first_live())
            return TurnCompleted(
                new_messages=produced,
                usage=self._monitor.usage,
                carry=await self._carry(messages, history, len(self._history) + len(produced)),
                framework_state=thread_view(  # the snapshot's; untracked values end with the run
                    {k: v for k, v in snapshot.values.items() if k not in self._prepared.untracked},
                    self._messages_key,
                    history,
                ),
                replaced_messages=replaced,
                superseded=superseded,
            )
        tool_node = paused_tool_node(snapshot, self._prepared.tool_nodes)
        calls = self._deferral.calls_of(
            self._turn, messages, tool_node, await self._sent_calls(snapshot, tool_node)
        )
        return await self._requested(calls, tool_node=tool_node)

    async def _sent_calls(self, snapshot: StateSnapshot, tool_node: str) -> set[str] | None:
        """The call IDs the tool node's pending `Send` tasks carry; None: it runs on an edge."""
        saved = await self._saver.aget_tuple(self._config)
        if saved is None:  # pragma: no cover - the graph has just checkpointed
            raise SessionStateError("the graph paused without a checkpoint")
        tasks = task_of_each_call(snapshot, saved.checkpoint, tool_node, self._prepared.tool_nodes)
        sent = {tool_call_id for tool_call_id in tasks if tool_call_id}
        return sent or None

    async def _requested(
        self,
        calls: list[DeferredToolCall],
        *,
        tool_node: str,
        tool_ns: str = "",
        nested: Sequence[CheckpointTuple] = (),
    ) -> ToolCallsRequested:
        """The step stopped before ``tool_node``: its calls, with the checkpoint as the run state."""
        calls = confirm_edits(calls, self._edits)
        calls = [await self._deferral.verifiable(call) for call in calls]
        saved = await self._saver.aget_tuple(self._config)
        if saved is None:  # pragma: no cover - the graph has just checkpointed
            raise SessionStateError("the graph paused without a checkpoint")
        run_state = RunState.capture(
            saved,
            pending=[call.tool_call_id for call in calls],
            history=self._history,
            digest=self._digest,
            messages_key=self._messages_key,
            tool_node=tool_node,
            tool_ns=tool_ns,
            nested=nested,
            run_stop=self._stop,
        )
        return ToolCallsRequested(
            framework_run_state=run_state.dumps(self._serde), tool_calls=calls, usage=self._monitor.usage
        )

    async def _paused_in_subgraph(self, pause: NestedToolPause) -> ToolCallsRequested:
        """The step stopped before a tool node inside a subgraph: its calls, every namespace's checkpoint."""
        paused = await subgraph_pause(self._graph, self._saver, self._config, pause, self._prepared.subgraphs)
        calls = self._deferral.calls_of(self._turn, paused.messages, paused.tool_node)
        return await self._requested(
            calls, tool_node=paused.tool_node, tool_ns=paused.ns, nested=paused.nested
        )

    async def _ask(self, snapshot: StateSnapshot, messages: list[BaseMessage]) -> ToolCallsRequested:
        """The graph stopped at interrupt(): each interrupt becomes an interrupt call (`_asks`)."""
        held, calls = interrupt_calls(snapshot, messages, self._turn.tool_calls)
        saved = await self._saver.aget_tuple(self._config)
        if saved is None:  # pragma: no cover - the graph has just checkpointed
            raise SessionStateError("the graph interrupted without a checkpoint")
        # An interrupt inside a subgraph resumes from that subgraph's own checkpoint.
        nested = (
            await live_checkpoints(self._graph, self._saver, self._config) if self._prepared.subgraphs else []
        )
        run_state = RunState.capture(
            saved,
            pending=[],
            history=self._history,
            digest=self._digest,
            messages_key=self._messages_key,
            tool_node="",
            interrupts=held,
            nested=nested,
            untracked=self._prepared.untracked,  # plain's run ends at the interrupt
        )
        return ToolCallsRequested(
            framework_run_state=run_state.dumps(self._serde), tool_calls=calls, usage=self._monitor.usage
        )

    async def _continue(self) -> ContinueRequested:
        """The node that called the model again runs in the next step, from the last checkpoint."""
        saved = await self._saver.aget_tuple(self._config)
        if saved is None:  # pragma: no cover - the graph checkpoints its input first
            raise SessionStateError("the graph called the model again before its first checkpoint")
        # The stopped task's error is not kept: the next step runs that task again.
        kept = [w for w in saved.pending_writes or [] if w[1] != ERROR_CHANNEL]
        nested = (
            await live_checkpoints(self._graph, self._saver, self._config, drop_errors=True)
            if self._prepared.subgraphs
            else []
        )
        run_state = RunState.capture(
            saved._replace(pending_writes=kept),
            pending=[],
            history=self._history,
            digest=self._digest,
            messages_key=self._messages_key,
            tool_node="",
            nested=nested,
            run_stop=self._stop,
        )
        return ContinueRequested(
            framework_run_state=run_state.dumps(self._serde),
            note=f"node {self._monitor.continue_node!r} calls the model in a step of its own",
            usage=self._monitor.usage,
        )

    async def _restore_thread(self, carried: str) -> dict[str, Any]:
        """Start from the last turn's checkpoint; the input is the messages stored since."""
        thread = ThreadCarry.loads(carried, self._serde)
        checkpoint, new = thread.restored(self._messages_key, self._history)
        await self._saver.aput(THREAD_CONFIG, checkpoint, thread.metadata, checkpoint["channel_versions"])
        return {self._messages_key: new}

    def _first_live(self) -> int:
        """No stored message before this one is in the transcript (`ThreadCarry.first_live`)."""
        carried = self._turn.carried_state
        if not carried or self._carry_hook is not None:
            return 0
        return ThreadCarry.loads(carried, self._serde).first_live(self._messages_key, self._history)

    async def _carry(
        self, messages: list[BaseMessage], history: list[BaseMessage], stored: int
    ) -> str | None:
        """The next turn's carry; ``history``: the stored messages before this turn's answer, as the
        session keeps them; ``stored``: how many messages the session holds after this turn."""
        if self._carry_hook is not None:
            last = messages[-1] if messages else None
            return self._carry_hook(self._turn.carried_state, message_text(last) if last is not None else "")
        saved = await self._saver.aget_tuple(self._config)
        thread = (
            ThreadCarry.capture(saved, self._messages_key, history, stored, self._prepared.untracked)
            if saved is not None
            else None
        )
        return thread.dumps(self._serde) if thread is not None else None
