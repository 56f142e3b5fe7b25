"""`run_shell_command` sandboxed: attacks that are refused or contained, real processes.

Every attack runs under each backend, bubblewrap and Landlock (forced with ``backend``),
through the tool as the model would call it, with a fake ``HOME`` outside the workspace,
and checks the host afterwards. Where an assertion could pass for a wrong reason (a file
missing because the command never ran), the same command's effect on the host is checked
unconfined first, or the command also proves it ran. A backend this machine cannot run
is skipped with the reason `sandbox_status` gives (for Landlock: the kernel's answer to
``landlock_create_ruleset``, or why the launcher could not enforce a ruleset).
"""

from __future__ import annotations

import asyncio
import dataclasses
import errno
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import uuid
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, cast

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
    SandboxBackend,
    ShellSandbox,
    build_local_tools,
    sandbox_status,
)
from sessionflow_local_tools import _landlock_exec as landlock_exec
from sessionflow_local_tools import _sandbox as sandbox_module
from sessionflow_local_tools._sandbox import SandboxStatus, bwrap_argv, landlock_spec
from tests.local_tools.conftest import (
    MISSING_BWRAP,
    Sandbox,
    Tools,
    make_sandbox,
    processes_with,
    resolve_settings,
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


BACKENDS: tuple[SandboxBackend, ...] = ("bubblewrap", "landlock")
REFUSED = {"bubblewrap": "Read-only file system", "landlock": "Permission denied"}
"""How each backend refuses a write to the read-only rest of the file system."""
UNCONFINED: dict[str, Any] = {"local_tools": {"shell_sandbox": {"backend": "none"}}}


def unusable(backend: SandboxBackend) -> str | None:
    """Why ``backend`` cannot run here, or None when it can."""
    status = sandbox_status(ShellSandbox(backend=backend))
    return None if status.backend == backend else status.reason


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> SandboxBackend:
    chosen: SandboxBackend = request.param
    why = unusable(chosen)
    if why is not None:
        pytest.skip(f"{chosen} is not usable on this machine: {why}")
    return chosen


@pytest.fixture
def sandbox(tmp_path: Path, backend: SandboxBackend) -> Sandbox:
    """The conftest's workspace, its shell commands under ``backend``."""
    return make_sandbox(tmp_path, settings(backend))


def on_host(path: str) -> bool:
    return Path(path).exists()


def settings(backend: SandboxBackend, **sandbox: Any) -> dict[str, Any]:
    return {"local_tools": {"shell_sandbox": {"backend": backend, **sandbox}}}


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
    sandbox: Sandbox, home: Path, tmp_path: Path, backend: SandboxBackend
) -> None:
    name = f"sandbox-outside-{uuid.uuid4().hex[:8]}"
    # /var/tmp is on the host's root file system (read-only inside); /tmp is the sandbox's
    # own under bubblewrap, hidden under Landlock.
    targets = [home / "x", Path("/tmp") / name, sandbox.outside / "new", Path("/var/tmp") / name]
    command = "; ".join(f"touch {t}" for t in targets) + "; touch inside; echo ran"
    text = await sandbox.tools.call("run_shell_command", command=command)
    assert "ran" in stdout_of(text)
    assert (sandbox.ws / "inside").exists()  # the workspace is writable
    assert REFUSED[backend] in text  # /var/tmp was refused, not just hidden
    for target in targets:
        assert not target.exists(), f"{target} was written on the host"
    assert sandbox.sentinel.read_text().startswith("TOP-SECRET")


async def test_the_same_writes_land_without_the_sandbox(sandbox: Sandbox, home: Path) -> None:
    # The control of the test above: unconfined, the very same command does write outside.
    target = sandbox.outside / "new"
    text = await sandbox.tools.call("run_shell_command", command=f"touch {target}", settings=UNCONFINED)
    assert "[not sandboxed: the configuration switches the sandbox off (backend: none)" in text
    assert target.exists()


