"""Registers the Pydantic AI adapter as the framework `pydantic-ai`."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from sessionflow.kit import (
    MODEL_APIS,
    FrameworkCapabilities,
    FrameworkSpec,
    HarnessContext,
    ModelApi,
    hookimpl,
)

if TYPE_CHECKING:
    from sessionflow_pydantic_ai._runner import PydanticAIRunner

__all__ = ["sessionflow_register_frameworks"]

# Pydantic AI is imported by the builders, not here: listing frameworks stays fast.


def _build_runner(ctx: HarnessContext) -> PydanticAIRunner:
    """The harness agent. ``ctx.api``, else the ``api`` setting, picks the wire API;
    ``base_url`` is used when the context has none."""
    from pydantic_ai import Agent
    from pydantic_ai.settings import ModelSettings

    from sessionflow_pydantic_ai._models import build_model
    from sessionflow_pydantic_ai._runner import PydanticAIRunner

    api = ctx.api or _setting_api(ctx.settings.get("api"))
    base_url = ctx.model_base_url or ctx.setting("base_url", str)
    model = build_model(ctx.model, api=api, base_url=base_url, api_key=ctx.api_key)
    # The session retries a failed model step with its own policy; SDK-level retries
    # would hide failures from it and stretch one step.
    agent = Agent(model, instructions=ctx.system_prompt, model_settings=ModelSettings(max_retries=0))
    return PydanticAIRunner(agent, tool_sources=ctx.tools)


@hookimpl
def sessionflow_register_frameworks(register: Callable[[FrameworkSpec], None]) -> None:
    register(
        FrameworkSpec(
            name="pydantic-ai",
            description="Pydantic AI agents: OpenAI Chat Completions and Responses, Anthropic, and more",
            # What the harness route (HarnessContext, neutral ToolSpecs) implements: that is
            # what the conformance cases play (tests/conformance/test_capabilities.py). The
            # runner given a Pydantic AI agent directly does more (ContinueRequested, a carry,
            # requires_approval, CallDeferred), but the cases of continue_steps, carry_state,
            # tool_state, framework_approvals and questions fail on this route (the harness's
            # output_validator and carry, a spec's needs_approval, pre_approved, question and
            # state_update are not wired by `_build_runner`): see docs/conformance.md.
            capabilities=FrameworkCapabilities(
                parallel_tool_calls=True, reasoning_deltas=True, images=True, mcp_annotations=True
            ),
            build_runner=_build_runner,
            model_api="chat_completions",
        )
    )


def _setting_api(value: object) -> ModelApi | None:
    if value is None:
        return None
    if value not in MODEL_APIS:
        raise ValueError(f"setting 'api' must be one of {', '.join(MODEL_APIS)}, got {value!r}")
    return value
