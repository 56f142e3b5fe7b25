"""Sizes for the tests that scale: smaller in CI, their full sizes in `bench/full_sizes.sh`.

A big-session or long-session test proves the same property at either size (the history
stays flat per turn, the session outgrows the server's per-run limits, every message is
kept), so CI plays the smaller size and `SESSIONFLOW_TEST_SCALE=full` plays the full one.
"""

from __future__ import annotations

import os

__all__ = ["FULL_SCALE", "SCALE_ENV", "scaled"]

SCALE_ENV = "SESSIONFLOW_TEST_SCALE"
FULL_SCALE = os.environ.get(SCALE_ENV, "").strip() == "full"


def scaled(ci: int, full: int) -> int:
    """`full` when ``$SESSIONFLOW_TEST_SCALE`` is ``full``, else `ci`."""
    return full if FULL_SCALE else ci
