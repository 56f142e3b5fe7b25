"""The tool table: groups, floors, approval rules, and what the model is shown."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sessionflow import DeferredToolCall, ToolEffect, ToolPolicy
from sessionflow_cli.local_tools import (
    LOCAL_TOOL_FLOORS,
    LOCAL_TOOL_GROUPS,
    LocalToolGroup,
    LocalToolSettings,
    build_local_tools,
    local_tool_call_policy,
    shell_command_needs_approval,
)
from tests.cli_local_tools.conftest import resolve_settings

READ, IW, NIW = ToolEffect.READ, ToolEffect.IDEMPOTENT_WRITE, ToolEffect.NON_IDEMPOTENT_WRITE

# The table of issue 10: group, effect, approval.
TABLE: dict[str, tuple[LocalToolGroup, ToolEffect, bool]] = {
    "read_file": (LocalToolGroup.FILES, READ, False),
    "list_directory": (LocalToolGroup.FILES, READ, False),
    "search_files": (LocalToolGroup.FILES, READ, False),
    "write_file": (LocalToolGroup.FILES, IW, True),
    "edit_file": (LocalToolGroup.FILES, NIW, True),
    "run_shell_command": (LocalToolGroup.SHELL, NIW, True),  # unless on the allow list
    "fetch_web_page": (LocalToolGroup.WEB_FETCH, READ, False),
    "browser_navigate": (LocalToolGroup.BROWSER, READ, False),
    "browser_snapshot": (LocalToolGroup.BROWSER, READ, False),
    "browser_click": (LocalToolGroup.BROWSER, NIW, True),
    "browser_fill": (LocalToolGroup.BROWSER, NIW, True),
    "browser_submit_form": (LocalToolGroup.BROWSER, NIW, True),
}


def test_floors_match_the_table() -> None:
    assert set(LOCAL_TOOL_FLOORS) == set(TABLE) == set(LOCAL_TOOL_GROUPS)
    for name, (group, effect, approval) in TABLE.items():
        floor = LOCAL_TOOL_FLOORS[name]
        assert (LOCAL_TOOL_GROUPS[name], floor.effect, floor.is_approval_required) == (
            group,
            effect,
            approval,
        ), name


def test_every_spec_carries_its_floor_and_a_schema(tmp_path: Path) -> None:
    specs = build_local_tools(tmp_path, resolve_settings)
    assert [s.name for s in specs] == list(TABLE)
    for spec in specs:
        assert spec.policy == LOCAL_TOOL_FLOORS[spec.name]
        assert spec.effect == LOCAL_TOOL_FLOORS[spec.name].effect
        assert len(spec.description) > 80, spec.name
        schema = spec.parameters
        assert schema["type"] == "object" and schema["additionalProperties"] is False
        assert set(schema["required"]) <= set(schema["properties"])
        for name, prop in schema["properties"].items():
            assert prop.get("description"), f"{spec.name}.{name} has no description"
        json.dumps(schema)  # plain JSON


def settings(allow: tuple[str, ...] = (), always: tuple[str, ...] = ()) -> LocalToolSettings:
    return LocalToolSettings(
        groups=frozenset(LocalToolGroup), shell_allow=frozenset(allow), approval_always=frozenset(always)
    )


def test_shell_allow_list_matches_the_whole_command() -> None:
    allowed = settings(allow=("ls", "git status"))
    assert not shell_command_needs_approval(allowed, "ls")
    assert not shell_command_needs_approval(allowed, "git status")
    for command in ("ls -la", "ls; rm -rf /", " ls", "ls\n", "git  status", "LS"):
        assert shell_command_needs_approval(allowed, command), command
    assert shell_command_needs_approval(settings(allow=("ls",), always=("run_shell_command",)), "ls")


def call(name: str, arguments: object, policy: ToolPolicy) -> DeferredToolCall:
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return DeferredToolCall(tool_call_id="c", tool_name=name, arguments=text, policy=policy)


@pytest.mark.parametrize(
    ("name", "arguments", "requested", "session", "expected"),
    [
        # floors hold against a policy that asks for less
        ("write_file", {}, ToolPolicy(effect=READ, requires_approval=False), {}, ToolPolicy(effect=IW, requires_approval=True)),
        ("edit_file", {}, ToolPolicy(effect=IW, requires_approval=False), {}, ToolPolicy(effect=NIW, requires_approval=True)),
        ("browser_click", {}, ToolPolicy(effect=READ), {}, ToolPolicy(effect=NIW, requires_approval=True)),
        # a policy may ask for more
        ("read_file", {}, ToolPolicy(effect=READ, requires_approval=True), {}, ToolPolicy(effect=READ, requires_approval=True)),
        ("read_file", {}, ToolPolicy(effect=NIW, requires_approval=False), {}, ToolPolicy(effect=NIW, requires_approval=False)),
        ("read_file", {}, LOCAL_TOOL_FLOORS["read_file"], {}, ToolPolicy(effect=READ, requires_approval=False)),
        # the shell: the allow list lifts approval, nothing else does
        ("run_shell_command", {"command": "ls"}, LOCAL_TOOL_FLOORS["run_shell_command"], {"shell_allow": ["ls"]},
         ToolPolicy(effect=NIW, requires_approval=False)),
        ("run_shell_command", {"command": "ls -l"}, LOCAL_TOOL_FLOORS["run_shell_command"], {"shell_allow": ["ls"]},
         ToolPolicy(effect=NIW, requires_approval=True)),
        ("run_shell_command", {"command": "ls"}, ToolPolicy(effect=READ, requires_approval=False), {},
         ToolPolicy(effect=NIW, requires_approval=True)),
        ("run_shell_command", {"command": "ls"}, ToolPolicy(effect=NIW, requires_approval=True),
         {"shell_allow": ["ls"]}, ToolPolicy(effect=NIW, requires_approval=True)),
        ("run_shell_command", "not json", LOCAL_TOOL_FLOORS["run_shell_command"], {"shell_allow": ["not json"]},
         ToolPolicy(effect=NIW, requires_approval=True)),
        ("run_shell_command", {"command": "ls"}, LOCAL_TOOL_FLOORS["run_shell_command"],
         {"shell_allow": ["ls"], "approval_always": ["run_shell_command"]}, ToolPolicy(effect=NIW, requires_approval=True)),
        # approval.always adds approval to any tool by name
        ("fetch_web_page", {}, LOCAL_TOOL_FLOORS["fetch_web_page"], {"approval_always": ["fetch_web_page"]},
         ToolPolicy(effect=READ, requires_approval=True)),
        ("connector_search", {}, ToolPolicy(effect=READ), {"approval_always": ["connector_search"]},
         ToolPolicy(effect=READ, requires_approval=True)),
        ("connector_search", {}, ToolPolicy(effect=READ), {}, ToolPolicy(effect=READ)),
    ],
)  # fmt: skip
def test_call_policy_never_goes_below_a_floor(
    name: str, arguments: object, requested: ToolPolicy, session: dict[str, object], expected: ToolPolicy
) -> None:
    decide = local_tool_call_policy(resolve_settings)
    assert decide(call(name, arguments, requested), {"local_tools": session}) == expected
