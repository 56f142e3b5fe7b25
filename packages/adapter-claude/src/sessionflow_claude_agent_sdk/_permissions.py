"""Who may run a call: the user's PreToolUse hooks, then Claude Code's permission options.

The CLI never runs a tool under sessionflow (every call is deferred), so it never asks
the user's `PreToolUse` hooks, rules or `can_use_tool` either. The model step asks them
here instead, in Claude Code's order, for every call of the response:

1. the `PreToolUse` hooks whose matcher fits the tool (all of them; a deny wins over an
   ask, an ask over an allow; the last ``updatedInput`` wins);
2. deny rules (``disallowed_tools`` and the settings' ``permissions.deny``), then ask rules
   (``permissions.ask``: straight to step 5), then allow rules (``allowed_tools`` and
   ``permissions.allow``);
3. what Claude Code lets run unasked: ``bypassPermissions``; `Write` and `Edit` under
   ``acceptEdits``; its read-only tools (`Read`, `Glob`, `Grep`); a read-only `Bash`
   command inside the working directory (`_read_only_bash`);
4. ``dontAsk`` denies the rest;
5. ``can_use_tool`` for what is left: asked exactly where plain Claude Code asks it.

The verdict then meets the session's floor (`Verdict.policy`): a deny becomes a rejection
the model sees, with the text Claude Code shows; ``can_use_tool``'s answer is the call's
approval (nobody is asked again); a `Bash` command that only reads runs unasked, as in
Claude Code; any other allow lifts an approval only where nobody declared the tool a write
(no explicit session policy, no floor, an unclassified effect), so a write's approval is
never removed without the user's own callback; an ask from a hook adds an approval even
to a read.

Claude Code shows hooks and ``can_use_tool`` the input with a file tool's path made
absolute (from the working directory); so does `permission_input`. Hooks and `can_use_tool` run inside the model step, after
the model answered, so only a step that fails after them runs them again.
"""

from __future__ import annotations

import asyncio
import fnmatch
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal, cast
from urllib.parse import urlsplit

from claude_agent_sdk import (
    ClaudeAgentOptions,
    HookMatcher,
    PermissionResultAllow,
    PermissionResultDeny,
    ToolPermissionContext,
)

from sessionflow import ToolEffect, ToolPolicy
from sessionflow.kit import FrameworkApproval
from sessionflow_claude_agent_sdk._read_only_bash import is_file_edit_command, is_read_only_command
from sessionflow_claude_agent_sdk._settings import PermissionSettings

__all__ = [
    "READ_ONLY_BUILTINS",
    "Verdict",
    "decide",
    "hook_matchers",
    "matches",
    "permission_input",
    "run_hooks",
    "run_tool_hooks",
]

READ_ONLY_BUILTINS = frozenset({"Read", "Glob", "Grep"})
"""Claude Code's tools that never ask for permission."""

_EDIT_TOOLS = frozenset({"Write", "Edit", "NotebookEdit"})

Json = dict[str, Any]
Kind = Literal["allow", "ask", "deny", "none"]


@dataclass(frozen=True, kw_only=True)
class Verdict:
    """What Claude Code's permission system says about one call."""

    kind: Kind
    """``none``: nothing decided; the session's policy alone decides."""
    denial: str | None = None
    """The text the model sees for a denied call."""
    updated_input: Json | None = None
    by_hook: bool = False
    by_callback: bool = False
    """``can_use_tool`` answered: its answer is the call's approval."""
    read_only: bool = False
    """A `Bash` command Claude Code runs unasked because it only reads (`_read_only_bash`)."""

    def policy(self, policy: ToolPolicy, *, floored: bool) -> tuple[ToolPolicy, FrameworkApproval | None]:
        """The call's policy and framework approval under the session's floor.

        ``floored``: the session demands this approval whatever the framework says (a
        Claude Code tool's floor, or an explicit session policy).
        """
        if self.kind == "deny":
            # Nothing will run, so nobody is asked.
            return replace(policy, requires_approval=False), None
        if self.kind == "allow":
            liftable = (
                self.by_callback
                or self.read_only
                or (
                    not floored
                    and policy.requires_approval is None
                    and policy.effect is ToolEffect.UNCLASSIFIED
                )
            )
            return (replace(policy, requires_approval=False) if liftable else policy), "pre_approved"
        if self.kind == "ask" and self.by_hook:
            return policy, "required"
        return policy, None


