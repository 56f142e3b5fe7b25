# redis-py ships partial annotations.
# pyright: reportUnknownMemberType=false
"""A real redis-server on a free port, for the tests of the Redis delta transport."""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Generator
from contextlib import contextmanager

import redis

from sessionflow.temporal import free_port

__all__ = ["running_redis"]


@contextmanager
def running_redis() -> Generator[str]:
    """Start redis-server (no persistence), wait until it answers, yield its URL, then stop it."""
    binary = shutil.which("redis-server")
    assert binary, "redis-server is required (`bash ci/test` installs it with apt-get)"
    port = free_port()
    process = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"redis://127.0.0.1:{port}/0"
    try:
        client = redis.Redis.from_url(url)
        deadline = time.monotonic() + 10
        while True:
            try:
                if client.ping():
                    break
            except redis.ConnectionError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.02)  # a fresh process: nothing to wait on but its port
        yield url
    finally:
        process.terminate()
        process.wait(10)
