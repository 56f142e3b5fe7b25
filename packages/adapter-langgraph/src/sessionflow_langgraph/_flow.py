"""One call from a chat model and tools (or your own graph) to a runner or a session flow."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Unpack, cast

from langchain_core.language_models import BaseChatModel
from langchain_core.tools import BaseTool
from langchain_core.tools import tool as as_langchain_tool
from langgraph.graph import StateGraph
from langgraph.pregel import Pregel

from sessionflow import AgentSessionFlow
from sessionflow.kit import CarryHook, FlowArguments, OutputValidator, ToolSpec
from sessionflow_langgraph._graph import AgentGraph, GraphFactory, build_agent_graph
from sessionflow_langgraph._model_strings import model_from_string
from sessionflow_langgraph._runner import DEFAULT_RECURSION_LIMIT, LangGraphRunner
from sessionflow_langgraph._tool_specs import tool_from_spec

__all__ = ["ToolLike", "langgraph_runner", "langgraph_session_flow"]

ToolLike = BaseTool | Callable[..., Any]
"""A LangChain tool, or a plain (sync or async) function that `langchain_core.tools.tool` wraps."""


def langgraph_runner(
    *,
    model: BaseChatModel | str | None = None,
    graph: AgentGraph | GraphFactory | None = None,
    tools: Sequence[ToolLike] = (),
    tool_sources: Sequence[ToolSpec] = (),
    tool_node: str | None = None,
    system_prompt: str | None = None,
    messages_key: str | None = None,
    recursion_limit: int | None = DEFAULT_RECURSION_LIMIT,
    output_validator: OutputValidator | None = None,
    carry: CarryHook | None = None,
) -> LangGraphRunner:
    """A `LangGraphRunner` for a chat model plus tools, or for your own graph.

    Give exactly one of:

    * ``model``: the ready-made agent (`build_agent_graph`): one model node bound to every
      tool, and a `ToolNode` named ``tool_node``; ``system_prompt`` goes first in every call.
      A ``"provider:model"`` string is read by LangChain's `init_chat_model` when `langchain`
      is installed, by `chat_model` otherwise (see `model_from_string`).
    * ``graph``: a `StateGraph` builder, a compiled graph, or a factory that receives every
      tool (``tools`` plus the converted ``tool_sources``) and returns either. The graph
      is interrupted before every tool node (each `ToolNode`, a node named ``"tools"``, and
      ``tool_node`` when your tool node is a node of your own), and stopped before each
      `ToolNode` of a subgraph, at any depth; bind the tools to your model yourself.

    ``output_validator`` and ``carry`` are the harness's (`HarnessContext`): the first
    gives the ready-made agent a retry node, the second decides the carry between turns.

    ``tool_sources`` are neutral `ToolSpec`s (sessionflow tool sources, MCP tools); they
    become LangChain tools with `tool_from_spec`. Their `ToolSpec.policy` is not applied
    here: `langgraph_session_flow` puts it into the flow's options.
    """
    if (model is None) == (graph is None):
        raise ValueError("give exactly one of model= (a ready-made agent) or graph= (your own graph)")
    all_tools = [_as_tool(t) for t in tools] + [tool_from_spec(spec) for spec in tool_sources]
    _check_unique(all_tools)
    built: AgentGraph
    if model is not None:
        chat = model_from_string(model) if isinstance(model, str) else model
        built = build_agent_graph(
            chat,
            all_tools,
            system_prompt=system_prompt,
            tool_node=tool_node or "tools",
            output_validator=output_validator,
        )
    elif isinstance(graph, StateGraph | Pregel):
        # A Pregel that is no CompiledStateGraph (an @entrypoint) is refused by name there.
        built = cast(AgentGraph, graph)
    else:
        assert graph is not None
        built = graph(all_tools)
    return LangGraphRunner(
        built,
        tool_node=tool_node,
        tools=all_tools,
        messages_key=messages_key,
        recursion_limit=recursion_limit,
        carry=carry,
        tool_specs=tool_sources,
    )


def langgraph_session_flow(
    *,
    flow_type: str,
    model: BaseChatModel | str | None = None,
    graph: AgentGraph | GraphFactory | None = None,
    tools: Sequence[ToolLike] = (),
    tool_sources: Sequence[ToolSpec] = (),
    tool_node: str | None = None,
    system_prompt: str | None = None,
    messages_key: str | None = None,
    recursion_limit: int | None = DEFAULT_RECURSION_LIMIT,
    **flow_args: Unpack[FlowArguments],
) -> AgentSessionFlow:
    """A session flow for a LangGraph agent, in one call (see `langgraph_runner` for the agent).

    The ``policy`` of each tool source goes into ``options.tool_policies`` unless the
    options already name that tool. ``flow_args`` (``options``, ``delta_transport``, ...)
    are `AgentSessionFlow`'s.
    """
    runner = langgraph_runner(
        model=model,
        graph=graph,
        tools=tools,
        tool_sources=tool_sources,
        tool_node=tool_node,
        system_prompt=system_prompt,
        messages_key=messages_key,
        recursion_limit=recursion_limit,
    )
    return AgentSessionFlow(runner, flow_type=flow_type, tool_specs=tool_sources, **flow_args)


def _as_tool(value: ToolLike) -> BaseTool:
    return value if isinstance(value, BaseTool) else as_langchain_tool(value)


def _check_unique(tools: Sequence[BaseTool]) -> None:
    seen: set[str] = set()
    for tool in tools:
        if tool.name in seen:
            raise ValueError(f"two tools are named {tool.name!r}")
        seen.add(tool.name)
