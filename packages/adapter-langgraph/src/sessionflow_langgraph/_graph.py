"""The graphs a runner drives: the ready-made tool-calling agent, or the user's own graph."""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.tools import BaseTool
from langgraph._internal._config import DEFAULT_RECURSION_LIMIT  # plain LangGraph's default, no public name
from langgraph.channels.delta import DeltaChannel
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.serde.base import SerializerProtocol
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.prebuilt import ToolNode, tools_condition

from sessionflow import UnsupportedOptionError
from sessionflow.kit import OutputValidator
from sessionflow_langgraph._run_scope import RunLimit, carried_channels
from sessionflow_langgraph._settings import CARRY_CONFIG_KEY
from sessionflow_langgraph._subgraphs import SubgraphPath, SubgraphToolNodes, find_subgraph_tool_nodes
from sessionflow_langgraph._tool_state import AgentState, tool_state_line

__all__ = ["AgentGraph", "GraphFactory", "PreparedGraph", "build_agent_graph"]

AgentGraph = StateGraph[Any, Any, Any, Any] | CompiledStateGraph[Any, Any, Any, Any]
"""A graph builder, or a compiled graph (its checkpointer is replaced per step)."""

GraphFactory = Callable[[Sequence[BaseTool]], AgentGraph]
"""Builds the graph from every tool the runner knows (LangChain tools and tool sources)."""

_log = logging.getLogger(__name__)

AGENT_NODE = "agent"
RETRY_NODE = "retry"


def build_agent_graph(
    model: BaseChatModel,
    tools: Sequence[BaseTool] = (),
    *,
    system_prompt: str | None = None,
    tool_node: str = "tools",
    output_validator: OutputValidator | None = None,
) -> StateGraph[AgentState, None, AgentState, AgentState]:
    """The classic tool-calling loop: ``agent`` (one model call) <-> ``tools`` (a `ToolNode`).

    A `ChatOpenAI` whose ``stream_usage`` is unset gets ``stream_usage=True`` so streamed
    calls report token usage from any OpenAI-compatible server. The model also sees the
    tool state (``Tool state: {...}``, joined to the system prompt) and a harness carry
    (``config["configurable"]["sessionflow_carry"]``). With ``output_validator``, a final
    answer it refuses goes to ``retry``, which adds its prompt as a user message, and the
    model answers again (in a step of its own).
    """
    if "stream_usage" in type(model).model_fields and getattr(model, "stream_usage", None) is None:
        # ChatOpenAI leaves it unset (off) for custom base URLs; without it no usage arrives.
        model = model.model_copy(update={"stream_usage": True})
    bound: Runnable[LanguageModelInput, AIMessage] = model.bind_tools(list(tools)) if tools else model

    async def agent(state: AgentState, config: RunnableConfig) -> dict[str, list[BaseMessage]]:
        system = [text for text in (system_prompt, tool_state_line(dict(state))) if text]
        prefix: list[BaseMessage] = [SystemMessage(content="\n\n".join(system))] if system else []
        carried: object = (config.get("configurable") or {}).get(CARRY_CONFIG_KEY)
        if carried:
            prefix.append(SystemMessage(content=f"[sessionflow] Carried from the previous turn: {carried}"))
        return {"messages": [await bound.ainvoke([*prefix, *state["messages"]])]}

    def retry_prompt(state: AgentState) -> str | None:
        last = state["messages"][-1]
        return output_validator(str(last.text)) if output_validator is not None else None

    def route(state: AgentState) -> str:
        if tools_condition(dict(state)) == "tools":
            return tool_node
        return RETRY_NODE if retry_prompt(state) is not None else END

    def retry(state: AgentState) -> dict[str, list[BaseMessage]]:
        return {"messages": [HumanMessage(content=retry_prompt(state) or "")]}

    builder = StateGraph(AgentState)
    # add_node's overloads mention CachePolicy without its type argument in LangGraph's stubs.
    builder.add_node(AGENT_NODE, agent)  # pyright: ignore[reportUnknownMemberType]
    builder.add_node(tool_node, ToolNode(list(tools)))  # pyright: ignore[reportUnknownMemberType]
    builder.add_edge(START, AGENT_NODE)
    if output_validator is not None:
        builder.add_node(RETRY_NODE, retry)  # pyright: ignore[reportUnknownMemberType]
        builder.add_edge(RETRY_NODE, AGENT_NODE)
        builder.add_conditional_edges(AGENT_NODE, route, [tool_node, RETRY_NODE, END])
    else:
        builder.add_conditional_edges(AGENT_NODE, tools_condition, {"tools": tool_node, END: END})
    builder.add_edge(tool_node, AGENT_NODE)
    return builder


