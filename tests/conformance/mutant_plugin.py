"""A deliberately broken adapter: the built-in runner, but every tool runs twice.

Loaded by test_suite_can_fail.py through ``SESSIONFLOW_LOAD_PLUGINS`` (in the test process
and, inherited, in the worker children) to show that the suite fails a non-conforming adapter.
"""

from __future__ import annotations

from collections.abc import Callable

from sessionflow.builtin import ChatCompletionsRunner
from sessionflow.kit import (
    DeferredToolExecution,
    FrameworkCapabilities,
    FrameworkSpec,
    HarnessContext,
    ToolExecutionResult,
    hookimpl,
)

NAME = "mutant-twice"


class TwiceRunner(ChatCompletionsRunner):
    async def execute_deferred_tool_call(self, call: DeferredToolExecution) -> ToolExecutionResult:
        await super().execute_deferred_tool_call(call)
        return await super().execute_deferred_tool_call(call)


def _runner(ctx: HarnessContext) -> TwiceRunner:
    return TwiceRunner(
        model=ctx.model,
        tools=ctx.tools,
        system_prompt=ctx.system_prompt,
        base_url=ctx.model_base_url,
        api_key=ctx.api_key,
    )


@hookimpl
def sessionflow_register_frameworks(register: Callable[[FrameworkSpec], None]) -> None:
    register(
        FrameworkSpec(
            name=NAME,
            description="Test fixture: runs every tool twice",
            capabilities=FrameworkCapabilities(
                parallel_tool_calls=False, reasoning_deltas=False, images=False, mcp_annotations=False
            ),
            build_runner=_runner,
            model_api="chat_completions",
        )
    )
