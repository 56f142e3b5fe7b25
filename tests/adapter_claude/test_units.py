"""The adapter's parts without the CLI: plugin, options, tools, transcript, results, permissions, hooks."""

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
from claude_agent_sdk import (
    ClaudeAgentOptions,
    HookMatcher,
    PermissionResultAllow,
    PermissionResultDeny,
    ToolAnnotations,
    create_sdk_mcp_server,
    tool,
)
from mcp import Client

from sessionflow import (
    AgentMessage,
    AgentSessionOptions,
    AgentToolCall,
    AgentToolCallStatus,
    MessageRole,
    ToolEffect,
    ToolPolicy,
)
from sessionflow.kit import (
    FrameworkMessage,
    HarnessContext,
    ToolExecutionError,
    ToolInvocation,
    ToolSpec,
    current_tool_invocation,
    tool_invocation_scope,
)
from sessionflow.plugins import PluginError, SessionflowPlugins, build_runner
from sessionflow_claude_agent_sdk import (
    CAPABILITIES,
    REPLACED_LOCAL_TOOL_GROUPS,
    ClaudeAgentRunner,
    ClaudeStepInfo,
)
from sessionflow_claude_agent_sdk._permissions import decide
from sessionflow_claude_agent_sdk._results import tool_result_blocks
from sessionflow_claude_agent_sdk._runner import check_options, session_policy
from sessionflow_claude_agent_sdk._settings import load_permission_settings
from sessionflow_claude_agent_sdk._step import STALE_AFTER_SECONDS, step_folders
from sessionflow_claude_agent_sdk._tools import ToolSet, discover_tools
from sessionflow_claude_agent_sdk._transcript import (
    TRANSCRIPT_KEY,
    PendingCall,
    RunState,
    SubRun,
    assemble_history,
    decode_lines,
    encode_lines,
    framework_messages,
    pending_tool_uses,
    unique_call_ids,
    user_entries,
    without_resume_entries,
)
from sessionflow_claude_agent_sdk._wire import prefix_environment, strip_resume_pair

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
    assert CAPABILITIES.parallel_tool_calls and CAPABILITIES.images
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


@pytest.mark.parametrize(
    ("changes", "complaint"),
    [
        ({"hooks": {"PermissionRequest": [HookMatcher()]}}, "PermissionRequest hooks"),
        ({"resume": "abc"}, "resume"),
        ({"session_id": "abc"}, "session_id"),
        ({"continue_conversation": True}, "continue_conversation"),
        ({"plugins": [{"type": "local", "path": "/p"}]}, "plugins"),
    ],
)
def test_options_that_would_bypass_the_session_are_refused(changes: dict[str, Any], complaint: str) -> None:
    with pytest.raises(ValueError, match=complaint):
        check_options(ClaudeAgentOptions(**changes))


def test_the_users_hooks_and_permission_callback_are_accepted() -> None:
    async def allow(name: str, arguments: dict[str, Any], context: Any) -> Any:
        return PermissionResultAllow()

    hooks: Any = {e: [HookMatcher()] for e in ("Stop", "PreToolUse", "PostToolUse", "UserPromptSubmit")}
    check_options(ClaudeAgentOptions(hooks=hooks, can_use_tool=allow))


# --------------------------------------------------------------------------- tools


def test_tools_get_effects_from_claude_code_specs_and_mcp_annotations() -> None:
    options = ClaudeAgentOptions(tools=["Read", "Bash"], mcp_servers={"ops": custom_server()})
    sources = [
        spec("lookup", effect=ToolEffect.READ),
        spec("tagged", mcp_annotations={"idempotentHint": True}),
    ]
    tools = asyncio.run(discover_tools(options, sources))
    assert tools.builtins == ("Read", "Bash")
    names = ("Read", "Bash", "lookup", "tagged", "mcp__ops__forecast", "mcp__ops__upsert", "mcp__ops__purge")
    effects = {n: tools.framework_effect(n) for n in names}
    assert effects == {
        "Read": ToolEffect.READ,
        "Bash": ToolEffect.NON_IDEMPOTENT_WRITE,
        "lookup": ToolEffect.READ,
        "tagged": ToolEffect.IDEMPOTENT_WRITE,
        "mcp__ops__forecast": ToolEffect.READ,
        "mcp__ops__upsert": ToolEffect.IDEMPOTENT_WRITE,
        "mcp__ops__purge": None,
    }
    # A custom tool keeps its SDK name; its bare name is an alias for policies.
    assert tools.aliases("mcp__ops__purge") == ("purge",)
    assert tools.aliases("lookup") == ()
    assert set(tools.stub_servers()) == {"ops", "sessionflow"}