async def test_the_home_and_its_secrets_are_hidden(
    sandbox: Sandbox, home: Path, backend: SandboxBackend
) -> None:
    command = "cat ~/.ssh/id_rsa $HOME/.sessionflow/state ~/notes.txt; ls -a ~ ~/.ssh; echo ran"
    text = await sandbox.tools.call("run_shell_command", command=command)
    assert "ran" in stdout_of(text)
    assert KEY_TEXT not in text
    # With the home shown, its secret folders stay hidden.
    shown = await sandbox.tools.call(
        "run_shell_command", command=command, settings=settings(backend, hide_home=False)
    )
    assert f"{KEY_TEXT} notes" in shown
    assert f"{KEY_TEXT}\n" not in shown and f"{KEY_TEXT} state" not in shown
    assert set(HIDDEN_IN_HOME) >= {".ssh", ".sessionflow"}


async def test_proc_self_root_and_the_workers_root_lead_nowhere(
    sandbox: Sandbox, home: Path, backend: SandboxBackend
) -> None:
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
    for name in ("via-self", "via-init", "via-worker"):
        assert not (sandbox.outside / name).exists()
    assert not on_host(escapes[3].removeprefix("/proc/self/root"))
    if backend == "bubblewrap":
        # A fresh /proc of the sandbox's own PID namespace: no host process (this test's
        # pytest, the worker) is there to reach through.
        listing = await sandbox.tools.call("run_shell_command", command="ls /proc | grep -c '^[0-9]'")
        assert "exit code 0" in listing
        assert int(stdout_of(listing)) < 10 < len(processes_with(""))  # the host has far more
    else:
        # Landlock shows the host's /proc (said in its `unconfined`), but a process outside
        # the sandbox is not ptrace-able from inside: no root link, no environment, no memory.
        os.environ["SANDBOX_TEST_SECRET"] = KEY_TEXT  # in this process's environment
        try:
            peek = await sandbox.tools.call(
                "run_shell_command",
                command=f"tr '\\0' '\\n' < /proc/{os.getpid()}/environ; ls /proc/{os.getpid()}/root/; "
                f"head -c 16 /proc/{os.getpid()}/mem; echo ran",
            )
        finally:
            del os.environ["SANDBOX_TEST_SECRET"]
        assert "ran" in stdout_of(peek)
        assert KEY_TEXT not in peek and "Permission denied" in peek
        control = await sandbox.tools.call(
            "run_shell_command", command=f"tr '\\0' '\\n' < /proc/{os.getpid()}/environ", settings=UNCONFINED
        )
        assert "exit code 0" in control  # unconfined the same read works: the sandbox refused it


async def test_an_extra_writable_path_is_writable(
    sandbox: Sandbox, home: Path, tmp_path: Path, backend: SandboxBackend
) -> None:
    extra = tmp_path / "extra"
    extra.mkdir()
    refused = await sandbox.tools.call("run_shell_command", command=f"touch {extra}/no")
    assert "exit code 0" not in refused and not (extra / "no").exists()
    text = await sandbox.tools.call(
        "run_shell_command", command=f"touch {extra}/yes", settings=settings(backend, writable=[str(extra)])
    )
    assert "exit code 0" in text
    assert (extra / "yes").exists()


async def test_an_extra_hidden_path_is_hidden(sandbox: Sandbox, home: Path, backend: SandboxBackend) -> None:
    private = sandbox.ws / "private"
    private.mkdir()
    (private / "key").write_text(KEY_TEXT + " private\n")
    shown = await sandbox.tools.call("run_shell_command", command="cat private/key")
    assert f"{KEY_TEXT} private" in shown
    text = await sandbox.tools.call(
        "run_shell_command",
        command="cat private/key; echo ran",
        settings=settings(backend, hidden=[str(private)]),
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
    sandbox: Sandbox, home: Path, listener: tuple[int, list[socket.socket]], backend: SandboxBackend
) -> None:
    port, accepted = listener
    text = await sandbox.tools.call(
        "run_shell_command", command=connect_command(port), settings=settings(backend, network=True)
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
    control = await sandbox.tools.call("run_shell_command", command="./setuid-id -u", settings=UNCONFINED)
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


def description(workspace: Path, sandbox: ShellSandbox) -> str:
    specs = build_local_tools(workspace, resolve_settings, sandbox)
    return next(s.description for s in specs if s.name == SHELL_TOOL)


@pytest.fixture
def pretend_landlock(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[int, str], None]]:
    """Make `sandbox_status` see a kernel with Landlock ABI ``abi`` (0: none, with ``why``)."""

    def pretend(abi: int, why: str = "") -> None:
        monkeypatch.setattr(sandbox_module, "_probe_landlock", lambda: (abi, why))
        sandbox_module.forget_probes()

    yield pretend
    sandbox_module.forget_probes()


