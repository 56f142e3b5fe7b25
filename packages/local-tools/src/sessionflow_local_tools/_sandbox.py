"""The confinement of `run_shell_command`: bubblewrap where it works, Landlock otherwise.

**bubblewrap** (``bwrap``, the first choice). Inside its sandbox the workspace is
read-write and the rest of the file system read-only; the user's home outside the
workspace (so ``~/.ssh`` and ``~/.sessionflow``) is hidden behind an empty tmpfs, ``/tmp``
is a fresh tmpfs, ``/proc`` is mounted fresh for the sandbox's own PID namespace
(``/proc/self/root`` is the sandbox's root, not the host's), ``/dev`` holds only the usual
device nodes, the network is off (a new network namespace with only a loopback of its
own), every capability is dropped and ``no_new_privs`` is set, so a setuid helper gains
nothing. `ShellSandbox` widens it: more read-write paths, more read-only or hidden paths,
the network on.

**Landlock** (when ``bwrap`` is missing or cannot create namespaces, and the kernel has
Landlock): the launcher `_landlock_exec` enforces a ruleset built by `landlock_spec`
before it execs the shell: the workspace (and the other writable paths) read-write, the
rest read-only, the hidden paths (the home outside the workspace, ``/tmp``, `HIDDEN_IN_HOME`
and the configured ones) not accessible at all; ``TMPDIR`` is a private folder of the
command's own. With the network off, Landlock ABI 4 and later refuse every TCP bind and
connect; ABI 6 and later also keep abstract unix sockets and signals inside the sandbox.
It drops every capability and sets ``no_new_privs``. What it cannot confine
(`SandboxStatus.unconfined`: UDP, unix sockets that are files, the host's ``/proc``
listing, System V IPC, and TCP before ABI 4) is said in the tool's description, in each
result and under the approval prompt.

Without either (or with ``backend: none``) a command runs unconfined; `sandbox_status`
says so and why, the tool's result says so, and the CLI's call policy asks approval for
every command, whatever the allow list says. It asks too under Landlock when the network
is meant to be off and the kernel cannot refuse TCP (`SandboxStatus.allow_list_applies`).
"""

from __future__ import annotations

import errno
import functools
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from subprocess import TimeoutExpired
from typing import Literal

from sessionflow_local_tools import _landlock_exec
from sessionflow_local_tools._settings import ShellSandbox

__all__ = [
    "HIDDEN_IN_HOME",
    "SandboxStatus",
    "bwrap_argv",
    "forget_probes",
    "landlock_argv",
    "landlock_spec",
    "sandbox_status",
]

_PROBE_TIMEOUT = 10.0
HIDDEN_IN_HOME = (".ssh", ".gnupg", ".sessionflow")
"""Folders of the home hidden even when the home itself is not (``hide_home`` false)."""
LANDLOCK_DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty")
"""The device files a command under Landlock may write (the rest of ``/dev`` is read-only)."""

Confinement = Literal["bubblewrap", "landlock"]


@dataclass(frozen=True)
class SandboxStatus:
    """Which sandbox commands run in (`backend`), or why there is none (`reason`).

    Attributes:
        backend: ``bubblewrap``, ``landlock``, or None: commands run unconfined.
        reason: Why there is no sandbox; under Landlock chosen by ``auto``, why not bubblewrap.
        bwrap: The ``bwrap`` to run (bubblewrap only).
        landlock_abi: The kernel's Landlock ABI version (Landlock only).
        unconfined: What the sandbox leaves unconfined, in words (Landlock only).
        network_confined: False when the network is meant to be off and the sandbox
            cannot refuse TCP (Landlock before ABI 4).
    """

    backend: Confinement | None
    reason: str = ""
    bwrap: str | None = None
    landlock_abi: int = 0
    unconfined: tuple[str, ...] = ()
    network_confined: bool = True

    @property
    def available(self) -> bool:
        return self.backend is not None

    @property
    def allow_list_applies(self) -> bool:
        """Whether the shell allow list may lift approval: only in a sandbox that confines
        what its configuration asks (files, and the network when it is off)."""
        return self.backend is not None and self.network_confined

    @property
    def label(self) -> str:
        """``sandboxed (bubblewrap)``, ``sandboxed (landlock)`` or ``not sandboxed``."""
        return "not sandboxed" if self.backend is None else f"sandboxed ({self.backend})"