def test_the_default_tool_set_is_every_claude_code_tool_the_adapter_runs() -> None:
    tools = asyncio.run(discover_tools(ClaudeAgentOptions(), []))
    assert tools.builtins == ("Read", "Grep", "Glob", "WebFetch", "Write", "Edit", "Bash")


@pytest.mark.parametrize(
    ("options", "sources", "complaint"),
    [
        (
            ClaudeAgentOptions(tools=["Read", "NotebookEdit"]),
            [],
            "cannot run Claude Code.s tools NotebookEdit",
        ),
        (ClaudeAgentOptions(tools=["Read"]), ["Read"], "two tools are named 'Read'"),
        (
            ClaudeAgentOptions(mcp_servers={"ops": custom_server()}),
            ["mcp__ops__forecast"],
            "two tools are named 'mcp__ops__forecast'",
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

    assert asyncio.run(run("mcp__ops__forecast", {"city": "Bergen"})) == "rain in Bergen (s/turn-1/c1)"
    assert asyncio.run(run("lookup", {})) == "lookup ran with {} as s/turn-1/c1"
    with pytest.raises(ToolExecutionError, match="no"):
        asyncio.run(run("mcp__ops__upsert", {"id": 1}))
    with pytest.raises(ToolExecutionError, match="unknown tool 'Bash'"):
        asyncio.run(run("Bash", {"command": "true"}))
    asyncio.run(run("Write", {"file_path": "a.txt", "content": "x"}))
    assert (tmp_path / "a.txt").read_text() == "x"


def test_stub_servers_list_full_names_and_run_nothing() -> None:
    tools = asyncio.run(discover_tools(ClaudeAgentOptions(mcp_servers={"ops": custom_server()}), []))
    stub = tools.stub_servers()["ops"]["instance"]

    async def call(name: str) -> tuple[str, bool]:
        async with Client(stub) as client:
            listed = await client.list_tools()
            assert [t.name for t in listed.tools] == [
                "mcp__ops__forecast",
                "mcp__ops__upsert",
                "mcp__ops__purge",
            ]
            assert all((t.meta or {}).get("anthropic/maxResultSizeChars") for t in listed.tools)
            result = await client.call_tool(name, {"city": "x"})
            return getattr(result.content[0], "text", ""), result.is_error

    for name in ("mcp__ops__purge", "mcp__ops__forecast"):
        text, is_error = asyncio.run(call(name))
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


def test_the_run_state_round_trips_and_reads_version_1() -> None:
    calls = [
        PendingCall(id="c1", name="Bash", input={"command": "ls"}),
        PendingCall(id="c2", name="Read", denial="no"),
    ]
    state = RunState(session_id="s", lines=["a", "b"], turn_base=1, calls=calls, model_calls=3)
    assert RunState.from_json(state.to_json()) == state
    old = json.loads(state.to_json())
    old.update(v=1, deferred={"id": "c9", "name": "Write"})
    del old["calls"], old["model_calls"]
    assert RunState.from_json(json.dumps(old)) == RunState(
        session_id="s",
        lines=["a", "b"],
        turn_base=1,
        calls=[PendingCall(id="c9", name="Write")],
        model_calls=1,
    )
    with pytest.raises(ValueError, match="version"):
        RunState.from_json(json.dumps({"v": 99}))


def test_pending_tool_uses_are_the_unanswered_calls_of_the_last_response() -> None:
    def use(uuid: str, parent: str, message_id: str, call_id: str) -> str:
        content: list[dict[str, Any]] = [{"type": "tool_use", "id": call_id, "name": "Read", "input": {}}]
        return entry("assistant", uuid, parent, message={"id": message_id, "content": content})

    lines = [
        entry("user", "u1", None, message={"role": "user", "content": "go"}),
        use("a1", "u1", "m1", "c1"),
        entry("user", "r1", "a1", message={"content": [{"type": "tool_result", "tool_use_id": "c1"}]}),
        use("a2", "r1", "m2", "c2"),
        use("a3", "a2", "m2", "c3"),
        entry("user", "s1", "a3", isSidechain=True, message={"content": [{"type": "tool_use", "id": "x"}]}),
    ]
    assert [u["id"] for u in pending_tool_uses(lines)] == ["c2", "c3"]


def test_the_cli_resume_pair_leaves_the_request_and_the_transcript() -> None:
    request: dict[str, Any] = {  # the CLI's request after a resume
        "messages": [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "c1"}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c1", "content": "ok"}]},
            {"role": "assistant", "content": [{"type": "text", "text": "No response requested."}]},
            {
                "role": "user",
                "content": [
                    {
                        "type": "text",
                        "text": "Continue from where you left off.",
                        "cache_control": {"type": "ephemeral"},
                    }
                ],
            },
        ]
    }
    assert strip_resume_pair(request, ("Continue from where you left off.",))
    assert request["messages"][-1]["content"] == [
        {"type": "tool_result", "tool_use_id": "c1", "content": "ok", "cache_control": {"type": "ephemeral"}}
    ]
    # Only that exact pair, at the end.
    assert not strip_resume_pair(request, ("Continue from where you left off.",))
    lines = [
        entry("user", "r1", "a1", message={"content": [{"type": "tool_result"}]}),
        entry(
            "assistant",
            "s1",
            "r1",
            message={"model": "<synthetic>", "content": [{"type": "text", "text": "No response requested."}]},
        ),
        entry(
            "user",
            "m1",
            "s1",
            isMeta=True,
            message={"content": [{"type": "text", "text": "Continue from where you left off."}]},
        ),
        entry("assistant", "a2", "m1", message={"id": "m2", "content": [{"type": "text", "text": "Done."}]}),
    ]
    kept = [
        json.loads(line) for line in without_resume_entries(lines, 1, ("Continue from where you left off.",))
    ]
    assert [(e["uuid"], e["parentUuid"]) for e in kept] == [("r1", "a1"), ("a2", "r1")]


# --------------------------------------------------------------------------- results, permissions and hooks


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


def test_results_are_shaped_as_claude_code_shapes_its_own() -> None:
    tools = ToolSet(builtins=("Read", "Bash"), specs={"lookup": spec("lookup")})
    records = {
        "c1": record("lookup", AgentToolCallStatus.SUCCEEDED, output="42"),
        "c2": replace(record("Bash", AgentToolCallStatus.SUCCEEDED, output="hi"), tool_call_id="c2"),
        "c3": replace(record("Read", AgentToolCallStatus.SUCCEEDED, output="1\tx"), tool_call_id="c3"),
        "c4": replace(record("Read", AgentToolCallStatus.FAILED, error="no such file"), tool_call_id="c4"),
        "c5": replace(
            record("Bash", AgentToolCallStatus.REJECTED, rejection_message="no"), tool_call_id="c5"
        ),
    }
    calls = [PendingCall(id=k, name=r.tool_name) for k, r in records.items()]
    calls.append(PendingCall(id="c6", name="Read", denial="PreToolUse:Read hook error: nope"))

    async def post(event: Any, tool_use_id: str | None, context: Any) -> Any:
        assert event["tool_response"] == [{"type": "text", "text": "42"}]
        return {"hookSpecificOutput": {"hookEventName": "PostToolUse", "updatedMCPToolOutput": "forty-two"}}

    options = ClaudeAgentOptions(hooks={"PostToolUse": [HookMatcher(matcher="lookup", hooks=[post])]})
    results = asyncio.run(tool_result_blocks(calls, records.__getitem__, tools, options, {}))
    assert all(not r.attachments for r in results)
    assert [r.block for r in results] == [
        {"tool_use_id": "c1", "type": "tool_result", "content": "forty-two"},
        {"tool_use_id": "c2", "type": "tool_result", "content": "hi", "is_error": False},
        {"tool_use_id": "c3", "type": "tool_result", "content": "1\tx"},
        {"tool_use_id": "c4", "type": "tool_result", "content": "no such file", "is_error": True},
        {
            "tool_use_id": "c5",
            "type": "tool_result",
            "content": "Tool call rejected by the user: no",
            "is_error": True,
        },
        {
            "tool_use_id": "c6",
            "type": "tool_result",
            "content": "PreToolUse:Read hook error: nope",
            "is_error": True,
        },
    ]


def verdict_of(options: ClaudeAgentOptions, name: str = "mcp__calc__divide", **tool_input: Any) -> Any:
    return asyncio.run(
        decide(
            options,
            tool_name=name,
            aliases=("divide",) if name.startswith("mcp__") else (),
            tool_input=tool_input,
            tool_use_id="c1",
            hook_input={},
        )
    )


def test_permissions_follow_claude_codes_order_under_the_session_floor() -> None:
    unclassified = ToolPolicy(effect=ToolEffect.UNCLASSIFIED)
    write = ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE)
    read = ToolPolicy(effect=ToolEffect.READ)

    allowed = verdict_of(ClaudeAgentOptions(allowed_tools=["mcp__calc__divide"]))
    assert allowed.kind == "allow"
    # An allow lifts the default approval of a tool nobody classified...
    assert allowed.policy(unclassified, floored=False) == (
        replace(unclassified, requires_approval=False),
        "pre_approved",
    )
    # ...but never a write's, nor a floor's.
    assert allowed.policy(write, floored=False) == (write, "pre_approved")
    assert allowed.policy(unclassified, floored=True) == (unclassified, "pre_approved")
    assert verdict_of(ClaudeAgentOptions(allowed_tools=["divide"])).kind == "allow"
    assert verdict_of(ClaudeAgentOptions(allowed_tools=["mcp__calc"])).kind == "allow"
    assert verdict_of(ClaudeAgentOptions(allowed_tools=["mcp__calc__add"])).kind == "none"
    assert verdict_of(ClaudeAgentOptions(permission_mode="bypassPermissions")).kind == "allow"
    assert verdict_of(ClaudeAgentOptions(), "Read").kind == "allow"
    denied = verdict_of(ClaudeAgentOptions(permission_mode="dontAsk"))
    assert denied.kind == "deny" and "don't ask mode" in (denied.denial or "")
    assert denied.policy(write, floored=True)[0].requires_approval is False  # nothing runs, nobody is asked

    async def pre(event: Any, tool_use_id: str | None, context: Any) -> Any:
        if event["tool_input"].get("b") == 0:
            return {
                "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "permissionDecision": "deny",
                    "permissionDecisionReason": "no zero",
                }
            }
        if event["tool_input"].get("b") == 1:
            return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "ask"}}
        return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "updatedInput": {"a": 1, "b": 3}}}

    async def callback(name: str, arguments: dict[str, Any], context: Any) -> Any:
        assert arguments == {"a": 1, "b": 3}, "can_use_tool sees the hook's updated input"
        return PermissionResultDeny(message="not today")

    hooked = ClaudeAgentOptions(hooks={"PreToolUse": [HookMatcher(matcher="mcp__calc__.*", hooks=[pre])]})
    zero = verdict_of(hooked, a=1, b=0)
    assert (zero.kind, zero.denial) == ("deny", "PreToolUse:mcp__calc__divide hook error: no zero")
    # A hook's ask adds an approval even to a read.
    assert verdict_of(hooked, a=1, b=1).policy(read, floored=False) == (read, "required")
    assert verdict_of(hooked, a=1, b=2).updated_input == {"a": 1, "b": 3}
    judged = verdict_of(replace(hooked, can_use_tool=callback), a=1, b=2)
    assert (judged.kind, judged.denial) == ("deny", "not today")


