"""Differential tests of per-turn UsageLimits and model settings (need the runner wiring).

Plain: ``agent.run(prompt, message_history=..., deps=..., usage_limits=..., model_settings=...)``
per turn. Session: ``pydantic_ai_session_flow(..., usage_limits=f, model_settings=g)``, where
`f` and `g` read the turn's options from the turn's session settings (``{"turn": n}``, sent
with each message). A turn that fails must be the scenario's last: the plain run then keeps
the history of the last good turn, the session the failed turn's prompt (and its note).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic_ai import Agent
from pydantic_ai.exceptions import AgentRunError
from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter
from pydantic_ai.settings import ModelSettings
from pydantic_ai.usage import UsageLimits

from sessionflow import AgentSessionOptions, AgentSnapshot, AgentStatus, MessageRole, ToolEffect
from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall, ScriptedUsage
from sessionflow.kit import AgentTurnContext
from sessionflow.testing import InvocationLog, wait_for_agent_snapshot
from sessionflow_pydantic_ai import pydantic_ai_session_flow
from tests.adapter_pydantic_ai.differential.harness import (
    TIMINGS,
    Built,
    Models,
    Run,
    Scenario,
    assert_same_run,
    stored_messages,
    tool_runs,
    unique,
)
from tests.adapter_pydantic_ai.differential.normalise import json_value, normalise_history, normalise_requests
from tests.differential_compare import calls_in_parallel
from tests.serving import serving


@dataclass(frozen=True)
class TurnOptions:
    """What one plain run gets besides the prompt; the session gets it through the flow."""

    usage_limits: UsageLimits | None = None
    model_settings: ModelSettings | None = None


async def run_plain(
    scenario: Scenario, options: Sequence[TurnOptions], server: ScriptedModelServer, key: str, log_dir: Path
) -> Run:
    server.script(key, scenario.script)
    log = InvocationLog(log_dir / "plain.jsonl")
    built = scenario.build(Models(server, key), log)
    deps = built.deps() if built.deps is not None else None
    history: list[ModelMessage] = []
    outputs: list[Any] = []
    errors: list[str | None] = []
    for text, turn in zip(scenario.turns, options, strict=True):
        try:
            result = await built.agent.run(
                text,
                message_history=history or None,
                deps=deps,
                usage_limits=turn.usage_limits,
                model_settings=turn.model_settings,
            )
        except AgentRunError as error:
            outputs.append(None)
            errors.append(f"{type(error).__name__}: {error}")
            continue
        history = result.all_messages()
        outputs.append(json_value(result.output))
        errors.append(None)
    return Run(
        requests={"": normalise_requests([r.body for r in server.requests(key)])},
        outputs=outputs,
        errors=errors,
        history=normalise_history(ModelMessagesTypeAdapter.dump_python(history, mode="json"), key=key),
        asked=[],
        tool_runs=tool_runs(log),
        concurrent_tools=calls_in_parallel(scenario.script),
    )


async def run_session(
    scenario: Scenario,
    options: Sequence[TurnOptions],
    server: ScriptedModelServer,
    key: str,
    log_dir: Path,
    temporal_address: str,
) -> Run:
    server.script(key, scenario.script)
    log = InvocationLog(log_dir / "session.jsonl")
    built = scenario.build(Models(server, key), log)

    def limits(turn: AgentTurnContext) -> UsageLimits | None:
        return options[int(turn.session_settings["turn"])].usage_limits

    def settings(turn: AgentTurnContext) -> ModelSettings | None:
        return options[int(turn.session_settings["turn"])].model_settings

    flow = pydantic_ai_session_flow(
        built.agent,
        flow_type=key,
        deps_factory=built.deps,
        options=AgentSessionOptions(timings=TIMINGS, default_tool_effect=ToolEffect.READ),
        usage_limits=limits,
        model_settings=settings,
    )
    outputs: list[Any] = []
    errors: list[str | None] = []
    async with serving(temporal_address, flow) as sessions:
        seen = 0
        for number, text in enumerate(scenario.turns, 1):
            settings_of_turn = {"turn": number - 1}
            if number == 1:
                await sessions.start_session(key, text, settings=settings_of_turn)
            else:
                assert await sessions.send_user_message(key, text, settings=settings_of_turn)

            def ended(snapshot: AgentSnapshot, number: int = number) -> AgentSnapshot | None:
                state = snapshot.state
                done = (
                    state
                    and state.turn_count >= number
                    and state.status is AgentStatus.WAITING_FOR_USER_MESSAGE
                )
                return snapshot if done else None

            snapshot = await wait_for_agent_snapshot(
                sessions, key, ended, description=f"turn {number}", timeout=90
            )
            assert snapshot.state is not None
            error = snapshot.state.last_turn_error
            messages = await stored_messages(sessions, key)
            answers = [m for m in messages[seen:] if m.message.role is MessageRole.ASSISTANT]
            text_out = answers[-1].message.text if answers and not error else None
            if text_out is not None and built.agent.output_type is not str:
                text_out = json.loads(text_out)
            errors.append(error)
            outputs.append(text_out)
            seen = len(messages)
        messages = await stored_messages(sessions, key)
    return Run(
        requests={"": normalise_requests([r.body for r in server.requests(key)])},
        outputs=outputs,
        errors=errors,
        history=normalise_history([m.message.framework_item for m in messages], key=key),
        asked=[],
        tool_runs=tool_runs(log),
    )


async def run_both(
    scenario: Scenario,
    options: Sequence[TurnOptions],
    server: ScriptedModelServer,
    temporal_address: str,
    tmp_path: Path,
) -> tuple[Run, Run]:
    key = unique(f"pai-limits-{scenario.name}")
    plain = await run_plain(scenario, options, server, f"{key}-plain", tmp_path)
    session = await run_session(scenario, options, server, f"{key}-session", tmp_path, temporal_address)
    return plain, session


def assert_same_failure(plain: Run, session: Run) -> str:
    """The last turn failed in both with Pydantic AI's text; the rest as `assert_same_run`.

    The history is left out: the plain run keeps the last good turn's, the session also
    stores the failed turn's prompt (see the module's docstring). Returns the text.
    """
    plain_error, session_error = plain.errors[-1], session.errors[-1]
    assert plain_error is not None and plain_error.startswith("UsageLimitExceeded: "), plain_error
    text = plain_error.removeprefix("UsageLimitExceeded: ")
    assert session_error is not None and session_error.endswith(text), (session_error, text)
    assert_same_run(replace(plain, history=[]), replace(session, history=[]))
    return text


# -- agents --------------------------------------------------------------------------------


class Report(BaseModel):
    summary: str


def with_lookup(agent: Agent[None, Any], log: InvocationLog) -> Built:
    @agent.tool_plain
    def lookup(city: str) -> str:
        """The weather in a city."""
        log.record("tool", "lookup", city=city)
        return f"sunny in {city}"

    return Built(agent=agent)


def lookup_agent(models: Models, log: InvocationLog) -> Built:
    """Answers text; its own settings (max_tokens) under every turn's."""
    agent = Agent(models.model(), instructions="You report the weather.", model_settings={"max_tokens": 200})
    return with_lookup(agent, log)


