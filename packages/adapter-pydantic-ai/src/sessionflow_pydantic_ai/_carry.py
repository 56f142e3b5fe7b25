"""What a turn hands the next one: the run's deps (`TurnCompleted.carry`).

A multi-turn app passes the same deps object to every `agent.run`; a session carries
their JSON from turn to turn (by reference when large: the core stores a big carry) and
shows it as `TurnCompleted.framework_state` (``{"deps": <the deps as JSON>}``).
"""

from __future__ import annotations

import json
from typing import Any, cast

__all__ = ["decode_carry", "encode_carry"]

_FORMAT = "sessionflow-pydantic-ai/carry-1"


def encode_carry(deps: Any) -> str:
    return json.dumps({"format": _FORMAT, "deps": deps}, separators=(",", ":"), ensure_ascii=False)


def decode_carry(text: str | None) -> tuple[bool, Any]:
    """(has_deps, deps) of a carry; (False, None) for none, or for a carry in another encoding."""
    if not text:
        return False, None
    try:
        raw: Any = json.loads(text)
    except ValueError:
        return False, None
    if not isinstance(raw, dict) or cast(dict[str, Any], raw).get("format") != _FORMAT:
        return False, None
    return True, cast(dict[str, Any], raw).get("deps")
