"""Claude Code's tools get the floors of the local tools they stand for, in the adapter and the CLI."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from sessionflow import AgentSessionOptions, ToolEffect, ToolPolicy
from sessionflow.kit import DeferredToolCall, HarnessContext
from sessionflow.plugins import SessionflowPlugins
from sessionflow_claude_agent_sdk import BUILTIN_TOOL_POLICIES, LOCAL_TOOL_TWINS, ClaudeAgentRunner
from sessionflow_claude_agent_sdk._tools import ToolSet
from sessionflow_cli._local_tools import shell_sandbox_of, shell_tool_names
from sessionflow_cli._policy import build_call_policy
from sessionflow_cli.config import TurnConfig, parse_config, resolve_turn
from sessionflow_local_tools import LOCAL_TOOL_FLOORS

CLI_TWIN = {
    "Read": "read_file",
    "Grep": "search_files",
    "Glob": "list_directory",
    "WebFetch": "fetch_web_page",
    "Write": "write_file",
    "Edit": "edit_file",
    "Bash": "run_shell_command",
}
LAX = ToolPolicy(effect=ToolEffect.READ, requires_approval=False)


def _call(name: str, policy: ToolPolicy, arguments: dict[str, Any] | None = None) -> DeferredToolCall:
    return DeferredToolCall(
        tool_call_id="c1", tool_name=name, arguments=json.dumps(arguments or {}), policy=policy
    )


def test_the_floors_are_the_cli_tools_floors() -> None:
    assert set(BUILTIN_TOOL_POLICIES) == set(CLI_TWIN)
    for claude, cli in CLI_TWIN.items():
        assert BUILTIN_TOOL_POLICIES[claude] == LOCAL_TOOL_FLOORS[cli], claude


def test_the_plugin_gives_the_cli_the_twins() -> None:
    assert LOCAL_TOOL_TWINS == CLI_TWIN
    assert _claude_twins() == LOCAL_TOOL_TWINS


def _claude_twins() -> Mapping[str, str]:
    """What the CLI reads from the framework it runs (`FrameworkSpec.local_tool_twins`)."""
    plugins = SessionflowPlugins()
    plugins.load()
    return plugins.framework("claude-agent-sdk").local_tool_twins


@pytest.mark.parametrize("name", ["Write", "Edit"])
def test_the_adapter_asks_before_every_write_and_edit(name: str) -> None:
    tools = ToolSet(builtins=tuple(BUILTIN_TOOL_POLICIES))
    # Even a session option that says "no approval, a read" cannot lower the floor.
    floored = tools.floored(name, LAX)
    assert floored.is_approval_required and floored.effect == BUILTIN_TOOL_POLICIES[name].effect
    assert tools.floored(name, ToolPolicy(effect=ToolEffect.IDEMPOTENT_WRITE)).is_approval_required


def test_the_adapter_leaves_bash_to_the_allow_list_and_reads_free() -> None:
    tools = ToolSet(builtins=tuple(BUILTIN_TOOL_POLICIES))
    bash = tools.floored("Bash", ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE))
    assert bash.requires_approval is None and bash.is_approval_required  # asks; a list may lift it
    assert not tools.floored("Read", ToolPolicy(effect=ToolEffect.READ)).is_approval_required
    assert tools.floored("custom", LAX) == LAX  # not a Claude Code tool: untouched


def _resolver(tmp_path: Path, text: str) -> Any:
    config = parse_config("claude-agent-sdk", text, path=tmp_path / "c.yaml", cwd=tmp_path)

    def resolve(settings: Any) -> TurnConfig:
        return resolve_turn(config, settings)

    return resolve


def test_the_cli_applies_the_floors_and_the_shell_allow_list_to_claude_tools(tmp_path: Path) -> None:
    # Under -f claude-agent-sdk the CLI offers no local tool of these groups: only the floors.
    resolver = _resolver(tmp_path, "local_tools: {shell: {allow: [ls]}}\n")
    policy = build_call_policy([], resolver, twins=_claude_twins())
    write = policy(_call("Write", ToolPolicy(effect=ToolEffect.IDEMPOTENT_WRITE)), {})
    assert write == ToolPolicy(effect=ToolEffect.IDEMPOTENT_WRITE, requires_approval=True)
    assert policy(_call("Edit", LAX), {}).is_approval_required
    bash = ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE)
    assert not policy(_call("Bash", bash, {"command": "ls"}), {}).is_approval_required
    assert policy(_call("Bash", bash, {"command": "ls; rm -rf x"}), {}).is_approval_required
    assert not policy(_call("Read", ToolPolicy(effect=ToolEffect.READ)), {}).is_approval_required
    # Bash runs in the shell sandbox too: switched off, even an allowed command asks.
    off = _resolver(tmp_path, "local_tools: {shell: {allow: [ls], sandbox: {backend: none}}}\n")
    unconfined = build_call_policy([], off, twins=_claude_twins())
    assert unconfined(_call("Bash", bash, {"command": "ls"}), {}).is_approval_required


def test_bash_runs_in_the_session_sandbox_and_its_approval_says_which(tmp_path: Path) -> None:
    plugins = SessionflowPlugins()
    plugins.load()
    spec = plugins.framework("claude-agent-sdk")
    # The approval prompt's sandbox note is shown for Bash as for run_shell_command.
    assert shell_tool_names(spec) == {"run_shell_command", "Bash"}
    # The CLI's configured sandbox reaches the runner that runs Bash in its tool steps.
    config = parse_config(
        "claude-agent-sdk",
        "local_tools: {shell: {sandbox: {backend: landlock, network: true}}}\n",
        path=tmp_path / "c.yaml",
        cwd=tmp_path,
    )
    sandbox = shell_sandbox_of(config)
    assert sandbox is not None and (sandbox.backend, sandbox.network) == ("landlock", True)
    context = HarnessContext(
        flow_type="t",
        model="m",
        system_prompt=None,
        workspace=tmp_path,
        options=AgentSessionOptions(),
        tools=(),
        settings={},
        shell_sandbox=sandbox,
    )
    runner = spec.build_runner(context)
    assert isinstance(runner, ClaudeAgentRunner) and runner.bash_sandbox == sandbox