def report_agent(models: Models, log: InvocationLog) -> Built:
    """Answers a `Report` through the output tool."""
    return with_lookup(Agent(models.model(), output_type=Report, instructions="You report the weather."), log)


def call(call_id: str, city: str) -> ScriptedToolCall:
    return ScriptedToolCall(call_id, "lookup", {"city": city})


# -- tests ---------------------------------------------------------------------------------


async def test_within_the_request_limit_the_turns_run_as_plain(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="requests-ok",
        build=lookup_agent,
        script=[
            ModelReply.call(call("c1", "Oslo")),
            ModelReply.call(call("c2", "Rome")),
            ModelReply.say("Sunny."),
        ],
        turns=["Weather in Oslo and Rome?"],
    )
    options = [TurnOptions(usage_limits=UsageLimits(request_limit=3, tool_calls_limit=2))]
    plain, session = await run_both(scenario, options, model_server, temporal_address, tmp_path)

    assert plain.errors == [None] and len(plain.requests[""]) == 3
    assert_same_run(plain, session)


async def test_the_request_limit_fails_the_turn_before_the_next_request(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="requests",
        build=lookup_agent,
        script=[
            ModelReply.say("Hello."),
            ModelReply.call(call("c1", "Oslo")),
            ModelReply.call(call("c2", "Rome")),
            ModelReply.say("Sunny."),
        ],
        # The first turn's request does not count towards the second's limit.
        turns=["Hi", "Weather in Oslo and Rome?"],
    )
    options = [
        TurnOptions(usage_limits=UsageLimits(request_limit=1)),
        TurnOptions(usage_limits=UsageLimits(request_limit=2)),
    ]
    plain, session = await run_both(scenario, options, model_server, temporal_address, tmp_path)

    assert len(plain.requests[""]) == 3
    assert plain.tool_runs == [{"name": "lookup", "city": "Oslo"}, {"name": "lookup", "city": "Rome"}]
    text = assert_same_failure(plain, session)
    assert text.startswith("The next request would exceed the request_limit of 2")


