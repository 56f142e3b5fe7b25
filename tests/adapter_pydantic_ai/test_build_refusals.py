"""What a Pydantic AI session flow refuses: an agent without a model, `HandleDeferredToolCalls`,
and `agent.run`'s `cancellation_token`, `timeout` and `workspace` (when built, or after one attempt)."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from pydantic_ai import Agent

from sessionflow import AgentSessionOptions, UnsupportedOptionError
from sessionflow.demo import ScriptedModelServer
from sessionflow_pydantic_ai import pydantic_ai_session_flow
from tests.build_refusals import first_turn_error
from tests.harness import FAST


def test_an_agent_without_a_model_is_refused_when_the_flow_is_built() -> None:
    with pytest.raises(UnsupportedOptionError) as raised:
        pydantic_ai_session_flow(Agent(name="nomodel"), flow_type="refused")
    assert raised.value.option == "model"
    assert "agent nomodel has no model and no model_override gives one" in str(raised.value)


def test_a_model_override_makes_the_agent_acceptable() -> None:
    pydantic_ai_session_flow(Agent(name="nomodel"), flow_type="ok", model_override="test")


async def test_an_agent_only_a_factory_shows_fails_the_turn_after_one_attempt(
    temporal_address: str, model_server: ScriptedModelServer
) -> None:
    key = f"pai-refused-{uuid.uuid4().hex[:10]}"
    flow = pydantic_ai_session_flow(
        lambda: Agent(name="nomodel"), flow_type=key, options=AgentSessionOptions(timings=FAST)
    )
    error, steps = await first_turn_error(temporal_address, flow, key, model_server)
    assert "option 'model'" in error
    assert [(s.step_type, s.final_attempt, s.outcome) for s in steps] == [
        ("sessionflow.RunModel", 1, "failed")
    ]


def _auto_approving_agent() -> Agent[None, str]:
    from pydantic_ai.capabilities import HandleDeferredToolCalls

    agent = Agent(
        "test",
        name="autoapprove",
        capabilities=[
            HandleDeferredToolCalls(handler=lambda ctx, requests: requests.build_results(approve_all=True))
        ],
    )

    @agent.tool_plain(requires_approval=True)
    def delete(path: str) -> str:
        return f"deleted {path}"

    return agent


async def test_handle_deferred_tool_calls_is_refused_when_the_flow_is_built() -> None:
    # Plain: the handler approves the call inline and the tool runs (TestModel calls every tool).
    plain = await _auto_approving_agent().run("Delete it")
    assert '"delete":"deleted a"' in plain.output
    with pytest.raises(UnsupportedOptionError) as raised:
        pydantic_ai_session_flow(_auto_approving_agent(), flow_type="refused")
    assert raised.value.option == "capabilities"
    assert "HandleDeferredToolCalls: a session decides deferred tool calls itself" in str(raised.value)


async def test_handle_deferred_tool_calls_of_a_factorys_agent_fails_the_turn_after_one_attempt(
    temporal_address: str, model_server: ScriptedModelServer
) -> None:
    key = f"pai-refused-{uuid.uuid4().hex[:10]}"
    flow = pydantic_ai_session_flow(
        _auto_approving_agent, flow_type=key, options=AgentSessionOptions(timings=FAST)
    )
    error, steps = await first_turn_error(temporal_address, flow, key, model_server)
    assert "option 'capabilities'" in error
    assert [(s.step_type, s.final_attempt, s.outcome) for s in steps] == [
        ("sessionflow.RunModel", 1, "failed")
    ]


def _plain_agent() -> Agent[None, str]:
    return Agent("test", name="plain")


async def test_a_cancellation_token_is_refused_when_the_flow_is_built() -> None:
    from pydantic_ai import CancellationToken
    from pydantic_ai.exceptions import RunCancelled

    # Plain: a token cancelled before the run stops it (the token is one process's handle).
    token = CancellationToken()
    token.cancel()
    with pytest.raises(RunCancelled):
        await _plain_agent().run("hi", cancellation_token=token)
    with pytest.raises(UnsupportedOptionError) as raised:
        pydantic_ai_session_flow(_plain_agent(), flow_type="refused", cancellation_token=CancellationToken())
    assert raised.value.option == "cancellation_token"
    assert "AgentSessionClient.cancel_turn(session_id)" in raised.value.why


async def test_a_run_timeout_is_refused_when_the_flow_is_built() -> None:
    # Plain: the run's deadline is honoured (a generous one lets this run finish).
    assert (await _plain_agent().run("hi", timeout=60)).output
    with pytest.raises(UnsupportedOptionError) as raised:
        pydantic_ai_session_flow(_plain_agent(), flow_type="refused", timeout=60)
    assert raised.value.option == "timeout"
    assert "AgentSessionOptions.timings" in raised.value.why and "cancel_turn" in raised.value.why


def test_a_per_run_workspace_is_refused_when_the_flow_is_built(tmp_path: Path) -> None:
    from pydantic_ai.workspaces import LocalWorkspaceBackend, WorkspaceRef

    for workspace in (
        LocalWorkspaceBackend(tmp_path),
        WorkspaceRef(provider="local", id=str(tmp_path)),
        "new",
    ):
        with pytest.raises(UnsupportedOptionError) as raised:
            pydantic_ai_session_flow(_plain_agent(), flow_type="refused", workspace=workspace)
        assert raised.value.option == "workspace"
        assert "capabilities=[LocalWorkspace(path)]" in raised.value.why
