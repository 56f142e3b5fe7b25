"""`run_shell_command` inside bubblewrap: attacks that are refused or contained, real processes.

Each attack runs through the tool as the model would call it, with a fake ``HOME`` outside
the workspace, and checks the host afterwards. Where an assertion could pass for a wrong
reason (a file missing because the command never ran), the same command's effect on the
host is checked unconfined first, or the command also proves it ran.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import sys
import threading
import uuid
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from sessionflow import ToolEffect, ToolPolicy
from sessionflow.kit import DeferredToolCall
from sessionflow.testing import wait_until
from sessionflow_cli._local_tools import shell_sandbox_note
from sessionflow_cli._policy import build_call_policy
from sessionflow_cli.config import LocalToolsConfig, SandboxConfig, ShellConfig, TurnConfig
from sessionflow_local_tools import (
    HIDDEN_IN_HOME,
    SHELL_TOOL,
    ShellSandbox,
    build_local_tools,
    sandbox_status,
)
from tests.local_tools.conftest import MISSING_BWRAP, Sandbox, Tools, processes_with, resolve_settings

pytestmark = pytest.mark.skipif(
    not sandbox_status(ShellSandbox()).available, reason="bubblewrap is not usable on this machine"
)

KEY_TEXT = "FAKE-PRIVATE-KEY-7f3a9c"


@pytest.fixture
def home(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fake home outside the workspace and outside /tmp (a tmpfs of its own inside the
    sandbox), with an SSH key, sessionflow state and a plain file."""
    home = Path("/var/tmp") / f"sessionflow-test-home-{uuid.uuid4().hex[:8]}"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text(KEY_TEXT + "\n")
    (home / ".sessionflow").mkdir()
    (home / ".sessionflow" / "state").write_text(KEY_TEXT + " state\n")
    (home / "notes.txt").write_text(KEY_TEXT + " notes\n")
    monkeypatch.setenv("HOME", str(home))
    try:
        yield home
    finally:
        shutil.rmtree(home, ignore_errors=True)


def on_host(path: str) -> bool:
    return Path(path).exists()


def settings(**sandbox: Any) -> dict[str, Any]:
    return {"local_tools": {"shell_sandbox": sandbox}}


def stdout_of(text: str) -> str:
    if "--- stdout ---\n" not in text:
        return ""
    return text.split("--- stdout ---\n", 1)[1].split("\n--- stderr", 1)[0]


@pytest.fixture
def listener() -> Iterator[tuple[int, list[socket.socket]]]:
    """A real TCP server on 127.0.0.1 of the host; yields its port and the connections it got."""
    server = socket.create_server(("127.0.0.1", 0))
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def serve() -> None:
        server.settimeout(0.1)
        while not stop.is_set():
            try:
                connection, _ = server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            accepted.append(connection)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1], accepted
    finally:
        stop.set()
        thread.join(5)
        server.close()
        for connection in accepted:
            connection.close()


# The system's interpreter: this run's own may live under /tmp or a home folder, which the
# sandbox replaces, and a command that cannot start proves nothing about the network.
SANDBOX_PYTHON = shutil.which("python3", path="/usr/local/bin:/usr/bin:/bin") or sys.executable


def connect_command(port: int) -> str:
    code = f"import socket; print('STARTED', flush=True); socket.create_connection(('127.0.0.1', {port}), timeout=5); print('CONNECTED')"
    return f'{SANDBOX_PYTHON} -I -S -c "{code}"'


# --------------------------------------------------------------------------- file system


