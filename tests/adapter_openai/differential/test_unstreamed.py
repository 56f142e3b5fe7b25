"""Model calls in one piece (``stream_model_calls=False``): the session sends what `Runner.run` sends.

With the option, a model step makes its call as the SDK's non-streamed ``Runner.run`` does,
so even the ``stream`` flag (which the other differential tests drop: a streamed model step
sends ``stream: true``) must match the plain run's request for request. The scenarios are the
other tests' SDK examples: handoffs over two turns with a shared context, the tool's own
``needs_approval``, nested agents as tools (their sub-runs are model steps too), a
reasoning-only response that continues, and a model given by the run config's provider.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow.testing import InvocationLog
from tests.adapter_openai.differential import sdk_examples
from tests.adapter_openai.differential.harness import (
    AgentBuilder,
    Built,
    Models,
    Scenario,
    assert_same_run,
    run_plain,
    run_session,
    unique,
)
from tests.adapter_openai.differential.test_agents_as_tools import NESTED_SCRIPT
from tests.adapter_openai.differential.test_approvals import weather_and_temperature
from tests.adapter_openai.differential.test_context import SEAT_CHANGE
from tests.adapter_openai.differential.test_handoffs import FAQ_OVER_TWO_TURNS


def unstreamed(build: AgentBuilder) -> AgentBuilder:
    def build_unstreamed(models: Models, log: InvocationLog) -> Built:
        built = build(models, log)
        return dataclasses.replace(built, flow_args={**built.flow_args, "stream_model_calls": False})

    return build_unstreamed


SCENARIOS = [
    Scenario(
        name="handoff-turns",
        build=sdk_examples.customer_service,
        script=FAQ_OVER_TWO_TURNS,
        turns=["What is the baggage allowance?", "Is there wifi?"],
    ),
    Scenario(
        name="context",
        build=sdk_examples.customer_service,
        script=SEAT_CHANGE,
        turns=["Please move me to seat 12A; my confirmation number is ABC123."],
    ),
    Scenario(
        name="hitl-oakland",
        build=sdk_examples.human_in_the_loop,
        script=weather_and_temperature("Oakland"),
        turns=["What is the weather and temperature in Oakland?"],
        approvals=[True],
    ),
    Scenario(
        name="agents-as-tools-nested",
        build=sdk_examples.agents_as_tools_nested,
        script=NESTED_SCRIPT,
        turns=["Translate 'Hello, world!' to Spanish."],
    ),
    Scenario(
        name="reasoning-only-structured",
        build=sdk_examples.output_guardrails,
        script=[
            ModelReply.reasoning_only("The capital of California."),
            ModelReply.say('{"reasoning": "A capital.", "response": "Sacramento.", "user_name": null}'),
        ],
        turns=["What's the capital of California?"],
    ),
    Scenario(
        name="run-config-provider",
        build=sdk_examples.custom_provider,
        script=[
            ModelReply.call(ScriptedToolCall("call_tokyo", "get_weather", {"city": "Tokyo"})),
            ModelReply.say("Tokyo sun is bright."),
        ],
        turns=["What's the weather in Tokyo?"],
    ),
]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.name for s in SCENARIOS])
async def test_an_unstreamed_session_sends_what_runner_run_sends(
    scenario: Scenario, temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    key = unique(f"oa-whole-{scenario.name}")
    plain = await run_plain(scenario, model_server, f"{key}-plain", tmp_path)
    session_scenario = dataclasses.replace(scenario, build=unstreamed(scenario.build))
    session = await run_session(session_scenario, model_server, f"{key}-session", tmp_path, temporal_address)

    # The flag the other tests normalise away: both runs call the model in one piece.
    for run_key in (f"{key}-plain", f"{key}-session"):
        bodies = [
            r.body for name in ("", *scenario.side_scripts) for r in model_server.requests(run_key + name)
        ]
        assert bodies, f"{run_key} made no model request"
        assert all(not body.get("stream") for body in bodies), f"{run_key} streamed a model call"
    assert_same_run(plain, session)


async def test_a_streamed_session_is_the_default(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """Without the option every model call streams, so deltas reach followers live."""
    scenario = SCENARIOS[-1]
    key = unique("oa-streamed-default")
    await run_session(scenario, model_server, key, tmp_path, temporal_address)

    bodies = [r.body for r in model_server.requests(key)]
    assert len(bodies) == 2
    assert all(body.get("stream") is True for body in bodies)
