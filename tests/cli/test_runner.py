"""The runner the command serves: each turn's settings are resolved before the framework runs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from sessionflow import (
    AgentToolCall,
    AgentToolCallStatus,
    ImageInput,
    MessageRole,
    SessionStateError,
    ToolEffect,
    ToolPolicy,
)
from sessionflow.kit import (
    AgentEventWriter,
    AgentFrameworkRunner,
    AgentTurnContext,
    AgentTurnOutcome,
    DeferredToolExecution,
    FrameworkMessage,
    TookEffect,
    ToolExecutionError,
    ToolExecutionResult,
    TurnCompleted,
    VerifyResult,
)
from sessionflow.temporal import ModelCallLimits
from sessionflow.temporal.worker._model_call_limits import model_call_keys
from sessionflow_cli._turn_runner import wrap_runner
from sessionflow_cli.config import ConfigError, TurnConfig, parse_config, resolve_turn


class _Fake(AgentFrameworkRunner):
    def __init__(self, model: str) -> None:
        self.model = model

    def build_user_message(self, text: str) -> FrameworkMessage:
        return FrameworkMessage(role=MessageRole.USER, framework_item=text, text=text)

    async def run_model_step(self, turn: AgentTurnContext) -> AgentTurnOutcome:
        message = FrameworkMessage(role=MessageRole.ASSISTANT, framework_item=self.model, text=self.model)
        return TurnCompleted(new_messages=[message])

    async def execute_deferred_tool_call(self, call: DeferredToolExecution) -> ToolExecutionResult:
        return ToolExecutionResult(output=f"ran on {self.model}")


class _FakeWithAbilities(_Fake):
    def build_user_message_with_images(self, text: str, images: Sequence[ImageInput]) -> FrameworkMessage:
        return FrameworkMessage(role=MessageRole.USER, framework_item=[text, len(images)], text=text)

    def tool_catalog(self, session_settings: Mapping[str, Any]) -> Mapping[str, Mapping[str, Any]]:
        return {f"tool_of_{self.model}": {"type": "object"}}

    async def verify_tool_call(self, call: DeferredToolExecution) -> VerifyResult | None:
        return TookEffect(output=f"verified on {self.model}")


def _turn(settings: Mapping[str, Any]) -> AgentTurnContext:
    return AgentTurnContext(
        flow_id="s",
        turn_id="turn-1",
        attempt=1,
        messages=[],
        framework_run_state=None,
        tool_calls={},
        policy_resolver=lambda name, effect: ToolPolicy(effect=effect or ToolEffect.UNCLASSIFIED),
        events=AgentEventWriter(None, turn_id="turn-1", step_execution_id="m", attempt=1),
        heartbeat=lambda *args: None,
        session_settings=settings,
    )


def _call(settings: Mapping[str, Any]) -> DeferredToolExecution:
    record = AgentToolCall(
        tool_call_id="c",
        tool_name="t",
        arguments="{}",
        policy=ToolPolicy(effect=ToolEffect.READ),
        deferral_order=1,
        status=AgentToolCallStatus.RUNNING,
    )
    return DeferredToolExecution(
        flow_id="s",
        turn_id="turn-1",
        tool_call=record,
        attempt=1,
        events=AgentEventWriter(None, turn_id="turn-1", step_execution_id="t", attempt=1),
        heartbeat=lambda *args: None,
        session_settings=settings,
    )


def _resolver(tmp_path: Path) -> Any:
    config = parse_config(
        "builtin",
        "model: small\nmodels: [big]\nlocal_tools: {browser: false}\n",
        path=tmp_path / "b.yaml",
        cwd=tmp_path,
    )

    def resolve(settings: Mapping[str, Any]) -> TurnConfig:
        return resolve_turn(config, settings)

    return resolve


async def test_the_turn_model_picks_the_runner(tmp_path: Path) -> None:
    built: list[str] = []

    def build(model: str) -> AgentFrameworkRunner:
        built.append(model)
        return _Fake(model)

    runner = wrap_runner(build, _resolver(tmp_path), "small")
    assert built == ["small"]  # the default model's runner is built at once
    first = await runner.run_model_step(_turn({}))
    second = await runner.run_model_step(_turn({"model": "big"}))
    assert isinstance(first, TurnCompleted) and first.new_messages[0].text == "small"
    assert isinstance(second, TurnCompleted) and second.new_messages[0].text == "big"
    assert (await runner.execute_deferred_tool_call(_call({"model": "big"}))).output == "ran on big"
    assert built == ["small", "big"]
    # The framework's runner offers neither ability, and neither does the wrapper.
    assert runner.tool_catalog({}) is None
    assert await runner.verify_tool_call(_call({})) is None
    with pytest.raises(SessionStateError, match="does not accept images"):
        runner.build_user_message_with_images("hi", [ImageInput(path="/x.png", media_type="image/png")])


async def test_rejected_settings_fail_the_model_call_and_the_tool(tmp_path: Path) -> None:
    runner = wrap_runner(_Fake, _resolver(tmp_path), "small")
    with pytest.raises(ConfigError, match='widens at "/local_tools/browser"'):
        await runner.run_model_step(_turn({"local_tools": {"browser": True}}))
    with pytest.raises(ConfigError, match='model_not_allowed at "/model"'):
        await runner.run_model_step(_turn({"model": "huge"}))
    with pytest.raises(ToolExecutionError, match="session settings are rejected"):
        await runner.execute_deferred_tool_call(_call({"model": "huge"}))


async def test_the_optional_abilities_of_the_framework_are_forwarded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runner = wrap_runner(_FakeWithAbilities, _resolver(tmp_path), "small")
    # The catalog of the runner of the turn's model, which made the proposals.
    assert runner.tool_catalog({}) == {"tool_of_small": {"type": "object"}}
    assert runner.tool_catalog({"model": "big"}) == {"tool_of_big": {"type": "object"}}
    message = runner.build_user_message_with_images("hi", [ImageInput(path="/x.png", media_type="image/png")])
    assert message.framework_item == ["hi", 1]
    # The verify of the runner of the write's turn.
    assert await runner.verify_tool_call(_call({"model": "big"})) == TookEffect(output="verified on big")
    await runner.run_model_step(_turn({"theme": "dark"}))
    await runner.run_model_step(_turn({"theme": "light"}))
    assert capsys.readouterr().err == "Session settings keys ignored: /theme\n"


def test_model_call_limits_count_the_turn_model(tmp_path: Path) -> None:
    runner = wrap_runner(_Fake, _resolver(tmp_path), "small")
    limits = ModelCallLimits({"big": 1, "small": 2, "*": 9})
    assert limits.applying(model_call_keys(runner, {})) == [("*", 9), ("small", 2)]
    assert limits.applying(model_call_keys(runner, {"model": "big"})) == [("*", 9), ("big", 1)]