_PATH_KEYS = {
    "Read": "file_path",
    "Write": "file_path",
    "Edit": "file_path",
    "NotebookEdit": "notebook_path",
    "Glob": "path",
    "Grep": "path",
}


def permission_input(tool_name: str, tool_input: Json, cwd: Path) -> Json:
    """The input Claude Code shows hooks and ``can_use_tool``: a file tool's relative path
    made absolute from the working directory."""
    key = _PATH_KEYS.get(tool_name)
    value = tool_input.get(key) if key is not None else None
    if key is None or not isinstance(value, str) or not value or Path(value).is_absolute():
        return tool_input
    return {**tool_input, key: os.path.normpath(cwd / value)}


def hook_matchers(options: ClaudeAgentOptions, event: str) -> list[HookMatcher]:
    hooks = cast(Mapping[str, Sequence[HookMatcher]], options.hooks or {})
    return list(hooks.get(event, ()))


def matches(matcher: str | None, tool_name: str) -> bool:
    """Claude Code's matcher: empty or ``*`` fits every tool, else a name or a regular expression."""
    if not matcher or matcher == "*":
        return True
    if re.fullmatch(r"[A-Za-z0-9_|]+", matcher):
        return tool_name in matcher.split("|")
    try:
        return re.fullmatch(matcher, tool_name) is not None
    except re.error:
        return False


async def decide(
    options: ClaudeAgentOptions,
    *,
    tool_name: str,
    aliases: Sequence[str],
    tool_input: Json,
    tool_use_id: str,
    hook_input: Json,
    cwd: Path | None = None,
    settings: PermissionSettings | None = None,
) -> Verdict:
    """Claude Code's verdict for one call (see the module's docstring for the order).

    `settings`: the permissions of the loaded settings files; `cwd`: the session's working
    directory, where path rules and read-only commands are judged.
    """
    tool_input = permission_input(tool_name, tool_input, cwd or Path.cwd())
    hooked = await _pre_tool_use(options, tool_name, tool_input, tool_use_id, hook_input)
    if hooked.kind == "deny":
        return hooked
    if hooked.kind in ("allow", "ask"):
        return hooked
    tool_input = hooked.updated_input if hooked.updated_input is not None else tool_input
    rules = settings or PermissionSettings()
    where = cwd or Path.cwd()
    names = (tool_name, *aliases)

    def matching(found: Sequence[str], *, allow: bool = False) -> bool:
        return any(_rule_matches(rule, names, tool_input, where, allow=allow) for rule in found)

    denied_by = next(
        (
            rule
            for rule in [*options.disallowed_tools, *rules.deny]
            if _rule_matches(rule, names, tool_input, where)
        ),
        None,
    )
    if denied_by is not None:
        return Verdict(kind="deny", denial=_denial(denied_by, tool_name, tool_input))
    asked_by_rule = matching(rules.ask)
    if not asked_by_rule:
        if matching([*options.allowed_tools, *rules.allow], allow=True):
            return Verdict(kind="allow", updated_input=hooked.updated_input)
        mode = options.permission_mode or rules.default_mode or "default"
        if tool_name == "Bash" and is_read_only_command(str(tool_input.get("command") or ""), where):
            return Verdict(kind="allow", updated_input=hooked.updated_input, read_only=True)
        command = str(tool_input.get("command") or "") if tool_name == "Bash" else None
        if (
            mode == "bypassPermissions"
            or tool_name in READ_ONLY_BUILTINS
            or (mode == "acceptEdits" and tool_name in _EDIT_TOOLS)
            or (mode == "acceptEdits" and command is not None and is_file_edit_command(command, where))
        ):
            return Verdict(kind="allow", updated_input=hooked.updated_input)
        if mode == "dontAsk":
            return Verdict(
                kind="deny",
                denial=f"Permission to use {tool_name} has been denied because Claude Code is running in "
                f"don't ask mode. {_WORK_AROUND}",
            )
    if options.can_use_tool is not None:
        context = ToolPermissionContext(tool_use_id=tool_use_id)
        answer = await options.can_use_tool(tool_name, tool_input, context)
        if isinstance(answer, PermissionResultDeny):
            return Verdict(
                kind="deny",
                denial=answer.message or f"Permission to use {tool_name} has been denied.",
                by_callback=True,
            )
        if isinstance(answer, PermissionResultAllow):  # pyright: ignore[reportUnnecessaryIsInstance]
            updated = answer.updated_input if answer.updated_input is not None else hooked.updated_input
            return Verdict(kind="allow", updated_input=updated, by_callback=True)
    return Verdict(kind="none", updated_input=hooked.updated_input)