def sandbox_status(sandbox: ShellSandbox) -> SandboxStatus:
    """The sandbox `sandbox.backend` picks on this machine, probed once per process and setting."""
    return _status(sandbox.backend, sandbox.bwrap, sandbox.network)


def forget_probes() -> None:
    """Decide again on the next `sandbox_status` (bwrap is probed again; Landlock, a
    property of the running kernel, is not)."""
    _status.cache_clear()
    _probe_bwrap.cache_clear()


@functools.cache
def _status(backend: str, bwrap: str, network: bool) -> SandboxStatus:
    if backend == "none":
        return SandboxStatus(None, "the configuration switches the sandbox off (backend: none)")
    why_not_bwrap = ""
    if backend in ("auto", "bubblewrap"):
        found, why_not_bwrap = _probe_bwrap(bwrap)
        if found is not None:
            return SandboxStatus("bubblewrap", bwrap=found)
        if backend == "bubblewrap":
            return SandboxStatus(None, why_not_bwrap)
    abi, why_not_landlock = _probe_landlock()
    if abi < 1:
        reason = why_not_landlock if backend == "landlock" else f"{why_not_bwrap}, and {why_not_landlock}"
        return SandboxStatus(None, reason)
    return SandboxStatus(
        "landlock",
        why_not_bwrap,
        landlock_abi=abi,
        unconfined=_landlock_gaps(abi, network),
        network_confined=network or abi >= 4,
    )


def _landlock_gaps(abi: int, network: bool) -> tuple[str, ...]:
    gaps: list[str] = []
    if not network:
        if abi < 4:
            gaps.append(f"the network (Landlock ABI {abi} cannot refuse TCP; it takes ABI 4)")
        else:
            gaps.append("UDP and other sockets that are not TCP")
        if abi < 6:
            gaps.append("abstract unix sockets")
    gaps.append("unix sockets that are files (a command can connect to one that exists)")
    if abi < 6:
        gaps.append("signals to the worker's other processes")
    gaps.append("/proc lists the host's processes (not their memory or environment)")
    gaps.append("System V IPC")
    return tuple(gaps)