async def test_writes_outside_the_workspace_do_not_land_on_the_host(
    sandbox: Sandbox, home: Path, tmp_path: Path
) -> None:
    name = f"sandbox-outside-{uuid.uuid4().hex[:8]}"
    # /var/tmp is on the host's root file system (read-only inside); /tmp is the sandbox's own.
    targets = [home / "x", Path("/tmp") / name, sandbox.outside / "new", Path("/var/tmp") / name]
    command = "; ".join(f"touch {t}" for t in targets) + "; touch inside; echo ran"
    text = await sandbox.tools.call("run_shell_command", command=command)
    assert "ran" in stdout_of(text)
    assert (sandbox.ws / "inside").exists()  # the workspace is writable
    assert "Read-only file system" in text  # /var/tmp was refused, not just hidden
    for target in targets:
        assert not target.exists(), f"{target} was written on the host"
    assert sandbox.sentinel.read_text().startswith("TOP-SECRET")


async def test_the_same_writes_land_without_the_sandbox(sandbox: Sandbox, home: Path) -> None:
    # The control of the test above: unconfined, the very same command does write outside.
    target = sandbox.outside / "new"
    text = await sandbox.tools.call(
        "run_shell_command", command=f"touch {target}", settings=settings(bwrap=MISSING_BWRAP)
    )
    assert "[not sandboxed: bubblewrap (/nonexistent/bwrap) is not installed" in text
    assert target.exists()


async def test_the_home_and_its_secrets_are_hidden(sandbox: Sandbox, home: Path) -> None:
    command = "cat ~/.ssh/id_rsa $HOME/.sessionflow/state ~/notes.txt; ls -a ~ ~/.ssh; echo ran"
    text = await sandbox.tools.call("run_shell_command", command=command)
    assert "ran" in stdout_of(text)
    assert KEY_TEXT not in text
    # With the home shown, its secret folders stay hidden.
    shown = await sandbox.tools.call("run_shell_command", command=command, settings=settings(hide_home=False))
    assert f"{KEY_TEXT} notes" in shown
    assert f"{KEY_TEXT}\n" not in shown and f"{KEY_TEXT} state" not in shown
    assert set(HIDDEN_IN_HOME) >= {".ssh", ".sessionflow"}


async def test_proc_self_root_and_the_workers_root_lead_nowhere(sandbox: Sandbox, home: Path) -> None:
    escapes = [
        f"/proc/self/root{sandbox.outside}/via-self",
        f"/proc/1/root{sandbox.outside}/via-init",
        f"/proc/{os.getpid()}/root{sandbox.outside}/via-worker",
        f"/proc/self/root/var/tmp/via-self-{uuid.uuid4().hex[:8]}",
    ]
    command = "; ".join(f"echo x > {path}" for path in escapes)
    command += f"; cat /proc/{os.getpid()}/root{sandbox.sentinel} /proc/1/root{sandbox.sentinel}; echo ran"
    text = await sandbox.tools.call("run_shell_command", command=command)
    assert "ran" in stdout_of(text)
    assert "TOP-SECRET" not in text
    # A fresh /proc of the sandbox's own PID namespace: no host process (this test's
    # pytest, the worker) is there to reach through.
    listing = await sandbox.tools.call("run_shell_command", command="ls /proc | grep -c '^[0-9]'")
    assert "exit code 0" in listing
    assert int(stdout_of(listing)) < 10 < len(processes_with(""))  # the host has far more
    for name in ("via-self", "via-init", "via-worker"):
        assert not (sandbox.outside / name).exists()
    assert not on_host(escapes[3].removeprefix("/proc/self/root"))


async def test_an_extra_writable_path_is_writable(sandbox: Sandbox, home: Path, tmp_path: Path) -> None:
    extra = tmp_path / "extra"
    extra.mkdir()
    refused = await sandbox.tools.call("run_shell_command", command=f"touch {extra}/no")
    assert "exit code 0" not in refused and not (extra / "no").exists()
    text = await sandbox.tools.call(
        "run_shell_command", command=f"touch {extra}/yes", settings=settings(writable=[str(extra)])
    )
    assert "exit code 0" in text
    assert (extra / "yes").exists()


