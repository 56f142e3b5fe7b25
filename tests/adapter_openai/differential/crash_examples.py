"""Agents of the crash cases that the SDK examples lack: each example given ``get_weather``.

A crash case needs a function tool to kill the worker in, and a module-level builder that
worker children rebuild. The guardrail examples have no tool and the hosted MCP example
has no local one, so these add basic/tools.py's tool (`sdk_examples.weather_tool`) and
change nothing else.
"""

from __future__ import annotations

from typing import Any, Literal

from agents import (
    Agent,
    HostedMCPTool,
    MCPToolApprovalFunction,
    MCPToolApprovalFunctionResult,
    MCPToolApprovalRequest,
)

from sessionflow.testing import InvocationLog
from tests.adapter_openai.differential import sdk_examples
from tests.adapter_openai.differential.harness import Built, Models

__all__ = [
    "HOSTED_MCP_LABEL",
    "gitmcp_tool",
    "hosted_mcp_with_weather",
    "input_guardrails_with_weather_answering",
    "output_guardrails_with_weather",
    "structured_weather",
]

HOSTED_MCP_LABEL = "gitmcp"


def structured_weather(models: Models, log: InvocationLog) -> Built:
    """basic/tools.py's agent with output_guardrails.py's `MessageOutput` as its output type:
    a response that only reasons leaves no output yet, so the SDK calls the model again."""
    agent = Agent[Any](
        name="Hello world",
        instructions="You are a helpful agent.",
        tools=[sdk_examples.weather_tool(log)],
        output_type=sdk_examples.MessageOutput,
        model=models.model(),
    )
    return Built(agent)


def input_guardrails_with_weather_answering(models: Models, log: InvocationLog) -> Built:
    """input_guardrails.py's support agent, answering a tripwire as the example does."""
    built = sdk_examples.input_guardrails_answering(models, log)
    return Built(built.agent.clone(tools=[sdk_examples.weather_tool(log)]), flow_args=built.flow_args)


def output_guardrails_with_weather(models: Models, log: InvocationLog) -> Built:
    """output_guardrails.py's assistant; a tripwire fails the turn (the default)."""
    built = sdk_examples.output_guardrails(models, log)
    return Built(built.agent.clone(tools=[sdk_examples.weather_tool(log)]))


def gitmcp_tool(
    require_approval: Literal["always", "never"], on_approval_request: MCPToolApprovalFunction | None
) -> HostedMCPTool:
    """hosted_mcp/approvals.py's server (`HOSTED_MCP_LABEL`), asking as ``require_approval`` says."""
    return HostedMCPTool(
        tool_config={
            "type": "mcp",
            "server_label": HOSTED_MCP_LABEL,
            "server_url": "https://gitmcp.io/openai/codex",
            "require_approval": require_approval,
        },
        on_approval_request=on_approval_request,
    )


def _approve(request: MCPToolApprovalRequest) -> MCPToolApprovalFunctionResult:
    """hosted_mcp/approvals.py's callback, approving as the person at the prompt does here."""
    return {"approve": True}


def hosted_mcp_with_weather(models: Models, log: InvocationLog) -> Built:
    """hosted_mcp/approvals.py's agent (``require_approval="always"``) with ``get_weather``."""
    agent = Agent[Any](
        name="Assistant",
        tools=[
            gitmcp_tool("always", _approve),
            sdk_examples.weather_tool(log),
        ],
        model=models.model(),
    )
    return Built(agent)