def _denial(rule: str, tool_name: str, tool_input: Json) -> str:
    """What Claude Code shows the model for a call a deny rule stops, by the kind of rule."""
    content = rule.strip()[rule.strip().find("(") + 1 : -1] if rule.strip().endswith(")") else ""
    if not content or content == "*":
        return f"Permission to use {tool_name} has been denied."
    if tool_name == "Bash":
        return f"Permission to use Bash with command {tool_input.get('command')} has been denied."
    if tool_name in _FILE_READERS | _FILE_EDITORS:
        return "<tool_use_error>File is in a directory that is denied by your permission settings.</tool_use_error>"
    return f"Permission to use {tool_name} has been denied."


_WORK_AROUND = (
    "IMPORTANT: You *may* attempt to accomplish this action using other tools that might naturally "
    "be used to accomplish this goal, e.g. using head instead of cat. But you *should not* attempt to "
    "work around this denial in malicious ways, e.g. do not use your ability to run tests to execute "
    "non-test actions. You should only try to work around this restriction in reasonable ways that do "
    "not attempt to bypass the intent behind this denial. If you believe this capability is essential "
    "to complete the user's request, STOP and explain to the user what you were trying to do and why "
    "you need this permission. Let the user decide how to proceed."
)
"""What Claude Code adds to a denial in ``dontAsk`` mode."""

_FILE_READERS = frozenset({"Read", "Glob", "Grep"})
_FILE_EDITORS = frozenset({"Write", "Edit", "NotebookEdit", "MultiEdit"})
_SHELL_MARKS = re.compile(r"[;&|`$<>\n]")


def _rule_matches(
    rule: str, names: Sequence[str], tool_input: Json, cwd: Path, *, allow: bool = False
) -> bool:
    """A permission rule as Claude Code reads it: a tool name (``Tool``, ``Tool(*)``), an MCP
    server prefix (``mcp__server``), or a tool with a content pattern: ``Bash(npm test)``
    (exactly), ``Bash(git:*)`` (a prefix), ``Bash(npm run *)`` (a wildcard); ``Read(./src/**)``
    and ``Edit(...)`` (paths, gitignore style: ``./`` or no prefix from the working directory,
    ``//`` absolute, ``~/`` the home folder), which also cover the other tools that read or
    edit files; ``WebFetch(domain:example.com)``.

    An allow rule with a pattern matches a shell command only when it is one simple command
    (no ``;``, ``&&``, ``|``, substitution or redirection), so ``Bash(ls:*)`` never lets a
    command through that chains another one."""
    rule = rule.strip()
    if rule.endswith("(*)") or rule.endswith("()"):
        rule = rule[: rule.index("(")]
    if "(" not in rule or not rule.endswith(")"):
        return any(
            rule == name
            or (rule.startswith("mcp__") and rule.count("__") == 1 and name.startswith(rule + "__"))
            for name in names
        )
    tool, content = rule[: rule.index("(")], rule[rule.index("(") + 1 : -1]
    name = names[0]
    if tool == "Bash" and name == "Bash":
        command = str(tool_input.get("command") or "").strip()
        if allow and _SHELL_MARKS.search(command):
            return False
        if content.endswith(":*"):
            prefix = content[:-2]
            return command == prefix or command.startswith(prefix + " ")
        if "*" in content:
            return fnmatch.fnmatchcase(command, content)
        return command == content
    if (tool == "Read" and name in _FILE_READERS | _FILE_EDITORS) or (
        tool == "Edit" and name in _FILE_EDITORS
    ):
        path = tool_input.get("file_path") or tool_input.get("path") or tool_input.get("notebook_path")
        return isinstance(path, str) and _path_matches(content, path, cwd)
    if tool == "WebFetch" and name == "WebFetch" and content.startswith("domain:"):
        host = urlsplit(str(tool_input.get("url") or "")).hostname or ""
        domain = content.removeprefix("domain:")
        return host == domain or host.endswith("." + domain)
    return False


