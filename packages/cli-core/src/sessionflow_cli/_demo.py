"""`--model demo`: an offline scripted model, served in this process on the framework's wire.

The demo model is stateless: before every model call the command looks at the turn (its
messages and tool calls) and scripts the one reply that comes next, so retries, restarts
and `--resume` all continue where the session is. The first turn of a session tours the
workspace: it lists it, reads a file, proposes a write (which waits for approval), and
answers. Later turns answer with what the session remembers.

The tour calls the CLI's file tools, or the framework's own when it replaces them
(`FrameworkSpec.demo_tour`, such as Claude Code's Glob, Read and Write), so it shows
the same steps on every framework with the tool names its model really sees.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, cast

from sessionflow import AgentToolCall, AgentToolCallStatus, MessageRole
from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow.kit import AgentTurnContext, DemoTool, DemoTour, ToolSpec
from sessionflow_cli.config import TurnConfig

__all__ = ["DEMO_MODEL", "DEMO_OUTPUT_FILE", "DemoModel"]

DEMO_MODEL = "demo"
DEMO_OUTPUT_FILE = "sessionflow-demo.md"
_KEY = "demo"
_MAX_READ_BYTES = 200_000


class DemoModel:
    """The scripted model server and the director that scripts its next reply."""

    def __init__(self, tools: Sequence[ToolSpec], tour: DemoTour | None = None) -> None:
        self._tour = (
            _Tour(tour.list, tour.read, tour.write)
            if tour
            else _cli_tour({spec.name: spec for spec in tools})
        )
        self._server = ScriptedModelServer()

    @property
    def write_tool(self) -> str | None:
        """The tool of the tour's write, which the demo always asks approval for."""
        return self._tour.write.name if self._tour.write is not None else None

    def start(self) -> None:
        self._server.start()

    def stop(self) -> None:
        self._server.stop()

    def base_url(self, api: str) -> str:
        return self._server.base_url(_KEY, api=api)

    def prepare(self, turn: AgentTurnContext, config: TurnConfig) -> None:
        """Script the reply to the model call `turn` is about to make."""
        reply = self.next_reply(turn, config)
        self._server.reset(_KEY)
        self._server.script(_KEY, [reply])

    # -- the script ------------------------------------------------------------------

    def next_reply(self, turn: AgentTurnContext, config: TurnConfig) -> ModelReply:
        earlier = [m for m in turn.messages if m.turn_id != turn.turn_id]
        current = [m for m in turn.messages if m.turn_id == turn.turn_id]
        user_text = next((m.message.text or "" for m in current if m.message.role is MessageRole.USER), "")
        if earlier:
            return self._later_turn(user_text, earlier_count=len(earlier))
        calls = sorted(turn.tool_calls.values(), key=lambda record: record.deferral_order)
        done = {record.tool_name for record in calls}
        tour, workspace = self._tour, config.workspace
        if tour.list is not None and tour.list.name not in done:
            return ModelReply.call(
                _call("demo-list", tour.list, tour.list.arguments(workspace, ".")),
                text="Let me look around your workspace. ",
            )
        target = _pick_file(workspace)
        if tour.read is not None and tour.read.name not in done and target is not None:
            return ModelReply.call(
                _call("demo-read", tour.read, tour.read.arguments(workspace, target)),
                text=f"Reading {target}. ",
            )
        if tour.write is not None and tour.write.name not in done:
            summary = _summary(calls, tour, target)
            return ModelReply.call(
                _call("demo-write", tour.write, tour.write.arguments(workspace, DEMO_OUTPUT_FILE, summary)),
                text=f"I'd like to write my notes to {DEMO_OUTPUT_FILE}; that write waits for your approval. ",
            )
        return _say(_closing(calls, tour))

    def _later_turn(self, user_text: str, *, earlier_count: int) -> ModelReply:
        return _say(
            f'(demo) You said: "{user_text}". This session holds {earlier_count} earlier messages, '
            "kept by Temporal across restarts and --resume. I am the offline demo model: set `model:` "
            "in your configuration file to talk to a real one."
        )


class _Tour:
    """The tour's three tools; a step whose tool the session lacks is left out."""

    def __init__(self, list_: DemoTool | None, read: DemoTool | None, write: DemoTool | None) -> None:
        self.list = list_
        self.read = read
        self.write = write


