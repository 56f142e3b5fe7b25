"""Registers the Pydantic AI adapter as the framework `pydantic-ai`."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from sessionflow.kit import (
    MODEL_APIS,
    FrameworkCapabilities,
    FrameworkSpec,
    HarnessContext,
    ModelApi,
    hookimpl,
)

if TYPE_CHECKING:
    from pydantic_ai import RunContext

    from sessionflow_pydantic_ai._runner import PydanticAIRunner

__all__ = ["sessionflow_register_frameworks"]

# Pydantic AI is imported by the builders, not here: listing frameworks stays fast.


def _build_runner(ctx: HarnessContext) -> PydanticAIRunner:
    """The harness agent. ``ctx.api``, else the ``api`` setting, picks the wire API;
    ``base_url`` is used when the context has none.

    The agent's deps are the tool state: a dict the tools' `ToolOutput.state_update` set
    keys of, shown to each model request by an instructions function (``Tool state:
    {...}``, as the builtin runner words it); they travel as the runner's deps do. The
    harness's ``output_validator`` and ``carry`` go to the runner.
    """
    from pydantic_ai import Agent
    from pydantic_ai.settings import ModelSettings

    from sessionflow_pydantic_ai._models import build_model
    from sessionflow_pydantic_ai._runner import PydanticAIRunner

    api = ctx.api or _setting_api(ctx.settings.get("api"))
    base_url = ctx.model_base_url or ctx.setting("base_url", str)
    model = build_model(ctx.model, api=api, base_url=base_url, api_key=ctx.api_key)
    instructions = [ctx.system_prompt, _tool_state] if ctx.system_prompt else [_tool_state]
    # The session retries a failed model step with its own policy; SDK-level retries
    # would hide failures from it and stretch one step.
    agent = Agent(
        model,
        instructions=instructions,
        deps_type=dict[str, Any],
        model_settings=ModelSettings(max_retries=0),
    )
    return PydanticAIRunner(
        agent,
        deps_factory=dict,
        tool_sources=ctx.tools,
        carry=ctx.carry,
        output_validator=ctx.output_validator,
    )


def _tool_state(ctx: RunContext[dict[str, Any]]) -> str | None:
    """The harness agent's tool state, as the builtin runner shows it; None while empty."""
    if not ctx.deps:
        return None
    return "Tool state: " + json.dumps(ctx.deps, ensure_ascii=False)


@hookimpl
def sessionflow_register_frameworks(register: Callable[[FrameworkSpec], None]) -> None:
    register(
        FrameworkSpec(
            name="pydantic-ai",
            description="Pydantic AI agents: OpenAI Chat Completions and Responses, Anthropic, and more",
            capabilities=FrameworkCapabilities(
                parallel_tool_calls=True,
                reasoning_deltas=True,
                images=True,
                mcp_annotations=True,
                # An answer an output validator refuses (the agent's ModelRetry, or the
                # harness's output_validator) goes on in a model step of its own.
                continue_steps=True,
                # The deps and the history carry between turns, or the harness's carry hook decides.
                carry_state=True,
                # Tools change ctx.deps, which the next model step and later tools see; a
                # spec's ToolOutput.state_update sets keys of the harness agent's dict deps.
                tool_state=True,
                # A tool's requires_approval (ApprovalRequired too), and a spec's
                # needs_approval/pre_approved, are reported as the framework's approval.
                framework_approvals=True,
                # A tool's CallDeferred, and a spec's question, wait as questions.
                questions=True,
                # A spec's verify: its calls are deferred verifiable and verify_tool_call runs it.
                verified_outcomes=True,
                # A steered message joins the run with AgentRun.enqueue, delivered after the
                # step's tool results, ahead of the model call (`_runner._steered_requests`).
                steering=True,
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
