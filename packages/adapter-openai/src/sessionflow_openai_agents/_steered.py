"""Steering: user messages that join a running turn at its next model call.

The SDK's own way to add a message to a running run is ``RunState.add_input``: the input
waits in the state and is admitted right before the next model call, after the tool results
of the resumed turn, as an ``InputItem`` of the run's new items (so ``to_input_list()``
holds it where the model saw it). A model step that resumes a saved state stages the
step's steered messages so; one that starts a fresh run (a turn's first step, an output
validator's restart) has no state yet and puts them after the run's input, as the plain
``Runner.run(agent, history + [{"role": "user", ...}])`` does.

A steered message in the run's *input* is not a stored message, so the turn's end would
take it for an item the runner added (`_history`); the run state names these items by their
digest (``steered``) and the turn stores them as the user's. A step in which only an agent
tool's sub-agent moves keeps the messages staged in the parent's saved state
(``pending_input``, the field ``add_input`` fills), for the parent's next model call.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any, cast

from agents import RunState, TResponseInputItem

from sessionflow.kit import FrameworkMessage
from sessionflow_openai_agents._items import input_items

__all__ = ["STEERED_KEY", "digest", "stage", "stage_in_saved", "steered_items", "steered_user_digests"]

STEERED_KEY = "steered"
"""Run state key: the digests of the steered messages in the run's input."""


def steered_items(messages: Sequence[FrameworkMessage]) -> list[TResponseInputItem]:
    """The steered messages as the run's input items (images read into data URLs)."""
    return input_items(messages)


def stage(state: RunState[Any, Any], items: list[TResponseInputItem]) -> None:
    """Stage ``items`` for the resumed run's next model call (``RunState.add_input``)."""
    if items:
        state.add_input(items)


def stage_in_saved(text: str, items: list[TResponseInputItem]) -> str:
    """The saved run state ``text`` with ``items`` staged as ``add_input`` stages them: the
    parent run of an agent tool whose sub-agent moved admits them at its next model call."""
    if not items:
        return text
    envelope = cast(dict[str, Any], json.loads(text))
    data = cast(dict[str, Any], envelope["state"])
    data["pending_input"] = [*cast(list[Any], data.get("pending_input") or []), *items]
    return json.dumps(envelope, separators=(",", ":"), ensure_ascii=False)


def digest(item: Any) -> str:
    """An item's digest: its canonical JSON's, so a data URL is not stored twice."""
    canonical = json.dumps(item, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


def steered_user_digests(items: Sequence[Any]) -> list[str]:
    """The digests of the user items among ``items``: in a run's produced items, the only
    user items are the input ``add_input`` admitted, which is what steers."""
    return [digest(item) for item in items if _is_user_item(item)]


def _is_user_item(item: Any) -> bool:
    return isinstance(item, dict) and cast(dict[str, Any], item).get("role") == "user"
