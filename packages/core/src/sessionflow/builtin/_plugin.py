"""Registers the built-in runner as the framework `builtin`."""

from __future__ import annotations

from collections.abc import Callable

from sessionflow.builtin._runner import ChatCompletionsRunner
from sessionflow.hookspecs import hookimpl
from sessionflow.plugins import (
    ConformanceAgentSpec,
    FrameworkCapabilities,
    FrameworkSpec,
    HarnessContext,
)


def _build_runner(ctx: HarnessContext) -> ChatCompletionsRunner:
    return ChatCompletionsRunner(
        model=ctx.model,
        tools=ctx.tools,
        system_prompt=ctx.system_prompt,
        base_url=ctx.model_base_url or _optional_str(ctx.settings.get("base_url")),
        api_key=ctx.api_key,
    )


def _build_conformance_runner(spec: ConformanceAgentSpec) -> ChatCompletionsRunner:
    return ChatCompletionsRunner(
        model=spec.model,
        tools=spec.tools,
        system_prompt=spec.system_prompt,
        base_url=spec.model_base_url,
        api_key="test",
    )


@hookimpl
def sessionflow_register_frameworks(register: Callable[[FrameworkSpec], None]) -> None:
    register(
        FrameworkSpec(
            name="builtin",
            description="Framework-free runner for any OpenAI-compatible Chat Completions endpoint",
            capabilities=FrameworkCapabilities(
                parallel_tool_calls=True, reasoning_deltas=True, images=True, mcp_annotations=True
            ),
            build_runner=_build_runner,
            build_conformance_runner=_build_conformance_runner,
            model_api="chat_completions",
        )
    )


def _optional_str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None
