"""Options the adapter cannot honour: refused when the flow is built, or after one attempt."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Literal

import pytest
from claude_agent_sdk import AgentDefinition, ClaudeAgentOptions, HookMatcher, InMemorySessionStore

from sessionflow import AgentSessionOptions, UnsupportedOptionError
from sessionflow.demo import ScriptedModelServer
from sessionflow_claude_agent_sdk import ClaudeStepInfo, claude_agent_session_flow
from tests.build_refusals import first_turn_error
from tests.harness import FAST


@pytest.mark.parametrize(
    ("options", "option"),
    [
        (ClaudeAgentOptions(hooks={"PermissionRequest": [HookMatcher()]}), "hooks"),
        (ClaudeAgentOptions(resume="abc", fork_session=True), "resume, fork_session"),
        (ClaudeAgentOptions(tools=["Read", "NotebookEdit"]), "tools"),
        (ClaudeAgentOptions(mcp_servers={"fs": {"command": "mcp-fs"}}), "mcp_servers['fs']"),
        (ClaudeAgentOptions(settings='{"hooks": {}}'), "settings"),
        (ClaudeAgentOptions(settings='{"model": '), "settings"),
        (ClaudeAgentOptions(plugins=[{"type": "local", "path": "/p"}]), "plugins"),
        (ClaudeAgentOptions(agents={"a": AgentDefinition(description="a", prompt="p")}), "agents"),
        (ClaudeAgentOptions(tools=["Read", "Agent"]), "agents"),
        (ClaudeAgentOptions(session_store=InMemorySessionStore()), "session_store"),
        (ClaudeAgentOptions(continue_conversation=True, session_id="x"), "continue_conversation, session_id"),
        (ClaudeAgentOptions(permission_mode="plan"), "permission_mode"),
        (ClaudeAgentOptions(permission_mode="auto"), "permission_mode"),
        (ClaudeAgentOptions(permission_prompt_tool_name="mcp__p__ask"), "permission_prompt_tool_name"),
        (
            ClaudeAgentOptions(resume_session_at="m-1", resume_drops_turn="m-2"),
            "resume_session_at, resume_drops_turn",
        ),
        (ClaudeAgentOptions(resume_drops_turn=""), "resume_drops_turn"),
        (ClaudeAgentOptions(add_dirs=["/srv/shared"]), "add_dirs"),
        (ClaudeAgentOptions(mcp_servers="/srv/mcp.json"), "mcp_servers"),
        (ClaudeAgentOptions(sandbox={"enabled": True}), "sandbox"),
        (ClaudeAgentOptions(output_format={"type": "json_schema", "schema": {}}), "output_format"),
        (ClaudeAgentOptions(skills="all"), "skills"),
        (ClaudeAgentOptions(skills=[]), "skills"),
        (ClaudeAgentOptions(tools=["Read", "Skill"]), "tools"),
        (ClaudeAgentOptions(enable_file_checkpointing=True), "enable_file_checkpointing"),
    ],
)
def test_an_option_the_adapter_cannot_honour_is_refused_when_the_flow_is_built(
    options: ClaudeAgentOptions, option: str
) -> None:
    with pytest.raises(UnsupportedOptionError) as raised:
        claude_agent_session_flow(options, flow_type="refused")
    assert raised.value.option == option
    assert str(raised.value).startswith(f"option {option!r}: ")


async def test_an_option_only_a_factory_shows_fails_the_turn_after_one_attempt(
    temporal_address: str, model_server: ScriptedModelServer
) -> None:
    key = f"claude-refused-{uuid.uuid4().hex[:10]}"

    def options_factory(info: ClaudeStepInfo) -> ClaudeAgentOptions:
        return ClaudeAgentOptions(
            model="scripted-model",
            env={"ANTHROPIC_BASE_URL": model_server.base_url(key, api="anthropic")},
            plugins=[{"type": "local", "path": "/p"}],
        )

    flow = claude_agent_session_flow(
        options_factory, flow_type=key, options=AgentSessionOptions(timings=FAST)
    )
    error, steps = await first_turn_error(temporal_address, flow, key, model_server)
    assert "option 'plugins'" in error
    assert [(s.step_type, s.final_attempt, s.outcome) for s in steps] == [
        ("sessionflow.RunModel", 1, "failed")
    ]


def test_background_sub_agents_are_refused_with_the_change_that_makes_them_run_in_the_foreground() -> None:
    agents = {"reviewer": AgentDefinition(description="Reviews", prompt="Review.")}
    with pytest.raises(UnsupportedOptionError) as raised:
        claude_agent_session_flow(ClaudeAgentOptions(agents=agents), flow_type="refused")
    assert "background" in str(raised.value)
    assert "env={'CLAUDE_CODE_DISABLE_BACKGROUND_TASKS': '1'}" in str(raised.value)
    foreground = ClaudeAgentOptions(agents=agents, env={"CLAUDE_CODE_DISABLE_BACKGROUND_TASKS": "1"})
    claude_agent_session_flow(foreground, flow_type="foreground")


@pytest.mark.parametrize("source", ["project", "local"])
def test_a_settings_file_with_tool_hooks_is_refused_naming_the_file(
    tmp_path: Path, source: Literal["project", "local"]
) -> None:
    name = "settings.json" if source == "project" else "settings.local.json"
    (tmp_path / ".claude").mkdir()
    hook = {"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "ruff format"}]}
    (tmp_path / ".claude" / name).write_text(json.dumps({"hooks": {"PostToolUse": [hook]}}))
    options = ClaudeAgentOptions(cwd=str(tmp_path), setting_sources=[source])
    with pytest.raises(UnsupportedOptionError) as raised:
        claude_agent_session_flow(options, flow_type="refused")
    assert raised.value.option == "setting_sources"
    assert f".claude/{name} defines PostToolUse hooks" in str(raised.value)
    # Without that source the file is not read; hooks of other events are the CLI's to run.
    claude_agent_session_flow(ClaudeAgentOptions(cwd=str(tmp_path), setting_sources=[]), flow_type="ok")
    (tmp_path / ".claude" / name).write_text(json.dumps({"hooks": {"Stop": [hook]}}))
    claude_agent_session_flow(options, flow_type="ok")


def test_a_projects_enabled_mcp_servers_are_refused(tmp_path: Path) -> None:
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"files": {"command": "mcp-files"}}}))
    options = ClaudeAgentOptions(cwd=str(tmp_path), setting_sources=["project"])
    # Not enabled in any settings: Claude Code does not start them either.
    claude_agent_session_flow(options, flow_type="ok")
    (tmp_path / ".claude" / "settings.json").write_text(json.dumps({"enableAllProjectMcpServers": True}))
    with pytest.raises(UnsupportedOptionError) as raised:
        claude_agent_session_flow(options, flow_type="refused")
    assert raised.value.option == "setting_sources"
    assert "MCP servers (files)" in str(raised.value) and "McpToolSource" in str(raised.value)
    # strict_mcp_config: Claude Code loads no .mcp.json, so there is nothing to refuse.
    claude_agent_session_flow(
        ClaudeAgentOptions(cwd=str(tmp_path), setting_sources=["project"], strict_mcp_config=True),
        flow_type="strict",
    )
