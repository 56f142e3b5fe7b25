"""Limits and terminal outcomes: LangChain's call limits and LangGraph's recursion limit hold as in plain.

The agents are LangChain's middleware docs' ("Tool call limit", "Model call limit"): a
global limiter and one for ``search``. A run limit counts within one run (LangChain keeps
it in an untracked channel, which the session carries between the steps of a turn and
drops at its end); a thread limit counts across turns. A limit that ends the run
(``exit_behavior="end"``) ends the turn with LangChain's message; one that raises
(``"error"``), and LangGraph's ``GraphRecursionError``, end the turn with the framework's
error, never retried: each test counts the model requests.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal, cast

import pytest
from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType] - partial stubs
from langchain.agents.middleware import (
    AgentMiddleware,
    HumanInTheLoopMiddleware,
    ModelCallLimitMiddleware,
    ToolCallLimitMiddleware,
)
from langchain_core.language_models import BaseChatModel
from langchain_core.tools import BaseTool
from langgraph.checkpoint.memory import InMemorySaver

# Deprecated for create_agent, still documented and widely used; partial stubs.
from langgraph.prebuilt import create_react_agent  # pyright: ignore[reportDeprecated, reportUnknownVariableType]

from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow.testing import InvocationLog
from tests.adapter_langgraph.differential.docs_tools import book_hotel, get_weather, search
from tests.adapter_langgraph.differential.harness import (
    TURN_ABORTED,
    Built,
    Compiled,
    GraphBuilder,
    Review,
    Run,
    Scenario,
    assert_same_run,
    run_both,
)


def agent_with(
    *middleware: AgentMiddleware[Any, Any, Any],
    recursion_limit: int | None = None,
    extra_tools: Callable[[InvocationLog], BaseTool] | None = None,
) -> GraphBuilder:
    def build(model: BaseChatModel, log: InvocationLog, checkpointer: InMemorySaver | None) -> Built:
        tools = [search(log), get_weather(log), *([extra_tools(log)] if extra_tools else [])]
        graph = cast(
            Compiled, create_agent(model, tools=tools, middleware=list(middleware), checkpointer=checkpointer)
        )
        if recursion_limit is not None:
            graph = graph.with_config({"recursion_limit": recursion_limit})
        return Built(graph, tools)

    return build


def searches(*queries: str) -> ModelReply:
    return ModelReply.call(*(ScriptedToolCall(f"call_{q}", "search", {"query": q}) for q in queries))


def docs_limiters(
    exit_behavior: Literal["continue", "error", "end"] = "continue",
) -> list[ToolCallLimitMiddleware]:
    """The docs' pair: a global limit, and a tighter one for ``search``."""
    return [
        ToolCallLimitMiddleware(thread_limit=20, run_limit=10),
        ToolCallLimitMiddleware(tool_name="search", thread_limit=5, run_limit=3, exit_behavior=exit_behavior),
    ]


def assert_failed_turn_kept(session: Run, text: str) -> None:
    """A failed turn keeps the user's message and the session's turn-failure note (which names
    the tool calls that ran), not the messages plain's thread checkpointed before the error
    (the adapter README's "a turn that ends in an error")."""
    assert [m["type"] for m in session.transcript] == ["human", "human"]
    assert session.transcript[0]["data"]["content"] == text
    assert "search" in session.transcript[1]["data"]["content"]


def tool_texts(run: Run, request: int) -> list[str]:
    return [m["content"] for m in run.requests[request]["messages"] if m["role"] == "tool"]


