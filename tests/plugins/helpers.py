"""Builders shared by the plugin tests."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sessionflow import MessageRole
from sessionflow.kit import (
    AgentFrameworkRunner,
    AgentTurnContext,
    AgentTurnOutcome,
    DeferredToolExecution,
    FrameworkCapabilities,
    FrameworkMessage,
    FrameworkSpec,
    HarnessContext,
    ModelApi,
    ToolExecutionResult,
    TurnCompleted,
    hookimpl,
)

CAPABILITIES = FrameworkCapabilities(
    parallel_tool_calls=True, reasoning_deltas=False, images=True, mcp_annotations=False
)


class EchoRunner(AgentFrameworkRunner):
    """A trivial runner: echoes the user's text, never calls tools."""

    def __init__(self, label: str = "echo") -> None:
        self.label = label

    def build_user_message(self, text: str) -> FrameworkMessage:
        return FrameworkMessage(role=MessageRole.USER, framework_item={"content": text}, text=text)

    async def run_model_step(self, turn: AgentTurnContext) -> AgentTurnOutcome:
        reply = FrameworkMessage(
            role=MessageRole.ASSISTANT, framework_item={"content": self.label}, text=self.label
        )
        return TurnCompleted(new_messages=[reply])

    async def execute_deferred_tool_call(self, call: DeferredToolExecution) -> ToolExecutionResult:
        return ToolExecutionResult(output="")


def make_spec(
    name: str,
    *,
    build_runner: Callable[[HarnessContext], Any] | None = None,
    model_api: ModelApi = "chat_completions",
    description: str | None = None,
) -> FrameworkSpec:
    def default_build_runner(ctx: HarnessContext) -> EchoRunner:
        return EchoRunner(name)

    return FrameworkSpec(
        name=name,
        description=description if description is not None else f"The {name} test framework.",
        capabilities=CAPABILITIES,
        build_runner=build_runner or default_build_runner,
        model_api=model_api,
    )


class FrameworksPlugin:
    """An inline plugin registering the given specs."""

    def __init__(self, *specs: FrameworkSpec) -> None:
        self.specs = specs

    @hookimpl
    def sessionflow_register_frameworks(self, register: Callable[[FrameworkSpec], None]) -> None:
        for spec in self.specs:
            register(spec)
