"""Fixtures for the local tools: a workspace next to an outside folder holding a sentinel."""

from __future__ import annotations

import ctypes
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from sessionflow.kit import ToolInvocation, ToolSpec
from sessionflow_cli.config import LocalToolsConfig, ShellConfig, TurnConfig
from sessionflow_local_tools import LocalToolGroup, LocalToolSettings, ShellSandbox, build_local_tools

SENTINEL_TEXT = "TOP-SECRET-SENTINEL"
ALL_GROUPS = frozenset(LocalToolGroup)


MISSING_BWRAP = "/nonexistent/bwrap"
"""A ``bwrap`` that is not there: the shell runs unconfined (the no-sandbox fallback)."""


def resolve_settings(session_settings: Mapping[str, Any]) -> LocalToolSettings:
    """A test resolver: every group on, narrowed by ``{"local_tools": {...}}`` in the settings.

    ``shell_sandbox`` holds `ShellSandbox` fields (paths as strings)."""
    raw: Mapping[str, Any] = session_settings.get("local_tools", {})
    groups = frozenset(LocalToolGroup(g) for g in raw.get("groups", ALL_GROUPS))
    box: Mapping[str, Any] = raw.get("shell_sandbox", {})
    sandbox = ShellSandbox(
        network=bool(box.get("network", False)),
        writable=tuple(Path(p) for p in box.get("writable", ())),
        read_only=tuple(Path(p) for p in box.get("read_only", ())),
        hidden=tuple(Path(p) for p in box.get("hidden", ())),
        hide_home=bool(box.get("hide_home", True)),
        bwrap=str(box.get("bwrap", "bwrap")),
        backend=box.get("backend", "auto"),
    )
    return LocalToolSettings(
        groups=groups, shell_timeout=float(raw.get("shell_timeout", 120.0)), shell_sandbox=sandbox
    )


def resolve_policy_turn(session_settings: Mapping[str, Any]) -> TurnConfig:
    """The turn the CLI's call policy reads, from the same test settings: ``shell_allow``
    and ``approval_always`` under ``local_tools`` (the CLI's own file format is tested in
    tests/cli)."""
    raw: Mapping[str, Any] = session_settings.get("local_tools", {})
    return TurnConfig(
        model="m",
        instructions=None,
        workspace=Path("."),
        local_tools=LocalToolsConfig(shell=ShellConfig(allow=tuple(raw.get("shell_allow", ())))),
        connectors=(),
        approval_always=frozenset(raw.get("approval_always", ())),
    )


class Tools:
    """The local tools of one workspace, called the way the session calls them."""

    def __init__(self, workspace: Path, defaults: Mapping[str, Any] | None = None) -> None:
        """``defaults``: the session settings of a call that passes none."""
        self.specs: dict[str, ToolSpec] = {s.name: s for s in build_local_tools(workspace, resolve_settings)}
        self.defaults: Mapping[str, Any] = dict(defaults or {})

    async def call(
        self,
        tool: str,
        /,
        *,
        session_id: str = "s-test",
        settings: Mapping[str, Any] | None = None,
        **args: Any,
    ) -> str:
        invocation = ToolInvocation(
            tool_call_id="c1",
            idempotency_key=f"{session_id}/turn-1/c1",
            attempt=1,
            session_id=session_id,
            turn_id="turn-1",
            tool_name=tool,
            session_settings=dict(self.defaults if settings is None else settings),
        )
        return await self.specs[tool].call(dict(args), invocation)


@dataclass
class Sandbox:
    """``ws`` is the workspace; everything else under ``root`` is outside it."""

    root: Path
    ws: Path
    outside: Path
    sentinel: Path
    evil_twin: Path
    moved: Path
    tools: Tools

    def sentinel_state(self) -> tuple[str, int, int, int]:
        info = self.sentinel.stat()
        return self.sentinel.read_text(), info.st_ino, info.st_size, info.st_mtime_ns