NO_LANDLOCK = "Landlock is not built into this kernel (landlock_create_ruleset: ENOSYS)"


async def test_with_neither_backend_every_command_asks_and_says_so(
    tmp_path: Path, home: Path, pretend_landlock: Callable[[int, str], None]
) -> None:
    pretend_landlock(0, NO_LANDLOCK)
    neither = SandboxConfig(bwrap=MISSING_BWRAP)
    reason = f"bubblewrap ({MISSING_BWRAP}) is not installed, and {NO_LANDLOCK}"
    assert sandbox_status(ShellSandbox(bwrap=MISSING_BWRAP)).reason == reason
    assert _needs_approval(neither, "ls")  # unsandboxed: even an allowed command asks
    assert _needs_approval(neither, "rm -rf x")
    for off in (SandboxConfig(backend="none"), SandboxConfig(backend="landlock")):
        assert _needs_approval(off, "ls")
    unsandboxed = description(tmp_path, ShellSandbox(bwrap=MISSING_BWRAP))
    assert f"It runs NOT sandboxed ({reason})" in unsandboxed
    assert "Every command is approved by the user first." in unsandboxed
    assert shell_sandbox_note(neither) == f"(runs NOT sandboxed: {reason})"
    tools = Tools(tmp_path)
    outside = home / "written-unconfined"
    text = await tools.call(
        "run_shell_command", command=f"touch {outside}", settings=settings("auto", bwrap=MISSING_BWRAP)
    )
    assert f"[not sandboxed: {reason}; the command ran with the worker's permissions]" in text
    assert outside.exists()  # it really ran unconfined, as it says


async def test_without_bubblewrap_auto_falls_back_to_landlock(tmp_path: Path, home: Path) -> None:
    why = unusable("landlock")
    if why is not None:
        pytest.skip(f"landlock is not usable on this machine: {why}")
    status = sandbox_status(ShellSandbox(bwrap=MISSING_BWRAP))
    assert status.backend == "landlock" and status.label == "sandboxed (landlock)"
    assert status.reason == f"bubblewrap ({MISSING_BWRAP}) is not installed"
    assert not _needs_approval(SandboxConfig(bwrap=MISSING_BWRAP), "ls")  # ABI 4+: the allow list holds
    text = description(tmp_path, ShellSandbox(bwrap=MISSING_BWRAP))
    assert "It runs sandboxed (landlock)" in text and "Not confined: " in text
    assert "Commands not on the user's allow list are approved by the user first." in text
    outside = home / "refused"
    result = await Tools(tmp_path).call(
        "run_shell_command", command=f"touch {outside}", settings=settings("auto", bwrap=MISSING_BWRAP)
    )
    assert "[sandboxed (landlock); not confined: UDP" in result
    assert not outside.exists()


