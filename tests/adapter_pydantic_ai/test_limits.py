"""`_limits`: a turn's `UsageLimits` checked as the plain run checks them, with Pydantic AI's texts.

Each check is compared with what `agent.run(..., usage_limits=...)` raises on the same
responses (a `FunctionModel`), the session's view of the turn being the plain run's
messages up to the step in question.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from pydantic import BaseModel
from pydantic_ai import Agent, DeferredToolResults
from pydantic_ai.exceptions import UsageLimitExceeded
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelRequestAttempt,
    ModelResponse,
    TextPart,
    ToolCallPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import RequestUsage, RunUsage, UsageLimits

from sessionflow import AgentToolCall, AgentToolCallStatus, ToolEffect, ToolPolicy
from sessionflow.kit import TurnAborted
from sessionflow_pydantic_ai._limits import (
    check_after_response,
    refusal_before_request,
    refusing_model,
    turn_usage,
    usage_limits_for,
)

TOOL_USAGE = RequestUsage(input_tokens=10, output_tokens=5)
ANSWER_USAGE = RequestUsage(input_tokens=20, output_tokens=3)


def tool_then_answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """Asks for `lookup` once, then answers."""
    if len(messages) == 1:
        call = ToolCallPart("lookup", {"city": "Oslo"}, tool_call_id="c1")
        return ModelResponse(parts=[call], usage=TOOL_USAGE)
    return ModelResponse(parts=[TextPart("sunny")], usage=ANSWER_USAGE)


def lookup_agent(model: FunctionModel) -> Agent[None, str]:
    agent = Agent(model)

    @agent.tool_plain
    def lookup(city: str) -> str:
        return f"sunny in {city}"

    return agent


async def plain_error(limits: UsageLimits) -> str:
    """What the plain run raises under `limits`."""
    with pytest.raises(UsageLimitExceeded) as raised:
        await lookup_agent(FunctionModel(tool_then_answer)).run("Weather?", usage_limits=limits)
    return str(raised.value)


async def plain_messages() -> list[ModelMessage]:
    return (await lookup_agent(FunctionModel(tool_then_answer)).run("Weather?")).all_messages()


def succeeded(tool_call_id: str) -> AgentToolCall:
    return AgentToolCall(
        tool_call_id=tool_call_id,
        tool_name="lookup",
        arguments="{}",
        policy=ToolPolicy(effect=ToolEffect.READ),
        deferral_order=1,
        status=AgentToolCallStatus.SUCCEEDED,
    )


def test_turn_usage_counts_responses_failed_attempts_and_succeeded_calls() -> None:
    billed = ModelRequestAttempt(
        model_name="first",
        outcome="rejected",
        timestamp=datetime.now(UTC),
        duration=timedelta(seconds=1),
        usage=RequestUsage(input_tokens=7, output_tokens=1),
    )
    messages: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart("hi")]),
        ModelResponse(parts=[TextPart("a")], usage=TOOL_USAGE, failed_attempts=[billed]),
        ModelResponse(parts=[TextPart("b")], usage=ANSWER_USAGE),
    ]
    failed = AgentToolCall(
        tool_call_id="c2",
        tool_name="lookup",
        arguments="{}",
        policy=ToolPolicy(effect=ToolEffect.READ),
        deferral_order=2,
        status=AgentToolCallStatus.FAILED,
    )

    usage = turn_usage(messages, [succeeded("c1"), failed])

    # A failed attempt's tokens count, but it is not a request (Pydantic AI's rule).
    assert (usage.requests, usage.input_tokens, usage.output_tokens, usage.tool_calls) == (2, 37, 9, 1)


async def test_the_request_limit_stops_the_next_request_with_pydantic_ais_text() -> None:
    limits = UsageLimits(request_limit=1)
    first_step = (await plain_messages())[:2]  # the prompt and the response asking for lookup

    assert refusal_before_request(limits, turn_usage([], [])) is None
    refusal = refusal_before_request(limits, turn_usage(first_step, [succeeded("c1")]))

    assert refusal == await plain_error(limits)
    assert refusal is not None
    assert refusal.startswith("The next request would exceed the request_limit of 1")


async def test_a_token_limit_fails_the_step_after_its_response() -> None:
    limits = UsageLimits(output_tokens_limit=4)
    step_usage = RunUsage(requests=1, input_tokens=10, output_tokens=5)

    with pytest.raises(TurnAborted) as raised:
        check_after_response(limits, RunUsage(), step_usage, [], deferred_calls=1)

    assert str(raised.value) == await plain_error(limits)
    assert str(raised.value).startswith("Exceeded the output_tokens_limit of 4 (output_tokens=5)")


async def test_the_turns_earlier_steps_count_towards_the_total_token_limit() -> None:
    limits = UsageLimits(total_tokens_limit=30)
    messages = await plain_messages()
    used = turn_usage(messages[:2], [succeeded("c1")])  # 15 tokens before the answer

    check_after_response(limits, RunUsage(), RunUsage(requests=1, input_tokens=10, output_tokens=5), [], 1)
    with pytest.raises(TurnAborted) as raised:
        check_after_response(limits, used, RunUsage(requests=1, input_tokens=20, output_tokens=3), [], 0)

    assert str(raised.value) == await plain_error(limits)
    assert str(raised.value).startswith("Exceeded the total_tokens_limit of 30 (total_tokens=38)")


async def test_the_tool_calls_limit_counts_the_calls_about_to_run() -> None:
    limits = UsageLimits(tool_calls_limit=0)
    step_usage = RunUsage(requests=1, input_tokens=10, output_tokens=5)

    with pytest.raises(TurnAborted) as raised:
        check_after_response(limits, RunUsage(), step_usage, [], deferred_calls=1)

    assert str(raised.value) == await plain_error(limits)
    assert str(raised.value).startswith(
        "The next tool call(s) would exceed the tool_calls_limit of 0 (tool_calls=1)."
    )
    # An answer asks for no calls; the turn's succeeded calls alone never exceed the limit.
    check_after_response(UsageLimits(tool_calls_limit=1), RunUsage(tool_calls=1), step_usage, [], 0)


def test_token_limits_are_checked_before_the_tool_calls_limit() -> None:
    limits = UsageLimits(tool_calls_limit=0, input_tokens_limit=5)

    with pytest.raises(TurnAborted, match="input_tokens_limit"):
        check_after_response(limits, RunUsage(), RunUsage(requests=1, input_tokens=10), [], deferred_calls=1)


def test_one_requests_input_tokens_are_checked_per_response() -> None:
    response = ModelResponse(parts=[TextPart("a")], usage=RequestUsage(input_tokens=50))
    per_request = UsageLimits(per_request_input_tokens_limit=40)
    with pytest.raises(
        TurnAborted, match=r"per_request_input_tokens_limit of 40 \(request_input_tokens=50\)"
    ):
        check_after_response(per_request, RunUsage(), RunUsage(requests=1, input_tokens=50), [response], 0)


def test_no_limits_check_nothing() -> None:
    huge = RunUsage(requests=10_000, input_tokens=10**9, output_tokens=10**9, tool_calls=10_000)

    assert refusal_before_request(None, huge) is None
    check_after_response(None, huge, huge, [], deferred_calls=10_000)
    assert usage_limits_for(None, turn=None) is None  # pyright: ignore[reportArgumentType]


async def test_the_refusing_model_fails_the_turn_instead_of_sending_a_request() -> None:
    sent: list[int] = []

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        sent.append(len(messages))
        return ModelResponse(parts=[TextPart("hello")])

    async def stream_answer(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        sent.append(len(messages))
        yield "hello"

    agent = Agent(FunctionModel(answer, stream_function=stream_answer))
    agent.model = refusing_model(agent, None, "no more requests")  # the agent's own model

    with pytest.raises(TurnAborted, match="no more requests"):
        await agent.run("hi")
    with pytest.raises(TurnAborted, match="no more requests"):
        async with agent.run_stream("hi"):
            pass  # pragma: no cover
    assert sent == []


class Weather(BaseModel):
    summary: str


async def test_a_step_that_sends_no_request_completes_under_the_refusing_model() -> None:
    """A response with a function call and the output tool call: once the call's result is
    in, Pydantic AI ends the run without another request, so a spent request limit does
    not fail the turn (the plain run is not asked to check it either)."""

    def never(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        raise AssertionError("no request expected")

    agent = Agent(output_type=Weather)
    agent.model = refusing_model(agent, FunctionModel(never), "request limit")

    @agent.tool_plain
    def lookup(city: str) -> str:
        return f"sunny in {city}"

    history: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart("Weather?")]),
        ModelResponse(
            parts=[
                ToolCallPart("lookup", {"city": "Oslo"}, tool_call_id="c1"),
                ToolCallPart("final_result", {"summary": "sunny"}, tool_call_id="c2"),
            ]
        ),
    ]
    results = DeferredToolResults(calls={"c1": "sunny in Oslo", "c2": ""})

    result = await agent.run(None, message_history=history, deferred_tool_results=results)

    assert result.output == Weather(summary="sunny")


def test_a_step_without_a_model_is_refused_before_it_reaches_the_limits() -> None:
    with pytest.raises(ValueError, match="no model"):
        refusing_model(Agent(), None, "request limit")


def test_limits_may_depend_on_the_turn() -> None:
    limits = UsageLimits(request_limit=3)
    chosen: list[Any] = []

    def per_turn(turn: Any) -> UsageLimits:
        chosen.append(turn)
        return limits

    assert usage_limits_for(limits, turn=None) is limits  # pyright: ignore[reportArgumentType]
    assert usage_limits_for(per_turn, turn="turn") is limits  # pyright: ignore[reportArgumentType]
    assert chosen == ["turn"]
