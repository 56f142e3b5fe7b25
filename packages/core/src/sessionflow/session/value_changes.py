"""A change to a JSON value as its top-level fields: how a tool step hands back run state.

A framework's run context (OpenAI Agents) or deps (Pydantic AI) travels between steps as
JSON. A tool step returns what it changed, and the next model step applies the changes of
the calls before it in model order. Field by field, so two parallel calls that change
different fields both keep their change; of two that change one field, the later wins.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

__all__ = ["apply_value_change", "value_change"]


def value_change(before: Any, after: Any) -> dict[str, Any] | None:
    """The change from ``before`` to ``after`` (JSON values), or None when nothing changed.

    Objects give the top-level keys set (``{"set": {...}, "unset": [...]}``); anything else
    gives the whole new value (``{"value": ...}``).
    """
    if before == after:
        return None
    if isinstance(before, dict) and isinstance(after, dict):
        old, new = cast(dict[str, Any], before), cast(dict[str, Any], after)
        changed = {key: value for key, value in new.items() if key not in old or old[key] != value}
        return {"set": changed, "unset": [key for key in old if key not in new]}
    return {"value": after}


def apply_value_change(value: Any, change: Mapping[str, Any]) -> Any:
    """``value`` (JSON values) with one `value_change` applied."""
    if "value" in change:
        return change["value"]
    merged = dict(cast(dict[str, Any], value)) if isinstance(value, dict) else {}
    merged.update(cast(dict[str, Any], change["set"]))
    for key in cast(list[str], change.get("unset") or []):
        merged.pop(key, None)
    return merged
