"""The settings files ``setting_sources`` loads, as far as the steps need them.

The CLI of every model step loads the user's ``setting_sources`` itself (``CLAUDE.md``, the
project's slash commands, agents, skills, ``env``, ...), from the session's ``cwd``, which is
the same on every worker. Two parts of the settings act where the CLI no longer does under
sessionflow, because every tool call is deferred before the CLI would look at them:

* ``permissions`` (``allow``, ``deny``, ``ask`` rules and ``defaultMode``): the model step
  applies them with the options' own rules (`_permissions`). Claude Code ignores a project's
  or a local file's ``allow`` rules in a workspace nobody trusted (a trust dialog answered in
  the user's config); each step's config folder is private and holds no such answer, so
  they are ignored here too, in every step, as in a plain run without one;
* ``hooks`` of the tool events (PreToolUse, PostToolUse, PostToolUseFailure,
  PermissionRequest): a settings file may not define them (refused, with the file named),
  since the CLI would run them around calls it never runs. Hooks of other events run in the
  CLI as they would without sessionflow.

Sources, in Claude Code's order of precedence (later wins): ``user`` (the CLI's config
folder, which under sessionflow is each step's private folder: nothing is read from the
worker's ``~/.claude``), ``project`` (``<cwd>/.claude/settings.json``), ``local``
(``<cwd>/.claude/settings.local.json``), then the options' own ``settings`` (the CLI's flag
settings).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from claude_agent_sdk import AgentDefinition, ClaudeAgentOptions

from sessionflow import UnsupportedOptionError

__all__ = [
    "ALL_SOURCES",
    "STEP_HOOK_EVENTS",
    "PermissionSettings",
    "load_permission_settings",
    "settings_files",
]

ALL_SOURCES = ("user", "project", "local")
"""What ``setting_sources=None`` loads (the CLI's default)."""

STEP_HOOK_EVENTS = frozenset({"PreToolUse", "PostToolUse", "PostToolUseFailure", "PermissionRequest"})
"""Hook events around a tool call: the steps run them, so the CLI must not get them."""

Json = dict[str, Any]


@dataclass(frozen=True, kw_only=True)
class PermissionSettings:
    """The ``permissions`` of every loaded settings layer, merged as Claude Code merges them."""

    allow: list[str] = field(default_factory=lambda: [])
    deny: list[str] = field(default_factory=lambda: [])
    ask: list[str] = field(default_factory=lambda: [])
    default_mode: str | None = None


def settings_files(sources: Sequence[str] | None, cwd: Path) -> list[Path]:
    """The settings files of `sources` in `cwd`, lowest precedence first (``user`` has none here)."""
    chosen = ALL_SOURCES if sources is None else tuple(sources)
    files: list[Path] = []
    if "project" in chosen:
        files.append(cwd / ".claude" / "settings.json")
    if "local" in chosen:
        files.append(cwd / ".claude" / "settings.local.json")
    return files


def load_permission_settings(
    sources: Sequence[str] | None,
    cwd: Path,
    flag_settings: Json | None = None,
    *,
    strict_mcp_config: bool = False,
) -> PermissionSettings:
    """The merged permissions of `sources` in `cwd` and the options' settings (`flag_settings`).

    With `strict_mcp_config` (the user's option) Claude Code loads no ``.mcp.json``, so its
    servers are not checked.

    Raises:
        UnsupportedOptionError: A settings file defines hooks of a tool event.
    """
    layers: list[tuple[str, Json]] = []
    for path in settings_files(sources, cwd):
        values = _read(path)
        if values is not None:
            layers.append((str(path), values))
    if flag_settings:
        layers.append(("settings", flag_settings))
    merged = PermissionSettings()
    if not strict_mcp_config:
        _check_project_mcp_servers(layers, sources, cwd)
    for where, values in layers:
        hooks = values.get("hooks")
        if isinstance(hooks, dict) and where != "settings":
            owned = sorted(set(cast(Json, hooks)) & STEP_HOOK_EVENTS)
            if owned:
                raise UnsupportedOptionError(
                    "setting_sources",
                    f"{where} defines {', '.join(owned)} hooks: under sessionflow the CLI runs no "
                    "tool, so it would never run them where Claude Code does. Give them to the "
                    "options as hooks= callbacks (the steps run those), or leave this source out "
                    "of setting_sources",
                )
        permissions = values.get("permissions")
        if not isinstance(permissions, dict):
            continue
        rules = cast(Json, permissions)
        mode = rules.get("defaultMode")
        trusted = where == "settings"
        merged = PermissionSettings(
            allow=merged.allow + (_rules(rules.get("allow")) if trusted else []),
            deny=merged.deny + _rules(rules.get("deny")),
            ask=merged.ask + _rules(rules.get("ask")),
            default_mode=mode if isinstance(mode, str) else merged.default_mode,
        )
    return merged


def _check_project_mcp_servers(
    layers: list[tuple[str, Json]], sources: Sequence[str] | None, cwd: Path
) -> None:
    """A project's ``.mcp.json`` servers, once the settings enable them, would run their tools
    inside the CLI (the adapter runs it with ``strict_mcp_config``, which leaves them out):
    refused, so that nobody loses them without a word."""
    if "project" not in (ALL_SOURCES if sources is None else tuple(sources)):
        return
    enabled = any(
        values.get("enableAllProjectMcpServers") is True or bool(values.get("enabledMcpjsonServers"))
        for _, values in layers
    )
    servers = (_read(cwd / ".mcp.json") or {}).get("mcpServers")
    if enabled and isinstance(servers, dict) and servers:
        names = ", ".join(sorted(str(name) for name in cast(Json, servers)))
        raise UnsupportedOptionError(
            "setting_sources",
            f"{cwd / '.mcp.json'} has MCP servers ({names}) that the settings enable; their tools "
            "would run inside the CLI. Give them to the session as tool sources "
            "(sessionflow.mcp.McpToolSource), so that each call runs as its own durable step",
        )


def _rules(value: object) -> list[str]:
    return [str(rule) for rule in cast(list[object], value)] if isinstance(value, list) else []


def _read(path: Path) -> Json | None:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return None
    try:
        parsed: object = json.loads(text)
    except json.JSONDecodeError as error:
        raise UnsupportedOptionError("setting_sources", f"{path} is not JSON: {error}") from None
    return cast(Json, parsed) if isinstance(parsed, dict) else None


def filesystem_agents(options: ClaudeAgentOptions) -> dict[str, AgentDefinition]:
    """The sub-agents a project defines in ``.claude/agents/*.md`` (with the ``project``
    source), as Claude Code reads them: YAML front matter (``name``, ``description``, ``tools``
    as a comma-separated list, ``model``) and the body as the agent's prompt."""
    sources = ALL_SOURCES if options.setting_sources is None else tuple(options.setting_sources)
    if "project" not in sources:
        return {}
    folder = Path(options.cwd or Path.cwd()) / ".claude" / "agents"
    found: dict[str, AgentDefinition] = {}
    for path in sorted(folder.glob("*.md")) if folder.is_dir() else []:
        text = path.read_text(encoding="utf-8")
        fields: dict[str, str] = {}
        body = text
        if text.startswith("---\n") and "\n---" in text[4:]:
            head, _, body = text[4:].partition("\n---")
            body = body.removeprefix("\n")
            for line in head.splitlines():
                key, sep, value = line.partition(":")
                if sep:
                    fields[key.strip()] = value.strip().strip("'\"")
        name = fields.get("name") or path.stem
        tools = [t.strip() for t in fields["tools"].split(",") if t.strip()] if fields.get("tools") else None
        found[name] = AgentDefinition(
            description=fields.get("description", ""),
            prompt=body.strip(),
            tools=tools,
            model=fields.get("model") or None,
        )
    return found
