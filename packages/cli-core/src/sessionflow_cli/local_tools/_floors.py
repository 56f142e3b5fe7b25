"""Each local tool's group and floor policy, and the per-call approval rules built on them.

A floor is the least caution a tool gets. A `ToolPolicy` from the session options may make
a tool more cautious (a read that must be approved) but never less: a write stays a
write, and ``requires_approval=False`` never removes a tool's own approval.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, cast

from sessionflow.session import DeferredToolCall, ToolEffect, ToolPolicy
from sessionflow.session.options import CallPolicy
from sessionflow_cli.local_tools._settings import LocalToolGroup, LocalToolSettings
from sessionflow_local_tools import (
    CLAUDE_CODE_TOOL_FLOORS,
    EDIT_FLOOR,
    READ_FLOOR,
    SHELL_FLOOR,
    SHELL_TOOL_NAMES,
    WRITE_FLOOR,
)

__all__ = [
    "LOCAL_TOOL_FLOORS",
    "LOCAL_TOOL_GROUPS",
    "SHELL_TOOL",
    "local_tool_call_policy",
    "shell_command_needs_approval",
    "strictest_policy",
]

SHELL_TOOL = "run_shell_command"

_READ = READ_FLOOR
_ASK_ONCE_ONLY = ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE, requires_approval=True)

LOCAL_TOOL_GROUPS: Mapping[str, LocalToolGroup] = MappingProxyType(
    {
        "read_file": LocalToolGroup.FILES,
        "list_directory": LocalToolGroup.FILES,
        "search_files": LocalToolGroup.FILES,
        "write_file": LocalToolGroup.FILES,
        "edit_file": LocalToolGroup.FILES,
        SHELL_TOOL: LocalToolGroup.SHELL,
        "fetch_web_page": LocalToolGroup.WEB_FETCH,
        "browser_navigate": LocalToolGroup.BROWSER,
        "browser_snapshot": LocalToolGroup.BROWSER,
        "browser_click": LocalToolGroup.BROWSER,
        "browser_fill": LocalToolGroup.BROWSER,
        "browser_submit_form": LocalToolGroup.BROWSER,
    }
)
"""Tool name -> the group that switches it on."""

LOCAL_TOOL_FLOORS: Mapping[str, ToolPolicy] = MappingProxyType(
    {
        "read_file": _READ,
        "list_directory": _READ,
        "search_files": _READ,
        "write_file": WRITE_FLOOR,
        "edit_file": EDIT_FLOOR,
        # No explicit approval: the effect's default (ask) holds, and `local_tool_call_policy`
        # lifts it for commands on the allow list. An explicit True could not be lifted.
        SHELL_TOOL: SHELL_FLOOR,
        "fetch_web_page": _READ,
        "browser_navigate": _READ,
        "browser_snapshot": _READ,
        "browser_click": _ASK_ONCE_ONLY,
        "browser_fill": _ASK_ONCE_ONLY,
        "browser_submit_form": _ASK_ONCE_ONLY,
    }
)
"""Tool name -> floor policy (effect and approval) of every local tool."""

# How far each effect goes from "safe to repeat, no approval"; the strictest one wins.
_CAUTION = {
    ToolEffect.READ: 0,
    ToolEffect.IDEMPOTENT_WRITE: 1,
    ToolEffect.UNCLASSIFIED: 2,
    ToolEffect.NON_IDEMPOTENT_WRITE: 3,
}


def shell_command_needs_approval(settings: LocalToolSettings, command: str) -> bool:
    """Whether `run_shell_command` must ask before running ``command``.

    Only a command whose whole text is an entry of ``settings.shell_allow`` runs without
    approval; nothing is trimmed or split, so ``ls; rm -rf x`` is not covered by ``ls``.
    ``approval_always`` naming the shell tool makes every command ask.
    """
    if SHELL_TOOL in settings.approval_always:
        return True
    return command not in settings.shell_allow


def strictest_policy(floor: ToolPolicy, requested: ToolPolicy, *, ask: bool = False) -> ToolPolicy:
    """The more cautious effect of the two, and approval if either (or ``ask``) wants it."""
    effect = max(floor.effect, requested.effect, key=lambda e: _CAUTION[e])
    approval = floor.is_approval_required or requested.is_approval_required or ask
    return ToolPolicy(effect=effect, requires_approval=approval)


def local_tool_call_policy(
    resolve_settings: Callable[[Mapping[str, Any]], LocalToolSettings],
) -> CallPolicy:
    """A `CallPolicy` that applies the floors, the shell allow list and ``approval_always``.

    For a local tool, or one of Claude Code's tools that map onto the same hardened
    tools, the call's resolved policy is raised to the tool's floor. The shell
    tool's floor asks for approval unless `shell_command_needs_approval` says otherwise;
    its arguments are read from the call, and arguments that are not a JSON object with a
    text ``command`` always ask. Any tool named in ``approval_always`` asks, local or not;
    other tools keep the policy they have.
    """

    def decide(call: DeferredToolCall, session_settings: Mapping[str, Any]) -> ToolPolicy:
        settings = resolve_settings(session_settings)
        always = call.tool_name in settings.approval_always
        floor = LOCAL_TOOL_FLOORS.get(call.tool_name) or CLAUDE_CODE_TOOL_FLOORS.get(call.tool_name)
        if floor is None:
            return ToolPolicy(effect=call.policy.effect, requires_approval=True) if always else call.policy
        if call.tool_name in SHELL_TOOL_NAMES:
            command = _shell_command(call.arguments)
            ask = command is None or shell_command_needs_approval(settings, command)
            # Only an explicit True in the session options adds to the allow-list rule; the
            # effect's default approval is what the allow list lifts.
            ask = ask or call.policy.requires_approval is True or always
            effect = strictest_policy(floor, call.policy).effect
            return ToolPolicy(effect=effect, requires_approval=ask)
        return strictest_policy(floor, call.policy, ask=always)

    return decide


def _shell_command(arguments: str) -> str | None:
    try:
        parsed: object = json.loads(arguments or "{}")
    except ValueError:
        return None
    if not isinstance(parsed, dict):
        return None
    command = cast(dict[str, object], parsed).get("command")
    return command if isinstance(command, str) else None
