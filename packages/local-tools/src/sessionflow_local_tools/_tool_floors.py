"""Each local tool's group and floor policy.

A floor is the least caution a tool gets: each spec carries its floor as its `policy`,
and a front end's call policy (the CLI's is `sessionflow_cli._policy`) keeps every call at
or above it, applies the shell allow list and ``approval.always``. Nothing here decides a
call's approval. The floors themselves (`READ_FLOOR`, ...) are in `_floors`.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from sessionflow import ToolEffect, ToolPolicy
from sessionflow_local_tools._floors import EDIT_FLOOR, READ_FLOOR, SHELL_FLOOR, WRITE_FLOOR
from sessionflow_local_tools._settings import LocalToolGroup

__all__ = ["LOCAL_TOOL_FLOORS", "LOCAL_TOOL_GROUPS", "SHELL_TOOL"]

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
        # No explicit approval: the effect's default (ask) holds, and the call policy lifts
        # it for commands on the allow list. An explicit True could not be lifted.
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