def _cli_tour(tools: Mapping[str, ToolSpec]) -> _Tour:
    """The CLI's file tools that the command offers, with argument names from their schemas."""

    def step(name: str) -> DemoTool | None:
        spec = tools.get(name)
        if spec is None:
            return None
        names = _argument_names(spec.parameters)
        return DemoTool(name=name, path_argument=names.path, content_argument=names.content)

    return _Tour(step("list_directory"), step("read_file"), step("write_file"))


def _call(call_id: str, tool: DemoTool, arguments: dict[str, Any]) -> ScriptedToolCall:
    return ScriptedToolCall(id=call_id, name=tool.name, arguments=arguments)


class _Names:
    def __init__(self, path: str, content: str | None) -> None:
        self.path = path
        self.content = content


def _argument_names(parameters: Mapping[str, Any]) -> _Names:
    """The path and content argument names of a file tool, read from its JSON schema."""
    properties = cast(dict[str, Any], parameters.get("properties") or {})
    names = list(properties)
    required = [str(n) for n in cast(list[Any], parameters.get("required") or [])]
    path = next((n for n in names if re.search(r"path|file|dir", n)), (required or names or ["path"])[0])
    content = next((n for n in names if n != path and re.search(r"content|text|data|body", n)), None)
    if content is None:
        content = next((n for n in required if n != path), None)
    return _Names(path, content)


def _pick_file(workspace: Path) -> str | None:
    """A small text file to read: a README first, else the first visible file by name."""
    try:
        entries = sorted(p for p in workspace.iterdir() if p.is_file() and not p.is_symlink())
    except OSError:
        return None
    candidates = [
        p
        for p in entries
        if not p.name.startswith(".") and p.name != DEMO_OUTPUT_FILE and p.stat().st_size <= _MAX_READ_BYTES
    ]
    readme = next((p for p in candidates if p.name.lower().startswith("readme")), None)
    chosen = readme or (candidates[0] if candidates else None)
    return chosen.name if chosen is not None else None


def _record(calls: Sequence[AgentToolCall], tool: DemoTool | None) -> AgentToolCall | None:
    if tool is None:
        return None
    return next((c for c in calls if c.tool_name == tool.name), None)


def _first_line(text: str | None) -> str:
    for line in (text or "").splitlines():
        # Some read tools (Claude Code's Read) number their lines like `cat -n`.
        line = re.sub(r"^\s*\d+\t", "", line)
        if line.strip():
            return line.strip()[:120]
    return ""


def _summary(calls: Sequence[AgentToolCall], tour: _Tour, target: str | None) -> str:
    lines = ["# Notes from the sessionflow demo", ""]
    listing = _record(calls, tour.list)
    if listing is not None and listing.status is AgentToolCallStatus.SUCCEEDED:
        count = len([line for line in (listing.output or "").splitlines() if line.strip()])
        lines.append(f"- The workspace listing has {count} lines.")
    read = _record(calls, tour.read)
    if read is not None and target is not None:
        first = _first_line(read.output) if read.status is AgentToolCallStatus.SUCCEEDED else ""
        lines.append(f"- {target} starts with: {first}" if first else f"- I could not read {target}.")
    lines.append("")
    return "\n".join(lines)


def _closing(calls: Sequence[AgentToolCall], tour: _Tour) -> str:
    parts: list[str] = []
    read = _record(calls, tour.read)
    if read is not None and read.status is AgentToolCallStatus.SUCCEEDED:
        first = _first_line(read.output)
        parts.append(f'I read a file that starts with "{first}".' if first else "I read a file.")
    write = _record(calls, tour.write)
    if write is None:
        parts.append("There was nothing for me to write.")
    elif write.status is AgentToolCallStatus.SUCCEEDED:
        parts.append(f"You approved the write, so my notes are in {DEMO_OUTPUT_FILE}.")
    elif write.status is AgentToolCallStatus.REJECTED:
        parts.append("You declined the write, so your workspace is unchanged.")
    else:
        parts.append(f"The write did not work out ({write.status.value}: {write.error or 'no detail'}).")
    parts.append("That was the offline demo; set `model:` in your configuration file for a real model.")
    return " ".join(parts)


def _say(text: str) -> ModelReply:
    words = re.findall(r"\S+\s*", text)
    return ModelReply.say(text, chunks=words)
