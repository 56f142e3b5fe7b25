"""Graphs after LangGraph's own docs, for the tests of tools that run in the graph's tool node.

Each is the docs' graph with the scripted model: the custom ``BasicToolNode`` of the
quickstart (``json.dumps`` of every result), tools that update state with ``Command``
and read it with ``InjectedState`` (how-to "update state from tools"), ``config`` and a
runtime context (``context_schema``), ``Command(goto=...)``, and two tool nodes.
Every tool run is logged, so a test counts how many times a tool really ran.
"""

from __future__ import annotations

import json
import operator
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, SystemMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, InjectedToolCallId, tool
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.graph.state import CompiledStateGraph
from langgraph.prebuilt import InjectedState, ToolNode, tools_condition
from langgraph.runtime import Runtime, get_runtime
from langgraph.types import Command
from typing_extensions import TypedDict  # pydantic reads InjectedState's TypedDict on Python 3.11

from sessionflow.kit import current_tool_invocation
from sessionflow.testing import FileGate, InvocationLog
from sessionflow_langgraph import EFFECT_METADATA_KEY

__all__ = [
    "BasicToolNode",
    "Context",
    "UserState",
    "basic_tool_node_graph",
    "goto_graph",
    "react_agent",
    "two_tool_nodes_graph",
    "user_info_graph",
]


def _log(state_dir: Path, name: str, **fields: Any) -> None:
    invocation = current_tool_invocation()
    attempt = invocation.attempt if invocation is not None else 0
    InvocationLog(state_dir / "invocations.jsonl").record(
        "tool", name, attempt=attempt, pid=os.getpid(), **fields
    )


def _read(value: BaseTool) -> BaseTool:
    value.metadata = {EFFECT_METADATA_KEY: "read"}
    return value


class BasicToolNode:
    """The quickstart's tool node: runs the last AI message's calls, results as JSON."""

    def __init__(self, tools: Sequence[BaseTool]) -> None:
        self.tools_by_name = {t.name: t for t in tools}

    def __call__(self, inputs: dict[str, Any]) -> dict[str, list[ToolMessage]]:
        message = inputs["messages"][-1]
        outputs: list[ToolMessage] = []
        for tool_call in message.tool_calls:
            result = self.tools_by_name[tool_call["name"]].invoke(tool_call["args"])
            outputs.append(
                ToolMessage(content=json.dumps(result), name=tool_call["name"], tool_call_id=tool_call["id"])
            )
        return {"messages": outputs}


class ChatState(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


def _chatbot(model: BaseChatModel, tools: Sequence[BaseTool]) -> Any:
    bound = model.bind_tools(list(tools))

    async def chatbot(state: ChatState) -> dict[str, list[BaseMessage]]:
        return {"messages": [await bound.ainvoke(state["messages"])]}

    return chatbot


def basic_tool_node_graph(
    model: BaseChatModel, state_dir: Path
) -> tuple[StateGraph[ChatState], list[BaseTool]]:
    @tool
    def weather(city: str) -> dict[str, str]:
        """The weather in a city."""
        _log(state_dir, "weather", city=city)
        return {"city": city, "sky": "sunny"}

    tools = [_read(weather)]
    builder = StateGraph(ChatState)
    builder.add_node("chatbot", _chatbot(model, tools))  # pyright: ignore[reportUnknownMemberType]
    builder.add_node("tools", BasicToolNode(tools))  # pyright: ignore[reportUnknownMemberType, reportArgumentType] - a callable node
    builder.add_conditional_edges("chatbot", tools_condition, {"tools": "tools", END: END})
    builder.add_edge("tools", "chatbot")
    builder.add_edge(START, "chatbot")
    return builder, tools


@dataclass
class Context:
    user_name: str


class UserState(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]
    user_name: str
    visits: Annotated[int, operator.add]


def user_info_graph(
    model: BaseChatModel, state_dir: Path, gate: bool = False
) -> StateGraph[UserState, Context]:
    """The how-to's user-info tools: ``Command(update=...)``, ``config``, ``InjectedState``, context.

    ``visits`` (reducer ``operator.add``) counts model calls across turns; the agent shows
    the state in its system prompt, so a request shows what reached the state.
    """

    @tool
    async def lookup_user(
        tool_call_id: Annotated[str, InjectedToolCallId], config: RunnableConfig
    ) -> Command[Any]:
        """Look up the user's name."""
        user_id = (config.get("configurable") or {}).get("user_id")
        _log(state_dir, "lookup_user", user_id=user_id)
        invocation = current_tool_invocation()
        if gate and invocation is not None and invocation.attempt == 1:
            await FileGate(state_dir, "lookup").wait_for_release()
        name = "Bob" if user_id == "user_123" else "Unknown user"
        message = ToolMessage("Successfully looked up user information", tool_call_id=tool_call_id)
        return Command(update={"user_name": name, "messages": [message]})

    @tool
    def greet(state: Annotated[UserState, InjectedState]) -> str:
        """Greet the user by name."""
        runtime = get_runtime(Context)
        _log(state_dir, "greet", seen=state.get("user_name"), context=runtime.context.user_name)
        return f"Hello {state.get('user_name')}! (context says {runtime.context.user_name})"

    tools = [_read(lookup_user), _read(greet)]
    bound = model.bind_tools(tools)

    async def agent(state: UserState, runtime: Runtime[Context]) -> dict[str, Any]:
        prompt = (
            f"user_name={state.get('user_name', '?')} visits={state.get('visits', 0)} "
            f"context={runtime.context.user_name}"
        )
        reply = await bound.ainvoke([SystemMessage(content=prompt), *state["messages"]])
        return {"messages": [reply], "visits": 1}

    builder = StateGraph(UserState, context_schema=Context)
    builder.add_node("agent", agent)  # pyright: ignore[reportUnknownMemberType]
    builder.add_node("tools", ToolNode(tools))  # pyright: ignore[reportUnknownMemberType]
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition, {"tools": "tools", END: END})
    builder.add_edge("tools", "agent")
    return builder