def test_rules_from_the_settings_and_the_callback_decide_as_claude_code_does(tmp_path: Path) -> None:
    (tmp_path / ".claude").mkdir()
    rules = {
        "permissions": {
            "allow": ["Bash(make:*)"],
            "deny": ["Bash(rm:*)", "Read(./secrets/**)", "WebFetch(domain:example.com)"],
            "ask": ["Bash(git push:*)"],
        }
    }
    (tmp_path / ".claude" / "settings.json").write_text(json.dumps(rules))
    asked: list[tuple[str, dict[str, Any]]] = []

    async def callback(name: str, arguments: dict[str, Any], context: Any) -> Any:
        asked.append((name, arguments))
        return PermissionResultAllow()

    options = ClaudeAgentOptions(cwd=str(tmp_path), setting_sources=["project"], can_use_tool=callback)

    def verdict(name: str, **tool_input: Any) -> Any:
        permissions = load_permission_settings(options.setting_sources, tmp_path)
        return asyncio.run(
            decide(
                options,
                tool_name=name,
                aliases=(),
                tool_input=tool_input,
                tool_use_id="c1",
                hook_input={},
                cwd=tmp_path,
                settings=permissions,
            )
        )

    assert (
        verdict("Bash", command="rm -rf x").denial
        == "Permission to use Bash with command rm -rf x has been denied."
    )
    assert verdict("Read", file_path="secrets/key.txt").denial == (
        "<tool_use_error>File is in a directory that is denied by your permission settings.</tool_use_error>"
    )
    assert verdict("WebFetch", url="https://api.example.com/x").kind == "deny"
    assert asked == []
    # A read-only command runs unasked, and lifts even the floor's question.
    listing = verdict("Bash", command="ls -la")
    assert (listing.kind, listing.read_only, asked) == ("allow", True, [])
    write = ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE)
    assert listing.policy(write, floored=True)[0].requires_approval is False
    # The project's allow rule does not count in an untrusted workspace; the ask rule asks.
    assert verdict("Bash", command="make all").by_callback
    assert verdict("Bash", command="git push origin").by_callback
    # The callback sees a file tool's path made absolute; its allow is the approval.
    written = verdict("Write", file_path="notes.txt", content="x")
    assert asked[-1] == ("Write", {"file_path": str(tmp_path / "notes.txt"), "content": "x"})
    assert written.policy(write, floored=True)[0].requires_approval is False
    assert len(asked) == 3
    # Allow rules of the options' own settings count; a pattern never lets a chain through.
    trusted = load_permission_settings(None, tmp_path, {"permissions": {"allow": ["Bash(make:*)"]}})
    assert trusted.allow == ["Bash(make:*)"] and trusted.deny == rules["permissions"]["deny"]
    chained = asyncio.run(
        decide(
            replace(options, can_use_tool=None),
            tool_name="Bash",
            aliases=(),
            tool_input={"command": "make all && rm x"},
            tool_use_id="c2",
            hook_input={},
            cwd=tmp_path,
            settings=replace(trusted, deny=[]),
        )
    )
    assert chained.kind == "none"


