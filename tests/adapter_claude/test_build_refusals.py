"""Options the adapter cannot honour: refused when the flow is built, or after one attempt."""

from __future__ import annotations

import uuid

import pytest
from claude_agent_sdk import ClaudeAgentOptions, HookMatcher

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
