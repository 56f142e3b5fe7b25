"""OpenAI Agents SDK adapter for sessionflow: an ordinary `agents.Agent` as a durable session.

Build a flow with `openai_agents_session_flow` (or wrap an `OpenAIAgentsRunner` in an
`AgentSessionFlow` yourself) and serve it with `sessionflow.serve_agent_flows`.

Names load on first use, so discovering the plugin does not import the Agents SDK.
"""

from typing import TYPE_CHECKING

from sessionflow.kit import distribution_version, lazy_exports

if TYPE_CHECKING:
    __version__: str  # read from the installed metadata on first use

    from sessionflow_openai_agents._errors import AgentGraphError, UnsupportedAgentOptionError
    from sessionflow_openai_agents._flow import openai_agents_session_flow
    from sessionflow_openai_agents._output import structured_output
    from sessionflow_openai_agents._runner import (
        HANDOFF_POLICY,
        ContextFactory,
        GuardrailTripwireAnswer,
        OpenAIAgentsRunner,
        TurnStart,
    )
    from sessionflow_openai_agents._tools import function_tool_from_spec


__getattr__, __dir__ = lazy_exports(
    __name__, computed={"__version__": distribution_version("sessionflow-openai-agents")}
)

__all__ = [
    "HANDOFF_POLICY",
    "AgentGraphError",
    "ContextFactory",
    "GuardrailTripwireAnswer",
    "OpenAIAgentsRunner",
    "TurnStart",
    "UnsupportedAgentOptionError",
    "__version__",
    "function_tool_from_spec",
    "openai_agents_session_flow",
    "structured_output",
]
