"""Build the flow of the chosen framework: tools, call policy, and the turn-resolving runner."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Any

from sessionflow import AgentSessionFlow, AgentSessionOptions, SessionTimings
from sessionflow.kit import (
    AgentFrameworkRunner,
    AgentTurnContext,
    DeltaTransport,
    FrameworkSpec,
    HarnessContext,
    ToolSpec,
    merge_tool_policies,
    read_env,
)
from sessionflow.plugins import build_runner
from sessionflow_cli._approval_preview import approval_previewer
from sessionflow_cli._ask_user import ask_user_tool
from sessionflow_cli._connectors import Connectors
from sessionflow_cli._demo import DEMO_MODEL, DemoModel
from sessionflow_cli._errors import RuntimeFailure
from sessionflow_cli._local_tools import build_local_tools, shell_sandbox_of
from sessionflow_cli._policy import build_call_policy
from sessionflow_cli._turn_runner import TurnRunner, wrap_runner
from sessionflow_cli.config import CliConfig, TurnConfig, resolve_turn

__all__ = ["HEARTBEAT_TIMEOUT_ENV", "Harness", "build_harness", "gather_tools", "session_timings"]

HEARTBEAT_TIMEOUT_ENV = "SESSIONFLOW_HEARTBEAT_TIMEOUT"
"""Seconds without a heartbeat after which a step is taken as lost (its worker died) and runs
again on another worker: 2 minutes by default; the crash tests shorten it."""


def session_timings(environ: Mapping[str, str] | None = None) -> SessionTimings:
    """The default timings, with ``$SESSIONFLOW_HEARTBEAT_TIMEOUT`` for both step kinds when set.

    Raises:
        RuntimeFailure: The variable is not a positive number of seconds.
    """
    text = read_env(HEARTBEAT_TIMEOUT_ENV, "", environ=environ).strip()
    if not text:
        return SessionTimings()
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not seconds > 0:
        raise RuntimeFailure(f"{HEARTBEAT_TIMEOUT_ENV}={text!r} is not a positive number of seconds")
    timeout = timedelta(seconds=seconds)
    defaults = SessionTimings()
    return replace(
        defaults,
        model_heartbeat_timeout=timeout,
        tool_heartbeat_timeout=timeout,
        heartbeat_interval=min(defaults.heartbeat_interval, timeout / 5),
        retry_initial_interval=min(defaults.retry_initial_interval, timeout / 10),
    )


@dataclass
class Harness:
    """The flow of one command run, and the demo model when ``--model demo`` serves it."""

    flow: AgentSessionFlow
    runner: TurnRunner
    tools: Sequence[ToolSpec]
    demo: DemoModel | None = None

    def close(self) -> None:
        if self.demo is not None:
            self.demo.stop()


def gather_tools(
    config: CliConfig, connectors: Connectors | None = None, *, replaced: frozenset[str] = frozenset()
) -> list[ToolSpec]:
    """`ask_user`, the local tools of the groups the file switches on, then the connectors' tools.

    Local tool groups in `replaced` are left out: the framework's own tools do their work
    (`FrameworkSpec.replaced_local_tool_groups`). A connector tool whose name an earlier
    tool has is left out (with a warning).
    """
    tools = [ask_user_tool()]
    if config.local_tools.any_enabled:

        def resolve_settings(settings: Mapping[str, Any]) -> TurnConfig:
            return resolve_turn(config, settings)

        tools += build_local_tools(config.workspace, resolve_settings, config.local_tools, replaced)
    if connectors is not None:
        tools += connectors.tool_specs(taken={tool.name for tool in tools})
    return tools


def build_harness(
    spec: FrameworkSpec,
    config: CliConfig,
    flow_type: str,
    connectors: Connectors | None = None,
    *,
    delta_transport: DeltaTransport | None = None,
) -> Harness:
    """Build the flow of `spec` for `config`; the framework's SDK is imported only here.

    `connectors` are the MCP servers listed at startup (`open_connectors`); their tools join
    the local ones. `delta_transport` carries live deltas (the in-process bus by default).

    Raises:
        RuntimeFailure: The framework could not build its runner, or a tool source failed.
    """
    tools = gather_tools(config, connectors, replaced=spec.replaced_local_tool_groups)

    def resolve_settings(settings: Mapping[str, Any]) -> TurnConfig:
        return resolve_turn(config, settings)

    demo: DemoModel | None = None
    if DEMO_MODEL in config.allowed_models:
        demo = DemoModel(tools, spec.demo_tour)
        demo.start()

    def resolve_policy_settings(settings: Mapping[str, Any]) -> TurnConfig:
        # The demo's write waits for approval on every framework, even where the framework's
        # own write tool (Claude Code's Write, an idempotent write) would not ask.
        turn = resolve_settings(settings)
        if demo is None or demo.write_tool is None or turn.model != DEMO_MODEL:
            return turn
        return replace(turn, approval_always=turn.approval_always | {demo.write_tool})

    # Merged here rather than by `AgentSessionFlow`: the framework's context carries these options too.
    options = merge_tool_policies(
        AgentSessionOptions(
            call_policy=build_call_policy(tools, resolve_policy_settings, twins=spec.local_tool_twins),
            approval_preview=approval_previewer(config.workspace),
            timings=session_timings(),
        ),
        tools,
    )

    def build(model: str) -> AgentFrameworkRunner:
        is_demo = model == DEMO_MODEL and demo is not None
        context = HarnessContext(
            flow_type=flow_type,
            model=model,
            system_prompt=config.instructions,
            workspace=config.workspace,
            options=options,
            tools=tools,
            settings=config.framework_settings,
            model_base_url=demo.base_url(spec.model_api) if is_demo and demo is not None else None,
            api_key="demo" if is_demo else None,
            shell_sandbox=shell_sandbox_of(config),
        )
        try:
            return build_runner(spec, context)
        except Exception as error:
            raise RuntimeFailure(f"framework {spec.name!r} could not build its agent: {error}") from error

    def before_model_step(turn: AgentTurnContext, resolved: TurnConfig) -> None:
        if demo is not None and resolved.model == DEMO_MODEL:
            demo.prepare(turn, resolved)

    try:
        runner = wrap_runner(build, resolve_settings, config.model, before_model_step=before_model_step)
    except BaseException:
        if demo is not None:
            demo.stop()
        raise
    flow = AgentSessionFlow(runner, flow_type=flow_type, options=options, delta_transport=delta_transport)
    return Harness(flow=flow, runner=runner, tools=tools, demo=demo)