def test_landlock_that_cannot_refuse_tcp_asks_for_every_command(
    tmp_path: Path, pretend_landlock: Callable[[int, str], None]
) -> None:
    pretend_landlock(3, "")  # Linux 6.2 to 6.6: files confined, TCP not
    status = sandbox_status(ShellSandbox(backend="landlock"))
    assert status.backend == "landlock" and not status.network_confined
    assert status.unconfined[0] == "the network (Landlock ABI 3 cannot refuse TCP; it takes ABI 4)"
    assert _needs_approval(SandboxConfig(backend="landlock"), "ls")
    text = description(tmp_path, ShellSandbox(backend="landlock"))
    assert "Not confined: the network (Landlock ABI 3 cannot refuse TCP" in text
    assert "Every command is approved by the user first." in text
    # With the network on there is nothing to refuse: the allow list holds again.
    assert not _needs_approval(SandboxConfig(backend="landlock", network=True), "ls")
    note = shell_sandbox_note(SandboxConfig(backend="landlock"))
    assert note is not None and note.startswith(
        "(runs sandboxed (landlock): workspace writable, the rest read-only, home and /tmp hidden; "
        "not confined: the network (Landlock ABI 3 cannot refuse TCP"
    )  # no "no TCP" claim


async def test_sandboxed_the_allow_list_holds_and_results_say_which(
    sandbox: Sandbox, home: Path, backend: SandboxBackend
) -> None:
    assert not _needs_approval(SandboxConfig(backend=backend), "ls")
    assert _needs_approval(SandboxConfig(backend=backend), "rm -rf x")
    text = description(sandbox.ws, ShellSandbox(backend=backend))
    assert f"It runs sandboxed ({backend})" in text and "NOT sandboxed" not in text
    result = await sandbox.tools.call("run_shell_command", command="true")
    assert "[not sandboxed" not in result
    assert ("[sandboxed (landlock); not confined: " in result) == (backend == "landlock")


async def test_a_workspace_inside_the_hidden_home_stays_writable(home: Path, backend: SandboxBackend) -> None:
    # The usual case: the workspace is a folder of the home, which is hidden around it.
    ws = home / "project"
    ws.mkdir()
    tools = Tools(ws, settings(backend))
    command = "touch made; cat ~/notes.txt ~/.ssh/id_rsa; ls -A ~ ~/.ssh; echo ran"
    text = await tools.call("run_shell_command", command=command)
    assert "ran" in stdout_of(text)
    assert (ws / "made").exists()
    assert KEY_TEXT not in text
    assert "notes.txt" not in stdout_of(text) and "id_rsa" not in stdout_of(text)
    if backend == "bubblewrap":
        # The home is empty but for the mount points of the workspace and the hidden folders.
        assert "project" in stdout_of(text)
    else:  # Landlock: the home cannot even be listed
        assert f"ls: cannot open directory '{home}': Permission denied" in text


def test_the_approval_prompt_says_which_sandbox(backend: SandboxBackend) -> None:
    if backend == "bubblewrap":
        assert shell_sandbox_note(SandboxConfig(backend=backend)) == (
            "(runs sandboxed (bubblewrap): workspace writable, the rest read-only, home hidden, no network)"
        )
        assert shell_sandbox_note(SandboxConfig(backend=backend, network=True)) == (
            "(runs sandboxed (bubblewrap): workspace writable, the rest read-only; network on)"
        )
    else:
        note = shell_sandbox_note(SandboxConfig(backend=backend))
        assert note is not None
        assert note.startswith(
            "(runs sandboxed (landlock): workspace writable, the rest read-only, home and /tmp hidden, "
            "no TCP; not confined: UDP and other sockets that are not TCP; "
        )
    assert shell_sandbox_note(SandboxConfig(backend="none")) == (
        "(runs NOT sandboxed: the configuration switches the sandbox off (backend: none))"
    )


# --------------------------------------------------------------------------- Landlock only


@pytest.fixture
def landlock() -> None:
    why = unusable("landlock")
    if why is not None:
        pytest.skip(f"landlock is not usable on this machine: {why}")


async def test_landlock_tmp_is_hidden_and_tmpdir_private(tmp_path: Path, home: Path, landlock: None) -> None:
    tools = Tools(tmp_path, settings("landlock"))
    text = await tools.call(
        "run_shell_command", command="echo $TMPDIR; mktemp; ls /tmp; touch /tmp/x-$$; echo ran"
    )
    tmpdir, made, *_ = stdout_of(text).splitlines()
    assert made.startswith(tmpdir + "/")  # mktemp used the private folder
    assert "ls: cannot open directory '/tmp': Permission denied" in text
    assert "ran" in stdout_of(text)
    assert not await asyncio.to_thread(Path(tmpdir).exists)  # removed with the call