def run_hook(plan_path: Path, event: dict[str, Any]) -> str:
    completed = subprocess.run(
        [sys.executable, "-I", "-S", str(HOOK_SCRIPT), str(plan_path)],
        input=json.dumps(event),
        capture_output=True,
        text=True,
        check=True,
    )
    return completed.stdout


def test_the_command_hook_defers_every_call_and_logs_any_the_cli_ran(tmp_path: Path) -> None:
    plan_path = tmp_path / "plan.json"
    ran = tmp_path / "ran.jsonl"
    plan_path.write_text(json.dumps({"fresh": {"c": 3}, "ran_log": str(ran)}))
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


def test_a_session_policy_may_name_a_custom_tool_by_either_name() -> None:
    tools = asyncio.run(discover_tools(ClaudeAgentOptions(mcp_servers={"ops": custom_server()}), []))
    explicit = ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE, requires_approval=True)

    def resolver(policies: dict[str, ToolPolicy]) -> Any:
        def resolve(name: str, effect: ToolEffect | None) -> ToolPolicy:
            return policies.get(name) or ToolPolicy(effect=effect or ToolEffect.UNCLASSIFIED)

        return cast(Any, type("Turn", (), {"resolve_tool_policy": staticmethod(resolve)})())

    for key in ("purge", "mcp__ops__purge"):
        assert session_policy(resolver({key: explicit}), tools, "mcp__ops__purge") == explicit
    assert session_policy(resolver({}), tools, "mcp__ops__purge") == ToolPolicy(
        effect=ToolEffect.UNCLASSIFIED
    )


