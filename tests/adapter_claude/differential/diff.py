"""Differences shown as a unified diff of pretty JSON, the way assertion messages print them."""

from __future__ import annotations

import difflib
import json
from typing import Any

__all__ = ["diff", "pretty"]


def pretty(value: Any) -> str:
    return json.dumps(value, indent=1, sort_keys=True, ensure_ascii=False, default=str)


def diff(a: Any, b: Any) -> str:
    """``a`` against ``b`` (- a, + b), with two lines of context."""
    lines = difflib.unified_diff(pretty(a).splitlines(), pretty(b).splitlines(), lineterm="", n=2)
    return "\n".join(list(lines)[2:]) or f"- {a!r}\n+ {b!r}"
