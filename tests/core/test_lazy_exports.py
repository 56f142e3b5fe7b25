"""`sessionflow.RedisDeltaTransport` is importable from the top level, and only loads redis when used."""

from __future__ import annotations

import subprocess
import sys

PROBE = """
import sys
import sessionflow
assert "redis" not in sys.modules, "importing sessionflow imported redis"
from sessionflow import RedisDeltaTransport
from sessionflow.redis_deltas import RedisDeltaTransport as Direct
assert RedisDeltaTransport is Direct and "redis" in sys.modules
assert "RedisDeltaTransport" in sessionflow.__all__
print("ok")
"""


def test_redis_delta_transport_loads_lazily_from_the_top_level() -> None:
    completed = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120, check=False
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == "ok"
