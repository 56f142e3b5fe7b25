"""``config["configurable"]`` and a runtime context (``context_schema``), given with every turn.

The graph is in the shape of LangGraph's "runtime context" and "update state from tools"
guides: the model node reads ``runtime.context`` (and ``config["configurable"]``) into its
system prompt, ``lookup_user`` reads ``config["configurable"]["user_id"]`` as the guide's
``update_user_info`` does, and ``greet`` reads the context with ``get_runtime``. The plain
run passes the same ``configurable`` in its config and the same ``context=`` on each
``astream``; the session gets them as per-turn settings (``{"langgraph": {...}}``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.config import get_config
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.runtime import Runtime, get_runtime

from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow.testing import InvocationLog
from tests.adapter_langgraph.differential.harness import Built, Scenario, assert_same_run, run_both


@dataclass
class ContextSchema:
    user_name: str


def context_tools(log: InvocationLog) -> list[BaseTool]:
    @tool
    def lookup_user(config: RunnableConfig) -> str:
        """Look up the user's account."""
        user_id = config.get("configurable", {}).get("user_id")
        log.record("tool", "lookup_user", user_id=user_id)
        return f"account of {user_id}"

    @tool
    def greet() -> str:
        """Greet the user by name."""
        name = get_runtime(ContextSchema).context.user_name
        log.record("tool", "greet", user_name=name)
        return f"Hello {name}!"

    return [lookup_user, greet]


def context_graph(model: BaseChatModel, log: InvocationLog, checkpointer: InMemorySaver | None) -> Built:
    tools = context_tools(log)
    llm = model.bind_tools(tools)

    async def call_model(
        state: MessagesState, runtime: Runtime[ContextSchema]
    ) -> dict[str, list[BaseMessage]]:
        user_id = get_config().get("configurable", {}).get("user_id")
        prompt = SystemMessage(content=f"You talk to {runtime.context.user_name} (user {user_id}).")
        return {"messages": [await llm.ainvoke([prompt, *state["messages"]])]}

    builder = StateGraph(MessagesState, context_schema=ContextSchema)
    builder.add_node("model", call_model)  # pyright: ignore[reportUnknownMemberType] - LangGraph's stubs
    builder.add_node("tools", ToolNode(tools))  # pyright: ignore[reportUnknownMemberType]
    builder.add_edge(START, "model")
    builder.add_conditional_edges("model", tools_condition, {"tools": "tools", END: END})
    builder.add_edge("tools", "model")
    return Built(builder.compile(checkpointer=checkpointer), tools)  # pyright: ignore[reportUnknownMemberType]


async def test_configurable_and_runtime_context_reach_nodes_and_tools_on_every_turn(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="runtime-context",
        build=context_graph,
        script=[
            ModelReply.call(ScriptedToolCall("call_lookup", "lookup_user", {})),
            ModelReply.say("Found your account."),
            ModelReply.call(ScriptedToolCall("call_greet", "greet", {})),
            ModelReply.say("Greeted."),
        ],
        turns=["who am I?", "greet me"],
        configurable={"user_id": "user_123"},
        context={"user_name": "Ada"},
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert [r["messages"][0]["content"] for r in plain.requests] == ["You talk to Ada (user user_123)."] * 4
    tool_results: list[Any] = [r["messages"][-1]["content"] for r in plain.requests[1::2]]
    assert tool_results == ["account of user_123", "Hello Ada!"]
    assert plain.tool_runs == [
        {"name": "lookup_user", "user_id": "user_123"},
        {"name": "greet", "user_name": "Ada"},
    ]
    assert_same_run(plain, session)