async def test_an_extra_hidden_path_is_hidden(sandbox: Sandbox, home: Path) -> None:
    private = sandbox.ws / "private"
    private.mkdir()
    (private / "key").write_text(KEY_TEXT + " private\n")
    shown = await sandbox.tools.call("run_shell_command", command="cat private/key")
    assert f"{KEY_TEXT} private" in shown
    text = await sandbox.tools.call(
        "run_shell_command", command="cat private/key; echo ran", settings=settings(hidden=[str(private)])
    )
    assert "ran" in stdout_of(text) and KEY_TEXT not in text


# --------------------------------------------------------------------------- network


async def test_no_network_by_default(
    sandbox: Sandbox, home: Path, listener: tuple[int, list[socket.socket]]
) -> None:
    port, accepted = listener
    text = await sandbox.tools.call("run_shell_command", command=connect_command(port))
    assert "STARTED" in stdout_of(text), text  # the interpreter ran: the network refused it
    assert "CONNECTED" not in stdout_of(text)
    assert "exit code 0" not in text
    # A connection that got through would have printed CONNECTED before the command ended.
    assert accepted == []


async def test_network_allowed_by_the_configuration(
    sandbox: Sandbox, home: Path, listener: tuple[int, list[socket.socket]]
) -> None:
    port, accepted = listener
    text = await sandbox.tools.call(
        "run_shell_command", command=connect_command(port), settings=settings(network=True)
    )
    assert "exit code 0" in text and "CONNECTED" in stdout_of(text)
    await wait_until("the listener accepted the connection", lambda: accepted, timeout=5)
    assert len(accepted) == 1


# --------------------------------------------------------------------------- privileges


async def test_no_capabilities_and_no_new_privileges(sandbox: Sandbox, home: Path) -> None:
    text = await sandbox.tools.call(
        "run_shell_command", command="grep -E '^(CapEff|CapPrm|NoNewPrivs):' /proc/self/status"
    )
    fields = dict(line.split(":\t") for line in stdout_of(text).splitlines())
    assert fields == {"CapEff": "0000000000000000", "CapPrm": "0000000000000000", "NoNewPrivs": "1"}


@pytest.mark.skipif(os.geteuid() != 0, reason="making a setuid helper of another user needs root")
async def test_a_setuid_helper_gains_nothing(sandbox: Sandbox, home: Path) -> None:
    # A setuid copy of `id` owned by nobody: run it and the effective uid becomes nobody's.
    helper = sandbox.ws / "setuid-id"
    shutil.copy2("/usr/bin/id", helper)
    os.chown(helper, 65534, 65534)
    os.chmod(helper, 0o4755)
    control = await sandbox.tools.call(
        "run_shell_command", command="./setuid-id -u", settings=settings(bwrap=MISSING_BWRAP)
    )
    assert stdout_of(control) == "65534", "the setuid bit does not work here: the test proves nothing"
    text = await sandbox.tools.call("run_shell_command", command="./setuid-id -u")
    assert stdout_of(text) == str(os.geteuid())  # the setuid bit is ignored inside
    # Root inside has no capabilities: no changing owners, no switching users.
    (sandbox.ws / "mine").write_text("x")
    denied = await sandbox.tools.call(
        "run_shell_command", command="chown 65534 mine; su nobody -s /bin/sh -c 'id -u'; echo ran"
    )
    assert "ran" in stdout_of(denied)
    assert (sandbox.ws / "mine").stat().st_uid == os.geteuid()
    assert "65534" not in stdout_of(denied)


# --------------------------------------------------------------------------- processes


async def test_no_daemon_outlives_the_call(sandbox: Sandbox, home: Path) -> None:
    marker = f"sandbox-daemon-{uuid.uuid4().hex[:8]}"
    daemon = f"sh -c 'sleep 300; :' {marker}"
    command = f"({daemon} &) ; setsid {daemon} & sleep 2; echo spawned"
    call = asyncio.create_task(sandbox.tools.call("run_shell_command", command=command))
    # Both daemons must be seen running first, or the last assertion proves nothing.
    await wait_until("both daemons running", lambda: len(processes_with(marker)) >= 2, timeout=5)
    text = await call
    assert "spawned" in stdout_of(text)
    assert processes_with(marker) == []


