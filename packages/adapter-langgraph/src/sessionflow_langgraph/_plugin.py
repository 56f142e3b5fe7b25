"""Registers the framework `langgraph`.

Every process that loads sessionflow's plugins imports this module, so it imports only
sessionflow here; LangGraph and the provider SDKs load when a runner is built.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from sessionflow.kit import FrameworkCapabilities, FrameworkSpec, HarnessContext, hookimpl

if TYPE_CHECKING:
    from sessionflow.kit import AgentFrameworkRunner

__all__ = ["CAPABILITIES", "sessionflow_register_frameworks"]

CAPABILITIES = FrameworkCapabilities(
    # One interrupt before the tool node carries every call of a model response.
    parallel_tool_calls=True,
    # Anthropic thinking, OpenAI Responses summaries, and the `reasoning_content` of
    # OpenAI-compatible servers (ChatOpenAICompatible, which the plugin builds).
    reasoning_deltas=True,
    # Standard LangChain image blocks, filled from the image store at model-call time.
    images=True,
    # ToolSpec.mcp_annotations (and MCP hints in a tool's metadata) map to effects.
    mcp_annotations=True,
    # A second model call from another node is stopped before its request, and that node
    # runs in a step of its own; the ready-made agent's retry node honours output_validator.
    continue_steps=True,
    # Tools run in the graph's tool node; its writes (Command updates) merge by the reducers.
    tool_state=True,
    # The thread's state carries between turns, or the harness's carry hook decides.
    carry_state=True,
    # HumanInTheLoopMiddleware's requests and a ToolSpec's own rule (needs_approval,
    # pre_approved) are approvals the session records as the framework's.
    framework_approvals=True,
    # interrupt(value) in a node or a tool, and a ToolSpec's question, wait as questions.
    questions=True,
    # A ToolSpec's verify settles a write whose step died (verify_tool_call).
    verified_outcomes=True,
    # A steered message is a HumanMessage written with update_state as the tool node, after
    # its results: plain LangGraph's way to add a message to a paused run (`_steered`).
    steering=True,
)


def _build_runner(ctx: HarnessContext) -> AgentFrameworkRunner:
    """The ready-made agent: ``anthropic:<model>`` is ChatAnthropic, else ChatOpenAI.

    ``ctx.api`` picks the wire API; without it, the ``api`` setting (``"responses"`` for
    the OpenAI Responses API). Other settings: ``base_url`` (when the context has none),
    ``model_kwargs`` (extra constructor arguments of the model), and ``recursion_limit``.
    """
    from sessionflow_langgraph._flow import langgraph_runner
    from sessionflow_langgraph._models import chat_model

    model = chat_model(
        ctx.model,
        base_url=ctx.model_base_url or ctx.setting("base_url", str),
        api_key=ctx.api_key,
        api=ctx.api or ("responses" if ctx.setting("api", str) == "responses" else None),
        settings=ctx.mapping_setting("model_kwargs"),
    )
    limit = ctx.setting("recursion_limit", int)
    return langgraph_runner(
        model=model,
        tool_sources=ctx.tools,
        system_prompt=ctx.system_prompt,
        recursion_limit=limit,
        output_validator=ctx.output_validator,
        carry=ctx.carry,
    )


@hookimpl
def sessionflow_register_frameworks(register: Callable[[FrameworkSpec], None]) -> None:
    register(
        FrameworkSpec(
            name="langgraph",
            description="LangGraph graphs and LangChain chat models, one model call per step",
            capabilities=CAPABILITIES,
            build_runner=_build_runner,
            model_api="chat_completions",
        )
    )