@dataclass(frozen=True, kw_only=True)
class PreparedGraph:
    """A compiled graph without a checkpointer, and what the runner needs to know about it."""

    compiled: CompiledStateGraph[Any, Any, Any, Any]
    tool_nodes: tuple[str, ...]
    """Every top-level node that runs tools: each `ToolNode`, and the named ``tool_node``."""
    messages_key: str
    node_tools: dict[str, BaseTool]
    """Tools of the `ToolNode`s (the first node wins on a name clash; the top graph's first)."""
    subgraphs: Mapping[SubgraphPath, SubgraphToolNodes] = field(default_factory=lambda: {})
    """Every subgraph, at any depth, with tool nodes (`_subgraphs`)."""
    untracked: frozenset[str] = frozenset()
    """The top graph's `UntrackedValue` channels, carried between the steps of a run (`_run_scope`)."""
    run_limit: RunLimit = field(default_factory=lambda: RunLimit(int(DEFAULT_RECURSION_LIMIT)))
    """The recursion limit of one run (one turn until an interrupt), as plain LangGraph counts it."""

    @property
    def tool_node(self) -> str:
        """The first tool node (the one the run state names when it predates several)."""
        return self.tool_nodes[0] if self.tool_nodes else ""

    @classmethod
    def of(
        cls,
        graph: AgentGraph,
        *,
        tool_node: str | None,
        messages_key: str | None,
        serde: SerializerProtocol | None = None,
        recursion_limit: int | None = None,
    ) -> PreparedGraph:
        """Compile ``graph`` (or take it compiled) and find every node that runs tools.

        Top-level tool nodes are ``tool_nodes``; the `ToolNode`s of subgraphs, at any depth,
        are ``subgraphs`` (`find_subgraph_tool_nodes`).

        ``tool_node`` None finds them by themselves: each `ToolNode`, and a node named
        ``"tools"`` (the old default, for a tool node of your own).

        ``recursion_limit`` None takes the graph's own (``create_agent`` sets 9_999 with
        ``with_config``), else LangGraph's default, as a plain ``invoke`` without one does.

        Raises:
            UnsupportedOptionError: ``tool_node`` is not a node of the graph, or the
                compiled graph has interrupts or a checkpointer of its own (or a subgraph
                with tool nodes has a checkpointer). Also a `ValueError`, as before.
        """
        # compile's checkpointer parameter is BaseCheckpointSaver without its type argument.
        compiled = graph.compile() if isinstance(graph, StateGraph) else graph  # pyright: ignore[reportUnknownMemberType]
        _check_a_state_graph(compiled)
        nodes = compiled.builder.nodes
        if tool_node is not None and tool_node not in nodes:
            names = ", ".join(repr(n) for n in nodes) or "none"
            raise UnsupportedOptionError(
                "tool_node", f"tool_node {tool_node!r} is not a node of the graph; its nodes are {names}"
            )
        _check_no_interrupts(compiled)
        _check_no_checkpointer(compiled)
        _check_no_delta_channels(compiled)
        _check_no_live_shell(compiled)
        found: list[str] = []
        node_tools: dict[str, BaseTool] = {}
        key = messages_key
        for name, spec in nodes.items():
            runnable: object = spec.runnable
            if isinstance(runnable, ToolNode):
                found.append(name)
                for tool_name, tool in runnable.tools_by_name.items():
                    node_tools.setdefault(tool_name, tool)
                key = key or runnable._messages_key  # pyright: ignore[reportPrivateUsage] - no public accessor
        subgraphs = find_subgraph_tool_nodes(compiled, node_tools)
        named = tool_node if tool_node is not None else ("tools" if "tools" in nodes else None)
        if named is not None and named not in found:
            found.insert(0, named)
        elif named is not None:
            found.remove(named)
            found.insert(0, named)
        own_channels = cast(dict[str, Any], compiled.channels)  # pyright: ignore[reportUnknownMemberType] - channels and managed values
        channels, untracked = carried_channels(
            own_channels, serde or JsonPlusSerializer(allowed_msgpack_modules=None)
        )
        own_limit: object = (compiled.config or {}).get("recursion_limit")
        if recursion_limit is None and type(own_limit) is int:
            # The graph's own; LangGraph's default is a subtype of int, which type() leaves out.
            recursion_limit = own_limit
        return cls(
            compiled=compiled.copy(update={"checkpointer": None, "channels": channels}),
            tool_nodes=tuple(found),
            messages_key=key or "messages",
            node_tools=node_tools,
            subgraphs=subgraphs,
            untracked=untracked,
            run_limit=RunLimit(
                recursion_limit if recursion_limit is not None else int(DEFAULT_RECURSION_LIMIT)
            ),
        )

    def with_saver(self, saver: BaseCheckpointSaver[Any]) -> CompiledStateGraph[Any, Any, Any, Any]:
        """A copy of the graph that checkpoints into ``saver`` (one per step: no shared state)."""
        return self.compiled.copy(update={"checkpointer": saver})