@pytest.fixture
def sandbox(tmp_path: Path) -> Sandbox:
    return make_sandbox(tmp_path)


@pytest.fixture
def unconfined_sandbox(tmp_path: Path) -> Sandbox:
    """`sandbox`, with shell commands run unconfined (no PID namespace: tests of the process
    tree read the host's pids the command writes, and signal them)."""
    return make_sandbox(tmp_path, {"local_tools": {"shell_sandbox": {"backend": "none"}}})


def make_sandbox(tmp_path: Path, defaults: Mapping[str, Any] | None = None) -> Sandbox:
    ws, outside, moved = tmp_path / "ws", tmp_path / "outside", tmp_path / "moved"
    # A sibling whose name starts with the workspace's: a string prefix check would let it in.
    evil_twin = tmp_path / "ws-evil"
    for folder in (ws, outside, moved, evil_twin):
        folder.mkdir()
    sentinel = outside / "secret.txt"
    sentinel.write_text(SENTINEL_TEXT + "\n")
    (evil_twin / "secret.txt").write_text(SENTINEL_TEXT + " twin\n")
    return Sandbox(tmp_path, ws, outside, sentinel, evil_twin, moved, Tools(ws, defaults))


# --------------------------------------------------------------------------- inotify


_IN_ACCESS, _IN_MODIFY, _IN_ATTRIB, _IN_CLOSE_WRITE = 0x1, 0x2, 0x4, 0x8
_IN_OPEN, _IN_MOVED_FROM, _IN_MOVED_TO, _IN_CREATE = 0x20, 0x40, 0x80, 0x100
_IN_DELETE, _IN_DELETE_SELF, _IN_MOVE_SELF = 0x200, 0x400, 0x800
_IN_NONBLOCK, _IN_CLOEXEC = os.O_NONBLOCK, os.O_CLOEXEC
_WATCHED = (
    _IN_ACCESS
    | _IN_MODIFY
    | _IN_ATTRIB
    | _IN_CLOSE_WRITE
    | _IN_OPEN
    | _IN_MOVED_FROM
    | _IN_MOVED_TO
    | _IN_CREATE
    | _IN_DELETE
    | _IN_DELETE_SELF
    | _IN_MOVE_SELF
)


class Untouched:
    """Kernel proof (inotify) that nothing opened, read, changed or created the watched paths."""

    def __init__(self, *paths: Path) -> None:
        self._libc = ctypes.CDLL(None, use_errno=True)
        self.fd: int = self._libc.inotify_init1(_IN_NONBLOCK | _IN_CLOEXEC)
        if self.fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1 failed")
        for path in paths:
            if self._libc.inotify_add_watch(self.fd, os.fsencode(path), _WATCHED) < 0:
                raise OSError(ctypes.get_errno(), f"inotify_add_watch {path} failed")

    def events(self) -> list[int]:
        """The masks of the events seen so far."""
        masks: list[int] = []
        try:
            data = os.read(self.fd, 65536)
        except BlockingIOError:
            return masks
        offset = 0
        while offset + 16 <= len(data):
            mask = int.from_bytes(data[offset + 4 : offset + 8], "little")
            length = int.from_bytes(data[offset + 12 : offset + 16], "little")
            masks.append(mask)
            offset += 16 + length
        return masks

    def close(self) -> None:
        os.close(self.fd)


@pytest.fixture
def untouched() -> Iterator[list[Untouched]]:
    watchers: list[Untouched] = []
    yield watchers
    for watcher in watchers:
        watcher.close()


# --------------------------------------------------------------------------- processes


def processes_with(marker: str) -> list[int]:
    """The host pids of the live (not zombie) processes whose command line holds ``marker``."""
    found: list[int] = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as file:
                cmdline = file.read().replace(b"\0", b" ").decode("utf-8", "replace")
            with open(f"/proc/{entry}/stat") as file:
                state = file.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker in cmdline and state != "Z" and int(entry) != os.getpid():
            found.append(int(entry))
    return found
