"""The call policy: each tool's own effect and approval are a floor; nothing lowers them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sessionflow import ToolEffect, ToolPolicy
from sessionflow.kit import DeferredToolCall, ToolInvocation, ToolSpec
from sessionflow_cli._ask_user import ask_user_tool, parse_question
from sessionflow_cli._policy import build_call_policy
from sessionflow_cli.config import TurnConfig, parse_config, resolve_turn


def _tool(name: str, effect: ToolEffect, policy: ToolPolicy | None = None) -> ToolSpec:
    def handler(arguments: dict[str, Any], invocation: ToolInvocation) -> str:
        return "ok"

    return ToolSpec(
        name=name,
        description=name,
        parameters={"type": "object"},
        effect=effect,
        policy=policy,
        handler=handler,
    )


TOOLS = [
    _tool("read_file", ToolEffect.READ, ToolPolicy(effect=ToolEffect.READ, requires_approval=False)),
    _tool(
        "write_file",
        ToolEffect.IDEMPOTENT_WRITE,
        ToolPolicy(effect=ToolEffect.IDEMPOTENT_WRITE, requires_approval=True),
    ),
    _tool(
        "run_shell_command",
        ToolEffect.NON_IDEMPOTENT_WRITE,
        ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE),
    ),
    _tool("fetch_web_page", ToolEffect.READ),
    ask_user_tool(),
]


def _resolver(tmp_path: Path, text: str) -> Any:
    config = parse_config("builtin", text, path=tmp_path / "builtin.yaml", cwd=tmp_path)

    def resolve(settings: Any) -> TurnConfig:
        return resolve_turn(config, settings)

    return resolve


def _call(name: str, requested: ToolPolicy, arguments: dict[str, Any] | None = None) -> DeferredToolCall:
    return DeferredToolCall(
        tool_call_id="c1", tool_name=name, arguments=json.dumps(arguments or {}), policy=requested
    )


def test_a_runner_cannot_lower_a_floor(tmp_path: Path) -> None:
    policy = build_call_policy(TOOLS, _resolver(tmp_path, ""))
    lowered = policy(_call("write_file", ToolPolicy(effect=ToolEffect.READ, requires_approval=False)), {})
    assert lowered == ToolPolicy(effect=ToolEffect.IDEMPOTENT_WRITE, requires_approval=True)
    read = policy(_call("read_file", ToolPolicy(effect=ToolEffect.READ)), {})
    assert read == ToolPolicy(effect=ToolEffect.READ, requires_approval=False)


def test_a_runner_may_be_more_cautious(tmp_path: Path) -> None:
    policy = build_call_policy(TOOLS, _resolver(tmp_path, ""))
    raised = policy(_call("read_file", ToolPolicy(effect=ToolEffect.UNCLASSIFIED)), {})
    assert raised == ToolPolicy(effect=ToolEffect.UNCLASSIFIED, requires_approval=True)


def test_approval_always_from_the_file_and_the_turn(tmp_path: Path) -> None:
    policy = build_call_policy(TOOLS, _resolver(tmp_path, "approval: {always: [read_file]}\n"))
    assert policy(_call("read_file", ToolPolicy(effect=ToolEffect.READ)), {}).requires_approval is True
    fetch = _call("fetch_web_page", ToolPolicy(effect=ToolEffect.READ))
    assert policy(fetch, {}).requires_approval is False
    assert policy(fetch, {"approval": {"always": ["fetch_web_page"]}}).requires_approval is True


def test_shell_commands_need_approval_unless_the_whole_text_is_allowed(tmp_path: Path) -> None:
    policy = build_call_policy(
        TOOLS, _resolver(tmp_path, "local_tools: {shell: {allow: [ls, git status]}}\n")
    )
    requested = ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE)

    def needs(command: object, settings: dict[str, Any] | None = None) -> bool:
        decided = policy(_call("run_shell_command", requested, {"command": command}), settings or {})
        assert decided.effect is ToolEffect.NON_IDEMPOTENT_WRITE
        return bool(decided.requires_approval)

    assert needs("ls") is False
    assert needs("git status") is False
    assert needs("ls; rm -rf /") is True
    assert needs("ls ") is True
    assert needs(42) is True
    # The turn's narrower allow list applies.
    assert needs("ls", {"local_tools": {"shell": {"allow": ["git status"]}}}) is True
    # approval.always and an explicit approval keep asking.
    assert needs("ls", {"approval": {"always": ["run_shell_command"]}}) is True
    explicit = policy(
        _call(
            "run_shell_command",
            ToolPolicy(effect=requested.effect, requires_approval=True),
            {"command": "ls"},
        ),
        {},
    )
    assert explicit.requires_approval is True


def test_explicit_session_policies_only_add_caution(tmp_path: Path) -> None:
    policy = build_call_policy(
        TOOLS,
        _resolver(tmp_path, ""),
        explicit={
            "fetch_web_page": ToolPolicy(effect=ToolEffect.READ, requires_approval=True),
            "write_file": ToolPolicy(effect=ToolEffect.READ, requires_approval=False),
        },
    )
    assert policy(_call("fetch_web_page", ToolPolicy(effect=ToolEffect.READ)), {}).requires_approval is True
    write = policy(_call("write_file", ToolPolicy(effect=ToolEffect.IDEMPOTENT_WRITE)), {})
    assert write == ToolPolicy(effect=ToolEffect.IDEMPOTENT_WRITE, requires_approval=True)


def test_ask_user_always_waits_and_unknown_tools_keep_the_runner_policy(tmp_path: Path) -> None:
    policy = build_call_policy(TOOLS, _resolver(tmp_path, ""))
    ask = policy(_call("ask_user", ToolPolicy(effect=ToolEffect.READ, requires_approval=False)), {})
    assert ask == ToolPolicy(effect=ToolEffect.READ, requires_approval=True)
    other = policy(_call("framework_tool", ToolPolicy(effect=ToolEffect.IDEMPOTENT_WRITE)), {})
    assert other == ToolPolicy(effect=ToolEffect.IDEMPOTENT_WRITE, requires_approval=False)


def test_questions_and_choices() -> None:
    question = parse_question(json.dumps({"question": "Which?", "choices": ["red", "blue"]}))
    assert (question.text, list(question.choices)) == ("Which?", ["red", "blue"])
    assert question.answer_for("2") == "blue"
    assert question.answer_for("3") == "3"
    assert question.answer_for(" green ") == "green"
    assert parse_question("not json").text == "not json"


def test_each_rule_that_asks_says_so_in_the_reason(tmp_path: Path) -> None:
    policy = build_call_policy(
        TOOLS,
        _resolver(tmp_path, "approval: {always: [fetch_web_page]}\nlocal_tools: {shell: {allow: [ls]}}\n"),
        explicit={"read_file": ToolPolicy(effect=ToolEffect.READ, requires_approval=True)},
    )

    def reason(name: str, arguments: dict[str, Any] | None = None, **requested: Any) -> str | None:
        effect = requested.pop("effect", ToolEffect.READ)
        decided = policy(_call(name, ToolPolicy(effect=effect, **requested), arguments), {})
        assert decided.requires_approval is (decided.approval_reason is not None)
        return decided.approval_reason

    # The idempotent write asks because of the tool's own floor, not its effect's default.
    assert reason("write_file", effect=ToolEffect.IDEMPOTENT_WRITE) == (
        "sessionflow asks before every write_file call (the tool's own floor)"
    )
    assert reason("read_file") == "an explicit policy for read_file requires approval"
    assert reason("fetch_web_page") == "the configuration's approval.always names fetch_web_page"
    assert reason(
        "run_shell_command", {"command": "rm -rf build"}, effect=ToolEffect.NON_IDEMPOTENT_WRITE
    ) == ("the command is not on the shell allow list")
    assert reason("some_mcp_tool", effect=ToolEffect.UNCLASSIFIED) == (
        "`unclassified` calls ask for approval by default"
    )
    assert reason("some_mcp_tool", effect=ToolEffect.READ) is None