def _check_no_checkpointer(compiled: CompiledStateGraph[Any, Any, Any, Any]) -> None:
    """Drop an in-memory checkpointer with a logged notice; refuse one that keeps data.

    The session keeps the thread (its run state and carry), so a compiled checkpointer
    would sit unused. An `InMemorySaver` holds nothing that outlives its process, so it is
    replaced, as LangGraph's own server replaces a graph's checkpointer with its own. Any
    other saver (SQLite, Postgres, a disk-backed ``InMemorySaver(factory=PersistentDict)``)
    keeps threads the user would expect to find there: the flow is refused, with the change
    that makes it work.
    """
    checkpointer: object = getattr(compiled, "checkpointer", None)  # its saver type is unparameterized
    if not isinstance(checkpointer, BaseCheckpointSaver):
        return
    kind: str = checkpointer.__class__.__name__  # pyright: ignore[reportUnknownMemberType]
    if _holds_nothing_durable(checkpointer):  # pyright: ignore[reportUnknownArgumentType]
        _log.info(
            "sessionflow-langgraph: the graph was compiled with checkpointer=%s; the session keeps the "
            "graph's thread (its run state and carry) durably, so that in-memory checkpointer is not used",
            kind,
        )
        return
    raise UnsupportedOptionError(
        "checkpointer",
        f"the graph was compiled with checkpointer={kind}, which keeps threads the session would never "
        "write or read: the session keeps the graph's thread itself (its run state and carry, in "
        "Temporal). Compile without one (builder.compile(), create_agent(..., checkpointer=None)); an "
        "in-memory InMemorySaver() is accepted and replaced",
    )


def _holds_nothing_durable(checkpointer: BaseCheckpointSaver[Any]) -> bool:
    """LangGraph's own in-memory saver with its default in-memory storage."""
    return type(checkpointer) is InMemorySaver and type(checkpointer.storage) is defaultdict