# --------------------------------------------------------------------------- no sandbox


def _turn(sandbox: SandboxConfig, allow: tuple[str, ...]) -> TurnConfig:
    return TurnConfig(
        model="m",
        instructions=None,
        workspace=Path("."),
        local_tools=LocalToolsConfig(shell=ShellConfig(allow=allow, sandbox=sandbox)),
        connectors=(),
        approval_always=frozenset(),
    )


def _needs_approval(sandbox: SandboxConfig, command: str) -> bool:
    turn = _turn(sandbox, allow=("ls",))
    specs = build_local_tools(Path("."), resolve_settings)

    def resolve(_: Mapping[str, Any]) -> TurnConfig:
        return turn

    policy = build_call_policy(specs, resolve)
    call = DeferredToolCall(
        tool_call_id="c1",
        tool_name=SHELL_TOOL,
        arguments=f'{{"command": "{command}"}}',
        policy=ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE),
    )
    return policy(call, {}).is_approval_required


async def test_without_a_sandbox_every_command_asks_and_says_so(sandbox: Sandbox, home: Path) -> None:
    assert not _needs_approval(SandboxConfig(), "ls")  # sandboxed: the allow list holds
    assert _needs_approval(SandboxConfig(), "rm -rf x")
    missing = SandboxConfig(bwrap=MISSING_BWRAP)
    assert _needs_approval(missing, "ls")  # unsandboxed: even an allowed command asks
    assert _needs_approval(missing, "rm -rf x")

    def description(bwrap: str) -> str:
        specs = build_local_tools(sandbox.ws, resolve_settings, ShellSandbox(bwrap=bwrap))
        return next(s.description for s in specs if s.name == SHELL_TOOL)

    assert "It runs sandboxed" in description("bwrap")
    assert "NOT sandboxed" not in description("bwrap")
    unsandboxed = description(MISSING_BWRAP)
    assert "It runs NOT sandboxed (bubblewrap (/nonexistent/bwrap) is not installed)" in unsandboxed
    assert "Every command is approved by the user first." in unsandboxed
    text = await sandbox.tools.call(
        "run_shell_command", command="true", settings=settings(bwrap=MISSING_BWRAP)
    )
    assert "[not sandboxed: " in text
    assert "[not sandboxed" not in await sandbox.tools.call("run_shell_command", command="true")


async def test_a_workspace_inside_the_hidden_home_stays_writable(home: Path) -> None:
    # The usual case: the workspace is a folder of the home, which is hidden around it.
    ws = home / "project"
    ws.mkdir()
    tools = Tools(ws)
    command = "touch made; cat ~/notes.txt ~/.ssh/id_rsa; ls -A ~ ~/.ssh; echo ran"
    text = await tools.call("run_shell_command", command=command)
    assert "ran" in stdout_of(text)
    assert (ws / "made").exists()
    assert KEY_TEXT not in text
    # The home is empty but for the mount points of the workspace and the hidden folders.
    assert "notes.txt" not in stdout_of(text) and "id_rsa" not in stdout_of(text)
    assert "project" in stdout_of(text)


def test_the_approval_prompt_says_whether_the_command_is_sandboxed() -> None:
    assert shell_sandbox_note(SandboxConfig()) == (
        "(runs sandboxed: workspace writable, the rest read-only, home hidden, no network)"
    )
    assert shell_sandbox_note(SandboxConfig(network=True)) == (
        "(runs sandboxed: workspace writable, the rest read-only; network on)"
    )
    assert shell_sandbox_note(SandboxConfig(bwrap=MISSING_BWRAP)) == (
        "(runs NOT sandboxed: bubblewrap (/nonexistent/bwrap) is not installed)"
    )
