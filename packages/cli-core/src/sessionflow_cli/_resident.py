"""The resident worker: `chat` and `-p` reuse one background worker instead of starting their own.

A command that chats (``chat``, ``-p``) is then only a client: it starts or resumes the
session, follows the turn, and answers approvals; the flow is served by ``sessionflow worker
--resident``, a detached process (its own process session, like the embedded dev server)
that the first command starts and the next ones reuse.

One resident worker per flow type. The flow type is the task queue, and it is already
namespaced by host, user, configuration file and workspace (`sessionflow_cli._flow_types`),
so a resident worker serves one workspace: its local tools run in the workspace of the
commands that use it, never in another folder's.

Its files, all 0600 in a 0700 folder, are ``~/.sessionflow/workers/<flow type>.*``:

- ``.json``: the state: pid, configuration hash, framework, workspace, idle timeout, ready;
- ``.log``: its output;
- ``.lease``: touched (mtime) by every command using it and by the worker while a step runs;
  the worker stops once it is older than the idle timeout and no step runs;
- ``.lock``: held while a command checks, replaces or starts the worker.

The configuration hash covers the resolved configuration (``--model`` included), the
framework, the installed distributions (name, version and install time), the Python
interpreter, and the environment variables that configure sessionflow, Temporal and the
model providers (hashed, never stored). A command whose hash differs from the running
worker's stops that worker (SIGTERM: its running steps get the shutdown grace) and waits for
it to exit before starting a new one, so two workers with different configurations never
serve one task queue. A worker that dies (SIGKILL, a crash) loses nothing: its steps time
out and the next worker on the same task queue runs them; a command following a turn starts
that next worker itself.

``SESSIONFLOW_RESIDENT_WORKER=0`` (or ``chat --in-process-worker``) serves the flow inside
the command instead, as before.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Generator, Mapping, Sequence
from dataclasses import dataclass, fields, is_dataclass
from pathlib import Path
from typing import Any

from sessionflow.home import PRIVATE_UMASK, open_private, private_dir, write_private
from sessionflow.kit import read_env
from sessionflow_cli.config import CliConfig, data_home

__all__ = [
    "DEFAULT_IDLE_TIMEOUT",
    "IDLE_ENV",
    "RESIDENT_ENV",
    "ActivityMeter",
    "ResidentState",
    "config_hash",
    "idle_seconds",
    "idle_timeout",
    "list_residents",
    "live_resident",
    "lock_flow_type",
    "log_tail",
    "pid_alive",
    "remove_state",
    "resident_enabled",
    "spawn_resident",
    "stop_all_residents",
    "stop_resident",
    "touch_lease",
    "workers_dir",
    "write_state",
]

RESIDENT_ENV = "SESSIONFLOW_RESIDENT_WORKER"
IDLE_ENV = "SESSIONFLOW_WORKER_IDLE_TIMEOUT"
DEFAULT_IDLE_TIMEOUT = 900.0
RESIDENT_FLAG = "--resident"

# Environment variables a worker's behaviour depends on: their values (hashed) are part of
# the configuration hash, so a new API key or server address starts a new worker.
_ENV_PREFIXES = (
    "SESSIONFLOW_",
    "TEMPORAL_",
    "OPENAI_",
    "ANTHROPIC_",
    "GOOGLE_",
    "GEMINI_",
    "AZURE_",
    "AWS_",
    "MISTRAL_",
    "GROQ_",
    "OLLAMA_",
    "LANGCHAIN_",
    "LANGSMITH_",
    "OTEL_",
)
_ENV_NAMES = frozenset(
    {
        "PYTHONPATH",
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "NO_PROXY",
        "http_proxy",
        "https_proxy",
        "no_proxy",
        "SSL_CERT_FILE",
        "REQUESTS_CA_BUNDLE",
    }
)
# Not configuration: which mode the command runs in, and the test harness's own switches.
_ENV_IGNORED = frozenset({RESIDENT_ENV})


def resident_enabled(in_process: bool = False) -> bool:
    """Whether `chat`/`-p` use the resident worker: not with ``--in-process-worker`` nor
    ``SESSIONFLOW_RESIDENT_WORKER=0`` (or ``false``, ``no``, ``off``)."""
    if in_process:
        return False
    return read_env(RESIDENT_ENV, "").strip().lower() not in ("0", "false", "no", "off")


def idle_timeout(config: CliConfig) -> float:
    """``$SESSIONFLOW_WORKER_IDLE_TIMEOUT``, else ``worker.idle_timeout``, else 15 minutes.

    Raises:
        UsageError: The variable is not a positive number of seconds.
    """
    text = read_env(IDLE_ENV, "").strip()
    if text:
        try:
            value = float(text)
        except ValueError:
            value = -1.0
        if not value > 0:
            from sessionflow_cli._errors import UsageError

            raise UsageError(f"{IDLE_ENV}={text!r} is not a positive number of seconds")
        return value
    return config.worker_idle_timeout if config.worker_idle_timeout is not None else DEFAULT_IDLE_TIMEOUT


# --- the configuration hash --------------------------------------------------------------


def _plain(value: object) -> object:
    """`value` as JSON-able data: dataclasses by field, paths as text, anything else by repr."""
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, Path):
        return str(value)
    if is_dataclass(value) and not isinstance(value, type):
        return {
            "__type__": type(value).__qualname__,
            **{f.name: _plain(getattr(value, f.name)) for f in fields(value)},
        }
    if isinstance(value, Mapping):
        items: Mapping[object, object] = value  # pyright: ignore[reportUnknownVariableType]
        return {str(k): _plain(v) for k, v in items.items()}
    if isinstance(value, list | tuple | set | frozenset):
        seq: Sequence[object] = list(value)  # pyright: ignore[reportUnknownArgumentType]
        plain = [_plain(v) for v in seq]
        return sorted(plain, key=repr) if isinstance(value, set | frozenset) else plain
    return repr(value)


def _installed() -> list[str]:
    """The distributions on ``sys.path``: their ``*.dist-info`` names (name and version) and the
    time each was installed, so a reinstall of the same version counts as a change too."""
    found: list[str] = []
    for entry in sys.path:
        # Only the package folders: sys.path[0] is the script's folder or the current one.
        if os.path.basename(entry) not in ("site-packages", "dist-packages") or not os.path.isdir(entry):
            continue
        try:
            with os.scandir(entry) as listing:
                for item in listing:
                    if item.name.endswith((".dist-info", ".egg-info", ".pth")):
                        with contextlib.suppress(OSError):
                            found.append(f"{entry}/{item.name}@{item.stat().st_mtime_ns}")
        except OSError:
            continue
    return sorted(found)


def _environment_digest(environ: Mapping[str, str]) -> dict[str, str]:
    chosen: dict[str, str] = {}
    for name, value in environ.items():
        if name in _ENV_IGNORED:
            continue
        if name in _ENV_NAMES or name.startswith(_ENV_PREFIXES):
            chosen[name] = hashlib.sha256(value.encode("utf-8", "surrogateescape")).hexdigest()
    return dict(sorted(chosen.items()))


def config_hash(framework: str, config: CliConfig, environ: Mapping[str, str] | None = None) -> str:
    """12 hex digits of SHA-256 over what a worker is built from (see the module's docstring)."""
    try:
        instructions = config.instructions
    except OSError:
        instructions = None
    material = {
        "framework": framework,
        "config": _plain(config),
        "instructions": instructions,
        "idle_timeout": idle_timeout(config),
        "python": [sys.executable, sys.version],
        "installed": _installed(),
        "environment": _environment_digest(os.environ if environ is None else environ),
    }
    text = json.dumps(material, sort_keys=True, default=repr)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


# --- files -------------------------------------------------------------------------------


def workers_dir(home: Path | None = None) -> Path:
    """``~/.sessionflow/workers`` (or under `home`, a sessionflow folder)."""
    return (home if home is not None else data_home()) / "workers"


def _file(flow_type: str, suffix: str, home: Path | None = None) -> Path:
    return workers_dir(home) / f"{flow_type}{suffix}"


def state_file(flow_type: str, home: Path | None = None) -> Path:
    return _file(flow_type, ".json", home)


def log_file(flow_type: str, home: Path | None = None) -> Path:
    return _file(flow_type, ".log", home)


def lease_file(flow_type: str, home: Path | None = None) -> Path:
    return _file(flow_type, ".lease", home)


@dataclass(frozen=True, kw_only=True)
class ResidentState:
    """What ``<flow type>.json`` records of a resident worker."""

    pid: int
    flow_type: str
    config_hash: str
    framework: str
    workspace: str
    idle_timeout: float
    started_at: float
    """Seconds since the epoch."""
    ready: bool = False
    home: str = ""
    """The sessionflow folder it lives in (not stored)."""

    def as_record(self) -> dict[str, Any]:
        return {
            "pid": self.pid,
            "flow_type": self.flow_type,
            "config_hash": self.config_hash,
            "framework": self.framework,
            "workspace": self.workspace,
            "idle_timeout": self.idle_timeout,
            "started_at": self.started_at,
            "ready": self.ready,
        }

    @property
    def log(self) -> Path:
        return log_file(self.flow_type, Path(self.home) if self.home else None)


def write_state(state: ResidentState) -> None:
    home = Path(state.home) if state.home else None
    private_dir(workers_dir(home))
    write_private(state_file(state.flow_type, home), json.dumps(state.as_record(), indent=1) + "\n")


def read_state(path: Path) -> ResidentState | None:
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
        return ResidentState(
            pid=int(record["pid"]),
            flow_type=str(record["flow_type"]),
            config_hash=str(record["config_hash"]),
            framework=str(record["framework"]),
            workspace=str(record["workspace"]),
            idle_timeout=float(record["idle_timeout"]),
            started_at=float(record["started_at"]),
            ready=bool(record.get("ready", False)),
            home=str(path.parent.parent),
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None


def remove_state(flow_type: str, pid: int, home: Path | None = None) -> None:
    """Remove the state file if it still names `pid` (a successor may have written its own)."""
    path = state_file(flow_type, home)
    state = read_state(path)
    if state is not None and state.pid == pid:
        path.unlink(missing_ok=True)


def touch_lease(flow_type: str, home: Path | None = None) -> None:
    """Mark the worker of `flow_type` in use now (the lease file's mtime)."""
    path = lease_file(flow_type, home)
    try:
        os.utime(path)
    except FileNotFoundError:
        private_dir(path.parent)
        os.close(open_private(path, os.O_WRONLY | os.O_CREAT))


def idle_seconds(flow_type: str, home: Path | None = None) -> float:
    """Seconds since the lease was last touched (0 when there is no lease yet)."""
    try:
        return max(0.0, time.time() - lease_file(flow_type, home).stat().st_mtime)
    except OSError:
        return 0.0


@contextlib.contextmanager
def lock_flow_type(flow_type: str, home: Path | None = None) -> Generator[None]:
    """Hold ``<flow type>.lock`` (blocking): one command at a time checks or starts the worker."""
    private_dir(workers_dir(home))
    descriptor = open_private(_file(flow_type, ".lock", home), os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        yield
    finally:
        os.close(descriptor)  # releases the lock


# --- processes ---------------------------------------------------------------------------

# Workers this process started: polled so their exit is reaped (a zombie looks alive).
_CHILDREN: dict[int, subprocess.Popen[bytes]] = {}


def pid_alive(pid: int) -> bool:
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
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    fields_after = stat.rpartition(")")[2].split()
    return not (fields_after and fields_after[0] == "Z")


def _process_args(pid: int) -> list[str] | None:
    """The command line of `pid`, or None when it cannot be read."""
    if Path("/proc").is_dir():
        try:
            raw = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            return None
        return [part.decode(errors="replace") for part in raw.split(b"\0") if part]
    # No procfs (macOS): ps prints the command line space-joined, enough for the check below.
    try:
        out = subprocess.run(
            ["ps", "-o", "command=", "-p", str(pid)], capture_output=True, text=True, check=False, timeout=5
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    line = out.stdout.strip()
    return line.split() if line else None


def _is_resident_process(pid: int) -> bool:
    """`pid` is alive and runs ``sessionflow worker --resident`` (guards against pid reuse)."""
    if not pid_alive(pid):
        return False
    args = _process_args(pid)
    return args is not None and "worker" in args and RESIDENT_FLAG in args


def live_resident(flow_type: str, home: Path | None = None) -> ResidentState | None:
    """The resident worker of `flow_type` if its state file names a live one."""
    state = read_state(state_file(flow_type, home))
    if state is None or not _is_resident_process(state.pid):
        return None
    return state


def list_residents(home: Path | None = None) -> list[ResidentState]:
    """The live resident workers recorded under the sessionflow folder."""
    folder = workers_dir(home)
    try:
        paths = sorted(folder.glob("*.json"))
    except OSError:
        return []
    found: list[ResidentState] = []
    for path in paths:
        state = read_state(path)
        if state is not None and _is_resident_process(state.pid):
            found.append(state)
    return found


def _signal(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        # Started with start_new_session=True, so it leads its own group (the connectors'
        # servers are in it); never signal a group it does not lead.
        if os.getpgid(pid) == pid:
            os.killpg(pid, sig)
        else:
            os.kill(pid, sig)


def _wait_dead(pid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while pid_alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def stop_resident(state: ResidentState, *, timeout: float = 40.0) -> None:
    """SIGTERM (running steps get the worker's shutdown grace), then SIGKILL after `timeout`.

    Blocking; returns once the process is gone, and removes its state file."""
    if _is_resident_process(state.pid):
        _signal(state.pid, signal.SIGTERM)
        if not _wait_dead(state.pid, timeout):
            _signal(state.pid, signal.SIGKILL)
            _wait_dead(state.pid, 10.0)
    remove_state(state.flow_type, state.pid, Path(state.home) if state.home else None)


def stop_all_residents(home: Path | None = None, *, timeout: float = 40.0) -> int:
    """Stop every live resident worker under the sessionflow folder; how many there were."""
    residents = list_residents(home)
    threads = [
        threading.Thread(target=stop_resident, args=(s,), kwargs={"timeout": timeout}) for s in residents
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return len(residents)


def spawn_resident(
    *,
    flow_type: str,
    config_hash: str,
    framework: str,
    workspace: str,
    idle: float,
    config_given: str | None,
    model_given: str | None,
    cwd: Path,
) -> ResidentState:
    """Start ``sessionflow worker --resident`` detached, and record it (not ready yet).

    It runs in its own process session (Ctrl-C in the caller's terminal does not reach it),
    with the caller's environment and current folder, so it resolves the same configuration.
    """
    args = [sys.executable, "-m", "sessionflow_cli", "worker", RESIDENT_FLAG, "-f", framework]
    if config_given is not None:
        args += ["-c", config_given]
    if model_given is not None:
        args += ["-m", model_given]
    private_dir(workers_dir())
    log = log_file(flow_type)
    with os.fdopen(open_private(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND), "ab") as out:
        out.write(
            f"--- sessionflow: starting the resident worker at {time.ctime()} (hash {config_hash})\n".encode()
        )
        out.flush()
        process = subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=cwd,
            start_new_session=True,
            close_fds=True,
            umask=PRIVATE_UMASK,
        )
    _CHILDREN[process.pid] = process
    state = ResidentState(
        pid=process.pid,
        flow_type=flow_type,
        config_hash=config_hash,
        framework=framework,
        workspace=workspace,
        idle_timeout=idle,
        started_at=time.time(),
        ready=False,
    )
    write_state(state)
    touch_lease(flow_type)
    return state


def log_tail(flow_type: str, lines: int = 30) -> str:
    try:
        text = log_file(flow_type).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


# --- activity, inside the worker ---------------------------------------------------------


class ActivityMeter:
    """Counts the runner calls in flight (model steps, tool calls, verifies): a worker with
    one running is not idle, however old its lease."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running = 0

    @property
    def busy(self) -> bool:
        with self._lock:
            return self._running > 0

    @contextlib.contextmanager
    def running(self) -> Generator[None]:
        with self._lock:
            self._running += 1
        try:
            yield
        finally:
            with self._lock:
                self._running -= 1
