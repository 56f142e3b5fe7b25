"""LangChain v1 agent middleware: human-in-the-loop approvals and summarization.

The agents are the ones of LangChain's middleware docs ("Human-in-the-loop",
"Summarization"), with the docs' tools swapped for the logged ones of `docs_tools`.
"""

from __future__ import annotations

from pathlib import Path
from typing import cast

from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType] - partial stubs
from langchain.agents.middleware import HumanInTheLoopMiddleware, SummarizationMiddleware
from langchain_core.language_models import BaseChatModel
from langgraph.checkpoint.memory import InMemorySaver

from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
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

BOOK = ScriptedToolCall("call_book", "book_hotel", {"hotel_name": "McKittrick Hotel"})
WEATHER = ScriptedToolCall("call_weather", "get_weather", {"city": "nyc"})


def hitl_agent(model: BaseChatModel, log: InvocationLog, checkpointer: InMemorySaver | None) -> Built:
    """The docs' agent: writes need a person's decision (approve, edit or reject), reads do not."""
    tools = [book_hotel(log), get_weather(log)]
    middleware = HumanInTheLoopMiddleware(
        interrupt_on={"book_hotel": True, "get_weather": False},
        description_prefix="Tool execution pending approval",
    )
    graph = cast(
        Compiled,
        create_agent(
            model,
            tools=tools,
            system_prompt="You are a helpful assistant",
            middleware=[middleware],
            checkpointer=checkpointer,
        ),
    )
    return Built(graph, tools)


def summarizing_agent(model: BaseChatModel, log: InvocationLog, checkpointer: InMemorySaver | None) -> Built:
    """The docs' summarization agent, with a trigger small enough for a two-turn conversation.

    The summary uses the agent's own model (as the docs' ``model="gpt-4o-mini"`` could), so
    its request comes in order with the agent's on the scripted server.
    """
    tools = [get_weather(log)]
    middleware = SummarizationMiddleware(model=model, trigger=("messages", 5), keep=("messages", 2))
    graph = cast(
        Compiled,
        create_agent(model, tools=tools, middleware=[middleware], checkpointer=checkpointer),
    )
    return Built(graph, tools)


