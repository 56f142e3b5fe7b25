"""Registers the Pydantic AI adapter as the framework `pydantic-ai`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from sessionflow.hookspecs import hookimpl
from sessionflow.plugins import (
    MODEL_APIS,
    ConformanceAgentSpec,
    FrameworkCapabilities,
    FrameworkSpec,
    HarnessContext,
    ModelApi,
    ToolSpec,
)

if TYPE_CHECKING:
    from pydantic_ai.models import Model

    from sessionflow_pydantic_ai._runner import PydanticAIRunner

__all__ = ["sessionflow_register_frameworks"]

# Pydantic AI is imported by the builders, not here: listing frameworks stays fast.


def _build_runner(ctx: HarnessContext) -> PydanticAIRunner:
    """The harness agent. Settings: ``api`` (a wire API name) and ``base_url``."""
    from sessionflow_pydantic_ai._models import build_model

    api = _setting_api(ctx.settings.get("api"))
    base_url = ctx.model_base_url or _optional_str(ctx.settings.get("base_url"))
    model = build_model(ctx.model, api=api, base_url=base_url, api_key=ctx.api_key)
    return _runner(model, ctx.system_prompt, ctx.tools)


def _build_conformance_runner(spec: ConformanceAgentSpec) -> PydanticAIRunner:
    from sessionflow_pydantic_ai._models import model_for_api

    model = model_for_api(
        spec.api or "chat_completions", spec.model, base_url=spec.model_base_url, api_key="test"
    )
    return _runner(model, spec.system_prompt, spec.tools)


def _runner(model: Model | str, instructions: str | None, tools: Sequence[ToolSpec]) -> PydanticAIRunner:
    from pydantic_ai import Agent
    from pydantic_ai.settings import ModelSettings

    from sessionflow_pydantic_ai._runner import PydanticAIRunner

    # The session retries a failed model step with its own policy; SDK-level retries
    # would hide failures from it and stretch one step.
    agent = Agent(model, instructions=instructions, model_settings=ModelSettings(max_retries=0))
    return PydanticAIRunner(agent, tool_sources=tools)


@hookimpl
def sessionflow_register_frameworks(register: Callable[[FrameworkSpec], None]) -> None:
    register(
        FrameworkSpec(
            name="pydantic-ai",
            description="Pydantic AI agents: OpenAI Chat Completions and Responses, Anthropic, and more",
            capabilities=FrameworkCapabilities(
                parallel_tool_calls=True, reasoning_deltas=True, images=True, mcp_annotations=True
            ),
            build_runner=_build_runner,
            build_conformance_runner=_build_conformance_runner,
            model_api="chat_completions",
        )
    )


def _setting_api(value: object) -> ModelApi | None:
    if value is None:
        return None
    if value not in MODEL_APIS:
        raise ValueError(f"setting 'api' must be one of {', '.join(MODEL_APIS)}, got {value!r}")
    return value


def _optional_str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
