"""A project-owned MCP server for the cases the public servers do not cover.

Run ``python -m tests.mcp.fixture_server --state-dir DIR [--http PORT]``. It records
every listing and every call (with the request's ``_meta``) in ``DIR/server.jsonl``, so
tests can check what the server really received. Files in ``DIR`` steer it:

* ``down``: exit at start (a server that does not come up);
* ``shifted``: ``shifty`` lists a different input schema;
* ``hidden-<tool>``: the tool is not listed;
* ``gate-slow.released``: lets a blocked ``slow_send`` finish (the `FileGate` ``"slow"``);
* ``gate-post.released``: the same for ``slow_post`` (the `FileGate` ``"post"``);
* ``post-first``: ``slow_post`` writes its ledger entry before it blocks;
* ``ledger-offline``: ``post_status`` (the verify tool of ``slow_post``) answers unknown.

This module stays light (the server itself is in ``_fixture_app``) so that a ``down``
server exits at once and tests can read the log without importing the MCP server SDK.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

LOG_NAME = "server.jsonl"
SEND_META = {"io.example/owner": "tests", "io.example/channel": "mail"}


def read_log(state_dir: Path) -> list[dict[str, Any]]:
    """Everything the server recorded, oldest first."""
    path = state_dir / LOG_NAME
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def calls(state_dir: Path, tool: str | None = None) -> list[dict[str, Any]]:
    """The recorded calls, of one tool if given."""
    return [e for e in read_log(state_dir) if e["event"] == "call" and (tool is None or e["tool"] == tool)]


def record(state_dir: Path, event: str, **fields: Any) -> None:
    line = json.dumps({"event": event, "pid": os.getpid(), **fields}, default=str) + "\n"
    fd = os.open(state_dir / LOG_NAME, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line.encode())
    finally:
        os.close(fd)


def _exit_with_parent() -> None:
    """A stdio server whose client died (SIGKILL) exits too, instead of lingering."""
    parent = os.getppid()

    def watch() -> None:
        while True:
            time.sleep(0.2)
            if os.getppid() != parent:
                os._exit(0)

    threading.Thread(target=watch, daemon=True).start()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--state-dir", type=Path, required=True)
    parser.add_argument("--http", type=int, default=None, metavar="PORT")
    args = parser.parse_args()
    state_dir: Path = args.state_dir
    state_dir.mkdir(parents=True, exist_ok=True)
    if (state_dir / "down").exists():
        print("fixture server: 'down' is set, exiting", file=sys.stderr)
        sys.exit(3)
    if args.http is None:
        _exit_with_parent()

    from tests.mcp._fixture_app import build

    server = build(state_dir)
    record(state_dir, "start", transport="http" if args.http else "stdio")
    if args.http is None:
        server.run("stdio")
    else:
        server.run("streamable-http", host="127.0.0.1", port=args.http)


if __name__ == "__main__":
    main()
