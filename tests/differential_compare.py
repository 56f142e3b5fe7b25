"""Comparisons every differential harness (`tests/adapter_*/differential/`) shares.

Tool runs are compared in the order they happened. Only where the framework itself runs the
calls of one model response concurrently is the order of those runs not the framework's to
promise; then, and only then, the runs are compared as a multiset. Each harness names the
place in its framework that runs them concurrently.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from sessionflow.demo import ModelReply

__all__ = ["calls_in_parallel", "tool_runs_difference"]


def calls_in_parallel(script: Iterable[ModelReply]) -> bool:
    """Whether a reply of ``script`` asks for more than one tool call at once."""
    return any(len(reply.tool_calls) > 1 for reply in script)


def _key(run: Any) -> str:
    return json.dumps(run, sort_keys=True, default=str)


def tool_runs_difference(
    plain: Sequence[Any], session: Sequence[Any], *, concurrent: bool
) -> tuple[list[Any], list[Any]] | None:
    """The two runs' tool runs as they differ, or None when they agree.

    In order unless ``concurrent`` (the framework ran some calls of one response at once):
    then as a multiset, the same runs as often each, in any order. What is returned is what
    to show: both lists in order, or, for a multiset, both sorted.
    """
    if not concurrent:
        return None if list(plain) == list(session) else (list(plain), list(session))
    if Counter(_key(r) for r in plain) == Counter(_key(r) for r in session):
        return None
    return sorted(plain, key=_key), sorted(session, key=_key)