async def test_landlock_signals_stay_inside(tmp_path: Path, home: Path, landlock: None) -> None:
    if sandbox_status(ShellSandbox(backend="landlock")).landlock_abi < 6:
        pytest.skip("signal scoping takes Landlock ABI 6 (Linux 6.12)")
    tools = Tools(tmp_path, settings("landlock"))
    text = await tools.call("run_shell_command", command=f"kill -0 {os.getpid()} && echo reached; echo ran")
    assert "ran" in stdout_of(text) and "reached" not in stdout_of(text)
    control = await tools.call(
        "run_shell_command", command=f"kill -0 {os.getpid()} && echo reached", settings=UNCONFINED
    )
    assert "reached" in stdout_of(control)


def test_the_landlock_launcher_fails_closed(tmp_path: Path, landlock: None) -> None:
    # A spec it cannot enforce: the command must not run at all, rather than run unconfined.
    made = tmp_path / "ran"
    launcher = sandbox_module._launcher  # pyright: ignore[reportPrivateUsage]
    for spec in ('{"abi": 99}', '{"abi": 3, "tcp": false}', "[]", '{"abi": 1, "read": "/"}'):
        done = subprocess.run([*launcher(spec), "touch", str(made)], capture_output=True, check=False)
        assert done.returncode == 126, (spec, done)
        assert b"the Landlock sandbox could not be applied, the command did not run" in done.stderr
        assert not made.exists()


def test_landlock_rules_carve_hidden_paths_out(tmp_path: Path, landlock: None) -> None:
    status = sandbox_status(ShellSandbox(backend="landlock"))
    home, ws = tmp_path / "home", tmp_path / "home" / "ws"
    (home / ".ssh").mkdir(parents=True)
    (ws / "private").mkdir(parents=True)
    (ws / "src").mkdir()
    (ws / "keys").symlink_to(home / ".ssh")  # a link into a hidden folder is not granted
    box = ShellSandbox(hidden=(ws / "private",), backend="landlock")
    spec = landlock_spec(status, box, ws, home, tmp_path / "t")
    write = cast(list[str], spec["write"])
    read = cast(list[str], spec["read"])
    # The workspace holds a hidden folder: its other entries are granted one by one.
    assert str(ws / "src") in write and str(ws) not in write
    assert not any(
        p.startswith(str(ws / "private")) or p.startswith(str(home / ".ssh")) for p in read + write
    )
    assert str(ws / "keys") not in write
    # The rest is read-only, but for /tmp (and the home): / itself is never granted whole.
    assert "/" not in read and "/tmp" not in read and "/usr" in read


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        (-errno.ENOSYS, "Landlock is not built into this kernel (landlock_create_ruleset: ENOSYS)"),
        (
            -errno.EOPNOTSUPP,
            "Landlock is built into this kernel but not enabled (it is missing from the lsm=",
        ),
        (-errno.EPERM, "Landlock is not usable here (landlock_create_ruleset: Operation not permitted)"),
    ],
)
def test_a_kernel_without_landlock_is_named_precisely(
    monkeypatch: pytest.MonkeyPatch, answer: int, reason: str
) -> None:
    # What the kernel answers to landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION).
    monkeypatch.setattr(landlock_exec, "abi_version", lambda: answer)
    probe = sandbox_module._probe_landlock.__wrapped__  # pyright: ignore[reportPrivateUsage]
    abi, why = probe()
    assert abi == 0 and why.startswith(reason)


