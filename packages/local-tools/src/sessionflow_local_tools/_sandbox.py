"""The confinement of `run_shell_command`: a bubblewrap (``bwrap``) sandbox around each command.

Inside the sandbox the workspace is read-write and the rest of the file system read-only;
the user's home outside the workspace (so ``~/.ssh`` and ``~/.sessionflow``) is hidden
behind an empty tmpfs, ``/tmp`` is a fresh tmpfs, ``/proc`` is mounted fresh for the
sandbox's own PID namespace (``/proc/self/root`` is the sandbox's root, not the host's),
``/dev`` holds only the usual device nodes, the network is off (a new network namespace
with only a loopback of its own), every capability is dropped and ``no_new_privs`` is set,
so a setuid helper gains nothing. `ShellSandbox` widens it: more read-write paths, more
read-only or hidden paths, the network on.

Without a working ``bwrap`` (not installed, or unable to create namespaces on this
machine) a command runs unconfined; `sandbox_status` says so, the tool's result says so,
and the CLI's call policy asks approval for every command, whatever the allow list says.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from sessionflow_local_tools._settings import ShellSandbox

__all__ = ["HIDDEN_IN_HOME", "SandboxStatus", "bwrap_argv", "sandbox_status"]

_PROBE_TIMEOUT = 10.0
HIDDEN_IN_HOME = (".ssh", ".gnupg", ".sessionflow")
"""Folders of the home hidden even when the home itself is not (``hide_home`` false)."""


@dataclass(frozen=True)
class SandboxStatus:
    """Whether commands run sandboxed: the ``bwrap`` to use, or why there is none."""

    bwrap: str | None
    reason: str = ""

    @property
    def available(self) -> bool:
        return self.bwrap is not None


def sandbox_status(sandbox: ShellSandbox) -> SandboxStatus:
    """Whether ``sandbox.bwrap`` is installed and can create its namespaces here (cached)."""
    return _probe(sandbox.bwrap)


@functools.cache
def _probe(bwrap: str) -> SandboxStatus:
    found = shutil.which(bwrap)
    if found is None:
        return SandboxStatus(None, f"bubblewrap ({bwrap}) is not installed")
    try:
        probe = subprocess.run(
            [found, "--ro-bind", "/", "/", "--unshare-all", "--die-with-parent", "--", "true"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=_PROBE_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return SandboxStatus(None, f"bubblewrap ({found}) could not be run: {error}")
    if probe.returncode != 0:
        detail = probe.stderr.decode("utf-8", "replace").strip() or f"exit code {probe.returncode}"
        return SandboxStatus(None, f"bubblewrap ({found}) cannot create its namespaces here: {detail}")
    return SandboxStatus(found)


def bwrap_argv(bwrap: str, sandbox: ShellSandbox, workspace: Path, home: Path | None) -> list[str]:
    """The ``bwrap`` command line (up to and including ``--``) that confines one command.

    Mounts are applied in order, so a later one wins over an earlier one on the same path:
    the read-only root; the fresh ``/dev``, ``/proc`` and ``/tmp``; the home hidden behind an
    empty tmpfs; the read-only paths; the workspace and the other read-write paths; and
    last the hidden paths (`HIDDEN_IN_HOME` and the configured ones), so a secret stays
    hidden inside a folder exposed again. A hidden folder is an empty tmpfs (what a command
    writes there vanishes with it), a hidden file reads as empty.
    """
    argv = [
        bwrap,
        "--ro-bind", "/", "/",
        "--dev", "/dev",
        "--proc", "/proc",
        "--tmpfs", "/tmp",
        "--unshare-user-try",
        "--unshare-ipc",
        "--unshare-pid",
        "--unshare-uts",
        "--unshare-cgroup-try",
    ]  # fmt: skip
    if not sandbox.network:
        argv.append("--unshare-net")
    argv += ["--die-with-parent", "--new-session", "--cap-drop", "ALL"]
    if sandbox.hide_home and home is not None:
        argv += _hide(home)
    for path in sandbox.read_only:
        if os.path.lexists(path):
            argv += ["--ro-bind", str(path), str(path)]
    for path in (workspace, *sandbox.writable):
        if os.path.lexists(path):
            argv += ["--bind", str(path), str(path)]
    secrets = (home / name for name in HIDDEN_IN_HOME) if home is not None else ()
    for path in (*secrets, *sandbox.hidden):
        argv += _hide(path)
    argv += ["--chdir", str(workspace), "--"]
    return argv


def _hide(path: Path) -> list[str]:
    if path.is_dir():
        return ["--tmpfs", str(path)]
    if os.path.lexists(path):
        return ["--ro-bind", os.devnull, str(path)]
    return []