async def test_human_in_the_loop_approve_runs_the_gated_call_and_the_ungated_one(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="hitl-approve",
        build=hitl_agent,
        script=[ModelReply.call(BOOK, WEATHER), ModelReply.say("Booked; sunny in nyc.")],
        turns=["book the McKittrick Hotel and check the weather in nyc"],
        reviews=[Review("approve")],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    # One response asks for both: plain runs them as one superstep's tasks, in no fixed order
    # (the harness compares them as a multiset, `Run.concurrent_tools`).
    assert plain.concurrent_tools
    assert sorted(run["name"] for run in plain.tool_runs) == ["book_hotel", "get_weather"]
    assert_same_run(plain, session)


async def test_human_in_the_loop_edit_runs_the_edited_call(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="hitl-edit",
        build=hitl_agent,
        script=[ModelReply.call(BOOK), ModelReply.say("Booked the Plaza instead.")],
        turns=["book the McKittrick Hotel"],
        reviews=[Review("edit", args={"hotel_name": "The Plaza"})],
        # The session asks once more for the edited call, showing the edit as a diff
        # (tests/adapter_langgraph/test_approval_integrity.py): a deliberate difference.
        session_reviews=[Review("approve")],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.tool_runs == [{"name": "book_hotel", "hotel_name": "The Plaza"}]
    assert_same_run(plain, session)


async def test_human_in_the_loop_reject_tells_the_model_in_langchains_words(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="hitl-reject",
        build=hitl_agent,
        script=[ModelReply.call(BOOK), ModelReply.say("Understood, no booking.")],
        turns=["book the McKittrick Hotel"],
        reviews=[Review("reject", message="too expensive")],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.tool_runs == []
    tool_message = plain.requests[1]["messages"][-1]
    assert (
        tool_message["content"] == "User rejected the tool call for `book_hotel` with reason: too expensive"
    )
    assert_same_run(plain, session)


async def test_summarization_middleware_summary_call_is_a_model_call_of_its_own(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="summarize",
        build=summarizing_agent,
        script=[
            ModelReply.call(ScriptedToolCall("call_sf", "get_weather", {"city": "sf"})),
            ModelReply.say("It's always sunny in sf!"),
            ModelReply.say("## SESSION INTENT\nWeather in sf. ## SUMMARY\nIt is sunny."),
            ModelReply.say("Still sunny, as I said."),
        ],
        turns=["what is the weather in sf", "and tomorrow?"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    # The third request is the summary's: LangChain's summary prompt over the older messages.
    assert len(plain.requests) == 4
    assert "Messages to summarize" in str(plain.requests[2]["messages"])
    assert "It is sunny." in str(plain.requests[3]["messages"])
    # The transcript is plain's summarised channel: turn 2 superseded the five messages
    # stored before the summary and appended it, the two kept messages (copies, in the
    # channel's order) and the answer.
    assert session.superseded == [(1, 5, 2)]
    assert session.stored == 9
    assert_same_run(plain, session)


async def test_summarization_the_next_turn_starts_from_the_summarised_channel(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="summarize-3",
        build=summarizing_agent,
        script=[
            ModelReply.call(ScriptedToolCall("call_sf", "get_weather", {"city": "sf"})),
            ModelReply.say("It's always sunny in sf!"),
            ModelReply.say("## SESSION INTENT\nWeather in sf. ## SUMMARY\nIt is sunny."),
            ModelReply.say("Still sunny, as I said."),
            ModelReply.say("## SESSION INTENT\nWeather in sf. ## SUMMARY\nSunny, and sunny tomorrow."),
            ModelReply.say("Sunny all week."),
        ],
        turns=["what is the weather in sf", "and tomorrow?", "and next week?"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    # Turn 3 starts from turn 2's summarised channel: its summary call summarises that
    # summary (not the first turn's messages), and the answer's request sees the new one.
    assert len(plain.requests) == 6
    assert "It is sunny." in str(plain.requests[4]["messages"])
    assert "what is the weather in sf" not in str(plain.requests[4]["messages"])
    assert "Sunny, and sunny tomorrow." in str(plain.requests[5]["messages"])
    # Each summary supersedes the transcript it replaced; nothing is superseded twice.
    assert session.superseded == [(1, 5, 2), (6, 10, 3)]
    assert session.stored == 14
    assert_same_run(plain, session)


def late_summarizing_agent(
    model: BaseChatModel, log: InvocationLog, checkpointer: InMemorySaver | None
) -> Built:
    """`summarizing_agent` with a trigger of six messages: a turn after the summary has none."""
    tools = [get_weather(log)]
    middleware = SummarizationMiddleware(model=model, trigger=("messages", 6), keep=("messages", 2))
    graph = cast(
        Compiled,
        create_agent(model, tools=tools, middleware=[middleware], checkpointer=checkpointer),
    )
    return Built(graph, tools)


async def test_summarization_a_turn_after_the_summary_appends_only_its_own_messages(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="summarize-late",
        build=late_summarizing_agent,
        script=[
            ModelReply.call(ScriptedToolCall("call_sf", "get_weather", {"city": "sf"})),
            ModelReply.say("It's always sunny in sf!"),
            ModelReply.say("Sunny tomorrow too."),
            ModelReply.say("## SESSION INTENT\nWeather in sf. ## SUMMARY\nIt is sunny."),
            ModelReply.say("Sunny all week."),
            ModelReply.say("Yes, sunny."),
        ],
        turns=["what is the weather in sf", "and tomorrow?", "and next week?", "sure?"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    # Turn 3 summarises; turn 4 does not, and its requests are plain's: the copies turn 3
    # appended are not sent twice.
    assert len(plain.requests) == 6
    assert "Messages to summarize" in str(plain.requests[3]["messages"])
    assert "It is sunny." in str(plain.requests[5]["messages"])
    assert "what is the weather in sf" not in str(plain.requests[5]["messages"])
    # Turn 3 superseded the seven messages before the summary; turn 4 superseded nothing
    # and stored only its question and answer.
    assert session.superseded == [(1, 7, 3)]
    assert session.stored == 7 + 4 + 2
    assert_same_run(plain, session)