def _check_no_delta_channels(compiled: CompiledStateGraph[Any, Any, Any, Any]) -> None:
    """Refuse a `DeltaChannel` (beta): it rebuilds its value from the saver's older checkpoints,
    and a step restores only the latest one."""
    channels = cast(dict[str, Any], compiled.channels)  # pyright: ignore[reportUnknownMemberType] - channels and managed values
    for name, channel in channels.items():
        if isinstance(channel, DeltaChannel):
            raise UnsupportedOptionError(
                "DeltaChannel",
                f"state key {name!r} is a DeltaChannel (LangGraph beta): it keeps only a sentinel in a "
                "checkpoint and rebuilds its value from the writes of earlier checkpoints, and each "
                "sessionflow step restores only the latest checkpoint. Use a reducer instead "
                "(Annotated[list, operator.add], add_messages)",
            )


def _check_a_state_graph(graph: object) -> None:
    """Refuse a graph of the Functional API (``@entrypoint``), or any `Pregel` not built by `StateGraph`.

    An entrypoint is one node: its model calls and tool calls are ``@task``s pushed from
    inside it, not nodes, so a step cannot stop before a tool node or between two model
    calls, and its input is the entrypoint's own, not a state with a message list.
    """
    if isinstance(graph, CompiledStateGraph):
        return
    kind = type(graph).__name__
    raise UnsupportedOptionError(
        "entrypoint",
        f"the graph is a {kind}, not a StateGraph (LangGraph's Functional API, @entrypoint and @task, "
        "builds one): its model and tool calls are tasks inside one node, where a session cannot cut "
        "the run into model and tool steps. Write the agent as a StateGraph (a model node, a ToolNode "
        "and tools_condition) or with create_agent, and keep the @task bodies as its node and tool "
        "functions",
    )


SHELL_RESOURCES_KEY = "shell_session_resources"
"""`ShellToolMiddleware`'s state key: its live shell process, in an `UntrackedValue`."""


def _check_no_live_shell(compiled: CompiledStateGraph[Any, Any, Any, Any]) -> None:
    """Refuse `ShellToolMiddleware`: it keeps one live shell process for the whole run.

    A plain run starts the shell in ``before_agent``, runs every call's command in it (so a
    ``cd`` or an ``export`` holds for the next call) and stops it in ``after_agent``. A
    session runs each call in a tool step of its own, possibly in another worker process,
    and a process cannot cross steps: each step would start a shell of its own.
    """
    channels = cast(dict[str, Any], compiled.channels)  # pyright: ignore[reportUnknownMemberType] - channels and managed values
    if SHELL_RESOURCES_KEY in channels:
        raise UnsupportedOptionError(
            "ShellToolMiddleware",
            "ShellToolMiddleware keeps one live shell process for the whole agent run (state key "
            f"{SHELL_RESOURCES_KEY!r}), and a session runs each tool call as a durable step of its own, "
            "possibly in another worker process, where that shell does not exist. Give the agent a tool "
            "that runs each command in a fresh process instead (subprocess.run with cwd= its workspace), "
            "keeping what must last between calls in the workspace's files",
        )


def _check_no_interrupts(compiled: CompiledStateGraph[Any, Any, Any, Any]) -> None:
    """Refuse ``compile(interrupt_before=..., interrupt_after=...)``.

    Each step passes its own ``interrupt_before=[tool_node]``, which would silently replace
    the graph's; ``interrupt_after`` would pause a step where it may not end. A person is
    asked through the session's tool policies, or with ``interrupt()`` in a node or a tool.
    """
    for option, nodes in (
        ("interrupt_before", compiled.interrupt_before_nodes),
        ("interrupt_after", compiled.interrupt_after_nodes),
    ):
        if nodes:
            raise UnsupportedOptionError(
                option,
                f"the graph was compiled with {option}={nodes!r}; sessionflow pauses a graph only "
                "before its tool node; ask a person with interrupt() in a node (a durable question) or "
                "with tool policies, and compile without it",
            )
