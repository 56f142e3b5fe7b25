"""ci/mutants' fork server: one pytest run per mutant without paying pytest's start-up each time.

A fresh `python -m pytest` spends 1.5 s or more importing pytest's plugins, Hypothesis,
temporalio and the frameworks before it runs a test; a mutant's tests often take less.
This process imports those once (the third-party modules the baseline run imported: never
a module of this repository, which must be read from disk after each mutant is written),
then forks a child per request. The child is a new session (so a time limit can kill its
whole process group), takes the request's environment, output file and arguments, and
exits the way `python -m pytest` does, through `sys.exit`: its atexit handlers and
non-daemon threads are ended as in a fresh process.

Protocol, one JSON object per line: a request on stdin {"args", "env", "log"}; on stdout
{"pid"} when the child starts, then {"pid", "status"} when it ends.
"""

from __future__ import annotations

import gc
import importlib
import json
import os
import signal
import sys
import threading
from typing import Any, cast


def preload(names: list[str]) -> None:
    for name in names:
        try:
            importlib.import_module(name)
        except BaseException:  # A module that cannot load alone is imported by the child instead.
            sys.modules.pop(name, None)
    # Frozen, the preloaded objects are left out of every collection in the children (pytest
    # collects twice as it ends) and their memory pages stay shared.
    gc.freeze()
    if threading.active_count() > 1:
        # A thread does not survive fork; a child would miss it.
        raise SystemExit("ci/mutants fork server: a preloaded module started a thread")


def serve() -> dict[str, Any] | None:
    """Answers requests; returns (in the child) the request the child is to run."""
    for line in sys.stdin:
        request = cast(dict[str, Any], json.loads(line))
        pid = os.fork()
        if pid == 0:
            return request
        _say({"pid": pid})
        _, status = os.waitpid(pid, 0)
        _say({"pid": pid, "status": os.waitstatus_to_exitcode(status)})
    return None


def _say(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def become(request: dict[str, Any]) -> None:
    """Turns the forked child into `python -m pytest ARGS` run from the repository root."""
    os.setsid()
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGHUP, signal.SIG_DFL)
    log = os.open(cast(str, request["log"]), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.close(log)
    os.close(devnull)
    sys.stdin = open(0, closefd=False)  # the process's own stdin, for its life
    os.environ.clear()
    os.environ.update(cast(dict[str, str], request["env"]))
    sys.dont_write_bytecode = bool(os.environ.get("PYTHONDONTWRITEBYTECODE"))
    root = cast(str, request["cwd"])
    os.chdir(root)
    # As `python -m pytest` from the root: the working folder first, then PYTHONPATH's.
    extra = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    sys.path[0:1] = [root, *extra]
    sys.argv = [sys.executable, *cast(list[str], request["args"])]


def main() -> None:
    preload(cast(list[str], json.loads(sys.argv[1])))
    _say({"ready": True})
    request = serve()
    if request is None:
        return
    become(request)
    import pytest

    sys.exit(pytest.main(sys.argv[1:]))


if __name__ == "__main__":
    main()