@functools.cache
def _probe_bwrap(bwrap: str) -> tuple[str | None, str]:
    found = shutil.which(bwrap)
    if found is None:
        return None, f"bubblewrap ({bwrap}) is not installed"
    try:
        probe = subprocess.run(
            [found, "--ro-bind", "/", "/", "--unshare-all", "--die-with-parent", "--", "true"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=_PROBE_TIMEOUT,
            check=False,
        )
    except (OSError, TimeoutExpired) as error:
        return None, f"bubblewrap ({found}) could not be run: {error}"
    if probe.returncode != 0:
        detail = probe.stderr.decode("utf-8", "replace").strip() or f"exit code {probe.returncode}"
        return None, f"bubblewrap ({found}) cannot create its namespaces here: {detail}"
    return found, ""


@functools.cache
def _probe_landlock() -> tuple[int, str]:
    """The kernel's Landlock ABI when the launcher can enforce a ruleset here, else 0 and why not."""
    abi = _landlock_exec.abi_version()
    if abi == -errno.ENOSYS:
        return 0, "Landlock is not built into this kernel (landlock_create_ruleset: ENOSYS)"
    if abi == -errno.EOPNOTSUPP:
        return 0, (
            "Landlock is built into this kernel but not enabled (it is missing from the lsm= boot "
            f"parameter{_enabled_lsms()})"
        )
    if abi < 1:
        return 0, f"Landlock is not usable here (landlock_create_ruleset: {os.strerror(-abi)})"
    spec = {"abi": abi, "read": ["/"], "tcp": abi < 4}
    try:
        probe = subprocess.run(
            [*_launcher(json.dumps(spec)), "true"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=_PROBE_TIMEOUT,
            check=False,
        )
    except (OSError, TimeoutExpired) as error:
        return 0, f"the Landlock launcher could not be run: {error}"
    if probe.returncode != 0:
        detail = probe.stderr.decode("utf-8", "replace").strip() or f"exit code {probe.returncode}"
        return 0, f"Landlock cannot be enforced here: {detail}"
    return abi, ""


def _enabled_lsms() -> str:
    """``; enabled: ...`` from /sys/kernel/security/lsm when securityfs is mounted, else empty."""
    try:
        with open("/sys/kernel/security/lsm") as file:
            return f"; enabled: {file.read().strip()}"
    except OSError:
        return ""


def _launcher(spec: str) -> list[str]:
    return [sys.executable, "-I", "-S", _landlock_exec.__file__, spec, "--"]


def landlock_argv(
    status: SandboxStatus, sandbox: ShellSandbox, workspace: Path, home: Path | None, tmpdir: Path
) -> list[str]:
    """The launcher's command line (up to and including ``--``) that confines one command."""
    return _launcher(json.dumps(landlock_spec(status, sandbox, workspace, home, tmpdir)))


def landlock_spec(
    status: SandboxStatus, sandbox: ShellSandbox, workspace: Path, home: Path | None, tmpdir: Path
) -> dict[str, object]:
    """The launcher's ruleset for one command (`_landlock_exec` describes the keys).

    Landlock only grants, and a right granted on a folder holds for its whole tree, so a
    hidden path is carved out by granting its siblings instead of a folder above it
    (`_trees`): the folders on the way to a hidden path get no right of their own (they
    cannot be listed, and nothing new can be made directly in them). The hidden paths of
    the home (`HIDDEN_IN_HOME`) and the configured ones win over every grant, as under
    bubblewrap; the home and ``/tmp`` are hidden only from the read-only rest, so a
    workspace, a writable or a read-only path inside them is reachable. ``tmpdir`` (a
    private folder made for this command) is writable and the command's ``TMPDIR``.
    """
    secrets = [home / name for name in HIDDEN_IN_HOME] if home is not None else []
    strong = [os.path.realpath(p) for p in (*secrets, *sandbox.hidden) if os.path.lexists(p)]
    weak = [os.path.realpath("/tmp")]
    if sandbox.hide_home and home is not None:
        weak.append(os.path.realpath(home))
    read = _trees("/", [*strong, *weak])
    for path in sandbox.read_only:
        read += _trees(str(path), strong)
    write: list[str] = []
    for path in (workspace, *sandbox.writable, tmpdir):
        write += _trees(str(path), strong)
    return {
        "abi": status.landlock_abi,
        "read": read,
        "write": write,
        "devices": [p for p in LANDLOCK_DEVICES if os.path.exists(p)],
        "tcp": sandbox.network or status.landlock_abi < 4,  # before ABI 4 it cannot be refused
        "scope_unix": not sandbox.network,
        "env": {"TMPDIR": str(tmpdir)},
    }


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _trees(root: str, excluded: list[str]) -> list[str]:
    """``root``'s tree without the ``excluded`` trees, as the fewest whole trees.

    A symbolic link on the way is left out (its target is granted, or not, where it is);
    so is a path that does not exist.
    """
    if not os.path.lexists(root):
        return []
    real = os.path.realpath(root)
    if any(_within(real, hidden) for hidden in excluded):
        return []
    if not any(_within(hidden, real) for hidden in excluded):
        return [real]
    trees: list[str] = []
    try:
        names = sorted(os.listdir(real))
    except OSError:
        return []
    for name in names:
        path = os.path.join(real, name)
        if not os.path.islink(path):
            trees += _trees(path, excluded)
    return trees


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
