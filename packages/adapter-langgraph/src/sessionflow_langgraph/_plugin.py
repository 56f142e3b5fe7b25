"""Registers the framework `langgraph`.

Every process that loads sessionflow's plugins imports this module, so it imports only
sessionflow here; LangGraph and the provider SDKs load when a runner is built.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, cast

from sessionflow.hookspecs import hookimpl
from sessionflow.plugins import ConformanceAgentSpec, FrameworkCapabilities, FrameworkSpec, HarnessContext
from sessionflow.session import AgentFrameworkRunner

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
)


def _build_runner(ctx: HarnessContext) -> AgentFrameworkRunner:
    """The ready-made agent for the CLI: ``anthropic:<model>`` is ChatAnthropic, else ChatOpenAI.

    Settings: ``base_url`` (when the context has none), ``api`` (``"responses"`` for the
    OpenAI Responses API), ``model_kwargs`` (extra constructor arguments of the model),
    and ``recursion_limit``.
    """
    from sessionflow_langgraph._flow import langgraph_runner
    from sessionflow_langgraph._models import chat_model
    from sessionflow_langgraph._runner import DEFAULT_RECURSION_LIMIT

    settings = ctx.settings
    model = chat_model(
        ctx.model,
        base_url=ctx.model_base_url or _optional_str(settings.get("base_url")),
        api_key=ctx.api_key,
        api="responses" if settings.get("api") == "responses" else None,
        settings=_mapping(settings.get("model_kwargs")),
    )
    limit = settings.get("recursion_limit")
    return langgraph_runner(
        model=model,
        tool_sources=ctx.tools,
        system_prompt=ctx.system_prompt,
        recursion_limit=limit if isinstance(limit, int) else DEFAULT_RECURSION_LIMIT,
    )


def _build_conformance_runner(spec: ConformanceAgentSpec) -> AgentFrameworkRunner:
    from sessionflow_langgraph._flow import langgraph_runner
    from sessionflow_langgraph._models import chat_model

    model = chat_model(
        spec.model, base_url=spec.model_base_url, api_key="test", api=spec.api or "chat_completions"
    )
    return langgraph_runner(model=model, tool_sources=spec.tools, system_prompt=spec.system_prompt)


@hookimpl
def sessionflow_register_frameworks(register: Callable[[FrameworkSpec], None]) -> None:
    register(
        FrameworkSpec(
            name="langgraph",
            description="LangGraph graphs and LangChain chat models, one model call per step",
            capabilities=CAPABILITIES,
            build_runner=_build_runner,
            build_conformance_runner=_build_conformance_runner,
            model_api="chat_completions",
        )
    )


def _optional_str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _mapping(value: object) -> Mapping[str, Any] | None:
    if isinstance(value, Mapping):
        return {str(k): v for k, v in cast(Mapping[object, Any], value).items()}
    return None
