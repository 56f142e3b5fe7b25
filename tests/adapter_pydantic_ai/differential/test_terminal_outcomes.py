"""Terminal outcomes end the turn as Pydantic AI reports them, and are never retried.

A plain run that spends a `UsageLimits` limit raises `UsageLimitExceeded`; one whose output
validator, or one of whose tools, keeps asking for a retry past its budget raises
`UnexpectedModelBehavior`. Either is the run's end: nothing is asked again. A session ends
the turn in the model step with Pydantic AI's text (`TurnAborted`), which the engine does
not retry: the same model requests as plain, no more, and every model step ran once.

A failed turn is the scenario's last: plain keeps the last good turn's history, the session
also stores the failed turn's prompt (and the note naming the tools that ran), a documented
difference (adapter README, "a failed turn's prompt"), asserted here as such.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from pydantic import BaseModel
from pydantic_ai import Agent, ModelRetry
from pydantic_ai.usage import UsageLimits

from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall, ScriptedUsage
from sessionflow.testing import InvocationLog
from tests.adapter_pydantic_ai.differential.harness import (
    AgentBuilder,
    Built,
    Models,
    Run,
    Scenario,
    assert_same_run,
    run_both,
)


def limited(limits: UsageLimits) -> AgentBuilder:
    def build(models: Models, log: InvocationLog) -> Built:
        agent = Agent(models.model(), instructions="You report the weather.")

        @agent.tool_plain
        def lookup(city: str) -> str:
            """The weather in a city."""
            log.record("tool", "lookup", city=city)
            return f"sunny in {city}"

        return Built(agent=agent, run_args={"usage_limits": limits}, flow_args={"usage_limits": limits})

    return build


def assert_ended_once(plain: Run, session: Run, error: str) -> None:
    """Both failed the last turn with ``error``, the session's steps ran once each, and the
    rest is as plain; the failed turn's stored prompt is the one difference in the history."""
    assert plain.errors[-1] is not None and plain.errors[-1].startswith(error), plain.errors
    assert session.model_steps is not None and session.model_attempts == session.model_steps, (
        f"a model step was retried: {session.model_attempts} attempts for {session.model_steps} steps"
    )
    assert session.history[: len(plain.history)] == plain.history
    failed_turn = session.history[len(plain.history) :]
    assert failed_turn and failed_turn[0]["parts"][0]["content"] == "Weather in Oslo and Rome?", failed_turn
    assert_same_run(replace(plain, history=session.history), session)


def call(call_id: str, city: str) -> ScriptedToolCall:
    return ScriptedToolCall(call_id, "lookup", {"city": city})


async def test_a_spent_request_limit_ends_the_turn_before_the_request(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="end-requests",
        build=limited(UsageLimits(request_limit=2)),
        script=[
            ModelReply.call(call("c1", "Oslo")),
            ModelReply.call(call("c2", "Rome")),
            ModelReply.say("x"),
        ],
        turns=["Weather in Oslo and Rome?"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)
    assert len(plain.requests[""]) == len(session.requests[""]) == 2
    assert_ended_once(
        plain, session, "UsageLimitExceeded: The next request would exceed the request_limit of 2"
    )


async def test_a_spent_token_limit_ends_the_turn_after_the_response(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="end-tokens",
        build=limited(UsageLimits(total_tokens_limit=30)),
        script=[
            ModelReply.call(call("c1", "Oslo"), usage=ScriptedUsage(10, 5)),
            ModelReply.call(call("c2", "Rome"), usage=ScriptedUsage(20, 3)),
            ModelReply.say("x"),
        ],
        turns=["Weather in Oslo and Rome?"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)
    assert len(plain.requests[""]) == len(session.requests[""]) == 2
    assert plain.tool_runs == [{"name": "lookup", "city": "Oslo"}]
    assert_ended_once(plain, session, "UsageLimitExceeded: Exceeded the total_tokens_limit of 30")


async def test_a_spent_tool_calls_limit_ends_the_turn_before_the_calls_run(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="end-tool-calls",
        build=limited(UsageLimits(tool_calls_limit=1)),
        script=[ModelReply.call(call("c1", "Oslo"), call("c2", "Rome")), ModelReply.say("x")],
        turns=["Weather in Oslo and Rome?"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)
    assert len(plain.requests[""]) == len(session.requests[""]) == 1
    assert plain.tool_runs == session.tool_runs == []
    assert_ended_once(
        plain, session, "UsageLimitExceeded: The next tool call(s) would exceed the tool_calls_limit"
    )


class Report(BaseModel):
    summary: str


def never_satisfied(models: Models, log: InvocationLog) -> Built:
    """An output validator that asks again every time: the output retries (1) run out."""
    agent = Agent(models.model(), output_type=Report, instructions="You report the weather.")

    @agent.output_validator
    def check(output: Report) -> Report:
        log.record("hook", "check", summary=output.summary)
        raise ModelRetry("Say which city.")

    return Built(agent=agent)


async def test_spent_output_retries_end_the_turn(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    report = [
        ModelReply.call(ScriptedToolCall(f"o{i}", "final_result", {"summary": "Sunny."})) for i in range(3)
    ]
    scenario = Scenario(
        name="end-output", build=never_satisfied, script=report, turns=["Weather in Oslo and Rome?"]
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)
    assert len(plain.requests[""]) == len(session.requests[""]) == 2
    assert plain.hook_runs == [{"name": "check", "summary": "Sunny."}] * 2
    assert_ended_once(plain, session, "UnexpectedModelBehavior: Exceeded maximum output retries (1)")


def failing_tool(models: Models, log: InvocationLog) -> Built:
    agent = Agent(models.model(), instructions="You report the weather.")

    @agent.tool_plain
    def lookup(city: str) -> str:
        """The weather in a city."""
        log.record("tool", "lookup", city=city)
        raise ModelRetry(f"No station in {city}; try a bigger city.")

    return Built(agent=agent)


async def test_spent_tool_retries_end_the_turn(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="end-tool-retries",
        build=failing_tool,
        script=[
            ModelReply.call(call("c1", "Oslo")),
            ModelReply.call(call("c2", "Rome")),
            ModelReply.say("x"),
        ],
        turns=["Weather in Oslo and Rome?"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)
    assert len(plain.requests[""]) == len(session.requests[""]) == 2
    assert plain.tool_runs == [{"name": "lookup", "city": "Oslo"}, {"name": "lookup", "city": "Rome"}]
    assert_ended_once(
        plain, session, "UnexpectedModelBehavior: Tool 'lookup' exceeded max retries count of 1"
    )
