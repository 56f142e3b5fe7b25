"""`LangGraphRunner`: a LangGraph graph driven one model call per step, every tool deferred."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from langchain_core.tools import BaseTool
from langgraph.checkpoint.serde.base import SerializerProtocol

from sessionflow import ImageInput
from sessionflow.kit import (
    AgentFrameworkRunner,
    AgentTurnContext,
    AgentTurnOutcome,
    CarryHook,
    DeferredToolExecution,
    FrameworkMessage,
    ToolExecutionResult,
    ToolSpec,
    VerifyCall,
    VerifyResult,
)
from sessionflow_langgraph._deferred_calls import CallDeferral
from sessionflow_langgraph._effects import tool_effect, tool_policy, tool_schema
from sessionflow_langgraph._graph import AgentGraph, PreparedGraph
from sessionflow_langgraph._interrupts import INTERRUPT_TOOL, INTERRUPT_TOOL_SCHEMA
from sessionflow_langgraph._messages import user_message, user_message_with_images
from sessionflow_langgraph._model_step import ModelStep
from sessionflow_langgraph._serde import graph_serializer
from sessionflow_langgraph._tool_step import run_tool_step

__all__ = ["LangGraphRunner"]

DEFAULT_RECURSION_LIMIT: int | None = None
"""None: the graph's own ``recursion_limit`` (``create_agent``'s 9_999), else LangGraph's default."""


class LangGraphRunner(AgentFrameworkRunner):
    """Runs a LangGraph graph for sessionflow: one model call per step, every tool deferred.

    Each `run_model_step` runs the graph, with a fresh in-memory checkpointer, until it is
    about to enter one of its tool nodes (``interrupt_before``) or reaches the end. Every
    node on the way runs inside the step. A second model call from another node is stopped
    before its request and the step continues there (`ContinueRequested`); one from the
    same run of a node, or a tool run outside a tool node, fails the turn with
    `TurnAborted`. A run that stops at ``interrupt()`` defers interrupt calls (questions and
    approvals, `_interrupts`), and the next step resumes it with ``Command(resume=...)``.
    At a tool node the step returns the latest AI message's tool calls and the checkpoint
    as the run state. Each tool step runs the graph's tool node for its one call from that
    checkpoint (`run_in_tool_node`) and returns the node's writes as its state update; the
    next step hands the writes of every call, in model order, to LangGraph as the tool
    node's pending writes, and runs on. A completed turn carries the thread's state into
    the next (`ThreadCarry`) and shows it in the snapshot (`thread_view`).

    The runner keeps no state between calls; concurrent calls share nothing but the
    compiled graph. Each model step is a `ModelStep` of its own; each tool step is
    `run_tool_step`.
    """

    def __init__(
        self,
        graph: AgentGraph,
        *,
        tool_node: str | None = None,
        tools: Iterable[BaseTool] = (),
        messages_key: str | None = None,
        recursion_limit: int | None = DEFAULT_RECURSION_LIMIT,
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
            recursion_limit: LangGraph's super-step limit for one run (a turn, or the part of it
                after an ``interrupt()``), counted across its steps as plain LangGraph counts
                one ``invoke``. None: the graph's own (``with_config``), else LangGraph's default.
            serializer: Serializes the checkpoint. Defaults to a strict `JsonPlusSerializer`
                that loads LangChain, LangGraph and standard types, and the types the graph's
                schemas name, as LangGraph's strict mode does (`_serde`); your own
                (``allowed_msgpack_modules``) for other types a state key holds.
            carry: Decides the carry itself (`CarryHook`, the harness's); the graph reads
                the carry the turn started with as ``config["configurable"]["sessionflow_carry"]``.
                Without one the thread's state carries (`ThreadCarry`).
            tool_specs: The neutral `ToolSpec`s some of ``tools`` were made from: their own
                approval rule and question (`ToolSpec.needs_approval`, ``pre_approved``,
                ``question``) go on their deferred calls, as the builtin runner's do, and
                a spec's ``verify`` settles a write whose step died (`verify_tool_call`).
        """
        self._graph = PreparedGraph.of(
            graph,
            tool_node=tool_node,
            messages_key=messages_key,
            serde=serializer,
            recursion_limit=recursion_limit,
        )
        self._serde: SerializerProtocol = serializer or graph_serializer(self._graph.compiled)
        self.tools: dict[str, BaseTool] = {**self._graph.node_tools, **{t.name: t for t in tools}}
        self._effects = {name: tool_effect(t) for name, t in self.tools.items()}  # validates metadata early
        self._catalog = {name: tool_schema(t) for name, t in self.tools.items()}
        # A plain interrupt()'s question is a call of its own that no model proposes.
        self._catalog.setdefault(INTERRUPT_TOOL, INTERRUPT_TOOL_SCHEMA)
        self._specs = {spec.name: spec for spec in tool_specs}
        self._deferral = CallDeferral(
            self._effects, self._specs, {name: tool_policy(t) for name, t in self.tools.items()}
        )
        self.recursion_limit = self._graph.run_limit.limit
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
        step = ModelStep(
            self._graph,
            turn,
            serde=self._serde,
            deferral=self._deferral,
            recursion_limit=self.recursion_limit,
            carry_hook=self._carry_hook,
        )
        return await step.run()

    # -- tools ---------------------------------------------------------------------------

    def accepts_steering(self) -> bool:
        """Steered messages join the graph's messages after the tool node's results (`_steered`)."""
        return True

    def tool_catalog(self, session_settings: Mapping[str, Any]) -> Mapping[str, Mapping[str, Any]]:
        """Every tool the session may run, with its JSON schema (for the session's proposal check)."""
        return self._catalog

    async def execute_deferred_tool_call(self, call: DeferredToolExecution) -> ToolExecutionResult:
        """Run the call in the graph's tool node, from the model step's checkpoint.

        A call the tool node cannot run (an invalid call, no run state, or one naming a tool
        node the graph no longer has) runs the tool directly, as before.
        """
        return await run_tool_step(self._graph, self._serde, self.tools, self.recursion_limit, call)

    async def verify_tool_call(self, call: DeferredToolExecution) -> VerifyResult | None:
        """The tool's `ToolSpec.verify`, for a write whose step died; None when it has none.

        Verify runs outside the graph: it only asks the system written to, so it needs no
        checkpoint and no tool node.
        """
        spec = self._specs.get(call.tool_call.tool_name)
        if spec is None or spec.verify is None:
            return None
        return await spec.run_verify(call.tool_call.parsed_arguments(), VerifyCall.of(call))