def test_the_launcher_follows_no_link_put_in_the_spec(tmp_path: Path, landlock: None) -> None:
    # The spec holds real paths; a link found at launch (put there since) grants nothing.
    status = sandbox_status(ShellSandbox(backend="landlock"))
    home, ws = tmp_path / "home", tmp_path / "ws"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text(KEY_TEXT + "\n")
    ws.mkdir()
    link = ws / "keys"
    link.symlink_to(home / ".ssh")
    spec = landlock_spec(status, ShellSandbox(backend="landlock"), ws, home, tmp_path / "t")
    spec["read"] = [*cast(list[str], spec["read"]), str(link)]
    launcher = sandbox_module._launcher  # pyright: ignore[reportPrivateUsage]
    done = subprocess.run(
        [*launcher(json.dumps(spec)), "cat", str(home / ".ssh" / "id_rsa")], capture_output=True, check=False
    )
    assert done.returncode == 1 and b"Permission denied" in done.stderr
    assert KEY_TEXT.encode() not in done.stdout


FILES = "unix sockets that are files (a command can connect to one that exists)"
PROC, IPC = "/proc lists the host's processes (not their memory or environment)", "System V IPC"
SIGNALS, ABSTRACT = "signals to the worker's other processes", "abstract unix sockets"
UDP = "UDP and other sockets that are not TCP"


@pytest.mark.parametrize(
    ("abi", "network", "confined", "gaps"),
    [
        (1, False, False, ("the network (Landlock ABI 1 cannot refuse TCP; it takes ABI 4)", ABSTRACT)),
        (3, False, False, ("the network (Landlock ABI 3 cannot refuse TCP; it takes ABI 4)", ABSTRACT)),
        (4, False, True, (UDP, ABSTRACT)),
        (5, False, True, (UDP, ABSTRACT)),
        (6, False, True, (UDP,)),
        (3, True, True, ()),
        (4, True, True, ()),
        (6, True, True, ()),
    ],
)
def test_what_landlock_leaves_unconfined_follows_the_abi(
    pretend_landlock: Callable[[int, str], None],
    abi: int,
    network: bool,
    confined: bool,
    gaps: tuple[str, ...],
) -> None:
    pretend_landlock(abi, "")
    status = sandbox_status(ShellSandbox(backend="landlock", network=network))
    assert (status.backend, status.landlock_abi, status.network_confined) == ("landlock", abi, confined)
    assert status.allow_list_applies == confined
    tail = (FILES, SIGNALS, PROC, IPC) if abi < 6 else (FILES, PROC, IPC)
    assert status.unconfined == (*gaps, *tail)


def test_a_bwrap_that_cannot_create_namespaces_is_named(tmp_path: Path, landlock: None) -> None:
    # What bubblewrap prints when the kernel or a container refuses its namespaces.
    broken = tmp_path / "bwrap"
    broken.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    broken.chmod(0o755)
    silent = tmp_path / "bwrap-silent"
    silent.write_text("#!/bin/sh\nexit 3\n")
    silent.chmod(0o755)
    status = sandbox_status(ShellSandbox(bwrap=str(broken), backend="bubblewrap"))
    why = f"bubblewrap ({broken}) cannot create its namespaces here: bwrap: No permissions to create new namespace"
    assert (status.backend, status.reason) == (None, why)
    quiet = sandbox_status(ShellSandbox(bwrap=str(silent), backend="bubblewrap"))
    assert quiet.reason == f"bubblewrap ({silent}) cannot create its namespaces here: exit code 3"
    # Under auto, Landlock takes over, and says why.
    fallback = sandbox_status(ShellSandbox(bwrap=str(broken)))
    assert (fallback.backend, fallback.reason) == ("landlock", why)


def test_the_status_cannot_be_changed_after_the_probe() -> None:
    status = sandbox_status(ShellSandbox(backend="none"))
    with pytest.raises(dataclasses.FrozenInstanceError):
        status.backend = "bubblewrap"  # type: ignore[misc]


