"""Agent delegation (Pydantic AI's multi-agent docs) against plain Pydantic AI, also across a SIGKILL.

The delegated agent runs inside its parent's tool step, with every model call and tool call
journaled in the step (`sessionflow_pydantic_ai._delegation`). Each test compares the model
requests of every conversation call by call, the outputs, the history and the tool runs
with `agent.run`, and the usage totals (``usage=ctx.usage`` sums the delegate's requests
into the parent's). The crash tests kill the worker inside the delegated agent's own tool,
two levels down, and assert that the retried step sent none of the model requests it had
already sent and ran again only the tool that was running.
"""

from __future__ import annotations

from pathlib import Path

from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall, ScriptedUsage
from tests.adapter_pydantic_ai.differential import delegation_agents, examples
from tests.adapter_pydantic_ai.differential.crash import distinct_tool_runs
from tests.adapter_pydantic_ai.differential.harness import Scenario, assert_same_run, run_both
from tests.adapter_pydantic_ai.differential.test_crash import crashed
from tests.adapter_pydantic_ai.differential.test_flight_booking import CHEAPEST, EXTRACTED

JOKES = ["Why did the chicken cross the road? To get to the other side.", "I told a joke about UDP."]


def _used(input_tokens: int, output_tokens: int) -> ScriptedUsage:
    return ScriptedUsage(input_tokens=input_tokens, output_tokens=output_tokens)


def joke_scenario() -> Scenario:
    return Scenario(
        name="jokes",
        build=delegation_agents.joke_delegation,
        script=[
            ModelReply.call(ScriptedToolCall("call_jokes", "joke_factory", {"count": 2}), usage=_used(30, 7)),
            ModelReply.say(JOKES[1], usage=_used(60, 11)),
        ],
        side_scripts={
            "-jokes": [
                ModelReply.call(
                    ScriptedToolCall("call_out", "final_result", {"response": JOKES}), usage=_used(21, 40)
                )
            ]
        },
        turns=["Tell me a joke."],
    )


def nested_scenario(name: str) -> Scenario:
    return Scenario(
        name=name,
        build=delegation_agents.nested_jokes,
        script=[
            ModelReply.call(ScriptedToolCall("call_jokes", "joke_factory", {"count": 2}), usage=_used(30, 7)),
            ModelReply.say(JOKES[0], usage=_used(60, 11)),
        ],
        side_scripts={
            "-jokes": [
                ModelReply.call(
                    ScriptedToolCall("call_words", "word_bank", {"topic": "cats"}), usage=_used(5, 3)
                ),
                ModelReply.call(
                    ScriptedToolCall("call_puns", "pun_factory", {"topic": "cats"}), usage=_used(9, 4)
                ),
                ModelReply.call(
                    ScriptedToolCall("call_out", "final_result", {"response": JOKES}), usage=_used(13, 8)
                ),
            ],
            "-puns": [
                ModelReply.call(
                    ScriptedToolCall("call_p", "final_result", {"response": ["purr-fect"]}), usage=_used(4, 2)
                )
            ],
        },
        turns=["Tell me a joke."],
    )


async def test_the_docs_agent_delegation_example(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """joke_selection_agent / joke_generation_agent, under the docs' UsageLimits."""
    plain, session = await run_both(joke_scenario(), model_server, temporal_address, tmp_path)

    assert plain.outputs == [JOKES[1]]
    assert plain.tool_runs == [{"name": "joke_factory", "jokes": 2}]
    assert plain.requests["-jokes"][0]["messages"][-1]["content"] == "Please generate 2 jokes."
    # usage=ctx.usage: the generation agent's request and tokens are the parent run's too.
    assert plain.usage == (3, 30 + 60 + 21, 7 + 11 + 40)
    assert session.usage == plain.usage
    assert_same_run(plain, session)


async def test_flight_booking_hand_off_counts_the_extraction_agent(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """flight_booking.py's extraction agent, run by the search agent's tool, as programmatic hand-off."""
    scenario = Scenario(
        name="flights-usage",
        build=examples.flight_booking,
        script=[
            ModelReply.call(ScriptedToolCall("call_extract", "extract_flights", {}), usage=_used(50, 5)),
            ModelReply.call(
                ScriptedToolCall("call_pick", "final_result_FlightDetails", CHEAPEST), usage=_used(80, 9)
            ),
        ],
        side_scripts={
            "-extract": [
                ModelReply.call(
                    ScriptedToolCall("call_found", "final_result", {"response": EXTRACTED}),
                    usage=_used(300, 70),
                )
            ]
        },
        turns=["Find me a flight from SFO to ANC on 2025-01-10"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.outputs == [CHEAPEST]
    assert plain.usage == (3, 430, 84)
    assert session.usage == plain.usage
    assert_same_run(plain, session)


async def test_nesting_of_depth_two(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    plain, session = await run_both(nested_scenario("nested"), model_server, temporal_address, tmp_path)

    assert plain.outputs == [JOKES[0]]
    assert [run["name"] for run in plain.tool_runs] == ["word_bank", "pun_factory", "joke_factory"]
    assert [len(plain.requests[c]) for c in ("", "-jokes", "-puns")] == [2, 3, 1]
    assert plain.usage == (6, 30 + 60 + 5 + 9 + 13 + 4, 7 + 11 + 3 + 4 + 8 + 2)
    assert session.usage == plain.usage
    assert_same_run(plain, session)


async def test_sigkill_in_a_delegated_agents_tool_repeats_only_that_tool(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """Killed inside ``pun_factory`` (the generation agent's tool, after the pun agent answered).

    The parent's tool step runs again in a new worker. The journal answers the generation
    agent's first two requests, ``word_bank``'s result and the pun agent's request: none is
    sent again, and ``word_bank`` does not run again. ``pun_factory`` was running, so it runs
    again (its own nested request comes from the journal as well).
    """
    plain, session = await crashed(
        nested_scenario("nested-crash"), model_server, temporal_address, tmp_path, crash_in="pun_factory"
    )

    # The recorded requests: each conversation got each request once, as in the plain run.
    assert [len(session.run.requests[c]) for c in ("", "-jokes", "-puns")] == [2, 3, 1]
    assert session.effect_pids == [session.finished_pid], "pun_factory finished once, after the restart"
    words = [run for run in session.run.tool_runs if run["name"] == "word_bank"]
    assert len(words) == 1, "word_bank ran before the kill and was not run again"
    assert session.steps.get("turn-1/tool/call_jokes") == (2, "completed"), session.steps
    assert session.run.outputs == [JOKES[0]], "the turn ended once, with the plain run's answer"
    assert session.run.usage == plain.usage
    assert_same_run(distinct_tool_runs(plain), distinct_tool_runs(session.run))