async def test_tool_call_run_limit_holds_across_the_turns_model_steps(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    # The case: a fourth search in one run, each asked for by its own model call.
    scenario = Scenario(
        name="tool-run-limit",
        build=agent_with(*docs_limiters()),
        script=[
            searches("a"),
            searches("b"),
            searches("c"),
            searches("d"),
            ModelReply.say("Enough searching."),
        ],
        turns=["research this"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert [r["query"] for r in plain.tool_runs] == ["a", "b", "c"]
    assert tool_texts(plain, 4)[-1] == "Tool call limit exceeded. Do not call 'search' again."
    assert_same_run(plain, session)


async def test_tool_call_thread_limit_counts_across_turns_and_a_blocked_call_runs_no_tool_step(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    # Turn 2 starts a new run (its run count is 0 again) on a thread that has 3 searches:
    # of three parallel searches two fit the thread limit of 5; the third is blocked.
    scenario = Scenario(
        name="tool-thread-limit",
        build=agent_with(*docs_limiters()),
        script=[
            searches("a"),
            searches("b"),
            searches("c"),
            ModelReply.say("Three done."),
            searches("d", "e", "f"),
            ModelReply.say("Two more done."),
        ],
        turns=["research this", "and more"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert sorted(r["query"] for r in plain.tool_runs) == ["a", "b", "c", "d", "e"]
    assert "Tool call limit exceeded. Do not call 'search' again." in tool_texts(plain, 5)
    assert plain.state["thread_tool_call_count"] == {"__all__": 6, "search": 5}  # the global one let it by
    assert_same_run(plain, session)


async def test_tool_call_limit_end_ends_the_turn_with_langchains_message(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="tool-limit-end",
        build=agent_with(*docs_limiters("end")),
        script=[searches("a"), searches("b"), searches("c"), searches("d"), ModelReply.say("never asked")],
        turns=["research this"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert len(plain.requests) == 4  # the fourth answer's calls end the run: no fifth request
    last = plain.state["messages"][-1]["data"]
    assert last["content"] == "'search' tool call limit reached: run limit exceeded (4/3 calls)."
    assert_same_run(plain, session)


async def test_tool_call_limit_error_ends_the_turn_with_its_error_never_retried(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="tool-limit-error",
        build=agent_with(*docs_limiters("error")),
        script=[searches("a"), searches("b"), searches("c"), searches("d"), ModelReply.say("never asked")],
        turns=["research this"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.errors == [
        f"turn 1: {TURN_ABORTED}ToolCallLimitExceededError: "
        "'search' tool call limit reached: run limit exceeded (4/3 calls)."
    ]
    assert len(plain.requests) == len(session.requests) == 4  # a retry would ask again
    assert_same_run(plain, session, state=False)
    assert_failed_turn_kept(session, "research this")


async def test_model_call_run_limit_end_stops_before_the_third_model_call(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="model-run-limit",
        build=agent_with(ModelCallLimitMiddleware(run_limit=2, exit_behavior="end")),
        script=[searches("a"), searches("b"), ModelReply.say("never asked")],
        turns=["research this"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert len(plain.requests) == 2
    assert [r["query"] for r in plain.tool_runs] == ["a", "b"]
    assert plain.state["messages"][-1]["data"]["content"] == "Model call limits exceeded: run limit (2/2)"
    assert_same_run(plain, session)


async def test_model_call_thread_limit_counts_across_turns(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="model-thread-limit",
        build=agent_with(ModelCallLimitMiddleware(thread_limit=3, run_limit=2)),
        script=[searches("a"), ModelReply.say("Found a."), searches("b"), ModelReply.say("never asked")],
        turns=["research a", "research b"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert len(plain.requests) == 3
    assert plain.state["messages"][-1]["data"]["content"] == "Model call limits exceeded: thread limit (3/3)"
    assert_same_run(plain, session)


async def test_model_call_limit_error_ends_the_turn_with_its_error_never_retried(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="model-limit-error",
        build=agent_with(ModelCallLimitMiddleware(run_limit=1, exit_behavior="error")),
        script=[searches("a"), ModelReply.say("never asked")],
        turns=["research this"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.errors == [
        f"turn 1: {TURN_ABORTED}ModelCallLimitExceededError: Model call limits exceeded: run limit (1/1)"
    ]
    assert len(plain.requests) == len(session.requests) == 1
    assert_same_run(plain, session, state=False)
    assert_failed_turn_kept(session, "research this")


async def test_the_recursion_limit_counts_the_whole_run_and_ends_the_turn_never_retried(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    # A model that never stops searching; the graph's own limit (with_config, as
    # create_agent sets its 9_999) counts super-steps across the session's steps.
    scenario = Scenario(
        name="recursion-limit",
        build=agent_with(recursion_limit=6),
        script=[searches(str(n)) for n in range(8)],
        turns=["search forever"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert len(plain.errors) == 1
    assert plain.errors[0].startswith(
        f"turn 1: {TURN_ABORTED}GraphRecursionError: Recursion limit of 6 reached"
    )
    assert len(plain.requests) == len(session.requests) == 3
    assert_same_run(plain, session, state=False)


async def test_a_run_limit_starts_again_after_an_interrupt_as_plains_resumed_run_does(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    # Plain resumes an interrupt with a new invoke: its untracked run count starts empty. So
    # the booking the person approved is the resumed run's first call, the next search its
    # second, and the one after is blocked (carried over the interrupt, b would be blocked).
    scenario = Scenario(
        name="run-limit-interrupt",
        build=agent_with(
            ToolCallLimitMiddleware(run_limit=2),
            HumanInTheLoopMiddleware(interrupt_on={"book_hotel": True}),
            extra_tools=book_hotel,
        ),
        script=[
            searches("a"),
            ModelReply.call(ScriptedToolCall("call_book", "book_hotel", {"hotel_name": "Plaza"})),
            searches("b"),
            searches("c"),
            ModelReply.say("Booked, and searched."),
        ],
        turns=["search, then book the Plaza"],
        reviews=[Review("approve")],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert [r.get("query", r.get("hotel_name")) for r in plain.tool_runs] == ["a", "Plaza", "b"]
    assert tool_texts(plain, 4)[-1] == "Tool call limit exceeded. Do not make additional tool calls."
    assert_same_run(plain, session)


@pytest.mark.filterwarnings("ignore:create_react_agent has been moved")
async def test_remaining_steps_end_the_prebuilt_agent_where_plains_does(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    # create_react_agent reads the managed value RemainingSteps (the run's stop minus its
    # step) and answers "Sorry, need more steps" instead of calling tools it cannot finish.
    def build(model: BaseChatModel, log: InvocationLog, checkpointer: InMemorySaver | None) -> Built:
        tools = [search(log)]
        agent = cast(Compiled, create_react_agent(model, tools, checkpointer=checkpointer))  # pyright: ignore[reportDeprecated]
        return Built(agent.with_config({"recursion_limit": 6}), tools)

    scenario = Scenario(
        name="remaining-steps",
        build=build,
        script=[searches(str(n)) for n in range(6)],
        turns=["search forever"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.errors == []
    assert plain.state["messages"][-1]["data"]["content"] == "Sorry, need more steps to process this request."
    assert len(plain.requests) == len(session.requests)
    assert_same_run(plain, session)
