"""The tool groups and the settings one call of a local tool runs under."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Literal, get_args

__all__ = [
    "BROWSER_IDLE_SECONDS",
    "SANDBOX_BACKENDS",
    "LocalToolGroup",
    "LocalToolSettings",
    "SandboxBackend",
    "ShellSandbox",
]


BROWSER_IDLE_SECONDS = 15 * 60.0
"""Seconds a session's browser page stays open on a worker without being used."""


SandboxBackend = Literal["auto", "bubblewrap", "landlock", "none"]
SANDBOX_BACKENDS: tuple[SandboxBackend, ...] = get_args(SandboxBackend)


class LocalToolGroup(StrEnum):
    """A group of local tools that configuration switches on or off as a whole."""

    FILES = "files"
    SHELL = "shell"
    WEB_FETCH = "web_fetch"
    BROWSER = "browser"


@dataclass(frozen=True)
class ShellSandbox:
    """How `run_shell_command` is confined (`_sandbox`); the defaults are the narrowest.

    Attributes:
        network: Whether commands may use the network (else only a loopback of their own).
        writable: Absolute paths writable besides the workspace.
        read_only: Absolute paths readable again inside a hidden one (e.g. a folder of
            the home when ``hide_home`` is on).
        hidden: Absolute paths hidden besides the home's `HIDDEN_IN_HOME` folders.
        hide_home: Hide the user's home (outside the workspace) behind an empty folder.
        bwrap: The bubblewrap executable, a name looked up on PATH or a path. Whether it
            works is probed once per process and name.
        backend: ``auto`` (bubblewrap where it works, else Landlock where the kernel has
            it, else unconfined), ``bubblewrap`` or ``landlock`` (that one or unconfined),
            ``none`` (unconfined). Unconfined, every command asks approval.

    A configured path that does not exist when a command starts is left out.
    """

    network: bool = False
    writable: tuple[Path, ...] = ()
    read_only: tuple[Path, ...] = ()
    hidden: tuple[Path, ...] = ()
    hide_home: bool = True
    bwrap: str = "bwrap"
    backend: SandboxBackend = "auto"

    def __post_init__(self) -> None:
        if self.backend not in SANDBOX_BACKENDS:
            raise ValueError(
                f"unknown sandbox backend {self.backend!r}: one of {', '.join(SANDBOX_BACKENDS)}"
            )


@dataclass(frozen=True)
class LocalToolSettings:
    """What the worker's configuration, narrowed by one turn's session settings, allows.

    Attributes:
        groups: The groups that are switched on; a tool of any other group refuses to run.
        shell_timeout: Default seconds before a shell command's process group is killed
            (at most `MAX_SHELL_TIMEOUT`).
        shell_sandbox: How shell commands are confined (`ShellSandbox`).

    Approval is not here: a handler cannot see whether a person approved its call, so the
    shell allow list and ``approval.always`` belong to the session's call policy.
    """

    groups: frozenset[LocalToolGroup]
    shell_timeout: float = 120.0
    shell_sandbox: ShellSandbox = field(default_factory=ShellSandbox)