class FinalState(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]
    final_response: str


def goto_graph(model: BaseChatModel, state_dir: Path) -> StateGraph[FinalState]:
    """A tool that ends the run with ``Command(goto="finish")``; ``finish`` writes ``final_response``."""

    @tool
    def submit(answer: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> Command[Any]:
        """Submit the final answer."""
        _log(state_dir, "submit", answer=answer)
        message = ToolMessage(f"submitted {answer}", tool_call_id=tool_call_id)
        return Command(goto="finish", update={"messages": [message], "final_response": answer})

    tools = [_read(submit)]

    def finish(state: FinalState) -> dict[str, list[BaseMessage]]:
        return {"messages": [AIMessage(content=f"Final: {state['final_response']}")]}

    builder = StateGraph(FinalState)
    builder.add_node("agent", _chatbot(model, tools))  # pyright: ignore[reportUnknownMemberType]
    builder.add_node("tools", ToolNode(tools), destinations=("finish",))  # pyright: ignore[reportUnknownMemberType]
    builder.add_node("finish", finish)  # pyright: ignore[reportUnknownMemberType]
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition, {"tools": "tools", END: END})
    builder.add_edge("finish", END)
    return builder


def two_tool_nodes_graph(model: BaseChatModel, state_dir: Path) -> StateGraph[ChatState]:
    """Reads go to ``read_tools``, writes to ``write_tools``: two `ToolNode`s, neither named ``tools``."""

    @tool
    def find(query: str) -> str:
        """Find a document."""
        _log(state_dir, "find", query=query)
        return f"found {query}"

    @tool
    def store(doc: str) -> str:
        """Store a document."""
        _log(state_dir, "store", doc=doc)
        return f"stored {doc}"

    store.metadata = {EFFECT_METADATA_KEY: "idempotent_write"}
    tools: list[BaseTool] = [_read(find), store]

    def route(state: ChatState) -> str:
        last = state["messages"][-1]
        calls = last.tool_calls if isinstance(last, AIMessage) else []
        if not calls:
            return END
        return "write_tools" if calls[0]["name"] == "store" else "read_tools"

    builder = StateGraph(ChatState)
    builder.add_node("agent", _chatbot(model, tools))  # pyright: ignore[reportUnknownMemberType]
    builder.add_node("read_tools", ToolNode([find]))  # pyright: ignore[reportUnknownMemberType]
    builder.add_node("write_tools", ToolNode([store]))  # pyright: ignore[reportUnknownMemberType]
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", route, ["read_tools", "write_tools", END])
    builder.add_edge("read_tools", "agent")
    builder.add_edge("write_tools", "agent")
    return builder


def react_agent(
    model: BaseChatModel, tools: Sequence[BaseTool], checkpointer: BaseCheckpointSaver[Any] | None = None
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """The prebuilt ``create_react_agent`` of the quickstart: a ``Send`` per tool call to ``tools``."""
    from langgraph.prebuilt import create_react_agent  # pyright: ignore[reportDeprecated, reportUnknownVariableType]

    return create_react_agent(model, list(tools), checkpointer=checkpointer)  # pyright: ignore[reportDeprecated, reportUnknownVariableType]
