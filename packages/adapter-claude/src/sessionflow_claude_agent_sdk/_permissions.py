"""Who may run a call: the user's PreToolUse hooks, then Claude Code's permission options.

The CLI never runs a tool under sessionflow (every call is deferred), so it never asks
the user's `PreToolUse` hooks, rules or `can_use_tool` either. The model step asks them
here instead, in Claude Code's order, for every call of the response:

1. the `PreToolUse` hooks whose matcher fits the tool (all of them; a deny wins over an
   ask, an ask over an allow; the last ``updatedInput`` wins);
2. ``disallowed_tools`` (deny) and ``allowed_tools`` (allow) rules;
3. ``permission_mode``: ``bypassPermissions`` allows; ``acceptEdits`` allows `Write` and
   `Edit`; Claude Code's read-only tools (`Read`, `Glob`, `Grep`) never ask; ``dontAsk``
   denies the rest;
4. ``can_use_tool`` for what is left.

The verdict then meets the session's floor (`Verdict.policy`): a deny becomes a rejection
the model sees, with the text Claude Code shows; an allow lifts an approval only where
nobody declared the tool a write (no explicit session policy, no floor, an unclassified
effect), so a write's approval is never removed; an ask from a hook adds an approval
even to a read. Hooks and `can_use_tool` run inside the model step, so a retried step
runs them again.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal, cast

from claude_agent_sdk import (
    ClaudeAgentOptions,
    HookMatcher,
    PermissionResultAllow,
    PermissionResultDeny,
    ToolPermissionContext,
)

from sessionflow import ToolEffect, ToolPolicy
from sessionflow.kit import FrameworkApproval

__all__ = [
    "READ_ONLY_BUILTINS",
    "Verdict",
    "decide",
    "hook_matchers",
    "matches",
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
                not floored and policy.requires_approval is None and policy.effect is ToolEffect.UNCLASSIFIED
            )
            return (replace(policy, requires_approval=False) if liftable else policy), "pre_approved"
        if self.kind == "ask" and self.by_hook:
            return policy, "required"
        return policy, None


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
) -> Verdict:
    """Claude Code's verdict for one call (see the module's docstring for the order)."""
    hooked = await _pre_tool_use(options, tool_name, tool_input, tool_use_id, hook_input)
    if hooked.kind == "deny":
        return hooked
    if hooked.kind in ("allow", "ask"):
        return hooked
    tool_input = hooked.updated_input if hooked.updated_input is not None else tool_input
    names = (tool_name, *aliases)
    if any(_rule_matches(rule, names) for rule in options.disallowed_tools):
        return Verdict(kind="deny", denial=f"Permission to use {tool_name} has been denied.")
    if any(_rule_matches(rule, names) for rule in options.allowed_tools):
        return Verdict(kind="allow", updated_input=hooked.updated_input)
    mode = options.permission_mode or "default"
    if (
        mode == "bypassPermissions"
        or tool_name in READ_ONLY_BUILTINS
        or (mode == "acceptEdits" and tool_name in _EDIT_TOOLS)
    ):
        return Verdict(kind="allow", updated_input=hooked.updated_input)
    if mode == "dontAsk":
        return Verdict(
            kind="deny",
            denial=f"Permission to use {tool_name} has been denied because Claude Code is running in don't ask mode.",
        )
    if options.can_use_tool is not None:
        context = ToolPermissionContext(tool_use_id=tool_use_id)
        answer = await options.can_use_tool(tool_name, tool_input, context)
        if isinstance(answer, PermissionResultDeny):
            return Verdict(
                kind="deny", denial=answer.message or f"Permission to use {tool_name} has been denied."
            )
        if isinstance(answer, PermissionResultAllow):  # pyright: ignore[reportUnnecessaryIsInstance]
            updated = answer.updated_input if answer.updated_input is not None else hooked.updated_input
            return Verdict(kind="allow", updated_input=updated)
    return Verdict(kind="none", updated_input=hooked.updated_input)


def _rule_matches(rule: str, names: Sequence[str]) -> bool:
    """An ``allowed_tools`` / ``disallowed_tools`` rule: a tool name, ``Tool(*)``, or an MCP server
    prefix (``mcp__server``). Rules with a content pattern (``Bash(git:*)``) apply to the
    named tool only as far as the session's own call policy allows; they match nothing here."""
    rule = rule.strip()
    if rule.endswith("(*)"):
        rule = rule[:-3]
    if "(" in rule:
        return False
    for name in names:
        if rule == name or (
            rule.startswith("mcp__") and rule.count("__") == 1 and name.startswith(rule + "__")
        ):
            return True
    return False


async def run_tool_hooks(options: ClaudeAgentOptions, event: Json) -> list[Json]:
    """Run the user's hooks for a tool event (``hook_event_name``, ``tool_name``,
    ``tool_use_id`` in `event`) whose matcher fits the tool, together as Claude Code runs
    them, each within its matcher's timeout; their outputs."""
    name, call_id = str(event["tool_name"]), str(event["tool_use_id"])
    callbacks: list[tuple[Any, float | None]] = [
        (callback, matcher.timeout)
        for matcher in hook_matchers(options, str(event["hook_event_name"]))
        if matches(matcher.matcher, name)
        for callback in matcher.hooks
    ]
    answers = await asyncio.gather(
        *(
            asyncio.wait_for(callback(event, call_id, {"signal": None}), timeout or 60.0)
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
