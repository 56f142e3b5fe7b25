"""``interrupt()`` with a SIGKILL: while the question waits, and inside the tool it resumes.

The graphs are `test_interrupts`' (LangGraph's chatbot tutorial with ``human_assistance``,
and a review node before the tool node). The session runs on worker children:

* killed while the session waits for the answer: another worker starts, gets the answer,
  and the session goes on; no step runs twice and the question is asked once;
* killed inside the tool, in the run the answer resumed: only that step repeats (attempt
  2), with the same answer, and nobody is asked again.
"""

from __future__ import annotations

from pathlib import Path

from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from tests.adapter_langgraph.conftest import unique
from tests.adapter_langgraph.differential.crash import CrashedRun, distinct_tool_runs, run_session_with_crash
from tests.adapter_langgraph.differential.harness import Review, Run, Scenario, assert_same_run, run_plain
from tests.adapter_langgraph.differential.test_interrupts import assisted_chatbot, reviewed_chatbot

HELP = [
    ModelReply.call(ScriptedToolCall("call_help", "human_assistance", {"query": "Which city?"})),
    ModelReply.say("Then Paris it is."),
]


async def crashed(
    scenario: Scenario,
    model_server: ScriptedModelServer,
    temporal_address: str,
    tmp_path: Path,
    *,
    crash_in: str = "",
    kill_while_asking: bool = False,
) -> tuple[Run, CrashedRun]:
    key = unique(f"lg-crash-{scenario.name}")
    plain = await run_plain(scenario, model_server, f"{key}-plain", tmp_path / "plain")
    session = await run_session_with_crash(
        scenario,
        model_server,
        f"{key}-session",
        tmp_path / "session",
        temporal_address,
        crash_in=crash_in,
        kill_while_asking=kill_while_asking,
    )
    return plain, session


def question_steps(session: CrashedRun) -> dict[str, tuple[int, str]]:
    return {
        step: result for step, result in session.steps.items() if step.startswith("turn-1/tool/interrupt-")
    }


async def test_sigkill_while_a_nodes_question_waits(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="wait-node-question",
        build=reviewed_chatbot,
        script=[
            ModelReply.call(ScriptedToolCall("call_sf", "get_weather", {"city": "sf"})),
            ModelReply.say("It's always sunny in sf!"),
        ],
        turns=["weather in sf?"],
        reviews=[Review("answer", message="yes")],
    )
    plain, session = await crashed(scenario, model_server, temporal_address, tmp_path, kill_while_asking=True)

    assert plain.tool_runs == [{"name": "get_weather", "city": "sf"}]
    assert_same_run(plain, session.run)
    assert session.finished_pid and session.finished_pid != session.killed_pid
    # Nothing ran while the session waited, so no step repeats; the question is one step.
    assert all(attempt == 1 for attempt, _ in session.steps.values()), session.steps
    assert list(question_steps(session).values()) == [(1, "completed")]
    assert session.steps.get("turn-1/tool/call_sf") == (1, "completed")


async def test_sigkill_while_a_tools_question_waits(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="wait-tool-question",
        build=assisted_chatbot,
        script=HELP,
        turns=["I need some expert guidance"],
        reviews=[Review("answer", message="Paris")],
    )
    plain, session = await crashed(scenario, model_server, temporal_address, tmp_path, kill_while_asking=True)

    assert plain.tool_runs == [{"name": "human_assistance", "query": "Which city?", "answer": "Paris"}]
    assert_same_run(plain, session.run)
    assert all(attempt == 1 for attempt, _ in session.steps.values()), session.steps
    assert list(question_steps(session).values()) == [(1, "completed")]


async def test_sigkill_inside_the_tool_an_answer_resumed(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="resumed-tool",
        build=assisted_chatbot,
        script=HELP,
        turns=["I need some expert guidance"],
        reviews=[Review("answer", message="Paris")],
    )
    plain, session = await crashed(
        scenario, model_server, temporal_address, tmp_path, crash_in="human_assistance"
    )

    assert_same_run(distinct_tool_runs(plain), distinct_tool_runs(session.run))
    # The tool logs after interrupt() returned: the run the answer resumed is the one killed.
    assert session.effect_pids == [session.finished_pid], "the resumed run finished once, after the restart"
    assert list(question_steps(session).values()) == [(2, "completed")]
    assert session.steps.get("turn-1/tool/call_help") == (1, "completed")
