"""Registers the Google ADK adapter as the framework `google-adk`."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from sessionflow.kit import FrameworkCapabilities, FrameworkSpec, HarnessContext, hookimpl

if TYPE_CHECKING:
    from sessionflow_google_adk._runner import GoogleAdkRunner

__all__ = ["sessionflow_register_frameworks"]

# ADK is imported by the builder, not here: listing frameworks stays fast.


def _build_runner(ctx: HarnessContext) -> GoogleAdkRunner:
    """The harness agent: an `LlmAgent` on ADK's native Gemini model (``ctx.model``), the
    context's base URL and key, and the context's tools as ADK tools. Its instruction shows
    the harness's carry and the tool state (`_harness`); the runner gets the harness's
    ``carry`` and ``output_validator``."""
    from google.adk.agents import LlmAgent
    from google.adk.models.google_llm import Gemini

    from sessionflow_google_adk._harness import harness_instruction
    from sessionflow_google_adk._runner import GoogleAdkRunner
    from sessionflow_google_adk._tool_specs import spec_tools

    if ctx.api is not None:
        raise ValueError(f"google-adk speaks Gemini's generateContent, not {ctx.api}")
    base_url = ctx.model_base_url or ctx.setting("base_url", str)
    # Without a key here, google-genai reads GOOGLE_API_KEY (or GEMINI_API_KEY).
    client_kwargs = {"api_key": ctx.api_key} if ctx.api_key is not None else None
    model = Gemini(model=ctx.model, base_url=base_url, client_kwargs=client_kwargs)
    agent = LlmAgent(
        name="sessionflow_agent",
        model=model,
        instruction=harness_instruction(ctx.system_prompt),
        tools=list(spec_tools(ctx.tools)),
    )
    return GoogleAdkRunner(agent, carry=ctx.carry, output_validator=ctx.output_validator)


@hookimpl
def sessionflow_register_frameworks(register: Callable[[FrameworkSpec], None]) -> None:
    register(
        FrameworkSpec(
            name="google-adk",
            description="Google ADK agents on Gemini (generateContent), one model call per step",
            # What the harness route (HarnessContext, neutral ToolSpecs) implements, as the
            # conformance cases play it (tests/conformance/test_capabilities.py).
            capabilities=FrameworkCapabilities(
                parallel_tool_calls=True,
                reasoning_deltas=True,
                images=True,
                mcp_annotations=True,
                framework_approvals=True,
                questions=True,
                # A spec's verify: its calls are deferred verifiable and verify_tool_call runs it.
                verified_outcomes=True,
                # A steered message is a user event after the step's tool responses, in an
                # ADK invocation of its own (as ADK runs a new message).
                steering=True,
                # The harness's carry hook: its carry is in the invocation's temp: state, which
                # the harness agent's instruction shows (ADK's session state carries itself).
                carry_state=True,
                # An answer the harness's output_validator refuses goes on in a model step of
                # its own, the prompt a user event after it (an invocation of its own).
                continue_steps=True,
                # A spec's ToolOutput.state_update sets keys of ADK's session state
                # (tool_context.state), which the harness agent's instruction shows.
                tool_state=True,
            ),
            build_runner=_build_runner,
            model_api="gemini",
        )
    )
