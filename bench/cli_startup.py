"""CLI start-up: how soon `sessionflow` answers, against issue 25's goals.

    uv run python -m bench.cli_startup [--warm 5 --cold 3 --quick 7 --top 25]

Four figures, each printed against its goal:

- ``sessionflow --help``: p50 wall time, and whether it imported temporalio or rich's console
  (goal: neither);
- ``sessionflow frameworks``, warm (one untimed run first): p50, goal <= 0.3 s, with the CPU
  time the process used (user + system, p50): on a loaded machine the wall time is mostly
  waiting for a CPU, and the CPU time is what a quiet machine would take (plus ~10 ms);
- ``sessionflow chat --model demo -p hi``, warm (the dev server already running): p50, goal
  <= 1.0 s; split at the ``session <id>`` line the command prints just before it starts the
  session: start-up (imports, configuration, connecting, building the flow) and the turn (the
  demo's four model steps and three tool steps, then the worker's shutdown);
- the same, cold (no dev server yet in that HOME, so the command starts one): p50, goal <= 3 s.

Then the slowest imports of one warm chat run (``python -X importtime``, the command's own
`main` in that HOME), by cumulative time.

Every run has a private HOME (so its own ~/.sessionflow) and a private free port through
SESSIONFLOW_SERVER_PORT. The servers are stopped at the end with
`stop_dev_server(HOME/.sessionflow/server)`. To measure another checkout of the code, put its
packages' ``src`` folders on PYTHONPATH: every command runs with this environment.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from bench._common import percentile
from sessionflow.temporal import DevServer, stop_dev_server

CLI = str(Path(sys.executable).parent / "sessionflow")
CHAT = ("chat", "--model", "demo", "-p", "hi")

GOAL_FRAMEWORKS = 0.3
GOAL_CHAT_WARM = 1.0
GOAL_CHAT_COLD = 3.0


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _env(home: Path, port: int) -> dict[str, str]:
    env = {**os.environ, "HOME": str(home), "SESSIONFLOW_SERVER_PORT": str(port), "PYTHONUNBUFFERED": "1"}
    env.pop("SESSIONFLOW_SERVER_ADDRESS", None)
    return env


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _timed(args: list[str], env: dict[str, str]) -> float:
    return _timed_cpu(args, env)[0]


def _timed_cpu(args: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall time and CPU time (user + system) of one run of the command."""
    cpu = _children_cpu()
    started = time.perf_counter()
    done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=300, check=False)
    took = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed ({done.returncode}): {done.stderr[-2000:]}")
    return took, _children_cpu() - cpu


@dataclass(frozen=True)
class ChatRun:
    total: float
    startup: float
    """Until the command printed ``session <id>``: imports, configuration, engine, flow."""
    answer: str
    server_before: bool
    server_after: bool


