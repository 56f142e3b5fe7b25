"""The framework's own state after a turn, as a JSON view the snapshot shows (issue 21).

A runner may end a turn with `TurnCompleted(framework_state={...})`: the state its
framework holds besides the session's messages (a LangGraph thread's state keys), as
JSON values by key. It is for reading only: the session never hands it back to a runner
(the carry is what the next turn starts from), so a runner is free in what it shows.

Like the carry, a completed turn's view replaces the last one, None shows none, and a
turn that did not complete keeps the view it started with. The RunModel activity bounds
it before it enters the workflow's history (`bounded_framework_state`): keys are kept in
the runner's order while the view stays under `FRAMEWORK_STATE_BYTES`, and a key that
does not fit is named in `framework_state_omitted` instead, so every key shown is whole.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from sessionflow.session.outcomes import TurnCompleted

__all__ = ["FRAMEWORK_STATE_BYTES", "bounded_framework_state", "framework_state_view"]

FRAMEWORK_STATE_BYTES = 64 * 1024
"""The most UTF-8 bytes of JSON a view keeps (the snapshot is a query, its history a payload)."""


def framework_state_view(
    values: Mapping[str, Any], limit: int = FRAMEWORK_STATE_BYTES
) -> tuple[dict[str, Any], list[str]]:
    """``values`` as JSON values (what JSON cannot hold becomes its `str`), within ``limit``.

    Returns the keys that fit, in order, and the keys left out because they did not.
    """
    kept: dict[str, Any] = {}
    omitted: list[str] = []
    used = 2  # the braces
    for key, value in values.items():
        text = json.dumps(value, default=str, ensure_ascii=False, separators=(",", ":"))
        size = len(json.dumps(str(key), ensure_ascii=False).encode()) + 2 + len(text.encode())
        if used + size > limit:
            omitted.append(str(key))
            continue
        kept[str(key)] = json.loads(text)
        used += size
    return kept, omitted


def bounded_framework_state(outcome: TurnCompleted, limit: int = FRAMEWORK_STATE_BYTES) -> TurnCompleted:
    """``outcome`` with its view made JSON and bounded (`framework_state_view`)."""
    if outcome.framework_state is None:
        return outcome
    kept, omitted = framework_state_view(outcome.framework_state, limit)
    return replace(
        outcome, framework_state=kept, framework_state_omitted=[*outcome.framework_state_omitted, *omitted]
    )
