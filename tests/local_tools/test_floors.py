"""The tool table: groups, floors, approval rules, and what the model is shown."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from sessionflow import ToolEffect, ToolPolicy
from sessionflow.kit import DeferredToolCall
from sessionflow_cli._policy import build_call_policy
from sessionflow_local_tools import (
    LOCAL_TOOL_FLOORS,
    LOCAL_TOOL_GROUPS,
    LocalToolGroup,
    build_local_tools,
    with_floor,
)
from tests.local_tools.conftest import resolve_policy_turn, resolve_settings

READ, IW, NIW = ToolEffect.READ, ToolEffect.IDEMPOTENT_WRITE, ToolEffect.NON_IDEMPOTENT_WRITE
UNC = ToolEffect.UNCLASSIFIED

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


def call(name: str, arguments: object, policy: ToolPolicy) -> DeferredToolCall:
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return DeferredToolCall(tool_call_id="c", tool_name=name, arguments=text, policy=policy)


def test_shell_allow_list_matches_the_whole_command(tmp_path: Path) -> None:
    decide = build_call_policy(build_local_tools(tmp_path, resolve_settings), resolve_policy_turn)
    floor = LOCAL_TOOL_FLOORS["run_shell_command"]

    def asks(command: str, always: tuple[str, ...] = ()) -> bool:
        session = {"local_tools": {"shell_allow": ["ls", "git status"], "approval_always": list(always)}}
        return decide(call("run_shell_command", {"command": command}, floor), session).is_approval_required

    assert not asks("ls") and not asks("git status")
    for command in ("ls -la", "ls; rm -rf /", " ls", "ls\n", "git  status", "LS"):
        assert asks(command), command
    assert asks("ls", always=("run_shell_command",))


@pytest.mark.parametrize(
    ("name", "arguments", "requested", "session", "expected"),
    [
        # floors hold against a policy that asks for less
        ("write_file", {}, ToolPolicy(effect=READ, requires_approval=False), {}, ToolPolicy(effect=IW, requires_approval=True)),
        ("edit_file", {}, ToolPolicy(effect=IW, requires_approval=False), {}, ToolPolicy(effect=NIW, requires_approval=True)),
        ("browser_click", {}, ToolPolicy(effect=READ), {}, ToolPolicy(effect=NIW, requires_approval=True)),
        # an effect nobody classified is never taken for a known non-idempotent write
        ("edit_file", {}, ToolPolicy(effect=UNC), {}, ToolPolicy(effect=UNC, requires_approval=True)),
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
        ("connector_search", {}, ToolPolicy(effect=READ), {}, ToolPolicy(effect=READ, requires_approval=False)),
    ],
)  # fmt: skip
def test_call_policy_never_goes_below_a_floor(
    name: str,
    arguments: object,
    requested: ToolPolicy,
    session: dict[str, object],
    expected: ToolPolicy,
    tmp_path: Path,
) -> None:
    decide = build_call_policy(build_local_tools(tmp_path, resolve_settings), resolve_policy_turn)
    assert decide(call(name, arguments, requested), {"local_tools": session}) == expected


EFFECTS = list(ToolEffect)


@pytest.mark.parametrize("floor", EFFECTS)
@pytest.mark.parametrize("requested", EFFECTS)
def test_every_floor_keeps_the_more_cautious_effect(
    floor: ToolEffect, requested: ToolEffect, tmp_path: Path
) -> None:
    # Every pair of effects, through the engine the CLI runs and through the floors the
    # Claude adapter applies: both keep the same, more cautious, effect.
    stricter = max(floor, requested, key=lambda e: e.caution)
    spec = replace(build_local_tools(tmp_path, resolve_settings)[0], policy=ToolPolicy(effect=floor))
    decided = build_call_policy([spec], resolve_policy_turn)(
        call(spec.name, {}, ToolPolicy(effect=requested)), {}
    )
    assert decided.effect is stricter
    assert with_floor(ToolPolicy(effect=floor), ToolPolicy(effect=requested)).effect is stricter
