"""The fixture adapter's plugin module, named by its ``sessionflow`` entry point."""

from __future__ import annotations

from collections.abc import Callable

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
    ToolExecutionResult,
    TurnCompleted,
    hookimpl,
)


class FixtureRunner(AgentFrameworkRunner):
    """A runner that answers every turn with the same text and never calls tools."""

    def build_user_message(self, text: str) -> FrameworkMessage:
        return FrameworkMessage(
            role=MessageRole.USER, framework_item={"role": "user", "content": text}, text=text
        )

    async def run_model_step(self, turn: AgentTurnContext) -> AgentTurnOutcome:
        reply = "fixture reply"
        item = {"role": "assistant", "content": reply}
        return TurnCompleted(
            new_messages=[FrameworkMessage(role=MessageRole.ASSISTANT, framework_item=item, text=reply)]
        )

    async def execute_deferred_tool_call(self, call: DeferredToolExecution) -> ToolExecutionResult:
        return ToolExecutionResult(output="")


def _build_runner(ctx: HarnessContext) -> FixtureRunner:
    return FixtureRunner()


@hookimpl
def sessionflow_register_frameworks(register: Callable[[FrameworkSpec], None]) -> None:
    register(
        FrameworkSpec(
            name="fixture",
            description="Test fixture framework installed from tests/plugins/fixture_adapter.",
            capabilities=FrameworkCapabilities(
                parallel_tool_calls=False, reasoning_deltas=False, images=False, mcp_annotations=False
            ),
            build_runner=_build_runner,
            model_api="chat_completions",
        )
    )
