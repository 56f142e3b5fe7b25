"""LangChain's built-in agent middleware, each as its docs configure it, against plain `create_agent`.

HITL and summarization are in `test_middleware.py`, PII in `test_pii.py`, the call limits
in `test_limits.py`. Here: the to-do list (a tool that updates state with `Command`), context
editing (the request's older tool results cleared), model fallback and model retry (a failed
request, then another, in the same run of the model node and so the same step), tool retry
(a flaky tool run again inside its tool step) and the LLM tool selector (a selection call
LangChain marks as internal, then the model's call, in one step).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType] - partial stubs
from langchain.agents.middleware import (
    AgentMiddleware,
    ClearToolUsesEdit,
    ContextEditingMiddleware,
    LLMToolSelectorMiddleware,
    ModelFallbackMiddleware,
    ModelRetryMiddleware,
    TodoListMiddleware,
    ToolRetryMiddleware,
)
from langchain_core.language_models import BaseChatModel
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.checkpoint.memory import InMemorySaver

from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow.testing import InvocationLog
from tests.adapter_langgraph.differential.docs_tools import book_hotel, get_weather, search
from tests.adapter_langgraph.differential.harness import Built, Compiled, Scenario, assert_same_run, run_both

Middleware = Callable[[BaseChatModel], list[AgentMiddleware[Any, Any, Any]]]


def agent(
    middleware: Middleware, *, extra_tools: Callable[[InvocationLog], list[BaseTool]] | None = None
) -> Any:
    def build(model: BaseChatModel, log: InvocationLog, checkpointer: InMemorySaver | None) -> Built:
        tools = [get_weather(log), search(log), *(extra_tools(log) if extra_tools else [])]
        graph = cast(
            Compiled,
            create_agent(model, tools=tools, middleware=middleware(model), checkpointer=checkpointer),
        )
        return Built(graph, tools)

    return build


def flaky_lookup(log: InvocationLog) -> list[BaseTool]:
    """A lookup whose first run fails with a connection error (each run is logged first)."""

    def lookup(key: str) -> str:
        """Look a key up in a flaky service."""
        log.record("tool", "lookup", key=key)
        if len(log.entries("tool")) == 1:
            raise ConnectionError("the service dropped the connection")
        return f"value of {key}"

    return [StructuredTool.from_function(lookup)]


async def test_todo_list_middleware_updates_the_todos_and_tells_the_model(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    todos = [
        {"content": "Check the weather", "status": "in_progress"},
        {"content": "Write the summary", "status": "pending"},
    ]
    scenario = Scenario(
        name="todo",
        build=agent(lambda model: [TodoListMiddleware()]),
        script=[
            ModelReply.call(ScriptedToolCall("call_plan", "write_todos", {"todos": todos})),
            ModelReply.call(ScriptedToolCall("call_sf", "get_weather", {"city": "sf"})),
            ModelReply.say("Planned and checked: sunny."),
        ],
        turns=["plan a weather report for sf"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.state["todos"] == todos
    assert "write_todos" in str(plain.requests[0]["tools"])
    assert_same_run(plain, session)


async def test_context_editing_clears_older_tool_results_from_the_request(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="context-editing",
        build=agent(lambda model: [ContextEditingMiddleware(edits=[ClearToolUsesEdit(trigger=20, keep=1)])]),
        script=[
            ModelReply.call(ScriptedToolCall("call_a", "search", {"query": "first"})),
            ModelReply.call(ScriptedToolCall("call_b", "search", {"query": "second"})),
            ModelReply.say("Both searched."),
        ],
        turns=["search twice"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    tool_results = [m["content"] for m in plain.requests[2]["messages"] if m["role"] == "tool"]
    assert tool_results == ["[cleared]", "Results for: second"]
    assert_same_run(plain, session)


async def test_model_fallback_answers_after_the_primary_fails_in_the_same_step(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    # The fallback is the same scripted model: the primary's request fails, the next answers.
    scenario = Scenario(
        name="model-fallback",
        build=agent(lambda model: [ModelFallbackMiddleware(model)]),
        script=[ModelReply.fail("http_500"), ModelReply.say("Answered by the fallback.")],
        turns=["hello"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert len(plain.requests) == 2
    assert plain.state["messages"][-1]["data"]["content"] == "Answered by the fallback."
    assert_same_run(plain, session)


async def test_model_retry_calls_again_after_a_failure_in_the_same_step(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="model-retry",
        build=agent(lambda model: [ModelRetryMiddleware(max_retries=2, initial_delay=0, jitter=False)]),
        script=[ModelReply.fail("http_500"), ModelReply.say("Second time lucky.")],
        turns=["hello"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert len(plain.requests) == 2
    assert_same_run(plain, session)


async def test_tool_retry_runs_a_flaky_tool_again_inside_its_tool_step(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="tool-retry",
        build=agent(
            lambda model: [ToolRetryMiddleware(max_retries=2, initial_delay=0, jitter=False)],
            extra_tools=flaky_lookup,
        ),
        script=[
            ModelReply.call(ScriptedToolCall("call_k", "lookup", {"key": "k"})),
            ModelReply.say("Got it."),
        ],
        turns=["look k up"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.tool_runs == [{"name": "lookup", "key": "k"}, {"name": "lookup", "key": "k"}]
    assert plain.requests[1]["messages"][-1]["content"] == "value of k"
    assert_same_run(plain, session)


async def test_llm_tool_selector_selection_and_answer_are_one_step(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="tool-selector",
        build=agent(
            lambda model: [LLMToolSelectorMiddleware(model=model, max_tools=1)],
            extra_tools=lambda log: [book_hotel(log)],
        ),
        script=[
            ModelReply.say('{"tools": ["get_weather"]}'),
            ModelReply.call(ScriptedToolCall("call_sf", "get_weather", {"city": "sf"})),
            ModelReply.say('{"tools": ["get_weather"]}'),
            ModelReply.say("Sunny in sf."),
        ],
        turns=["what is the weather in sf"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert len(plain.requests) == 4
    assert [t["function"]["name"] for t in plain.requests[1]["tools"]] == ["get_weather"]
    assert_same_run(plain, session)
