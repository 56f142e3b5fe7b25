"""Registers the OpenAI Agents SDK as the framework ``openai-agents``.

Every process that loads sessionflow's plugins imports this module, so it imports only
sessionflow here; the Agents SDK and the OpenAI client load when a runner is built.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from sessionflow.kit import FrameworkCapabilities, FrameworkSpec, HarnessContext, hookimpl

if TYPE_CHECKING:
    from sessionflow_openai_agents._runner import OpenAIAgentsRunner

__all__ = ["sessionflow_register_frameworks"]

_APIS = ("responses", "chat_completions")


def _build_runner(ctx: HarnessContext) -> OpenAIAgentsRunner:
    """One agent named ``assistant`` with the context's tools.

    ``ctx.api`` picks the wire API; without it, the ``api`` setting (default
    ``responses``). Other settings: ``base_url`` (when the context has none) and
    ``tracing`` (true sends traces to OpenAI).
    """
    from agents import Agent, OpenAIProvider, RunConfig
    from openai import AsyncOpenAI

    from sessionflow_openai_agents._runner import OpenAIAgentsRunner

    api = ctx.api or str(ctx.settings.get("api", "responses"))
    if api not in _APIS:
        raise ValueError(f"openai-agents speaks {' and '.join(_APIS)}, not {api!r}")
    # The session retries failed model steps; retries inside the client would multiply them.
    client = AsyncOpenAI(
        base_url=ctx.model_base_url or ctx.setting("base_url", str),
        api_key=ctx.api_key or os.environ.get("OPENAI_API_KEY") or "unused",
        max_retries=0,
    )
    provider = OpenAIProvider(openai_client=client, use_responses=api == "responses")
    agent = Agent[Any](name="assistant", instructions=ctx.system_prompt, model=ctx.model)
    return OpenAIAgentsRunner(
        agent,
        tool_sources=ctx.tools,
        run_config=RunConfig(model_provider=provider),
        tracing=ctx.settings.get("tracing") is True,
        carry=ctx.carry,
        output_validator=ctx.output_validator,
    )


@hookimpl
def sessionflow_register_frameworks(register: Callable[[FrameworkSpec], None]) -> None:
    register(
        FrameworkSpec(
            name="openai-agents",
            description="OpenAI Agents SDK agents (Responses or Chat Completions models)",
            capabilities=FrameworkCapabilities(
                parallel_tool_calls=True,
                reasoning_deltas=True,
                images=True,
                mcp_annotations=True,
                # The run context, and a neutral spec's ToolOutput.state_update, reach later steps.
                tool_state=True,
                # The last agent and the context, or the harness's carry hook, carry between turns.
                carry_state=True,
                # A function tool's own needs_approval, and a spec's needs_approval/pre_approved.
                framework_approvals=True,
                # A response that neither answers, calls a tool nor hands off, and an answer
                # the harness's output_validator refuses, go on in a model step of their own.
                continue_steps=True,
                # A spec's question (sessionflow.kit's tool asks) waits as a question, answered
                # with a value: the question_answered case passes (tests/conformance/test_capabilities.py).
                questions=True,
                # A spec's verify settles a write whose step died (verify_tool_call).
                verified_outcomes=True,
                # A steered message joins the run with RunState.add_input, admitted after the
                # resumed step's tool results, ahead of the model call (`_steered`).
                steering=True,
            ),
            build_runner=_build_runner,
            model_api="responses",
        )
    )
