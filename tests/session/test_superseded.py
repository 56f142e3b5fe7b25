"""Superseded messages: the ranges a session keeps of messages the framework's history dropped."""

from __future__ import annotations

import dataclasses

import pytest

from sessionflow.session.superseded import SupersededRange, live_at_turn, superseded_range, with_superseded


def r(first: int, last: int, turn: int) -> SupersededRange:
    return SupersededRange(first=first, last=last, turn=turn)


def test_consecutive_sequences_make_one_range_and_gaps_split_them() -> None:
    assert with_superseded([], [5, 1, 2, 4], turn=3) == [r(1, 2, 3), r(4, 5, 3)]


def test_a_sequence_already_superseded_keeps_the_turn_that_superseded_it_first() -> None:
    ranges = with_superseded([], [1, 2], turn=2)
    # A framework that names everything its history lacks, every turn, names 1 and 2 again.
    assert with_superseded(ranges, [1, 2, 3], turn=4) == [r(1, 2, 2), r(3, 3, 4)]


def test_adjacent_ranges_merge_only_when_one_turn_superseded_both() -> None:
    ranges = with_superseded([], [1, 2], turn=2)
    assert with_superseded(ranges, [3, 4], turn=2) == [r(1, 4, 2)]
    assert with_superseded([r(1, 2, 2), r(6, 6, 2)], [3, 4, 5], turn=2) == [r(1, 6, 2)]


def test_a_range_is_found_by_any_sequence_inside_it_and_at_its_ends() -> None:
    ranges = [r(2, 4, 1), r(7, 7, 3)]
    assert [superseded_range(ranges, s) for s in range(1, 9)] == [
        None,
        r(2, 4, 1),
        r(2, 4, 1),
        r(2, 4, 1),
        None,
        None,
        r(7, 7, 3),
        None,
    ]


def test_a_message_is_live_at_a_turn_before_the_turn_that_superseded_it() -> None:
    ranges = [r(1, 2, 3)]
    assert [live_at_turn(ranges, 1, turn) for turn in (1, 2, 3, 4)] == [True, True, False, False]
    assert live_at_turn(ranges, 5, 9)


def test_a_new_range_merges_with_the_last_one_not_the_first() -> None:
    assert with_superseded([r(1, 1, 1)], [5, 6], turn=2) == [r(1, 1, 1), r(5, 6, 2)]
    assert with_superseded([r(1, 1, 1), r(3, 3, 2)], [4], turn=2) == [r(1, 1, 1), r(3, 4, 2)]


def test_a_range_is_a_value_named_by_keyword() -> None:
    # Pages and the session's state share ranges: none may change under another reader.
    with pytest.raises(dataclasses.FrozenInstanceError):
        r(1, 2, 3).last = 9  # pyright: ignore[reportAttributeAccessIssue]
    with pytest.raises(TypeError):
        SupersededRange(1, 2, 3)  # pyright: ignore[reportCallIssue]
