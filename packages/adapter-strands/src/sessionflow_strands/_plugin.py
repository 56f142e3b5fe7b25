"""Registers the Strands adapter as the framework `strands-agents`."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from sessionflow.kit import FrameworkCapabilities, FrameworkSpec, HarnessContext, hookimpl

if TYPE_CHECKING:
    from sessionflow_strands._runner import StrandsRunner

__all__ = ["sessionflow_register_frameworks"]

# Strands is imported by the builder, not here: listing frameworks stays fast.


def _build_runner(ctx: HarnessContext) -> StrandsRunner:
    """The harness agent: Strands' `OpenAIModel` (Chat Completions) on the context's model,
    base URL and key, the system prompt, the harness's tools as neutral specs, and its carry hook."""
    from strands.agent import Agent
    from strands.models.openai import OpenAIModel

    from sessionflow_strands._runner import StrandsRunner

    base_url = ctx.model_base_url or ctx.setting("base_url", str)
    client_args: dict[str, object] = {"api_key": ctx.api_key or "unused"}
    if base_url:
        client_args["base_url"] = base_url
    # The session retries a failed model step with its own policy; the client's own
    # retries would hide failures from it and stretch one step.
    client_args["max_retries"] = 0
    model = OpenAIModel(client_args=client_args, model_id=ctx.model)
    agent = Agent(model=model, system_prompt=ctx.system_prompt, callback_handler=None)
    return StrandsRunner(
        agent, tool_sources=ctx.tools, carry=ctx.carry, output_validator=ctx.output_validator, show_state=True
    )


@hookimpl
def sessionflow_register_frameworks(register: Callable[[FrameworkSpec], None]) -> None:
    register(
        FrameworkSpec(
            name="strands-agents",
            description="Strands Agents: OpenAIModel (Chat Completions), and any Strands model provider",
            capabilities=FrameworkCapabilities(
                # One response's toolUse blocks are deferred together, each its own step.
                parallel_tool_calls=True,
                reasoning_deltas=True,
                # A spec's MCP hints decide its effect (the harness's MCP tools are specs).
                mcp_annotations=True,
                # A spec's needs_approval/pre_approved, and its question (`with_tool_asks`).
                framework_approvals=True,
                questions=True,
                # A spec's verify: its calls are deferred verifiable and verify_tool_call runs it.
                verified_outcomes=True,
                # A spec's ToolOutput.state_update sets keys of agent.state, which the model
                # sees (``Tool state: {...}``) and later tools read (builtin.tool_state).
                tool_state=True,
                # The harness's carry hook (its text shown in the system prompt); without
                # one the runner carries agent.state.
                carry_state=True,
                # An answer the harness's output_validator refuses goes on in a model step
                # of its own, the prompt a user message after it.
                continue_steps=True,
                # A user message's images, stored by reference, sent as Strands image blocks.
                images=True,
                # A steered message joins the run as a user message of its own after the
                # step's tool results, ahead of the model call (`StrandsRunner.accepts_steering`).
                steering=True,
            ),
            build_runner=_build_runner,
            model_api="chat_completions",
        )
    )
