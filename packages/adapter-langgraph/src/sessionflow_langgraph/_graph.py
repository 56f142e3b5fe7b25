"""The graphs a runner drives: the ready-made tool-calling agent, or the user's own graph."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.prebuilt import ToolNode, tools_condition

from sessionflow.session import UnsupportedOptionError

__all__ = ["AgentGraph", "GraphFactory", "PreparedGraph", "build_agent_graph"]

AgentGraph = StateGraph[Any, Any, Any, Any] | CompiledStateGraph[Any, Any, Any, Any]
"""A graph builder, or a compiled graph (its checkpointer is replaced per step)."""

GraphFactory = Callable[[Sequence[BaseTool]], AgentGraph]
"""Builds the graph from every tool the runner knows (LangChain tools and tool sources)."""

AGENT_NODE = "agent"


def build_agent_graph(
    model: BaseChatModel,
    tools: Sequence[BaseTool] = (),
    *,
    system_prompt: str | None = None,
    tool_node: str = "tools",
) -> StateGraph[MessagesState, None, MessagesState, MessagesState]:
    """The classic tool-calling loop: ``agent`` (one model call) <-> ``tools`` (a `ToolNode`).

    A `ChatOpenAI` whose ``stream_usage`` is unset gets ``stream_usage=True`` so streamed
    calls report token usage from any OpenAI-compatible server.
    """
    if "stream_usage" in type(model).model_fields and getattr(model, "stream_usage", None) is None:
        # ChatOpenAI leaves it unset (off) for custom base URLs; without it no usage arrives.
        model = model.model_copy(update={"stream_usage": True})
    bound: Runnable[LanguageModelInput, AIMessage] = model.bind_tools(list(tools)) if tools else model
    prefix: list[BaseMessage] = [SystemMessage(content=system_prompt)] if system_prompt else []

    async def agent(state: MessagesState) -> dict[str, list[BaseMessage]]:
        return {"messages": [await bound.ainvoke([*prefix, *state["messages"]])]}

    builder = StateGraph(MessagesState)
    # add_node's overloads mention CachePolicy without its type argument in LangGraph's stubs.
    builder.add_node(AGENT_NODE, agent)  # pyright: ignore[reportUnknownMemberType]
    builder.add_node(tool_node, ToolNode(list(tools)))  # pyright: ignore[reportUnknownMemberType]
    builder.add_edge(START, AGENT_NODE)
    builder.add_conditional_edges(AGENT_NODE, tools_condition, {"tools": tool_node, END: END})
    builder.add_edge(tool_node, AGENT_NODE)
    return builder


@dataclass(frozen=True, kw_only=True)
class PreparedGraph:
    """A compiled graph without a checkpointer, and what the runner needs to know about it."""

    compiled: CompiledStateGraph[Any, Any, Any, Any]
    tool_node: str
    messages_key: str
    node_tools: dict[str, BaseTool]
    """Tools of the tool node, when it is a `ToolNode`."""

    @classmethod
    def of(cls, graph: AgentGraph, *, tool_node: str, messages_key: str | None) -> PreparedGraph:
        """Compile ``graph`` (or take it compiled) and check that ``tool_node`` is one of its nodes.

        Raises:
            UnsupportedOptionError: ``tool_node`` is not a node of the graph, or the compiled
                graph has interrupts of its own. Also a `ValueError`, as before.
        """
        # compile's checkpointer parameter is BaseCheckpointSaver without its type argument.
        compiled = graph.compile() if isinstance(graph, StateGraph) else graph  # pyright: ignore[reportUnknownMemberType]
        spec = compiled.builder.nodes.get(tool_node)
        if spec is None:
            names = ", ".join(repr(n) for n in compiled.builder.nodes) or "none"
            raise UnsupportedOptionError(
                "tool_node", f"tool_node {tool_node!r} is not a node of the graph; its nodes are {names}"
            )
        _check_no_interrupts(compiled)
        runnable: object = spec.runnable
        node_tools: dict[str, BaseTool] = {}
        key = messages_key or "messages"
        if isinstance(runnable, ToolNode):
            node_tools = dict(runnable.tools_by_name)
            key = messages_key or runnable._messages_key  # pyright: ignore[reportPrivateUsage] - no public accessor
        return cls(
            compiled=compiled.copy(update={"checkpointer": None}),
            tool_node=tool_node,
            messages_key=key,
            node_tools=node_tools,
        )

    def with_saver(self, saver: BaseCheckpointSaver[Any]) -> CompiledStateGraph[Any, Any, Any, Any]:
        """A copy of the graph that checkpoints into ``saver`` (one per step: no shared state)."""
        return self.compiled.copy(update={"checkpointer": saver})


def _check_no_interrupts(compiled: CompiledStateGraph[Any, Any, Any, Any]) -> None:
    """Refuse ``compile(interrupt_before=..., interrupt_after=...)``.

    Each step passes its own ``interrupt_before=[tool_node]``, which would silently replace
    the graph's; ``interrupt_after`` would pause a step where it may not end. Approval is
    the session's tool policies.
    """
    for option, nodes in (
        ("interrupt_before", compiled.interrupt_before_nodes),
        ("interrupt_after", compiled.interrupt_after_nodes),
    ):
        if nodes:
            raise UnsupportedOptionError(
                option,
                f"the graph was compiled with {option}={nodes!r}; sessionflow pauses a graph only "
                "before its tool node and asks for approval through tool policies, so compile without it",
            )
