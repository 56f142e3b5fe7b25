"""A node's `RetryPolicy` and `CachePolicy` (LangGraph's "Graph API: add retry policies",
"add node caching") behave in a session as in plain LangGraph.

A retry policy reruns a failed node inside the same run: the model node's failed request
and its retry are one step (the failed call's result is nothing to keep); a tool node
rerun by its policy runs the tool again inside its tool step. A cache policy serves a
node's writes from the graph's cache (``compile(cache=...)``), which the session's steps
share in the worker process, as the graph's store is.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Required

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AnyMessage, SystemMessage
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.cache.memory import InMemoryCache
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.types import CachePolicy, RetryPolicy
from typing_extensions import TypedDict

from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow.testing import InvocationLog
from tests.adapter_langgraph.differential.docs_tools import get_weather
from tests.adapter_langgraph.differential.harness import Built, Scenario, assert_same_run, run_both

RETRY = RetryPolicy(max_attempts=3, initial_interval=0.01, jitter=False)


class State(TypedDict, total=False):
    messages: Required[Annotated[list[AnyMessage], add_messages]]
    profile: str


def flaky_weather(log: InvocationLog) -> BaseTool:
    """``get_weather`` whose first run loses its connection (ConnectionError: a retry policy retries it)."""

    def get_weather(city: str) -> str:
        """Get weather for a given city."""
        log.record("tool", "get_weather", city=city)
        if len(log.entries("tool")) == 1:
            raise ConnectionError("the weather service dropped the connection")
        return f"It's always sunny in {city}!"

    return StructuredTool.from_function(get_weather)


def chatbot_graph(
    model: BaseChatModel,
    tools: list[BaseTool],
    *,
    model_retry: RetryPolicy | None = None,
    tools_retry: RetryPolicy | None = None,
    log: InvocationLog | None = None,
    checkpointer: InMemorySaver | None = None,
) -> Built:
    """The chatbot tutorial's graph, with the policies on its nodes (and a cached profile node)."""
    bound = model.bind_tools(tools)

    async def chatbot(state: State) -> dict[str, Any]:
        profile = state.get("profile")
        prefix = [SystemMessage(content=profile)] if profile else []
        return {"messages": [await bound.ainvoke([*prefix, *state["messages"]])]}

    builder = StateGraph(State)
    builder.add_node("chatbot", chatbot, retry_policy=model_retry)  # pyright: ignore[reportUnknownMemberType]
    builder.add_node("tools", ToolNode(tools), retry_policy=tools_retry)  # pyright: ignore[reportUnknownMemberType]
    builder.add_conditional_edges("chatbot", tools_condition)
    builder.add_edge("tools", "chatbot")
    if log is not None:

        def load_profile(state: State) -> dict[str, Any]:
            log.record("hook", "load_profile")
            return {"profile": "The user likes short answers."}

        def the_user(state: State) -> str:
            return "the user"

        cached = CachePolicy(key_func=the_user)
        builder.add_node("load_profile", load_profile, cache_policy=cached)  # pyright: ignore[reportUnknownMemberType]
        builder.add_edge(START, "load_profile")
        builder.add_edge("load_profile", "chatbot")
        return Built(builder.compile(checkpointer=checkpointer, cache=InMemoryCache()), tools)  # pyright: ignore[reportUnknownMemberType]
    builder.add_edge(START, "chatbot")
    return Built(builder.compile(checkpointer=checkpointer), tools)  # pyright: ignore[reportUnknownMemberType]


WEATHER = [
    ModelReply.call(ScriptedToolCall("call_sf", "get_weather", {"city": "sf"})),
    ModelReply.say("It's always sunny in sf!"),
]


async def test_a_retry_policy_on_the_model_node_retries_its_failed_request_in_the_step(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    def build(model: BaseChatModel, log: InvocationLog, checkpointer: InMemorySaver | None) -> Built:
        return chatbot_graph(model, [get_weather(log)], model_retry=RETRY, checkpointer=checkpointer)

    scenario = Scenario(
        name="retry-model-node",
        build=build,
        script=[ModelReply.fail("http_500"), *WEATHER],
        turns=["what is the weather in sf"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert len(plain.requests) == 3
    assert_same_run(plain, session)


async def test_a_retry_policy_on_the_tool_node_reruns_it_in_the_tool_step(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    def build(model: BaseChatModel, log: InvocationLog, checkpointer: InMemorySaver | None) -> Built:
        return chatbot_graph(model, [flaky_weather(log)], tools_retry=RETRY, checkpointer=checkpointer)

    scenario = Scenario(
        name="retry-tool-node", build=build, script=WEATHER, turns=["what is the weather in sf"]
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.tool_runs == [{"name": "get_weather", "city": "sf"}] * 2
    assert_same_run(plain, session)


async def test_a_cache_policy_serves_the_node_from_the_graphs_cache_on_the_next_turn(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    def build(model: BaseChatModel, log: InvocationLog, checkpointer: InMemorySaver | None) -> Built:
        return chatbot_graph(model, [get_weather(log)], log=log, checkpointer=checkpointer)

    scenario = Scenario(
        name="cache-node",
        build=build,
        script=[*WEATHER, ModelReply.say("Still sunny.")],
        turns=["what is the weather in sf", "and tomorrow?"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.hook_runs == [{"name": "load_profile"}]  # turn 2 is served from the cache
    assert plain.requests[2]["messages"][0]["content"] == "The user likes short answers."
    assert_same_run(plain, session)
