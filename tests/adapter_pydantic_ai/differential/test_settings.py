"""Per-run model settings and deps-dependent instructions: the session as plain Pydantic AI.

Two kinds of test. The session's model settings for a turn go in through `_settings`
(`Agent.override(model_settings=...)`, the runner cannot pass a run's settings to a step);
the first tests compare the settings a model receives from plain ``agent.run(...,
model_settings=...)`` with what it receives under `turn_model_settings`, without a session.
The last test serves a session: instructions that read deps reach every request, as in the
plain run.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic_ai import Agent, RunContext
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.settings import ModelSettings

from sessionflow import AgentSessionOptions
from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow.kit import AgentEventWriter, AgentTurnContext
from sessionflow.testing import InvocationLog
from sessionflow_pydantic_ai._settings import ModelSettingsOption, turn_model_settings
from tests.adapter_pydantic_ai.differential.harness import (
    Built,
    Models,
    Scenario,
    assert_same_run,
    run_both,
)


def turn(settings: Mapping[str, Any] | None = None) -> AgentTurnContext:
    """A model step's context; only `session_settings` matters to the settings option."""
    return AgentTurnContext(
        flow_id="s1",
        turn_id="turn-1",
        attempt=1,
        messages=[],
        framework_run_state=None,
        tool_calls={},
        policy_resolver=AgentSessionOptions().resolve_tool_policy,
        events=AgentEventWriter(None, turn_id="turn-1", step_execution_id="step", attempt=1),
        heartbeat=lambda *args: None,
        session_settings=dict(settings or {}),
    )


def recording_agent(
    seen: list[ModelSettings | None],
    *,
    agent_settings: Any = None,
    model_settings: ModelSettings | None = None,
) -> Agent[None, str]:
    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(info.model_settings)
        return ModelResponse(parts=[TextPart("ok")])

    return Agent(FunctionModel(answer, settings=model_settings), model_settings=agent_settings)


async def plain_and_session(
    run_settings: ModelSettings | None,
    option: ModelSettingsOption | None,
    *,
    agent_settings: Any = None,
    model_settings: ModelSettings | None = None,
    session_settings: Mapping[str, Any] | None = None,
) -> tuple[ModelSettings | None, ModelSettings | None]:
    """The settings the model receives: plain `agent.run(model_settings=...)`, then a step
    under the session's option (the same agent, no run settings)."""
    seen: list[ModelSettings | None] = []
    agent = recording_agent(seen, agent_settings=agent_settings, model_settings=model_settings)
    await agent.run("hi", model_settings=run_settings)
    with turn_model_settings(agent, option, turn(session_settings)):
        await agent.run("hi")
    assert len(seen) == 2
    return seen[0], seen[1]


async def test_a_turns_settings_merge_over_the_agents_and_the_models() -> None:
    plain, session = await plain_and_session(
        {"temperature": 0.9},
        {"temperature": 0.9},
        agent_settings={"temperature": 0.1, "max_tokens": 50},
        model_settings={"top_p": 0.5, "max_tokens": 10},
    )

    assert plain == {"top_p": 0.5, "max_tokens": 50, "temperature": 0.9}
    assert session == plain


async def test_an_agents_settings_function_still_runs_under_the_turns_settings() -> None:
    calls: list[Any] = []

    def agent_settings(ctx: RunContext[None]) -> ModelSettings:
        calls.append(ctx.model_settings)  # what the model's own settings give it
        return {"max_tokens": 50, "temperature": 0.1}

    plain, session = await plain_and_session(
        {"temperature": 0.9},
        {"temperature": 0.9},
        agent_settings=agent_settings,
        model_settings={"top_p": 0.5},
    )

    assert plain == {"top_p": 0.5, "max_tokens": 50, "temperature": 0.9}
    assert session == plain
    assert calls == [{"top_p": 0.5}, {"top_p": 0.5}]


async def test_a_function_of_the_turn_chooses_its_settings() -> None:
    def per_turn(turn: AgentTurnContext) -> ModelSettings | None:
        temperature = turn.session_settings.get("temperature")
        return {"temperature": temperature} if temperature is not None else None

    plain, session = await plain_and_session(
        {"temperature": 0.3},
        per_turn,
        agent_settings={"max_tokens": 50},
        session_settings={"temperature": 0.3},
    )
    assert session == plain == {"max_tokens": 50, "temperature": 0.3}

    # No settings for the turn: the agent's own, as a run without model_settings.
    plain, session = await plain_and_session(None, per_turn, agent_settings={"max_tokens": 50})
    assert session == plain == {"max_tokens": 50}


async def test_no_option_and_empty_settings_keep_the_agents() -> None:
    options: list[ModelSettingsOption | None] = [None, ModelSettings()]
    for option in options:
        plain, session = await plain_and_session(None, option, agent_settings={"max_tokens": 50})
        assert session == plain == {"max_tokens": 50}


# -- instructions that read deps, served as a session --------------------------------------


@dataclass
class Customer:
    name: str
    tier: str


def deps_instructions_agent(models: Models, log: InvocationLog) -> Built:
    """Static instructions, instructions that read deps, and a tool that reads them too."""
    agent = Agent(models.model(), deps_type=Customer, instructions="You answer customers.")

    @agent.instructions
    def who(ctx: RunContext[Customer]) -> str:
        return f"The customer is {ctx.deps.name}, on the {ctx.deps.tier} tier."

    @agent.tool
    def order_count(ctx: RunContext[Customer]) -> int:
        """How many orders the customer has placed."""
        log.record("tool", "order_count", customer=ctx.deps.name)
        return 3

    return Built(agent=agent, deps=lambda: Customer(name="Ada", tier="gold"))


async def test_instructions_that_read_deps_reach_every_request(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="deps-instructions",
        build=deps_instructions_agent,
        script=[
            ModelReply.call(ScriptedToolCall("call_1", "order_count", {})),
            ModelReply.say("You have 3 orders, Ada."),
            ModelReply.call(ScriptedToolCall("call_2", "order_count", {})),
            ModelReply.say("Still 3."),
        ],
        turns=["How many orders do I have?", "And now?"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    # Pydantic AI's Chat Completions model sends each instruction as a system message.
    instructions = [
        {"role": "system", "content": "You answer customers."},
        {"role": "system", "content": "The customer is Ada, on the gold tier."},
    ]
    requests = plain.requests[""]
    assert len(requests) == 4
    for request in requests:
        assert request["messages"][:2] == instructions
    assert plain.outputs == ["You have 3 orders, Ada.", "Still 3."]
    assert_same_run(plain, session)