def _chat(home: Path, port: int) -> ChatRun:
    """One `sessionflow chat --model demo -p hi`, its standard error read line by line as it comes."""
    server_dir = home / ".sessionflow" / "server"
    before = DevServer.status(server_dir) is not None
    started = time.perf_counter()
    process = subprocess.Popen(
        [CLI, *CHAT],
        env=_env(home, port),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    out: list[str] = []
    reader = threading.Thread(target=lambda: out.append(process.stdout.read() if process.stdout else ""))
    reader.start()
    err: list[str] = []
    session_at: float | None = None
    assert process.stderr is not None
    for line in process.stderr:
        if session_at is None and line.startswith("session "):
            session_at = time.perf_counter()
        err.append(line)
    code = process.wait(timeout=300)
    took = time.perf_counter() - started
    reader.join()
    answer = "".join(out).strip()
    if code != 0 or not answer:
        raise RuntimeError(f"sessionflow chat failed ({code}): {answer[-500:]} {''.join(err)[-2000:]}")
    after = DevServer.status(server_dir) is not None
    startup = (session_at - started) if session_at is not None else float("nan")
    return ChatRun(total=took, startup=startup, answer=answer, server_before=before, server_after=after)


_IMPORT_LINE = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \|(\s*)(\S+)")


def import_times(args: list[str], env: dict[str, str]) -> tuple[list[tuple[int, int, str]], int, set[str]]:
    """`python -X importtime` of the command's `main` with `args`: rows (cumulative us, self us,
    indented module), the sum of the top-level imports (us), and every module imported."""
    code = "import sys\nfrom sessionflow_cli._main import main\ncode = main(sys.argv[1:])\nimport os\nos._exit(code)\n"
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code, *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    rows: list[tuple[int, int, str]] = []
    total = 0
    for line in done.stderr.splitlines():
        match = _IMPORT_LINE.match(line)
        if match:
            own, cumulative, indent, module = int(match[1]), int(match[2]), match[3], match[4]
            rows.append((cumulative, own, indent + module))
            if len(indent) == 1:
                total += cumulative
    modules = {row[2].strip() for row in rows}
    return sorted(rows, reverse=True), total, modules


def _verdict(value: float, goal: float) -> str:
    return f"goal <= {goal:.1f} s: {'met' if value <= goal else 'NOT met'}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--warm", type=int, default=5, help="warm chat runs")
    parser.add_argument("--cold", type=int, default=3, help="cold chat runs (each starts a dev server)")
    parser.add_argument("--quick", type=int, default=7, help="runs of --help and of frameworks")
    parser.add_argument("--top", type=int, default=25, help="slowest imports to print")
    args = parser.parse_args()
    print(f"load average at start: {os.getloadavg()}, cpus {os.cpu_count()}", flush=True)
    cold: list[ChatRun] = []
    warm: list[ChatRun] = []
    homes: list[Path] = []
    with tempfile.TemporaryDirectory(prefix="sessionflow-cli-") as tmp:
        quick_home = Path(tmp) / "quick"
        quick_home.mkdir()
        quick_env = _env(quick_home, _free_port())
        _timed([CLI, "--help"], quick_env)
        helps = [_timed([CLI, "--help"], quick_env) for _ in range(args.quick)]
        _timed([CLI, "frameworks"], quick_env)
        frameworks_runs = [_timed_cpu([CLI, "frameworks"], quick_env) for _ in range(args.quick)]
        frameworks = [wall for wall, _ in frameworks_runs]
        frameworks_cpu = [cpu for _, cpu in frameworks_runs]
        _, frameworks_imports, _ = import_times(["frameworks"], quick_env)
        _, help_imports, help_modules = import_times(["--help"], quick_env)
        print(f"--help: {' '.join(f'{t:.2f}' for t in helps)}", flush=True)
        print(f"frameworks: {' '.join(f'{t:.2f}' for t in frameworks)}", flush=True)
        print(f"frameworks, CPU: {' '.join(f'{t:.2f}' for t in frameworks_cpu)}", flush=True)
        rows: list[tuple[int, int, str]] = []
        chat_imports = 0
        try:
            for index in range(args.cold):
                home = Path(tmp) / f"home{index}"
                home.mkdir()
                homes.append(home)
                port = _free_port()
                run = _chat(home, port)
                cold.append(run)
                print(
                    f"cold {index}: {run.total:.2f} s (start-up {run.startup:.2f} s) "
                    f"[server before: {run.server_before}, after: {run.server_after}] {run.answer[:60]!r}",
                    flush=True,
                )
                if index == 0:
                    for turn in range(args.warm):
                        run = _chat(home, port)
                        warm.append(run)
                        print(
                            f"warm {turn}: {run.total:.2f} s (start-up {run.startup:.2f} s) "
                            f"[server before: {run.server_before}]",
                            flush=True,
                        )
                    rows, chat_imports, _ = import_times(list(CHAT), _env(home, port))
        finally:
            for home in homes:
                stop_dev_server(home / ".sessionflow" / "server")
    print(f"load average at end: {os.getloadavg()}")

    help_p50 = percentile(helps, 50)
    frameworks_p50 = percentile(frameworks, 50)
    warm_p50 = percentile([run.total for run in warm], 50)
    cold_p50 = percentile([run.total for run in cold], 50)
    print("\n| command | p50 | max | n | goal |")
    print("| --- | --- | --- | --- | --- |")
    loaded = [name for name in ("temporalio", "rich.console") if name in help_modules]
    print(
        f"| `sessionflow --help` | {help_p50:.2f} s | {max(helps):.2f} s | {len(helps)} | imports neither "
        f"temporalio nor rich.console: {'met' if not loaded else 'NOT met (' + ', '.join(loaded) + ')'}; "
        f"{help_imports / 1e6:.2f} s of imports |"
    )
    print(
        f"| `sessionflow frameworks`, warm | {frameworks_p50:.2f} s (CPU {percentile(frameworks_cpu, 50):.2f} s) | "
        f"{max(frameworks):.2f} s | {len(frameworks)} | {_verdict(frameworks_p50, GOAL_FRAMEWORKS)} (CPU: "
        f"{'met' if percentile(frameworks_cpu, 50) <= GOAL_FRAMEWORKS else 'NOT met'}); "
        f"{frameworks_imports / 1e6:.2f} s of imports |"
    )
    for label, runs, p50, goal in (
        ("warm (server running)", warm, warm_p50, GOAL_CHAT_WARM),
        ("cold (starts the server)", cold, cold_p50, GOAL_CHAT_COLD),
    ):
        startup = percentile([run.startup for run in runs], 50)
        print(
            f"| `chat --model demo -p hi`, {label} | {p50:.2f} s (start-up {startup:.2f} s, "
            f"then the turn {p50 - startup:.2f} s) | {max(run.total for run in runs):.2f} s | {len(runs)} | "
            f"{_verdict(p50, goal)} |"
        )
    print(
        f"\nwarm `chat --model demo -p hi` under python -X importtime: {chat_imports / 1e6:.2f} s of imports; "
        f"the {args.top} slowest by cumulative time (us, self us):"
    )
    for cumulative, own, module in rows[: args.top]:
        print(f"  {cumulative:>9} {own:>8}  {module}")


if __name__ == "__main__":
    main()
