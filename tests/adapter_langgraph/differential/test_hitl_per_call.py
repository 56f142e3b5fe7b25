"""`HumanInTheLoopMiddleware` with ``interrupt_mode="per_call"``: the approval is asked inside the tool node.

The agent is the middleware docs' per-call example (one ``ToolApprovalRequest`` per gated
call, as the call starts), with the docs' tools swapped for the logged ones of `docs_tools`.
Here the interrupt comes from the tool step: the session asks in the next model step, and
the approval's step runs the call again, resumed with LangChain's decision.
"""

from __future__ import annotations

from pathlib import Path
from typing import cast

from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType] - partial stubs
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain_core.language_models import BaseChatModel
from langgraph.checkpoint.memory import InMemorySaver

from sessionflow.demo import ModelReply, ScriptedModelServer
from sessionflow.testing import InvocationLog
from tests.adapter_langgraph.differential.docs_tools import book_hotel, get_weather
from tests.adapter_langgraph.differential.harness import (
    Built,
    Compiled,
    Review,
    Scenario,
    assert_same_run,
    run_both,
)
from tests.adapter_langgraph.differential.test_middleware import BOOK, WEATHER


def per_call_agent(model: BaseChatModel, log: InvocationLog, checkpointer: InMemorySaver | None) -> Built:
    tools = [book_hotel(log), get_weather(log)]
    middleware = HumanInTheLoopMiddleware(interrupt_on={"book_hotel": True}, interrupt_mode="per_call")
    graph = cast(
        Compiled,
        create_agent(model, tools=tools, middleware=[middleware], checkpointer=checkpointer),
    )
    return Built(graph, tools)


async def test_per_call_approval_runs_the_gated_call_once_after_the_decision(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="hitl-per-call-approve",
        build=per_call_agent,
        script=[ModelReply.call(BOOK, WEATHER), ModelReply.say("Booked; sunny in nyc.")],
        turns=["book the McKittrick Hotel and check the weather in nyc"],
        reviews=[Review("approve")],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    # In order: the gated book_hotel runs after the decision, get_weather before it.
    assert [run["name"] for run in plain.tool_runs] == ["get_weather", "book_hotel"]
    assert_same_run(plain, session)


async def test_per_call_edit_runs_the_reviewers_call(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="hitl-per-call-edit",
        build=per_call_agent,
        script=[ModelReply.call(BOOK), ModelReply.say("Booked the Plaza instead.")],
        turns=["book the McKittrick Hotel"],
        reviews=[Review("edit", args={"hotel_name": "The Plaza"})],
        session_reviews=[Review("approve")],  # the session confirms the edited call (a deliberate difference)
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.tool_runs == [{"name": "book_hotel", "hotel_name": "The Plaza"}]
    assert_same_run(plain, session)


async def test_per_call_reject_tells_the_model_in_langchains_words(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="hitl-per-call-reject",
        build=per_call_agent,
        script=[ModelReply.call(BOOK), ModelReply.say("Understood, no booking.")],
        turns=["book the McKittrick Hotel"],
        reviews=[Review("reject", message="too expensive")],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.tool_runs == []
    assert plain.requests[1]["messages"][-1]["content"] == (
        "User rejected the tool call for `book_hotel` with reason: too expensive"
    )
    assert_same_run(plain, session)
