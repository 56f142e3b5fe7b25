"""What a turn hands the next one: the run's deps and, where a history processor rewrote it,
Pydantic AI's own message history (`TurnCompleted.carry`).

A multi-turn app passes the same deps object to every `agent.run`, and the history the last
run left (``result.all_messages()``); a session carries the deps' JSON from turn to turn (by
reference when large: the core stores a big carry) and shows them as
`TurnCompleted.framework_state` (``{"deps": <the deps as JSON>}``). The history travels
only once it is no longer the stored messages (`_framework_history`).

The system prompt the session's first request made travels the same way, as the plain
run's history holds it from its first request on (`_framework_history`).

Format 1 holds the deps and the system prompt (a key a worker of an earlier version ignores:
it renders the system prompt again, as it always did); format 2 the history too, and is
written only when there is one, so a worker that cannot read it reads no carry rather than
one without it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, cast

from pydantic_ai.messages import SystemPromptPart

from sessionflow_pydantic_ai._framework_history import CarriedHistory
from sessionflow_pydantic_ai._messages import dump_system_prompt, load_system_prompt

__all__ = ["Carry", "decode_carry", "encode_carry"]

_FORMAT = "sessionflow-pydantic-ai/carry-1"
_FORMAT_WITH_HISTORY = "sessionflow-pydantic-ai/carry-2"


@dataclass(frozen=True)
class Carry:
    has_deps: bool = False
    deps: Any = None
    history: CarriedHistory | None = None
    system_prompt: list[SystemPromptPart] | None = None


def encode_carry(
    has_deps: bool,
    deps: Any,
    history: CarriedHistory | None = None,
    system_prompt: list[SystemPromptPart] | None = None,
) -> str | None:
    """The carry of a completed turn; None when it has nothing to carry."""
    if not has_deps and history is None and system_prompt is None:
        return None
    data: dict[str, Any] = {"format": _FORMAT if history is None else _FORMAT_WITH_HISTORY}
    if has_deps:
        data["deps"] = deps
    if history is not None:
        data["history"] = history.to_json()
    if system_prompt is not None:
        data["system_prompt"] = dump_system_prompt(system_prompt)
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False)


def decode_carry(text: str | None) -> Carry:
    """The carry of the last completed turn; an empty one for none, or for another encoding."""
    if not text:
        return Carry()
    try:
        raw: Any = json.loads(text)
    except ValueError:
        return Carry()
    if not isinstance(raw, dict):
        return Carry()
    data = cast(dict[str, Any], raw)
    system_prompt = load_system_prompt(data["system_prompt"]) if "system_prompt" in data else None
    if data.get("format") == _FORMAT:
        # Format 1 held the deps whenever it held nothing else (None for deps that were None).
        return Carry(
            has_deps="deps" in data or system_prompt is None,
            deps=data.get("deps"),
            system_prompt=system_prompt,
        )
    if data.get("format") == _FORMAT_WITH_HISTORY:
        return Carry(
            has_deps="deps" in data,
            deps=data.get("deps"),
            history=CarriedHistory.from_json(data.get("history")),
            system_prompt=system_prompt,
        )
    return Carry()
