"""Build the flow of one (case, framework): the same in the test process and in its workers."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from pathlib import Path

from sessionflow.plugins import ConformanceAgentSpec, FrameworkSpec, PluginError
from sessionflow.session import AgentFrameworkRunner, AgentSessionOptions, SessionTimings
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


def _is_runner(value: object) -> bool:
    return isinstance(value, AgentFrameworkRunner)


def build_case_flow(
    case: ConformanceCase,
    framework: FrameworkSpec,
    *,
    flow_type: str,
    model_base_url: str,
    state_dir: Path,
) -> AgentSessionFlow:
    """Ask the framework for its conformance runner and wrap it in a flow with the case's options.

    Raises:
        PluginError: ``build_conformance_runner`` raised or returned something that is not
            an `AgentFrameworkRunner`; the message names the plugin and the framework.
    """
    spec = ConformanceAgentSpec(
        model_base_url=model_base_url,
        model=MODEL_NAME,
        api=None,
        system_prompt=case.system_prompt,
        tools=[build_tool(tool, state_dir) for tool in case.tools],
    )
    plugin = framework.plugin_name or None
    try:
        runner = framework.build_conformance_runner(spec)
    except Exception as exc:
        raise PluginError(
            plugin, f"framework {framework.name!r} failed to build its conformance runner: {exc!r}"
        ) from exc
    if not _is_runner(runner):
        raise PluginError(
            plugin,
            f"framework {framework.name!r}: build_conformance_runner returned {type(runner).__name__}, "
            "which does not implement AgentFrameworkRunner",
        )
    options = AgentSessionOptions(tool_policies=case.tool_policies, timings=case_timings(case))
    return AgentSessionFlow(runner, flow_type=flow_type, options=options)
