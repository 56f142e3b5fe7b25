"""One-shot latency: `sessionflow -p hi --model demo` warm, against `sessionflow --version` (issue 43).

    uv run python -m bench.oneshot_latency [--runs 5] [--mode resident|in-process|both] [--framework NAME]

A private HOME and a free port (SESSIONFLOW_SERVER_PORT), so its own dev server. One untimed
`-p` run first starts the dev server (and, resident, the worker); then `--runs` timed runs of
each command, and the medians: the `-p` split at its ``session <id>`` line into start-up
(imports, configuration, connecting, the worker) and the turn, and each command's own CPU
time (user + system; a resident worker's is not in it). ``in-process`` sets SESSIONFLOW_RESIDENT_WORKER=0 (the worker
starts and stops inside each command, as before issue 43); ``resident`` leaves it unset, so the
runs after the first reuse the resident worker. At the end the resident workers are stopped
(by their pid, from their state files) and the dev server too.
"""

from __future__ import annotations

import argparse
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from sessionflow.temporal import stop_dev_server

CLI = str(Path(sys.executable).parent / "sessionflow")
PROMPT = ["-p", "hi", "--model", "demo"]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


@dataclass(frozen=True)
class Run:
    wall: float
    cpu: float
    """The command's own CPU time (user + system; a resident worker's is not in it)."""
    startup: float
    """Until the ``session <id>`` line (imports, configuration, connecting, the worker); nan without one."""


def _timed(args: list[str], env: dict[str, str], cwd: Path) -> Run:
    cpu = _children_cpu()
    started = time.perf_counter()
    process = subprocess.Popen(
        args,
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    out: list[str] = []
    reader = threading.Thread(target=lambda: out.append(process.stdout.read() if process.stdout else ""))
    reader.start()
    err: list[str] = []
    session_at = float("nan")
    assert process.stderr is not None
    for line in process.stderr:
        if line.startswith("session ") and session_at != session_at:
            session_at = time.perf_counter() - started
        err.append(line)
    code = process.wait(timeout=300)
    wall = time.perf_counter() - started
    reader.join()
    if code != 0:
        raise RuntimeError(f"{' '.join(args)} failed ({code}): {''.join(err)[-2000:]}")
    return Run(wall=wall, cpu=_children_cpu() - cpu, startup=session_at)


def _measure(mode: str, runs: int, tmp: Path) -> tuple[list[Run], list[Run]]:
    home = tmp / mode
    workspace = home / "workspace"
    workspace.mkdir(parents=True)
    (workspace / "README.md").write_text("Shopping list\nmilk\n")
    env = {
        **os.environ,
        "HOME": str(home),
        "SESSIONFLOW_SERVER_PORT": str(_free_port()),
        "PYTHONUNBUFFERED": "1",
    }
    for key in ("SESSIONFLOW_SERVER_ADDRESS", "SESSIONFLOW_HOME", "SESSIONFLOW_RESIDENT_WORKER"):
        env.pop(key, None)
    if mode == "in-process":
        env["SESSIONFLOW_RESIDENT_WORKER"] = "0"
    try:
        _timed([CLI, *PROMPT], env, workspace)  # starts the dev server (and the resident worker)
        _timed([CLI, "--version"], env, workspace)
        versions = [_timed([CLI, "--version"], env, workspace) for _ in range(runs)]
        prompts = [_timed([CLI, *PROMPT], env, workspace) for _ in range(runs)]
        return versions, prompts
    finally:
        _stop_workers(home / ".sessionflow")
        stop_dev_server(home / ".sessionflow" / "server")


def _stop_workers(home: Path) -> None:
    try:
        from sessionflow_cli._resident import stop_all_residents
    except ImportError:  # a checkout from before the resident worker
        return
    stop_all_residents(home)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--mode", choices=("resident", "in-process", "both"), default="both")
    parser.add_argument("--framework", default="builtin", help="-f of the -p runs (default: builtin)")
    args = parser.parse_args()
    if args.framework != "builtin":
        PROMPT.extend(["-f", args.framework])
    modes = ("in-process", "resident") if args.mode == "both" else (args.mode,)
    print(f"load average at start: {os.getloadavg()}, cpus {os.cpu_count()}", flush=True)
    with tempfile.TemporaryDirectory(prefix="sessionflow-oneshot-") as tmp:
        for mode in modes:
            versions, prompts = _measure(mode, args.runs, Path(tmp))
            version = statistics.median(r.wall for r in versions)
            prompt = statistics.median(r.wall for r in prompts)
            startup = statistics.median(r.startup for r in prompts)
            turn = statistics.median(r.wall - r.startup for r in prompts)
            version_cpu = statistics.median(r.cpu for r in versions)
            prompt_cpu = statistics.median(r.cpu for r in prompts)
            print(f"{mode}: --version {' '.join(f'{r.wall:.2f}' for r in versions)}", flush=True)
            print(f"{mode}: -p        {' '.join(f'{r.wall:.2f}' for r in prompts)}", flush=True)
            print(
                f"{mode}: median --version {version:.2f} s, -p {prompt:.2f} s (start-up {startup:.2f} s, "
                f"turn {turn:.2f} s), ratio {prompt / version:.1f}x; "
                f"CPU --version {version_cpu:.2f} s, -p {prompt_cpu:.2f} s",
                flush=True,
            )
    print(f"load average at end: {os.getloadavg()}", flush=True)


if __name__ == "__main__":
    main()
