"""LangGraph's Functional API (`@entrypoint`, `@task`): plain runs it, the session refuses it by name.

The agent is the LangGraph quickstart's Functional API agent (a ``call_llm`` task, a
``call_tool`` task, an entrypoint looping until the model stops calling tools), with
``entrypoint.final`` to keep the thread's messages and an ``interrupt()`` before a
booking. Plain LangGraph runs it against the scripted model server; the session's flow
is refused when it is built (`UnsupportedOptionError`, option ``entrypoint``), with the
change to make: the model and tool calls are tasks inside one node, where the session
cannot cut the run into model and tool steps.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolCall, ToolMessage
from langchain_core.tools import BaseTool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.func import entrypoint, task
from langgraph.graph.message import add_messages
from langgraph.types import Command, interrupt

from sessionflow import UnsupportedOptionError
from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow.testing import InvocationLog
from sessionflow_langgraph import langgraph_session_flow
from tests.adapter_langgraph.conftest import unique
from tests.adapter_langgraph.differential.docs_tools import book_hotel, get_weather
from tests.adapter_langgraph.differential.harness import scripted_model


def functional_agent(model: BaseChatModel, tools: list[BaseTool], checkpointer: InMemorySaver | None) -> Any:
    """The quickstart's agent (LangGraph's stubs leave an entrypoint's type arguments unknown)."""
    by_name = {t.name: t for t in tools}
    bound = model.bind_tools(tools)

    @task
    def call_llm(messages: list[Any]) -> AIMessage:
        return bound.invoke(messages)

    @task
    def call_tool(tool_call: ToolCall) -> ToolMessage:
        if tool_call["name"] == "book_hotel":
            # Ask a person before booking, inside the entrypoint's task.
            answer = interrupt({"question": f"Book {tool_call['args']['hotel_name']}?"})
            if answer != "yes":
                return ToolMessage(content="The user declined.", tool_call_id=tool_call["id"])
        result = by_name[tool_call["name"]].invoke(tool_call["args"])
        return ToolMessage(content=str(result), tool_call_id=tool_call["id"])

    @entrypoint(checkpointer=checkpointer)
    def agent(messages: list[Any], previous: list[Any] | None) -> Any:
        history: Any = add_messages(previous or [], messages)
        response = call_llm(history).result()
        while response.tool_calls:
            results = [call_tool(c).result() for c in response.tool_calls]
            history = add_messages(history, [response, *results])
            response = call_llm(history).result()
        history = add_messages(history, response)
        return entrypoint.final(value=response, save=history)

    return agent  # pyright: ignore[reportUnknownVariableType]


async def test_the_functional_api_runs_plainly_and_is_refused_as_a_session(
    model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    key = unique("lg-diff-functional")
    model_server.script(
        key,
        [
            ModelReply.call(ScriptedToolCall("call_sf", "get_weather", {"city": "sf"})),
            ModelReply.call(ScriptedToolCall("call_book", "book_hotel", {"hotel_name": "Ritz"})),
            ModelReply.say("Sunny, and the Ritz is booked."),
        ],
    )
    log = InvocationLog(tmp_path / "plain.jsonl")
    tools = [get_weather(log), book_hotel(log)]
    agent = functional_agent(scripted_model(model_server, key), tools, InMemorySaver())
    config: Any = {"configurable": {"thread_id": "functional"}}

    await agent.ainvoke([HumanMessage("weather in sf, then book the Ritz")], config)
    assert [i.value for i in (await agent.aget_state(config)).interrupts] == [{"question": "Book Ritz?"}]
    answer: Any = await agent.ainvoke(Command(resume="yes"), config)

    assert answer.text == "Sunny, and the Ritz is booked."
    assert [e["name"] for e in log.entries("tool")] == ["get_weather", "book_hotel"]
    assert len(model_server.requests(key)) == 3

    with pytest.raises(UnsupportedOptionError) as refused:
        langgraph_session_flow(
            flow_type=key, graph=functional_agent(scripted_model(model_server, key), tools, None)
        )
    assert refused.value.option == "entrypoint"
    assert "cannot cut the run into model and tool steps" in str(refused.value)
    assert "Write the agent as a StateGraph" in str(refused.value)
