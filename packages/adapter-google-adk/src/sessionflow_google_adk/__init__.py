"""Google ADK adapter for sessionflow: an ordinary ADK `LlmAgent` as a durable session.

    flow = google_adk_session_flow(agent, flow_type="Support")

Every model call is one durable step and every tool call its own step; see the package
README for effects, confirmation, state and what differs from plain ADK.

Names load on first use, so discovering the plugin does not import ADK.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sessionflow.kit import lazy_exports

if TYPE_CHECKING:
    from sessionflow_google_adk._flow import google_adk_session_flow
    from sessionflow_google_adk._runner import RUN_STATE_VERSION, GoogleAdkRunner

__getattr__, __dir__ = lazy_exports(__name__)

__all__ = [
    "RUN_STATE_VERSION",
    "GoogleAdkRunner",
    "google_adk_session_flow",
]
