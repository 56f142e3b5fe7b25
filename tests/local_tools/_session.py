"""One flow with the builtin runner and the local tools, built alike in tests and worker children."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from pathlib import Path

from sessionflow import AgentSessionFlow, AgentSessionOptions
from sessionflow.builtin import ChatCompletionsRunner
from sessionflow.testing import CRASH_TIMINGS
from sessionflow_cli._policy import build_call_policy
from sessionflow_local_tools import build_local_tools
from tests.local_tools.conftest import resolve_policy_turn, resolve_settings

FLOW_TYPE_ENV = "LOCAL_TOOLS_TEST_FLOW_TYPE"
WORKSPACE_ENV = "LOCAL_TOOLS_TEST_WORKSPACE"
MODEL_URL_ENV = "LOCAL_TOOLS_TEST_MODEL_URL"

# Longer tool timeouts: these tools read and search real trees.
TIMINGS = replace(
    CRASH_TIMINGS, tool_start_to_close=timedelta(seconds=60), tool_schedule_to_close=timedelta(seconds=120)
)


def local_tools_flow(flow_type: str, workspace: Path, model_url: str) -> AgentSessionFlow:
    """The flow a CLI would build: floors as tool policies, the CLI's call policy on top."""
    tools = build_local_tools(workspace, resolve_settings)
    runner = ChatCompletionsRunner(model="m", tools=tools, base_url=model_url, api_key="k")
    options = AgentSessionOptions(
        timings=TIMINGS,
        tool_policies={spec.name: spec.policy for spec in tools if spec.policy is not None},
        call_policy=build_call_policy(tools, resolve_policy_turn),
    )
    return AgentSessionFlow(runner, flow_type=flow_type, options=options)
