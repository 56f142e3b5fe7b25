"""`LangGraphRunner`: a LangGraph graph driven one model call per step, every tool deferred."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.serde.base import SerializerProtocol
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.errors import GraphRecursionError
from langgraph.types import StateSnapshot

from sessionflow.session import (
    AgentFrameworkRunner,
    AgentToolCallStatus,
    AgentTurnContext,
    AgentTurnOutcome,
    DeferredToolCall,
    DeferredToolExecution,
    FrameworkMessage,
    ImageInput,
    SessionStateError,
    ToolCallsRequested,
    ToolExecutionResult,
    TurnAborted,
    TurnCompleted,
    describe_tool_call_outcome,
)
from sessionflow_langgraph._effects import tool_effect, tool_schema
from sessionflow_langgraph._execution import run_tool
from sessionflow_langgraph._graph import AgentGraph, PreparedGraph
from sessionflow_langgraph._messages import (
    framework_message,
    history_message,
    user_message,
    user_message_with_images,
)
from sessionflow_langgraph._monitor import StepMonitor
from sessionflow_langgraph._run_state import THREAD_CONFIG, RunState, history_digest
from sessionflow_langgraph._stream import STREAM_MODES, tool_stream_writer, write_stream_part

__all__ = ["LangGraphRunner"]

DEFAULT_RECURSION_LIMIT = 25


class LangGraphRunner(AgentFrameworkRunner):
    """Runs a LangGraph graph for sessionflow: one model call per step, every tool deferred.

    Each `run_model_step` runs the graph, with a fresh in-memory checkpointer, until it is
    about to enter ``tool_node`` (``interrupt_before``) or reaches the end. Every node on
    the way (model nodes and any other non-tool node) runs inside the step. A step that
    would make a second model call, or run a tool, is stopped before it does and fails
    the turn with `TurnAborted` naming the nodes. At the tool node the step returns the
    last AI message's tool calls and the checkpoint as the run state; the next step
    restores it, writes one `ToolMessage` per call as if ``tool_node`` had run
    (``update_state(..., as_node=tool_node)``), and runs on.

    The runner keeps no state between calls; concurrent calls share nothing but the
    compiled graph.
    """

    def __init__(
        self,
        graph: AgentGraph,
        *,
        tool_node: str = "tools",
        tools: Iterable[BaseTool] = (),
        messages_key: str | None = None,
        recursion_limit: int = DEFAULT_RECURSION_LIMIT,
        serializer: SerializerProtocol | None = None,
    ) -> None:
        """Wrap ``graph``.

        Args:
            graph: A `StateGraph` builder, or a compiled graph (its checkpointer is ignored:
                sessionflow keeps the run state).
            tool_node: The node that executes tools; the graph is interrupted before it.
            tools: Tools the session runs. The tools of a `ToolNode` are found by
                themselves; list tools here when the tool node is your own node (these win
                over the node's on a name clash).
            messages_key: The state key of the message list; defaults to the `ToolNode`'s
                ``messages_key`` or ``"messages"``.
            recursion_limit: LangGraph's super-step limit for one step.
            serializer: Serializes the checkpoint. Defaults to `JsonPlusSerializer` that
                only loads LangChain, LangGraph and standard types (``allowed_msgpack_modules``
                is how to allow your own state types).
        """
        self._graph = PreparedGraph.of(graph, tool_node=tool_node, messages_key=messages_key)
        self.tools: dict[str, BaseTool] = {**self._graph.node_tools, **{t.name: t for t in tools}}
        self._effects = {name: tool_effect(t) for name, t in self.tools.items()}  # validates metadata early
        self._catalog = {name: tool_schema(t) for name, t in self.tools.items()}
        self.recursion_limit = recursion_limit
        self._serde: SerializerProtocol = serializer or JsonPlusSerializer(allowed_msgpack_modules=None)

    @property
    def tool_node(self) -> str:
        return self._graph.tool_node

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
        config: RunnableConfig = {
            **THREAD_CONFIG,
            "callbacks": [monitor],
            "recursion_limit": self.recursion_limit,
        }
        graph_input: dict[str, Any] | None = {self.messages_key: history}
        if turn.framework_run_state is not None:
            state = RunState.loads(turn.framework_run_state, self._serde)
            if state.history_digest != digest:
                raise SessionStateError("the run state was made for other stored messages than this step's")
            if (state.tool_node, state.messages_key) != (self.tool_node, self.messages_key):
                raise SessionStateError(
                    f"the run state was made by a graph with tool node {state.tool_node!r} and messages key "
                    f"{state.messages_key!r}; this runner has {self.tool_node!r} and {self.messages_key!r}"
                )
            await state.restore(saver, history)
            results = [self._tool_message(turn, tool_call_id) for tool_call_id in state.pending]
            await graph.aupdate_state(config, {self.messages_key: results}, as_node=self.tool_node)
            graph_input = None
        try:
            # astream's overloads mention Command without its type argument in LangGraph's stubs.
            parts = graph.astream(  # pyright: ignore[reportUnknownMemberType]
                graph_input,
                config,
                stream_mode=STREAM_MODES,  # streaming: messages and custom, subgraphs included (_stream)
                subgraphs=True,
                interrupt_before=[self.tool_node],
                version="v2",
            )
            async for part in parts:
                write_stream_part(turn.events, part)  # streaming (_stream)
        except GraphRecursionError as error:
            raise TurnAborted(
                f"the graph hit its recursion limit within one RunModel step: {error}"
            ) from None
        except Exception as error:
            if monitor.violation is not None:
                raise TurnAborted(monitor.violation) from error
            raise
        if monitor.violation is not None:
            raise TurnAborted(monitor.violation)
        snapshot = await graph.aget_state(config)
        messages: list[BaseMessage] = list(snapshot.values.get(self.messages_key) or [])
        if not snapshot.next:
            return TurnCompleted(new_messages=self._new_messages(history, messages), usage=monitor.usage)
        self._check_paused_at_tool_node(snapshot)
        calls = self._deferred_calls(turn, messages)
        saved = await saver.aget_tuple(config)
        if saved is None:  # pragma: no cover - the graph has just checkpointed
            raise SessionStateError("the graph paused without a checkpoint")
        run_state = RunState.capture(
            saved,
            pending=[call.tool_call_id for call in calls],
            history=history,
            digest=digest,
            messages_key=self.messages_key,
            tool_node=self.tool_node,
        )
        return ToolCallsRequested(
            framework_run_state=run_state.dumps(self._serde), tool_calls=calls, usage=monitor.usage
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

    def _check_paused_at_tool_node(self, snapshot: StateSnapshot) -> None:
        if snapshot.interrupts:
            raise TurnAborted(
                f"the graph called interrupt() in node(s) {', '.join(repr(n) for n in snapshot.next)}; "
                "sessionflow owns human approval (tool policies), so graphs it runs must not interrupt"
            )
        others = sorted({node for node in snapshot.next if node != self.tool_node})
        if others:
            raise TurnAborted(
                f"the graph stopped before node(s) {', '.join(repr(n) for n in others)}; a RunModel step may "
                f"only pause before the tool node {self.tool_node!r}, alone"
            )

    def _deferred_calls(self, turn: AgentTurnContext, messages: list[BaseMessage]) -> list[DeferredToolCall]:
        last = messages[-1] if messages else None
        if not isinstance(last, AIMessage) or not (last.tool_calls or last.invalid_tool_calls):
            raise TurnAborted(
                f"the graph reached its tool node {self.tool_node!r} but the last message is not an AI "
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
        return DeferredToolCall(tool_call_id=tool_call_id, tool_name=name, arguments=arguments, policy=policy)

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
        with tool_stream_writer(call.events):  # streaming: get_stream_writer() in a tool (_stream)
            output = await run_tool(self.tools.get(call.tool_call.tool_name), call)
        return ToolExecutionResult(output=output)