def test_a_bwrap_that_works_is_used_and_one_that_cannot_start_is_named(tmp_path: Path) -> None:
    fine = tmp_path / "bwrap-fine"
    fine.write_text("#!/bin/sh\nexit 0\n")
    fine.chmod(0o755)
    status = sandbox_status(ShellSandbox(bwrap=str(fine), backend="bubblewrap"))
    assert (status.backend, status.bwrap, status.reason) == ("bubblewrap", str(fine), "")
    broken = tmp_path / "bwrap-broken"
    broken.write_text("#!/nonexistent/interpreter\n")
    broken.chmod(0o755)
    failed = sandbox_status(ShellSandbox(bwrap=str(broken), backend="bubblewrap"))
    assert failed.backend is None
    assert failed.reason.startswith(f"bubblewrap ({broken}) could not be run: ")


def test_a_bwrap_that_hangs_is_given_up(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    hangs = tmp_path / "bwrap-hangs"
    hangs.write_text("#!/bin/sh\nexec sleep 30\n")
    hangs.chmod(0o755)
    monkeypatch.setattr(sandbox_module, "_PROBE_TIMEOUT", 0.5)
    status = sandbox_status(ShellSandbox(bwrap=str(hangs), backend="bubblewrap"))
    assert status.backend is None and "could not be run: " in status.reason and "timed out" in status.reason


def test_the_landlock_probe_enforces_a_ruleset_before_saying_yes(monkeypatch: pytest.MonkeyPatch) -> None:
    # Skipped on the kernel's own answer, not on the probe under test (which could hide a fault).
    kernel = landlock_exec.abi_version()
    if kernel < 4:
        pytest.skip(f"the kernel's Landlock ABI is {kernel} (this test needs 4 or later)")
    probe = sandbox_module._probe_landlock.__wrapped__  # pyright: ignore[reportPrivateUsage]
    for abi in (1, 3, 4):  # an older kernel's answer: the launcher keeps to what that ABI has
        monkeypatch.setattr(landlock_exec, "abi_version", lambda abi=abi: abi)
        assert probe() == (abi, "")
    # More than the kernel has: the launcher refuses, and the probe says why.
    monkeypatch.setattr(landlock_exec, "abi_version", lambda: 99)
    abi, why = probe()
    assert abi == 0 and why.startswith("Landlock cannot be enforced here: sessionflow: the Landlock sandbox")
    assert why.endswith(f"Landlock ABI 99 asked, the kernel has {kernel}")

    def missing_launcher(spec: str) -> list[str]:
        return ["/nonexistent/python", spec, "--"]

    monkeypatch.setattr(sandbox_module, "_launcher", missing_launcher)
    monkeypatch.setattr(landlock_exec, "abi_version", lambda: 4)
    abi, why = probe()
    assert abi == 0 and why.startswith("the Landlock launcher could not be run: ")


def test_the_landlock_spec_follows_the_abi_and_the_network(tmp_path: Path) -> None:
    home, ws = tmp_path / "home", tmp_path / "ws"
    (home / "notes").mkdir(parents=True)
    ws.mkdir()

    def spec(abi: int, **box: Any) -> dict[str, object]:
        status = SandboxStatus("landlock", landlock_abi=abi)
        return landlock_spec(status, ShellSandbox(backend="landlock", **box), ws, home, tmp_path / "t")

    assert spec(3)["tcp"] is True  # it cannot be refused before ABI 4
    assert spec(4)["tcp"] is False and spec(4)["scope_unix"] is True
    assert spec(4, network=True)["tcp"] is True and spec(4, network=True)["scope_unix"] is False
    # A read-only path inside the hidden home is readable again.
    shown = spec(4, read_only=(home / "notes",))
    assert str(home / "notes") in cast(list[str], shown["read"])
    assert str(home / "notes") not in cast(list[str], spec(4)["read"])


def test_bwrap_shows_read_only_paths_that_exist(tmp_path: Path) -> None:
    there, gone = tmp_path / "there", tmp_path / "gone"
    there.mkdir()
    argv = bwrap_argv("bwrap", ShellSandbox(read_only=(there, gone)), tmp_path / "ws", None)
    assert ["--ro-bind", str(there), str(there)] == argv[
        argv.index(str(there)) - 1 : argv.index(str(there)) + 2
    ]
    assert str(gone) not in argv
