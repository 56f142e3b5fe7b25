"""Build the flow of one (case, framework): the same in the test process and in its workers."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from pathlib import Path

from sessionflow.frameworks import FrameworkSpec, HarnessContext
from sessionflow.plugins import build_runner
from sessionflow.session import AgentSessionOptions, SessionTimings
from sessionflow.temporal import AgentSessionFlow
from sessionflow.testing.conformance._cases import ConformanceCase
from sessionflow.testing.conformance._tools import build_tool

__all__ = ["CONFORMANCE_TIMINGS", "MODEL_NAME", "build_case_flow", "case_timings"]

MODEL_NAME = "scripted-model"

CONFORMANCE_TIMINGS = SessionTimings(
    model_start_to_close=timedelta(seconds=30),
    model_heartbeat_timeout=timedelta(seconds=2),
    model_schedule_to_close=timedelta(seconds=90),
    tool_start_to_close=timedelta(seconds=30),
    tool_heartbeat_timeout=timedelta(seconds=2),
    tool_schedule_to_close=timedelta(seconds=90),
    retry_initial_interval=timedelta(milliseconds=100),
    heartbeat_interval=timedelta(milliseconds=300),
)
"""Short timeouts so a SIGKILLed worker is noticed in about two seconds."""


def case_timings(case: ConformanceCase) -> SessionTimings:
    if case.interrupt_deadline_seconds is None:
        return CONFORMANCE_TIMINGS
    return replace(CONFORMANCE_TIMINGS, interrupt_deadline=timedelta(seconds=case.interrupt_deadline_seconds))


def build_case_flow(
    case: ConformanceCase,
    framework: FrameworkSpec,
    *,
    flow_type: str,
    model_base_url: str,
    state_dir: Path,
) -> AgentSessionFlow:
    """Build the framework's runner for the case's neutral agent, in a flow with the case's options.

    The framework gets the same `HarnessContext` the CLI gives it: the scripted model
    server, the case's tools and none of the framework's own, no settings, and the
    play's state folder as the workspace.

    Raises:
        PluginError: ``build_runner`` raised or returned something that is not an
            `AgentFrameworkRunner`; the message names the plugin and the framework.
    """
    tools = [build_tool(tool, state_dir) for tool in case.tools]
    options = AgentSessionOptions(tool_policies=case.tool_policies, timings=case_timings(case))
    context = HarnessContext(
        flow_type=flow_type,
        model=MODEL_NAME,
        system_prompt=case.system_prompt,
        workspace=state_dir,
        options=options,
        tools=tools,
        settings={},
        model_base_url=model_base_url,
        # The scripted model server takes any key; a fixed one keeps the environment's out.
        api_key="test",
        api=None,
        framework_tools=False,
    )
    return AgentSessionFlow(build_runner(framework, context), flow_type=flow_type, options=options)
