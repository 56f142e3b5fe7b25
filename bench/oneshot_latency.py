"""One-shot latency: `sessionflow -p hi --model demo` warm, against `sessionflow --version` (issue 43).

    uv run python -m bench.oneshot_latency [--runs 5] [--mode resident|in-process|both]

A private HOME and a free port (SESSIONFLOW_SERVER_PORT), so its own dev server. One untimed
`-p` run first starts the dev server (and, resident, the worker); then `--runs` timed runs of
each command, and the medians. ``in-process`` sets SESSIONFLOW_RESIDENT_WORKER=0 (the worker
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
import time
from pathlib import Path

from sessionflow.temporal import stop_dev_server

CLI = str(Path(sys.executable).parent / "sessionflow")
PROMPT = ("-p", "hi", "--model", "demo")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _timed(args: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """Wall time and the command's own CPU time (user + system; a resident worker's is not in it)."""
    cpu = _children_cpu()
    started = time.perf_counter()
    done = subprocess.run(args, env=env, cwd=cwd, capture_output=True, text=True, timeout=300, check=False)
    took = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed ({done.returncode}): {done.stderr[-2000:]}")
    return took, _children_cpu() - cpu


Runs = list[tuple[float, float]]


def _measure(mode: str, runs: int, tmp: Path) -> tuple[Runs, Runs]:
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
    args = parser.parse_args()
    modes = ("in-process", "resident") if args.mode == "both" else (args.mode,)
    print(f"load average at start: {os.getloadavg()}, cpus {os.cpu_count()}", flush=True)
    with tempfile.TemporaryDirectory(prefix="sessionflow-oneshot-") as tmp:
        for mode in modes:
            versions, prompts = _measure(mode, args.runs, Path(tmp))
            version = statistics.median(t for t, _ in versions)
            prompt = statistics.median(t for t, _ in prompts)
            version_cpu = statistics.median(c for _, c in versions)
            prompt_cpu = statistics.median(c for _, c in prompts)
            print(f"{mode}: --version {' '.join(f'{t:.2f}' for t, _ in versions)}", flush=True)
            print(f"{mode}: -p        {' '.join(f'{t:.2f}' for t, _ in prompts)}", flush=True)
            print(
                f"{mode}: median --version {version:.2f} s, -p {prompt:.2f} s, ratio {prompt / version:.1f}x; "
                f"CPU --version {version_cpu:.2f} s, -p {prompt_cpu:.2f} s",
                flush=True,
            )
    print(f"load average at end: {os.getloadavg()}", flush=True)


if __name__ == "__main__":
    main()
