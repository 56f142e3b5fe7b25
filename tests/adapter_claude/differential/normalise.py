"""What the differential tests normalise before comparing a plain run with a session, and why.

Only run-specific noise is normalised; every rule is in `NORMALISATIONS` with its reason
(the README lists them too). Everything else the model saw is compared as sent.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, cast

__all__ = [
    "NORMALISATIONS",
    "normalise_request",
    "normalise_text",
    "normalise_value",
    "placeholders",
    "project_slug",
]

NORMALISATIONS: dict[str, str] = {
    "cache_control": (
        "the CLI marks the last block(s) of a request as a prompt-cache breakpoint; where it "
        "puts them depends on how the request was assembled, not on what the model sees. "
        "Dropped at every depth."
    ),
    "the run's folders": (
        "each run has its own temporary folder (workspace, config folder, home, the adapter's "
        "config root); its path is replaced by <workspace> / <run>, so a path of the other "
        "run, or a path that is not replaced at all, still shows. The CLI also names a "
        "project folder after the workspace path ('/' and '_' as '-'): <workspace-slug>."
    ),
    "the CLI's config folder": (
        "plain gives the CLI <run>/config as CLAUDE_CONFIG_DIR; the adapter gives each step "
        "its own, <run>/config/step-<random>/config (its README, 'A model step'). Both are "
        "<config> (the system prompt names the memory folder inside it)."
    ),
    "dates": "a date (YYYY-MM-DD) the CLI adds (today's date) is replaced by <date>.",
    "uuids": "a UUID (a CLI session or message ID) is replaced by <uuid>.",
}

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.IGNORECASE)
_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")


_STEP_CONFIG = re.compile(r"<run>/config/step-[A-Za-z0-9_]+/config|<run>/config")


def project_slug(path: Path) -> str:
    """The CLI's name for a project folder: the path with every other character as '-'."""
    return re.sub(r"[^A-Za-z0-9]", "-", str(path))


def placeholders(root: Path, workspace: Path) -> dict[str, str]:
    """What stands for the run's folders: ``root`` holds everything a run writes."""
    found: dict[str, str] = {}
    for placeholder, path in (("<workspace>", workspace), ("<run>", root)):
        for spelling in {str(path), str(path.resolve())}:
            found[spelling] = placeholder
            found[project_slug(Path(spelling))] = f"{placeholder[:-1]}-slug>"
    return found


def normalise_text(text: str, folders: Mapping[str, str]) -> str:
    """``text`` with the run's folders (`placeholders`), dates and UUIDs replaced."""
    # The longest first: the workspace lies inside the run's folder.
    for spelling in sorted(folders, key=len, reverse=True):
        text = text.replace(spelling, folders[spelling])
    text = _STEP_CONFIG.sub("<config>", text)
    text = _UUID.sub("<uuid>", text)
    return _DATE.sub("<date>", text)


def normalise_value(value: Any, folders: Mapping[str, str]) -> Any:
    """A JSON value with every string normalised and every ``cache_control`` key dropped."""
    if isinstance(value, str):
        return normalise_text(value, folders)
    if isinstance(value, Mapping):
        items = cast(Mapping[str, Any], value).items()
        return {k: normalise_value(v, folders) for k, v in items if k != "cache_control"}
    if isinstance(value, Sequence):
        return [normalise_value(v, folders) for v in cast(Sequence[Any], value)]
    return value


def _system_text(system: Any) -> str:
    if isinstance(system, str):
        return system
    if isinstance(system, list):
        blocks = cast(list[Any], system)
        return "\n\n".join(
            str(cast(dict[str, Any], b).get("text", "")) for b in blocks if isinstance(b, dict)
        )
    return ""


def normalise_request(body: Mapping[str, Any], folders: Mapping[str, str]) -> dict[str, Any]:
    """What one Anthropic Messages request showed the model: the system prompt text, the
    names of the tools offered (sorted), and the messages (content blocks as parsed JSON)."""
    raw = cast(dict[str, Any], json.loads(json.dumps(dict(body))))
    messages = cast(list[dict[str, Any]], raw.get("messages") or [])
    tools = sorted(str(t.get("name")) for t in cast(list[dict[str, Any]], raw.get("tools") or []))
    return {
        "system": normalise_text(_system_text(raw.get("system")), folders),
        "tools": tools,
        "messages": normalise_value(_results_in_call_order(messages), folders),
    }


def _results_in_call_order(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each user message's tool results in the order the model asked for the calls.

    Claude Code sends the results of parallel calls in the order the calls finished, which
    varies from run to run; the session sends them in the model's order. The order is the
    only thing this changes (the deliberate difference in the adapter README).
    """
    order: dict[str, int] = {}
    out: list[dict[str, Any]] = []
    for message in messages:
        content = message.get("content")
        if message.get("role") == "assistant" and isinstance(content, list):
            uses = [b for b in cast(list[dict[str, Any]], content) if b.get("type") == "tool_use"]
            order = {str(b.get("id")): i for i, b in enumerate(uses)}
        elif message.get("role") == "user" and isinstance(content, list):
            blocks = cast(list[dict[str, Any]], content)
            results = [b for b in blocks if b.get("type") == "tool_result"]
            if len(results) > 1:
                ranked = iter(sorted(results, key=lambda b: order.get(str(b.get("tool_use_id")), len(order))))
                blocks = [next(ranked) if b.get("type") == "tool_result" else b for b in blocks]
                message = {**message, "content": blocks}
        out.append(message)
    return out


SUB_AGENT_NOTES = "\n\nMessages from the agent that launched you"
"""Where Claude Code's own notes for a sub-agent begin, after the agent's prompt."""


def without_sub_agent_frames(request: dict[str, Any]) -> dict[str, Any]:
    """A plain request as the session shows a sub-agent: the deliberate difference (adapter
    README, "Sub-agents").

    The session runs a sub-agent as a conversation of its own, so its system prompt is the
    agent's prompt without the notes Claude Code adds for a sub-agent (and without the
    billing header's sub-agent flag), and the parent sees the sub-agent's report as it was
    written, without Claude Code's hand-back frame (whose ``agentId``, token count and
    duration differ on every run anyway).
    """
    system = str(request["system"])
    if "cc_is_subagent=true;" in system:
        system = system.replace(" cc_is_subagent=true;", "").split(SUB_AGENT_NOTES, 1)[0]
    return {**request, "system": system, "messages": _unframed(request["messages"])}


def without_sub_agent_frames_in_transcript(items: list[Any]) -> list[Any]:
    """A plain run's transcript (`transcript.py`) with each sub-agent report as it was written
    (the same deliberate difference as `without_sub_agent_frames`)."""
    out: list[Any] = []
    for role, content in items:
        if role == "tool":
            content = [
                [call, _report(text) if "[Subagent hand-back]" in text else text, error]
                for call, text, error in cast(list[tuple[str, str, bool]], content)
            ]
        out.append([role, content])
    return out


def _unframed(value: Any) -> Any:
    if isinstance(value, list):
        return [_unframed(v) for v in cast(list[Any], value)]
    if isinstance(value, dict):
        item = cast(dict[str, Any], value)
        text = item.get("text")
        if item.get("type") == "text" and isinstance(text, str) and "[Subagent hand-back]" in text:
            return {**item, "text": _report(text)}
        return {k: _unframed(v) for k, v in item.items()}
    return value


def _report(framed: str) -> str:
    after = framed.split("The report follows:\n", 1)[-1]
    lines: list[str] = []
    for line in after.split("\n"):
        if line.startswith("agentId: "):
            break
        lines.append(line.removeprefix("  "))
    return "\n".join(lines)
