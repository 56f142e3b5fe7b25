"""The adapter's parts without the CLI: plugin, options, tools, transcript, replay decisions, hooks."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, cast

import pytest
from claude_agent_sdk import ClaudeAgentOptions, HookMatcher, ToolAnnotations, create_sdk_mcp_server, tool
from mcp import Client

from sessionflow import (
    AgentMessage,
    AgentSessionOptions,
    AgentToolCall,
    AgentToolCallStatus,
    FrameworkMessage,
    MessageRole,
    ToolEffect,
    ToolExecutionError,
    ToolPolicy,
    tool_invocation_scope,
)
from sessionflow.plugins import (
    HarnessContext,
    PluginError,
    SessionflowPlugins,
    ToolInvocation,
    ToolSpec,
    build_runner,
)
from sessionflow_claude_agent_sdk import (
    CAPABILITIES,
    PARALLEL_CALL_DENIAL,
    REPLACED_LOCAL_TOOL_GROUPS,
    ClaudeAgentRunner,
    ClaudeStepInfo,
    current_tool_invocation,
)
from sessionflow_claude_agent_sdk._runner import check_options, gate_for, replay_plan
from sessionflow_claude_agent_sdk._step import STALE_AFTER_SECONDS, StepFolders, ToolGate, step_folders
from sessionflow_claude_agent_sdk._tools import ReplayedCall, ToolSet, discover_tools
from sessionflow_claude_agent_sdk._transcript import (
    TRANSCRIPT_KEY,
    RunState,
    assemble_history,
    decode_lines,
    encode_lines,
    framework_messages,
    user_entries,
)

HOOK_SCRIPT = (
    Path(__file__).parents[2] / "packages/adapter-claude/src/sessionflow_claude_agent_sdk/_hook_command.py"
)


def spec(name: str, **kwargs: Any) -> ToolSpec:
    def handler(arguments: dict[str, Any], invocation: ToolInvocation) -> str:
        return f"{name} ran with {arguments} as {invocation.idempotency_key}"

    return ToolSpec(
        name=name,
        description=f"The {name} tool.",
        parameters={"type": "object", "properties": {}},
        effect=kwargs.get("effect"),
        policy=kwargs.get("policy"),
        handler=handler,
        mcp_annotations=kwargs.get("mcp_annotations"),
    )


def custom_server() -> Any:
    @tool("forecast", "Forecast.", {"city": str}, annotations=ToolAnnotations(readOnlyHint=True))
    async def forecast(args: dict[str, Any]) -> dict[str, Any]:
        invocation = current_tool_invocation()
        key = invocation.idempotency_key if invocation else "none"
        return {"content": [{"type": "text", "text": f"rain in {args['city']} ({key})"}]}

    @tool("upsert", "Upsert.", {"id": int}, annotations=ToolAnnotations(idempotentHint=True))
    async def upsert(args: dict[str, Any]) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": "no"}], "is_error": True}

    @tool("purge", "Purge.", {})
    async def purge(args: dict[str, Any]) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": "purged"}]}

    return create_sdk_mcp_server("ops", tools=[forecast, upsert, purge])


def invocation(name: str = "x") -> ToolInvocation:
    return ToolInvocation(tool_call_id="c1", idempotency_key="s/turn-1/c1", attempt=1, tool_name=name)


# --------------------------------------------------------------------------- plugin


def test_the_plugin_registers_truthful_capabilities() -> None:
    plugins = SessionflowPlugins()
    plugins.load()
    framework = plugins.framework("claude-agent-sdk")
    assert framework.model_api == "anthropic_messages"
    assert framework.capabilities == CAPABILITIES
    assert not CAPABILITIES.parallel_tool_calls and not CAPABILITIES.images
    assert CAPABILITIES.reasoning_deltas and CAPABILITIES.mcp_annotations
    assert REPLACED_LOCAL_TOOL_GROUPS == frozenset({"files", "shell", "web_fetch"})
    # The CLI reads these through the spec: it then offers none of its own file, shell or
    # web fetch tools to this framework.
    assert framework.replaced_local_tool_groups == REPLACED_LOCAL_TOOL_GROUPS
    assert framework.resume_texts == ("Continue from where you left off.",)


def test_the_harness_runner_works_in_the_workspace_with_claude_code_tools(tmp_path: Path) -> None:
    plugins = SessionflowPlugins()
    plugins.load()
    context = HarnessContext(
        flow_type="Cli",
        model="claude-sonnet-4-5",
        system_prompt="Be brief.",
        workspace=tmp_path,
        options=AgentSessionOptions(),
        tools=[spec("ask_user")],
        settings={"env": {"X": "1"}, "tools": ["Read", "Bash"], "config_root": str(tmp_path / "cfg")},
        model_base_url="http://127.0.0.1:9",
        api_key="sk-ant-x",
    )
    runner = build_runner(plugins.framework("claude-agent-sdk"), context)
    assert isinstance(runner, ClaudeAgentRunner)
    options = runner.options_for(ClaudeStepInfo(session_id="s", turn_id="turn-1"))
    assert (options.model, options.system_prompt, options.cwd) == (
        "claude-sonnet-4-5",
        "Be brief.",
        str(tmp_path),
    )
    assert options.env == {
        "X": "1",
        "ANTHROPIC_BASE_URL": "http://127.0.0.1:9",
        "ANTHROPIC_API_KEY": "sk-ant-x",
    }
    assert options.tools == ["Read", "Bash"]
    assert runner.config_root == tmp_path / "cfg"
    assert [s.name for s in runner.tool_sources] == ["ask_user"]


def test_a_context_without_framework_tools_offers_no_claude_code_tool(tmp_path: Path) -> None:
    # The conformance suite's context: the case's tools only, whatever the settings say.
    plugins = SessionflowPlugins()
    plugins.load()
    context = HarnessContext(
        flow_type="Conformance",
        model="scripted-model",
        system_prompt=None,
        workspace=tmp_path,
        options=AgentSessionOptions(),
        tools=[spec("lookup")],
        settings={"tools": ["Read"]},
        model_base_url="http://127.0.0.1:9",
        api_key="test",
        framework_tools=False,
    )
    runner = build_runner(plugins.framework("claude-agent-sdk"), context)
    assert isinstance(runner, ClaudeAgentRunner)
    options = runner.options_for(ClaudeStepInfo(session_id="s", turn_id="turn-1"))
    assert options.tools == []
    assert options.env == {"ANTHROPIC_BASE_URL": "http://127.0.0.1:9", "ANTHROPIC_API_KEY": "test"}
    assert [s.name for s in runner.tool_sources] == ["lookup"]
    with pytest.raises(PluginError, match="speaks anthropic_messages, not 'responses'"):
        build_runner(plugins.framework("claude-agent-sdk"), replace(context, api="responses"))


# --------------------------------------------------------------------------- options


async def refuse_all(name: str, arguments: dict[str, Any], context: Any) -> Any:
    raise AssertionError("never called")


@pytest.mark.parametrize(
    ("changes", "complaint"),
    [
        ({"can_use_tool": refuse_all}, "can_use_tool"),
        ({"hooks": {"PreToolUse": [HookMatcher()]}}, "hooks for PreToolUse"),
        ({"resume": "abc"}, "resume"),
        ({"session_id": "abc"}, "session_id"),
        ({"continue_conversation": True}, "continue_conversation"),
        ({"plugins": [{"type": "local", "path": "/p"}]}, "plugins"),
    ],
)
def test_options_that_would_bypass_the_session_are_refused(changes: dict[str, Any], complaint: str) -> None:
    with pytest.raises(ValueError, match=complaint):
        check_options(ClaudeAgentOptions(**changes))


def test_other_hooks_are_kept() -> None:
    check_options(ClaudeAgentOptions(hooks={"Stop": [HookMatcher()]}))


# --------------------------------------------------------------------------- tools


def test_tools_get_effects_from_claude_code_specs_and_mcp_annotations() -> None:
    options = ClaudeAgentOptions(tools=["Read", "Bash"], mcp_servers={"ops": custom_server()})
    sources = [
        spec("lookup", effect=ToolEffect.READ),
        spec("tagged", mcp_annotations={"idempotentHint": True}),
    ]
    tools = asyncio.run(discover_tools(options, sources))
    assert tools.builtins == ("Read", "Bash")
    effects = {
        n: tools.framework_effect(n)
        for n in ("Read", "Bash", "lookup", "tagged", "forecast", "upsert", "purge")
    }
    assert effects == {
        "Read": ToolEffect.READ,
        "Bash": ToolEffect.NON_IDEMPOTENT_WRITE,
        "lookup": ToolEffect.READ,
        "tagged": ToolEffect.IDEMPOTENT_WRITE,
        "forecast": ToolEffect.READ,
        "upsert": ToolEffect.IDEMPOTENT_WRITE,
        "purge": None,
    }
    assert set(tools.stub_servers(None)) == {"ops", "sessionflow"}


def test_the_default_tool_set_is_every_claude_code_tool_the_adapter_runs() -> None:
    tools = asyncio.run(discover_tools(ClaudeAgentOptions(), []))
    assert tools.builtins == ("Read", "Grep", "Glob", "WebFetch", "Write", "Edit", "Bash")


@pytest.mark.parametrize(
    ("options", "sources", "complaint"),
    [
        (ClaudeAgentOptions(tools=["Read", "Task"]), [], "cannot run Claude Code's tools Task"),
        (ClaudeAgentOptions(tools=["Read"]), ["Read"], "two tools are named 'Read'"),
        (
            ClaudeAgentOptions(mcp_servers={"ops": custom_server()}),
            ["forecast"],
            "two tools are named 'forecast'",
        ),
        (
            ClaudeAgentOptions(mcp_servers={"git": {"command": "mcp-server-git"}}),
            [],
            "McpToolSource",
        ),
        (ClaudeAgentOptions(mcp_servers="/etc/mcp.json"), [], "must be a dict"),
    ],
)
def test_tools_the_adapter_cannot_make_durable_are_refused(
    options: ClaudeAgentOptions, sources: list[str], complaint: str
) -> None:
    with pytest.raises(ValueError, match=complaint):
        asyncio.run(discover_tools(options, [spec(n) for n in sources]))


def test_a_tool_step_runs_the_real_handlers(tmp_path: Path) -> None:
    options = ClaudeAgentOptions(tools=["Write"], mcp_servers={"ops": custom_server()})
    tools = asyncio.run(discover_tools(options, [spec("lookup")]))

    async def run(name: str, arguments: dict[str, Any]) -> str:
        with tool_invocation_scope(invocation(name)):  # what the tool activity does
            return await tools.execute(name, arguments, invocation(name), tmp_path)

    assert asyncio.run(run("forecast", {"city": "Bergen"})) == "rain in Bergen (s/turn-1/c1)"
    assert asyncio.run(run("lookup", {})) == "lookup ran with {} as s/turn-1/c1"
    with pytest.raises(ToolExecutionError, match="no"):
        asyncio.run(run("upsert", {"id": 1}))
    with pytest.raises(ToolExecutionError, match="unknown tool 'Bash'"):
        asyncio.run(run("Bash", {"command": "true"}))
    asyncio.run(run("Write", {"file_path": "a.txt", "content": "x"}))
    assert (tmp_path / "a.txt").read_text() == "x"


def test_stub_servers_run_nothing_and_answer_only_the_replayed_call() -> None:
    tools = asyncio.run(discover_tools(ClaudeAgentOptions(mcp_servers={"ops": custom_server()}), []))
    replay = ReplayedCall(tool_call_id="c1", tool_name="purge", output="recorded", is_error=False)
    stub = tools.stub_servers(replay)["ops"]["instance"]

    async def call(name: str) -> tuple[str, bool]:
        async with Client(stub) as client:
            listed = await client.list_tools()
            assert [t.name for t in listed.tools] == ["forecast", "upsert", "purge"]
            assert all((t.meta or {}).get("anthropic/maxResultSizeChars") for t in listed.tools)
            result = await client.call_tool(name, {"city": "x"})
            return getattr(result.content[0], "text", ""), result.is_error

    assert asyncio.run(call("purge")) == ("recorded", False)
    text, is_error = asyncio.run(call("forecast"))
    assert is_error and text.startswith("sessionflow did not run this call here")


# --------------------------------------------------------------------------- transcript


def entry(kind: str, uuid: str, parent: str | None, **fields: Any) -> str:
    return json.dumps({"type": kind, "uuid": uuid, "parentUuid": parent, **fields})


def test_history_joins_completed_turns_and_keeps_later_user_messages(tmp_path: Path) -> None:
    turn1 = [entry("user", "u1", None, message={"role": "user", "content": "hi"})]
    done = FrameworkMessage(
        role=MessageRole.ASSISTANT,
        framework_item={
            "type": "assistant",
            TRANSCRIPT_KEY: {"session_id": "s", "delta": encode_lines(turn1)},
        },
        text="hello",
    )
    user = [
        FrameworkMessage(role=MessageRole.USER, framework_item={"content": t}, text=t)
        for t in ("a", "b", "c")
    ]
    messages = [
        AgentMessage(sequence=i + 1, turn_id=f"turn-{i}", message=m)
        for i, m in enumerate([user[0], done, user[1], user[2]])
    ]
    history = assemble_history(messages)
    assert history.lines == turn1
    assert [m.text for m in history.pending] == ["b"]
    assert history.prompt.text == "c"
    added = [
        json.loads(line)
        for line in user_entries(history.lines, history.pending, session_id="s", cwd=tmp_path)
    ]
    assert [(e["parentUuid"], e["message"]["content"], e["sessionId"]) for e in added] == [("u1", "b", "s")]


def test_a_turn_is_stored_as_assistant_messages_and_tool_results_with_its_transcript() -> None:
    lines = [
        entry("user", "u1", None, message={"role": "user", "content": "go"}),
        entry(
            "assistant",
            "a1",
            "u1",
            message={"id": "m1", "content": [{"type": "text", "text": "Let me look."}]},
        ),
        entry("assistant", "a2", "a1", message={"id": "m1", "content": [{"type": "tool_use", "id": "c1"}]}),
        entry(
            "user",
            "r1",
            "a2",
            message={"content": [{"type": "tool_result", "tool_use_id": "c1", "content": "42"}]},
        ),
        entry("assistant", "a3", "r1", message={"id": "m2", "model": "<synthetic>", "content": []}),
        entry(
            "assistant", "a4", "a3", message={"id": "m3", "content": [{"type": "text", "text": "It is 42."}]}
        ),
        json.dumps({"type": "cost-state"}),
    ]
    stored = framework_messages(lines, session_id="s", delta=lines)
    assert [(m.role, m.text) for m in stored] == [
        (MessageRole.ASSISTANT, "Let me look."),
        (MessageRole.TOOL, "42"),
        (MessageRole.ASSISTANT, "It is 42."),
    ]
    last = cast(dict[str, Any], stored[-1].framework_item)
    assert decode_lines(last[TRANSCRIPT_KEY]["delta"]) == lines


def test_the_run_state_round_trips() -> None:
    state = RunState(session_id="s", lines=["a", "b"], turn_base=1, deferred_id="c1", deferred_name="Bash")
    assert RunState.from_json(state.to_json()) == state
    with pytest.raises(ValueError, match="version"):
        RunState.from_json(json.dumps({"v": 99}))


# --------------------------------------------------------------------------- replay and hooks


def record(name: str, status: AgentToolCallStatus, **fields: Any) -> AgentToolCall:
    return AgentToolCall(
        tool_call_id="c1",
        tool_name=name,
        arguments="{}",
        policy=ToolPolicy(effect=ToolEffect.READ),
        deferral_order=0,
        status=status,
        **fields,
    )


def decision(plan: dict[str, Any]) -> tuple[str, str | None]:
    output = plan["pre"]["hookSpecificOutput"]
    return output["permissionDecision"], output.get("permissionDecisionReason")


def test_the_replayed_call_never_runs_for_real(tmp_path: Path) -> None:
    folders = StepFolders(root=tmp_path)
    (tmp_path / "hooks").mkdir()
    tools = ToolSet(builtins=("Read", "Bash"), specs={"lookup": spec("lookup")})

    replay, plan = replay_plan(record("lookup", AgentToolCallStatus.SUCCEEDED, output="42"), tools, folders)
    assert replay == ReplayedCall(tool_call_id="c1", tool_name="lookup", output="42", is_error=False)
    assert decision(plan) == ("allow", None)
    assert plan["post"]["hookSpecificOutput"]["updatedToolOutput"] == "42"

    failed = record("lookup", AgentToolCallStatus.FAILED, error="boom")
    replay, plan = replay_plan(failed, tools, folders)
    assert replay is not None and replay.is_error and replay.output == "Tool call failed: boom"
    assert "post" not in plan

    _, plan = replay_plan(record("Bash", AgentToolCallStatus.SUCCEEDED, output="hello"), tools, folders)
    stub = plan["pre"]["hookSpecificOutput"]["updatedInput"]["command"]
    assert stub == f"cat {tmp_path / 'hooks' / 'bash-output.txt'}"
    assert (tmp_path / "hooks" / "bash-output.txt").read_text() == "hello"

    _, plan = replay_plan(record("Read", AgentToolCallStatus.SUCCEEDED, output="text"), tools, folders)
    assert decision(plan) == (
        "deny",
        "Not an error: this call already ran in its own durable step (sessionflow), and this is its result.\ntext",
    )
    # Whatever the tool, the in-process gate leaves the replayed call to the plan.
    assert gate_for(plan).replay_id == "c1"
    rejected = record("Bash", AgentToolCallStatus.REJECTED, rejection_message="no")
    assert decision(replay_plan(rejected, tools, folders)[1]) == (
        "deny",
        "Tool call rejected by the user: no",
    )


def test_the_gate_defers_the_first_new_call_and_denies_the_others() -> None:
    gate = ToolGate(replay_id="r1")

    async def ask(tool_use_id: str) -> Any:
        return await gate(cast(Any, {}), tool_use_id, {"signal": None})

    assert asyncio.run(ask("r1")) == {}
    first = asyncio.run(ask("c1"))
    assert first["hookSpecificOutput"]["permissionDecision"] == "defer"
    second = asyncio.run(ask("c2"))
    assert second["hookSpecificOutput"] == {
        "hookEventName": "PreToolUse",
        "permissionDecision": "deny",
        "permissionDecisionReason": PARALLEL_CALL_DENIAL,
    }
    assert (gate.deferred, gate.denied) == ("c1", ["c2"])


def run_hook(plan_path: Path, event: dict[str, Any]) -> str:
    completed = subprocess.run(
        [sys.executable, "-I", "-S", str(HOOK_SCRIPT), str(plan_path)],
        input=json.dumps(event),
        capture_output=True,
        text=True,
        check=True,
    )
    return completed.stdout


def test_the_command_hook_answers_the_replay_and_defers_everything_else(tmp_path: Path) -> None:
    plan_path = tmp_path / "plan.json"
    ran = tmp_path / "ran.jsonl"
    plan = {"replay_id": "r1", "pre": {"a": 1}, "post": {"b": 2}, "fresh": {"c": 3}, "ran_log": str(ran)}
    plan_path.write_text(json.dumps(plan))
    assert json.loads(run_hook(plan_path, {"hook_event_name": "PreToolUse", "tool_use_id": "r1"})) == {"a": 1}
    assert json.loads(run_hook(plan_path, {"hook_event_name": "PostToolUse", "tool_use_id": "r1"})) == {
        "b": 2
    }
    assert json.loads(run_hook(plan_path, {"hook_event_name": "PreToolUse", "tool_use_id": "x"})) == {"c": 3}
    assert (
        run_hook(plan_path, {"hook_event_name": "PostToolUse", "tool_use_id": "x", "tool_name": "Read"}) == ""
    )
    assert json.loads(ran.read_text()) == {"tool_use_id": "x", "tool_name": "Read"}
    denied = json.loads(
        run_hook(tmp_path / "missing.json", {"hook_event_name": "PreToolUse", "tool_use_id": "x"})
    )
    assert denied["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_each_step_gets_private_folders_and_stale_ones_are_removed(tmp_path: Path) -> None:
    old, recent = tmp_path / "step-old", tmp_path / "step-recent"
    old.mkdir()
    recent.mkdir()
    long_ago = time.time() - STALE_AFTER_SECONDS - 60
    os.utime(old, (long_ago, long_ago))
    with step_folders(tmp_path) as folders:
        environment = folders.environment()
        assert environment["CLAUDE_CONFIG_DIR"] == str(folders.config)
        assert environment["HOME"] == str(folders.home) and environment["TMPDIR"] == str(folders.tmp)
        assert all(Path(v).is_relative_to(folders.root) for v in environment.values())
        assert folders.root.stat().st_mode & 0o777 == 0o700
    assert sorted(p.name for p in tmp_path.iterdir()) == ["step-recent"]
