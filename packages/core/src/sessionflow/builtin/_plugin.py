"""Registers the built-in runner as the framework `builtin`."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from sessionflow.hookspecs import hookimpl
from sessionflow.kit._frameworks import FrameworkCapabilities, FrameworkSpec, HarnessContext

if TYPE_CHECKING:
    # Imported by `_build_runner`, on first real use: the runner brings httpx and asyncio,
    # which listing the framework (`sessionflow frameworks`, plugin discovery) does not need.
    from sessionflow.builtin._runner import ChatCompletionsRunner


def _build_runner(ctx: HarnessContext) -> ChatCompletionsRunner:
    """Settings: ``base_url`` (when the context has none)."""
    from sessionflow.builtin._runner import ChatCompletionsRunner

    if ctx.api not in (None, "chat_completions"):
        raise ValueError(f"builtin speaks chat_completions, not {ctx.api!r}")
    return ChatCompletionsRunner(
        model=ctx.model,
        tools=ctx.tools,
        system_prompt=ctx.system_prompt,
        base_url=ctx.model_base_url or ctx.setting("base_url", str),
        api_key=ctx.api_key,
        output_validator=ctx.output_validator,
        carry=ctx.carry,
    )


@hookimpl
def sessionflow_register_frameworks(register: Callable[[FrameworkSpec], None]) -> None:
    register(
        FrameworkSpec(
            name="builtin",
            description="Framework-free runner for any OpenAI-compatible Chat Completions endpoint",
            capabilities=FrameworkCapabilities(
                parallel_tool_calls=True,
                reasoning_deltas=True,
                images=True,
                mcp_annotations=True,
                continue_steps=True,
                carry_state=True,
                tool_state=True,
                framework_approvals=True,
                questions=True,
                verified_outcomes=True,
                steering=True,
            ),
            build_runner=_build_runner,
            model_api="chat_completions",
        )
    )
