"""Custom middleware hooks run where plain runs them, as often, and see what plain's see.

Each hook is written as LangChain's custom middleware docs write them (the decorators
``@before_agent``, ``@before_model``, ``@after_model``, ``@wrap_model_call``,
``@wrap_tool_call``, ``@after_agent``, ``@dynamic_prompt``, and ``@before_model(can_jump_to=...)``
jumping to the end) and logs every run: its name and what it saw. The
agent runs two turns, the first with a tool call. ``before_agent`` and ``after_agent`` run
once per turn (a plain ``invoke``), the model hooks once per model call, ``wrap_tool_call``
once per tool call, in the tool step; the harness compares the logged runs in order.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, cast

import pytest
from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType] - partial stubs
from langchain.agents.middleware import (
    AgentMiddleware,
    AgentState,
    ModelRequest,
    ModelResponse,
    ToolCallRequest,
    after_agent,
    after_model,
    before_agent,
    before_model,
    dynamic_prompt,
    wrap_model_call,
    wrap_tool_call,
)
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.runtime import Runtime
from langgraph.types import Command

from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow.testing import InvocationLog
from tests.adapter_langgraph.differential.docs_tools import get_weather
from tests.adapter_langgraph.differential.harness import Built, Compiled, Scenario, assert_same_run, run_both

HookFactory = Callable[[InvocationLog], AgentMiddleware[Any, Any, Any]]


def _before_agent(log: InvocationLog) -> AgentMiddleware[Any, Any, Any]:
    @before_agent
    def log_before_agent(state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        log.record("hook", "before_agent", messages=len(state["messages"]))
        return None

    return log_before_agent


def _before_model(log: InvocationLog) -> AgentMiddleware[Any, Any, Any]:
    @before_model
    def log_before_model(state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        log.record("hook", "before_model", messages=len(state["messages"]))
        return None

    return log_before_model


def _after_model(log: InvocationLog) -> AgentMiddleware[Any, Any, Any]:
    @after_model
    def log_after_model(state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        last = state["messages"][-1]
        log.record("hook", "after_model", messages=len(state["messages"]), text=str(last.text))
        return None

    return log_after_model


def _wrap_model_call(log: InvocationLog) -> AgentMiddleware[Any, Any, Any]:
    @wrap_model_call
    async def log_model_call(
        request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]]
    ) -> ModelResponse[Any]:
        log.record("hook", "wrap_model_call", messages=len(request.messages))
        response = await handler(request)
        log.record("hook", "wrap_model_call returned", results=len(response.result))
        return response

    return log_model_call


def _wrap_tool_call(log: InvocationLog) -> AgentMiddleware[Any, Any, Any]:
    @wrap_tool_call
    async def log_tool_call(
        request: ToolCallRequest, handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]]
    ) -> ToolMessage | Command[Any]:
        # Not the state's messages: a tool step sees the current turn's only (README).
        log.record("hook", "wrap_tool_call", tool=request.tool_call["name"], args=request.tool_call["args"])
        result = await handler(request)
        log.record("hook", "wrap_tool_call returned", content=str(getattr(result, "content", result)))
        return result

    return log_tool_call


def _after_agent(log: InvocationLog) -> AgentMiddleware[Any, Any, Any]:
    @after_agent
    def log_after_agent(state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        log.record("hook", "after_agent", messages=len(state["messages"]))
        return None

    return log_after_agent


def _dynamic_prompt(log: InvocationLog) -> AgentMiddleware[Any, Any, Any]:
    @dynamic_prompt
    def prompt_by_length(request: ModelRequest[Any]) -> str:
        # The docs' shape: the system prompt computed from the request, for each model call.
        log.record("hook", "dynamic_prompt", messages=len(request.messages))
        return f"You are a weather assistant. The conversation has {len(request.messages)} messages."

    return prompt_by_length


def _jump_to_end(log: InvocationLog) -> AgentMiddleware[Any, Any, Any]:
    @before_model(can_jump_to=["end"])
    def answer_tomorrow_itself(state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        # `hook_config(can_jump_to=...)` through the decorator: end the run without a model call.
        last = state["messages"][-1]
        log.record("hook", "jump_to_end", messages=len(state["messages"]), text=str(last.text))
        if "tomorrow" in str(last.text):
            return {"messages": [AIMessage("I only know today's weather.")], "jump_to": "end"}
        return None

    return answer_tomorrow_itself


HOOKS: dict[str, tuple[HookFactory, int]] = {
    # hook: (middleware, its runs in plain over the two turns)
    "before_agent": (_before_agent, 2),
    "before_model": (_before_model, 3),
    "after_model": (_after_model, 3),
    "wrap_model_call": (_wrap_model_call, 6),  # before and after each of 3 calls
    "wrap_tool_call": (_wrap_tool_call, 2),  # before and after the one call
    "after_agent": (_after_agent, 2),
    "dynamic_prompt": (_dynamic_prompt, 3),
    "jump_to_end": (_jump_to_end, 3),  # the second turn ends in it, with no third request
}


def agent_with_hook(
    factory: HookFactory,
) -> Callable[[BaseChatModel, InvocationLog, InMemorySaver | None], Built]:
    def build(model: BaseChatModel, log: InvocationLog, checkpointer: InMemorySaver | None) -> Built:
        tools = [get_weather(log)]
        graph = cast(
            Compiled, create_agent(model, tools=tools, middleware=[factory(log)], checkpointer=checkpointer)
        )
        return Built(graph, tools)

    return build


@pytest.mark.parametrize("hook", list(HOOKS))
async def test_a_custom_hook_runs_as_often_as_in_plain_and_sees_the_same(
    hook: str, temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    factory, runs = HOOKS[hook]
    scenario = Scenario(
        name=f"hook-{hook.replace('_', '-')}",
        build=agent_with_hook(factory),
        script=[
            ModelReply.call(ScriptedToolCall("call_sf", "get_weather", {"city": "sf"})),
            ModelReply.say("It's always sunny in sf!"),
            ModelReply.say("Still sunny."),
        ],
        turns=["what is the weather in sf", "and tomorrow?"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert len(plain.hook_runs) == runs
    assert len(plain.requests) == (2 if hook == "jump_to_end" else 3)
    assert {run["name"] for run in plain.hook_runs} <= {hook, f"{hook} returned"}
    assert_same_run(plain, session)
