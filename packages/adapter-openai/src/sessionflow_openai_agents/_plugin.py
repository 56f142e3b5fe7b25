"""Registers the OpenAI Agents SDK as the framework ``openai-agents``."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from agents import Agent, OpenAIProvider, RunConfig
from openai import AsyncOpenAI

from sessionflow.hookspecs import hookimpl
from sessionflow.plugins import (
    ConformanceAgentSpec,
    FrameworkCapabilities,
    FrameworkSpec,
    HarnessContext,
    ToolSpec,
)
from sessionflow_openai_agents._runner import OpenAIAgentsRunner

__all__ = ["sessionflow_register_frameworks"]

_APIS = ("responses", "chat_completions")


def _runner(
    *,
    model: str,
    api: str,
    instructions: str | None,
    tools: Sequence[ToolSpec],
    base_url: str | None,
    api_key: str | None,
    tracing: bool = False,
) -> OpenAIAgentsRunner:
    if api not in _APIS:
        raise ValueError(f"openai-agents speaks {' and '.join(_APIS)}, not {api!r}")
    # The session retries failed model steps; retries inside the client would multiply them.
    client = AsyncOpenAI(
        base_url=base_url,
        api_key=api_key or os.environ.get("OPENAI_API_KEY") or "unused",
        max_retries=0,
    )
    provider = OpenAIProvider(openai_client=client, use_responses=api == "responses")
    agent = Agent[Any](name="assistant", instructions=instructions, model=model)
    return OpenAIAgentsRunner(
        agent, tool_sources=tools, run_config=RunConfig(model_provider=provider), tracing=tracing
    )


def _build_runner(ctx: HarnessContext) -> OpenAIAgentsRunner:
    settings: Mapping[str, Any] = ctx.settings
    return _runner(
        model=ctx.model,
        api=str(settings.get("api", "responses")),
        instructions=ctx.system_prompt,
        tools=ctx.tools,
        base_url=ctx.model_base_url or _optional_str(settings.get("base_url")),
        api_key=ctx.api_key,
        tracing=settings.get("tracing") is True,
    )


def _build_conformance_runner(spec: ConformanceAgentSpec) -> OpenAIAgentsRunner:
    return _runner(
        model=spec.model,
        api=spec.api or "responses",
        instructions=spec.system_prompt,
        tools=spec.tools,
        base_url=spec.model_base_url,
        api_key="test",
    )


@hookimpl
def sessionflow_register_frameworks(register: Callable[[FrameworkSpec], None]) -> None:
    register(
        FrameworkSpec(
            name="openai-agents",
            description="OpenAI Agents SDK agents (Responses or Chat Completions models)",
            capabilities=FrameworkCapabilities(
                parallel_tool_calls=True, reasoning_deltas=True, images=True, mcp_annotations=True
            ),
            build_runner=_build_runner,
            build_conformance_runner=_build_conformance_runner,
            model_api="responses",
        )
    )


def _optional_str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None
