"""Strands Agents adapter for sessionflow: an ordinary `strands.Agent` as a durable session.

    flow = strands_session_flow(agent, flow_type="Support")

Every model call is one durable step and every tool call its own step; see the package
README for effects, `agent.state`, and what is stored.

Names load on first use, so discovering the plugin does not import Strands.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sessionflow.kit import lazy_exports

if TYPE_CHECKING:
    from sessionflow_strands._flow import strands_session_flow
    from sessionflow_strands._messages import RUN_STATE_VERSION, history_messages
    from sessionflow_strands._runner import AgentSource, StrandsRunner

__getattr__, __dir__ = lazy_exports(__name__)

__all__ = [
    "RUN_STATE_VERSION",
    "AgentSource",
    "StrandsRunner",
    "history_messages",
    "strands_session_flow",
]
