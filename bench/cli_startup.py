"""CLI start-up: `sessionflow chat --model demo -p hi` to the answer, and import time (issue 13, item 4).

    uv run python -m bench.cli_startup [--warm 5 --cold 3]

Every run has a private HOME (so its own ~/.sessionflow) and a private free port through
SESSIONFLOW_SERVER_PORT. "cold": no dev server yet in that HOME, so the command starts one;
"warm": the server left running by the cold run of the same HOME. The servers are stopped at
the end with `stop_dev_server(HOME/.sessionflow/server)`.
"""

from __future__ import annotations

import argparse
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench._common import percentile
from sessionflow.temporal import DevServer, stop_dev_server

CLI = str(Path(sys.executable).parent / "sessionflow")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _chat(home: Path, port: int) -> tuple[float, str]:
    running = DevServer.status(home / ".sessionflow" / "server") is not None
    env = {**os.environ, "HOME": str(home), "SESSIONFLOW_SERVER_PORT": str(port)}
    env.pop("SESSIONFLOW_SERVER_ADDRESS", None)
    started = time.perf_counter()
    done = subprocess.run(
        [CLI, "chat", "--model", "demo", "-p", "hi"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    took = time.perf_counter() - started
    if done.returncode != 0 or not done.stdout.strip():
        raise RuntimeError(
            f"sessionflow chat failed ({done.returncode}): {done.stdout[-500:]} {done.stderr[-2000:]}"
        )
    after = DevServer.status(home / ".sessionflow" / "server") is not None
    return took, f"[server running before: {running}, after: {after}] {done.stdout.strip()}"


def import_times(top: int, module: str = "sessionflow_cli") -> list[tuple[int, int, str]]:
    """(cumulative us, self us, module) of the slowest imports of `import <module>`."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", f"import {module}"],
        capture_output=True,
        text=True,
        check=True,
    )
    rows: list[tuple[int, int, str]] = []
    for line in done.stderr.splitlines():
        match = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|(\s*)(\S+)", line)
        if match:
            rows.append((int(match.group(2)), int(match.group(1)), match.group(3) + match.group(4)))
    return sorted(rows, reverse=True)[:top]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--warm", type=int, default=5)
    parser.add_argument("--cold", type=int, default=3)
    parser.add_argument("--top", type=int, default=20)
    args = parser.parse_args()
    print(f"load average at start: {os.getloadavg()}, cpus {os.cpu_count()}")
    cold: list[float] = []
    warm: list[float] = []
    homes: list[Path] = []
    with tempfile.TemporaryDirectory(prefix="sessionflow-cli-") as tmp:
        try:
            for index in range(args.cold):
                home = Path(tmp) / f"home{index}"
                home.mkdir()
                homes.append(home)
                port = _free_port()
                took, answer = _chat(home, port)
                cold.append(took)
                print(f"cold {index}: {took:.2f} s  {answer[:110]!r}", flush=True)
                if index == 0:
                    for turn in range(args.warm):
                        took, answer = _chat(home, port)
                        warm.append(took)
                        print(f"warm {turn}: {took:.2f} s  {answer[:45]!r}", flush=True)
        finally:
            for home in homes:
                stop_dev_server(home / ".sessionflow" / "server")
    print(
        f"\ncold (starts the dev server): p50 {percentile(cold, 50):.2f} s, max {max(cold):.2f} s (n={len(cold)})"
    )
    print(
        f"warm (server running):        p50 {percentile(warm, 50):.2f} s, max {max(warm):.2f} s (n={len(warm)})"
    )
    for target in ("sessionflow_cli", "sessionflow_cli._main", "sessionflow_cli.commands._chat"):
        rows = import_times(args.top, target)
        print(f"\npython -X importtime -c 'import {target}': top {args.top} by cumulative time (us, self us)")
        for cumulative, own, module in rows:
            print(f"  {cumulative:>9} {own:>8}  {module}")
    print(f"load average at end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
