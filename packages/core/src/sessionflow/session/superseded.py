"""Superseded messages: stored messages the framework's own history no longer holds.

A framework may rewrite its history during a turn: a handoff's input filter drops items,
a summarizer replaces old messages with a summary. The stored transcript is what the
framework's history holds after a plain run, so such messages stop being part of it.
They are not deleted: messages are only ever appended (sequences, digests and the stored
index depend on that), forks at an earlier turn still hold them, and an audit read can
ask for them (`include_superseded`). Reads leave them out by default.

The session records them as ranges of sequences, each with the turn that superseded it,
so the record stays small however many messages a summary replaces.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = ["SupersededRange", "live_at_turn", "superseded_range", "with_superseded"]


@dataclass(frozen=True, kw_only=True)
class SupersededRange:
    """Messages `first`..`last` (inclusive) were superseded by turn number `turn`."""

    first: int
    last: int
    turn: int


def superseded_range(ranges: Sequence[SupersededRange], sequence: int) -> SupersededRange | None:
    """The range holding `sequence`, or None when the message is not superseded.

    `ranges` are sorted and disjoint (`with_superseded` keeps them so).
    """
    at = bisect_right([r.first for r in ranges], sequence) - 1
    if at >= 0 and ranges[at].last >= sequence:
        return ranges[at]
    return None


def with_superseded(
    ranges: Sequence[SupersededRange], sequences: Iterable[int], turn: int
) -> list[SupersededRange]:
    """`ranges` plus `sequences`, superseded by `turn`, sorted, disjoint and merged.

    A sequence already superseded keeps the turn that superseded it first: a framework
    that names every message its history lacks, turn after turn, changes nothing twice.
    """
    fresh = {s for s in sequences if superseded_range(ranges, s) is None}
    added = [SupersededRange(first=s, last=s, turn=turn) for s in fresh]
    merged: list[SupersededRange] = []
    for r in sorted([*ranges, *added], key=lambda r: r.first):
        last = merged[-1] if merged else None
        if last is not None and last.turn == r.turn and last.last == r.first - 1:
            merged[-1] = SupersededRange(first=last.first, last=r.last, turn=r.turn)
        else:
            merged.append(r)
    return merged


def live_at_turn(ranges: Sequence[SupersededRange], sequence: int, turn: int) -> bool:
    """The message was still in the framework's history at the end of turn number `turn`."""
    found = superseded_range(ranges, sequence)
    return found is None or found.turn > turn
