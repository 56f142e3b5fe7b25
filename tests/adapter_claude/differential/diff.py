"""Differences shown as a unified diff of pretty JSON, the way assertion messages print them."""

from __future__ import annotations

import difflib
import json
from typing import Any, cast

__all__ = ["diff", "pretty"]


def pretty(value: Any) -> str:
    return json.dumps(value, indent=1, sort_keys=True, ensure_ascii=False, default=str)


def _split(value: Any) -> Any:
    """For display only: a string with line breaks as the list of its lines, so a difference
    in a long prompt shows as the lines that differ."""
    if isinstance(value, str) and "\n" in value:
        return value.split("\n")
    if isinstance(value, dict):
        return {k: _split(v) for k, v in cast(dict[str, Any], value).items()}
    if isinstance(value, list | tuple):
        return [_split(v) for v in cast(list[Any], value)]
    return value


def diff(a: Any, b: Any) -> str:
    """``a`` against ``b`` (- a, + b), with two lines of context."""
    a, b = _split(a), _split(b)
    lines = difflib.unified_diff(pretty(a).splitlines(), pretty(b).splitlines(), lineterm="", n=2)
    return "\n".join(list(lines)[2:]) or f"- {a!r}\n+ {b!r}"
