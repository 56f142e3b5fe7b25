"""The turn's history as the SDK's own: what a handoff input filter drops is dropped here too.

A handoff input filter (``handoff(input_filter=...)``, ``RunConfig.handoff_input_filter``)
rewrites the history the next agent gets; the SDK's history after the run
(``result.to_input_list()``) is the filtered history and the run's new items, and the
examples' loops send it as the next turn's input. A session stores what each turn
produced and rebuilds the input from the stored messages, so:

* the turn's new messages are the run's new items, and any item of the run's input that no
  stored message holds (the earlier runs of a turn an output validator restarted, a
  filter's summary), before them;
* a stored message the run's input no longer holds (the filter dropped it) is *hidden*:
  the carry names it (`TurnCarry.hidden`), and no later model call is shown it, so every
  later request is the plain run's. The turn names them as superseded
  (`TurnCompleted.superseded`), so the session's transcript is the SDK's history; the
  session keeps them for audit reads and earlier forks, and the snapshot names them
  (``framework_state["hidden_messages"]``).

Items are matched in order (the filter keeps the order of what it keeps), by their JSON.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

from agents import TResponseInputItem

__all__ = ["TurnInput"]


@dataclass(frozen=True)
class TurnInput:
    """The input a turn's runs start from, and which stored message each item is."""

    items: list[TResponseInputItem]
    sequences: list[int | None]
    """Per item, the stored message's sequence (None for what the runner shows besides)."""
    hidden: tuple[int, ...] = ()
    """What earlier turns' filters dropped: not in ``items``."""
    steered: tuple[str, ...] = ()
    """The digests of the steered messages the run's input holds after ``items`` (`_steered`)."""

    def split(self, run_input: Any) -> tuple[tuple[int, ...], list[TResponseInputItem]]:
        """After the run whose input is ``run_input``: every hidden message (earlier turns' and
        this run's), and the items of ``run_input`` that are not stored messages, in order."""
        if not isinstance(run_input, list):
            return self.hidden, []
        items = cast(list[TResponseInputItem], run_input)
        count = len(self.items)
        if items[:count] == self.items:
            return self.hidden, items[count:]
        keys = [_key(item) for item in self.items]
        kept: set[int] = set()
        added: list[TResponseInputItem] = []
        cursor = 0
        for item in items:
            key = _key(item)
            index = _find(keys, key, cursor)
            if index is None:
                added.append(item)
                continue
            kept.add(index)
            cursor = index + 1
        dropped = [
            sequence
            for index, sequence in enumerate(self.sequences)
            if index not in kept and sequence is not None
        ]
        return tuple(sorted({*self.hidden, *dropped})), added


def _find(keys: Sequence[str], key: str, start: int) -> int | None:
    for index in range(start, len(keys)):
        if keys[index] == key:
            return index
    return None


def _key(item: Any) -> str:
    return json.dumps(item, sort_keys=True, separators=(",", ":"), default=str)
