"""`google_adk_session_flow`: an ordinary Google ADK agent as a durable session flow."""

from __future__ import annotations

from typing import Unpack

from google.adk.agents.base_agent import BaseAgent
from google.adk.agents.run_config import RunConfig

from sessionflow import AgentSessionFlow
from sessionflow.kit import FlowArguments
from sessionflow_google_adk._runner import GoogleAdkRunner

__all__ = ["google_adk_session_flow"]


def google_adk_session_flow(
    agent: BaseAgent,
    *,
    flow_type: str,
    app_name: str = "sessionflow",
    run_config: RunConfig | None = None,
    **flow_args: Unpack[FlowArguments],
) -> AgentSessionFlow:
    """A flow type whose sessions run `agent`: each model call is a model step and each tool
    call (a `FunctionTool`, sync or async) a tool step. `run_config` is ADK's, for every
    step; `flow_args` are `AgentSessionFlow`'s."""
    runner = GoogleAdkRunner(agent, app_name=app_name, run_config=run_config)
    return AgentSessionFlow(runner, flow_type=flow_type, **flow_args)