def _path_matches(pattern: str, path: str, cwd: Path) -> bool:
    if pattern.startswith("//"):
        base, pattern = Path("/"), pattern[2:]
    elif pattern.startswith("~/"):
        base, pattern = Path(os.path.expanduser("~")), pattern[2:]
    else:
        base, pattern = cwd, pattern.removeprefix("./").removeprefix("/")
    target = Path(path) if Path(path).is_absolute() else cwd / path
    try:
        relative = target.resolve().relative_to(base.resolve()).as_posix()
    except ValueError:
        return False
    if fnmatch.fnmatchcase(relative, pattern) or fnmatch.fnmatchcase(relative, pattern.replace("**/", "")):
        return True
    # A folder pattern covers what is inside it.
    return relative.startswith(pattern.rstrip("/*") + "/") if pattern.endswith(("/**", "/")) else False


async def run_tool_hooks(options: ClaudeAgentOptions, event: Json) -> list[Json]:
    """Run the user's hooks for a tool event (``hook_event_name``, ``tool_name``,
    ``tool_use_id`` in `event`) whose matcher fits the tool, together as Claude Code runs
    them, each within its matcher's timeout; their outputs."""
    return await run_hooks(options, event, str(event["tool_name"]), str(event["tool_use_id"]))


async def run_hooks(
    options: ClaudeAgentOptions, event: Json, subject: str, tool_use_id: str | None
) -> list[Json]:
    """Run the user's hooks of ``event["hook_event_name"]`` whose matcher fits `subject` (a
    tool's name, a sub-agent's type), together as Claude Code runs them, each within its
    matcher's timeout; their outputs."""
    callbacks: list[tuple[Any, float | None]] = [
        (callback, matcher.timeout)
        for matcher in hook_matchers(options, str(event["hook_event_name"]))
        if matches(matcher.matcher, subject)
        for callback in matcher.hooks
    ]
    answers = await asyncio.gather(
        *(
            asyncio.wait_for(callback(event, tool_use_id, {"signal": None}), timeout or 60.0)
            for callback, timeout in callbacks
        )
    )
    return [cast(Json, answer or {}) for answer in answers]


async def _pre_tool_use(
    options: ClaudeAgentOptions, tool_name: str, tool_input: Json, tool_use_id: str, hook_input: Json
) -> Verdict:
    """Run the matching PreToolUse hooks and merge their answers."""
    event = {
        **hook_input,
        "hook_event_name": "PreToolUse",
        "tool_name": tool_name,
        "tool_input": tool_input,
        "tool_use_id": tool_use_id,
    }
    answers = await run_tool_hooks(options, event)
    if not answers:
        return Verdict(kind="none")
    decisions: list[tuple[str, str | None]] = []
    updated: Json | None = None
    for output in answers:
        specific = cast(Json, output.get("hookSpecificOutput") or {})
        decision = specific.get("permissionDecision")
        reason = specific.get("permissionDecisionReason")
        if decision is None and output.get("decision") in ("block", "approve"):
            decision = "deny" if output.get("decision") == "block" else "allow"
            reason = output.get("reason")
        if isinstance(decision, str):
            decisions.append((decision, reason if isinstance(reason, str) else None))
        new_input = specific.get("updatedInput")
        if isinstance(new_input, dict):
            updated = cast(Json, new_input)
    for wanted in ("deny", "ask", "allow"):
        for decision, reason in decisions:
            if decision == wanted:
                if wanted == "deny":
                    text = f"PreToolUse:{tool_name} hook error: {reason or 'Blocked by hook'}"
                    return Verdict(kind="deny", denial=text, by_hook=True)
                return Verdict(kind=wanted, updated_input=updated, by_hook=True)
    return Verdict(kind="none", updated_input=updated, by_hook=updated is not None)