async def test_the_tool_calls_limit_fails_the_turn_before_the_calls_run(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="tool-calls",
        build=lookup_agent,
        script=[ModelReply.call(call("c1", "Oslo")), ModelReply.call(call("c2", "Rome"), call("c3", "Oslo"))],
        turns=["Weather in Oslo and Rome?"],
    )
    options = [TurnOptions(usage_limits=UsageLimits(tool_calls_limit=2))]
    plain, session = await run_both(scenario, options, model_server, temporal_address, tmp_path)

    assert plain.tool_runs == [{"name": "lookup", "city": "Oslo"}]
    text = assert_same_failure(plain, session)
    assert text.startswith("The next tool call(s) would exceed the tool_calls_limit of 2 (tool_calls=3).")


async def test_a_token_limit_fails_the_turn_after_the_response_that_spends_it(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="tokens",
        build=lookup_agent,
        script=[
            ModelReply.call(call("c1", "Oslo"), usage=ScriptedUsage(10, 5)),
            ModelReply.say("Sunny.", usage=ScriptedUsage(20, 3)),
        ],
        turns=["Weather in Oslo?"],
    )
    options = [TurnOptions(usage_limits=UsageLimits(total_tokens_limit=30))]
    plain, session = await run_both(scenario, options, model_server, temporal_address, tmp_path)

    assert len(plain.requests[""]) == 2
    text = assert_same_failure(plain, session)
    assert text.startswith("Exceeded the total_tokens_limit of 30 (total_tokens=38)")


async def test_a_spent_request_limit_lets_an_output_tool_end_the_turn(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """One response calls a tool and answers through the output tool: the turn ends without
    another request, so a request limit of 1 is not in the way, plain or session."""
    scenario = Scenario(
        name="output-tool",
        build=report_agent,
        script=[
            ModelReply.call(call("c1", "Oslo"), ScriptedToolCall("c2", "final_result", {"summary": "Sunny."}))
        ],
        turns=["Weather in Oslo?"],
    )
    options = [TurnOptions(usage_limits=UsageLimits(request_limit=1))]
    plain, session = await run_both(scenario, options, model_server, temporal_address, tmp_path)

    assert plain.errors == [None] and plain.outputs == [{"summary": "Sunny."}]
    assert_same_run(plain, session)


async def test_each_turn_sends_its_own_model_settings_on_every_request(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="settings",
        build=lookup_agent,
        script=[
            ModelReply.call(call("c1", "Oslo")),
            ModelReply.say("Sunny."),
            ModelReply.say("Still sunny."),
        ],
        turns=["Weather in Oslo?", "And now?"],
    )
    options = [
        TurnOptions(model_settings={"temperature": 0.2}),
        TurnOptions(model_settings={"temperature": 0.9, "max_tokens": 20}),
    ]
    plain, session = await run_both(scenario, options, model_server, temporal_address, tmp_path)

    sent = [
        (r.get("temperature"), r.get("max_tokens") or r.get("max_completion_tokens"))
        for r in plain.requests[""]
    ]
    assert sent == [(0.2, 200), (0.2, 200), (0.9, 20)]
    assert_same_run(plain, session)
