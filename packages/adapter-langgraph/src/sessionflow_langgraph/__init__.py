"""LangGraph adapter for sessionflow: durable agent sessions on Temporal.

A LangChain chat model plus tools, or your own `StateGraph`, runs as a session: each model
call is one durable step and each tool call another, with retries and approval chosen by
the tool's effect::

    flow = langgraph_session_flow(model=ChatOpenAI(model="gpt-4.1"), tools=[search], flow_type="Triage")
    flow = langgraph_session_flow(graph=builder, tool_node="tools", flow_type="MyGraph")

See the package README for the rules a graph must follow and how tools declare effects.

Names load on first use: every process that loads sessionflow's plugins imports this
package (for its plugin module), and LangGraph and the provider SDKs take seconds to import.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sessionflow.kit import lazy_exports

if TYPE_CHECKING:
    from sessionflow_langgraph._effects import EFFECT_METADATA_KEY, MCP_ANNOTATIONS_METADATA_KEY, tool_effect
    from sessionflow_langgraph._errors import StepViolation
    from sessionflow_langgraph._execution import INVOCATION_METADATA_KEYS
    from sessionflow_langgraph._flow import ToolLike, langgraph_runner, langgraph_session_flow
    from sessionflow_langgraph._graph import AgentGraph, GraphFactory, build_agent_graph
    from sessionflow_langgraph._interrupts import INTERRUPT_TOOL
    from sessionflow_langgraph._models import chat_model
    from sessionflow_langgraph._openai_compat import ChatOpenAICompatible
    from sessionflow_langgraph._run_state import RUN_STATE_VERSION
    from sessionflow_langgraph._runner import LangGraphRunner
    from sessionflow_langgraph._tool_specs import tool_from_spec

__getattr__, __dir__ = lazy_exports(__name__)

__all__ = [
    "EFFECT_METADATA_KEY",
    "INTERRUPT_TOOL",
    "INVOCATION_METADATA_KEYS",
    "MCP_ANNOTATIONS_METADATA_KEY",
    "RUN_STATE_VERSION",
    "AgentGraph",
    "ChatOpenAICompatible",
    "GraphFactory",
    "LangGraphRunner",
    "StepViolation",
    "ToolLike",
    "build_agent_graph",
    "chat_model",
    "langgraph_runner",
    "langgraph_session_flow",
    "tool_effect",
    "tool_from_spec",
]