def test_a_call_id_the_model_used_again_is_renamed_in_its_earlier_uses() -> None:
    def use(uuid: str, call_id: str) -> str:
        content: list[dict[str, Any]] = [{"type": "tool_use", "id": call_id, "name": "Read", "input": {}}]
        return entry("assistant", uuid, None, message={"id": uuid, "content": content})

    def result(uuid: str, call_id: str) -> str:
        return entry(
            "user", uuid, None, message={"content": [{"type": "tool_result", "tool_use_id": call_id}]}
        )

    lines = [use("a1", "c1"), result("r1", "c1"), use("a2", "c1"), result("r2", "c1"), use("a3", "c2")]
    ids = [
        [b.get("id") or b.get("tool_use_id") for b in json.loads(line)["message"]["content"]]
        for line in unique_call_ids(lines)
    ]
    assert ids == [["c1~1"], ["c1~1"], ["c1"], ["c1"], ["c2"]]
    unique = [use("a1", "c1"), result("r1", "c1")]
    assert unique_call_ids(unique) == unique


def test_a_sub_agents_start_context_heads_its_environment_block_and_travels_in_the_run_state() -> None:
    prefix = "SubagentStart hook additional context: BANANA\n\n"
    first = {
        "messages": [
            {"role": "user", "content": "go"},
            {"role": "system", "content": [{"type": "text", "text": "# Env"}]},
        ]
    }
    later = {"messages": [{"role": "user", "content": "go"}, {"role": "system", "content": "# Env"}]}
    assert prefix_environment(first, prefix) and prefix_environment(later, prefix)
    assert first["messages"][1]["content"] == [{"type": "text", "text": prefix + "# Env"}]
    assert later["messages"][1]["content"] == prefix + "# Env"
    assert not prefix_environment({"messages": [{"role": "user", "content": "go"}]}, prefix)
    sub = SubRun(call_id="a", agent_type="r", prompt="p", session_id="s", context="BANANA")
    state = RunState(session_id="s", lines=[], turn_base=0, calls=[], sub_runs=[sub])
    assert RunState.from_json(state.to_json()).sub_runs[0].context == "BANANA"
    assert json.loads(state.to_json())["v"] == 4
