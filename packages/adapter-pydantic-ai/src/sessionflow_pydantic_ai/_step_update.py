"""What a tool step hands the next model step (`ToolExecutionResult.state_update`).

Three things travel this way: the deps the tool changed (`sessionflow.session.value_change`),
what agent runs nested in the tool added to its usage (``usage=ctx.usage``, `_delegation`),
which the next model step counts in the turn's usage, and what the tool returned when it was not text (a dict, a dataclass, a pydantic model, as JSON values), so
the next model step gives Pydantic AI the value the plain run's history keeps, not the
text the model was shown. The next model step applies the deps updates of the calls
before it in model order (`AgentTurnContext.state_updates`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, cast

from pydantic_ai.usage import RunUsage

from sessionflow import SessionStateError

__all__ = [
    "StepUpdate",
    "delegated_usage",
    "encode_step_update",
    "read_step_update",
    "returned_values",
    "usage_json",
]

_USAGE_FIELDS = (
    "requests",
    "tool_calls",
    "input_tokens",
    "output_tokens",
    "cache_write_tokens",
    "cache_read_tokens",
)

_FORMAT = "sessionflow-pydantic-ai/update-1"


@dataclass(frozen=True)
class StepUpdate:
    deps: dict[str, Any] | None = None
    """The deps' change (`sessionflow.session.value_change`); None: unchanged."""
    returned: bool = False
    """Whether `content` holds the tool's return value."""
    content: Any = None
    usage: dict[str, int] | None = None
    """What nested agent runs added to the tool's ``ctx.usage`` (`usage_json`); None: nothing."""


def usage_json(usage: RunUsage | None) -> dict[str, int] | None:
    """A nested run's usage as the update carries it: its nonzero counters."""
    if usage is None:
        return None
    counters = {name: int(getattr(usage, name)) for name in _USAGE_FIELDS if getattr(usage, name)}
    return counters or None


def delegated_usage(updates: Iterable[tuple[str, str]]) -> RunUsage:
    """What the nested runs of these calls added to the turn's usage, summed."""
    total = RunUsage()
    for tool_call_id, text in updates:
        counters = read_step_update(tool_call_id, text).usage or {}
        total.incr(
            RunUsage(
                requests=int(counters.get("requests", 0)),
                tool_calls=int(counters.get("tool_calls", 0)),
                input_tokens=int(counters.get("input_tokens", 0)),
                output_tokens=int(counters.get("output_tokens", 0)),
                cache_write_tokens=int(counters.get("cache_write_tokens", 0)),
                cache_read_tokens=int(counters.get("cache_read_tokens", 0)),
            )
        )
    return total


def encode_step_update(
    deps: dict[str, Any] | None, returned: bool, content: Any, usage: dict[str, int] | None = None
) -> str | None:
    """The update text, or None when there is nothing to hand on."""
    if deps is None and not returned and usage is None:
        return None
    update: dict[str, Any] = {"format": _FORMAT}
    if deps is not None:
        update["deps"] = deps
    if returned:
        update["content"] = content
    if usage is not None:
        update["usage"] = usage
    return json.dumps(update, separators=(",", ":"), ensure_ascii=False)


def read_step_update(tool_call_id: str, text: str | None) -> StepUpdate:
    """The update a successful call's record carries (an empty one for none)."""
    if text is None:
        return StepUpdate()
    try:
        raw: Any = json.loads(text)
    except ValueError:
        raise SessionStateError(f"the state update of tool call {tool_call_id!r} is not JSON") from None
    update = cast(dict[str, Any], raw) if isinstance(raw, dict) else {}
    if update.get("format") != _FORMAT:
        raise SessionStateError(f"unsupported state update format {update.get('format')!r}")
    return StepUpdate(
        deps=cast(dict[str, Any] | None, update.get("deps")),
        returned="content" in update,
        content=update.get("content"),
        usage=cast(dict[str, int] | None, update.get("usage")),
    )


def returned_values(updates: Iterable[tuple[str, str]]) -> dict[str, Any]:
    """The values the tool steps returned, by call ID (those that returned text are absent)."""
    values: dict[str, Any] = {}
    for tool_call_id, text in updates:
        update = read_step_update(tool_call_id, text)
        if update.returned:
            values[tool_call_id] = update.content
    return values
