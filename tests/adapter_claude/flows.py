"""Flows shared by the tests and their worker child processes.

A test writes `flow.json` into its state folder; `python -m tests.adapter_claude.worker`
reads it back and builds the same flow. Each worker gets its own
``SESSIONFLOW_CLAUDE_CONFIG_ROOT`` (the folder its CLI runs use), and the options
factory logs which process built options under which root.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Literal

from claude_agent_sdk import ClaudeAgentOptions, ToolAnnotations, create_sdk_mcp_server, tool

from sessionflow import AgentSessionFlow, AgentSessionOptions
from sessionflow.kit import DeferredToolExecution, ToolExecutionResult, current_tool_invocation
from sessionflow.testing import FileGate, InvocationLog
from sessionflow_claude_agent_sdk import (
    CONFIG_ROOT_ENV,
    ClaudeAgentRunner,
    ClaudeStepInfo,
    claude_agent_session_flow,
)
from sessionflow_local_tools import SandboxBackend, ShellSandbox
from tests.harness import FAST

MODEL = "scripted-model"
Scenario = Literal["custom", "builtin", "gated_write", "sandboxed_bash"]


def save_flow_spec(
    state_dir: Path,
    *,
    flow_type: str,
    base_url: str,
    workspace: Path,
    scenario: Scenario,
    sandbox_backend: SandboxBackend = "auto",
) -> None:
    """``sandbox_backend``: the `ShellSandbox` backend `Bash` runs in (scenario ``sandboxed_bash``)."""
    state_dir.mkdir(parents=True, exist_ok=True)
    spec = {
        "flow_type": flow_type,
        "base_url": base_url,
        "workspace": str(workspace),
        "scenario": scenario,
        "sandbox_backend": sandbox_backend,
    }
    (state_dir / "flow.json").write_text(json.dumps(spec))


def load_flow(state_dir: Path) -> AgentSessionFlow:
    spec: dict[str, Any] = json.loads((state_dir / "flow.json").read_text())
    log = InvocationLog(state_dir / "invocations.jsonl")
    scenario: Scenario = spec["scenario"]
    options = AgentSessionOptions(timings=FAST)

    def options_factory(info: ClaudeStepInfo) -> ClaudeAgentOptions:
        log.record("options", info.turn_id, config_root=os.environ.get(CONFIG_ROOT_ENV))
        return ClaudeAgentOptions(
            model=MODEL,
            cwd=spec["workspace"],
            env={"ANTHROPIC_BASE_URL": spec["base_url"], "ANTHROPIC_API_KEY": "sk-ant-test"},
            system_prompt="You are a careful assistant.",
            tools=[] if scenario == "custom" else None,
            mcp_servers={"weather": weather_server(log)} if scenario == "custom" else {},
        )

    if scenario == "gated_write":
        runner = GatedWriteRunner(options_factory, state_dir=state_dir, log=log)
        return AgentSessionFlow(runner, flow_type=spec["flow_type"], options=options)
    if scenario == "sandboxed_bash":
        backend: SandboxBackend = spec["sandbox_backend"]
        return claude_agent_session_flow(
            options_factory,
            flow_type=spec["flow_type"],
            options=options,
            bash_sandbox=ShellSandbox(backend=backend),
        )
    return claude_agent_session_flow(options_factory, flow_type=spec["flow_type"], options=options)


def weather_server(log: InvocationLog) -> Any:
    """Custom tools on an in-process SDK MCP server: a read and a write that needs approval."""

    @tool(
        "lookup",
        "Look up the weather of a city.",
        {"city": str},
        annotations=ToolAnnotations(readOnlyHint=True),
    )
    async def lookup(args: dict[str, Any]) -> dict[str, Any]:
        log.record("tool", "lookup", city=args["city"])
        return {"content": [{"type": "text", "text": f"sunny in {args['city']}"}]}

    @tool("delete_file", "Delete a file.", {"path": str})
    async def delete_file(args: dict[str, Any]) -> dict[str, Any]:
        invocation = current_tool_invocation()
        key = invocation.idempotency_key if invocation is not None else None
        log.record("tool", "delete_file", path=args["path"], key=key)
        return {"content": [{"type": "text", "text": f"deleted {args['path']}"}]}

    return create_sdk_mcp_server("weather", tools=[lookup, delete_file])


class GatedWriteRunner(ClaudeAgentRunner):
    """Runs every call for real; the first attempt of `Write` then waits at a gate (to be killed)."""

    def __init__(self, options: Any, *, state_dir: Path, log: InvocationLog) -> None:
        super().__init__(options)
        self._state_dir = state_dir
        self._log = log

    async def execute_deferred_tool_call(self, call: DeferredToolExecution) -> ToolExecutionResult:
        result = await super().execute_deferred_tool_call(call)
        record = call.tool_call
        self._log.record("tool", record.tool_name, attempt=call.attempt, key=call.idempotency_key)
        if record.tool_name == "Write" and call.attempt == 1:
            await FileGate(self._state_dir, "write").wait_for_release()
        return result
