"""A JSON value's change as its top-level fields, and applying it (run context, deps)."""

from __future__ import annotations

from typing import Any

import pytest

from sessionflow.session.value_changes import apply_value_change, value_change


def test_no_change_is_none() -> None:
    assert value_change({"a": 1}, {"a": 1}) is None
    assert value_change(3, 3) is None


def test_an_object_change_names_only_the_fields_set_and_unset() -> None:
    change = value_change({"a": 1, "b": 2, "c": 3}, {"a": 1, "b": 5, "d": 4})
    assert change == {"set": {"b": 5, "d": 4}, "unset": ["c"]}


def test_a_field_set_to_a_falsy_value_is_a_change() -> None:
    assert value_change({"a": 1}, {"a": 0}) == {"set": {"a": 0}, "unset": []}
    assert value_change({}, {"a": None}) == {"set": {"a": None}, "unset": []}


@pytest.mark.parametrize(
    ("before", "after"), [(1, 2), ([1], [1, 2]), ({"a": 1}, [1]), (None, {"a": 1}), ({"a": 1}, None)]
)
def test_anything_but_two_objects_changes_as_a_whole(before: Any, after: Any) -> None:
    assert value_change(before, after) == {"value": after}


def test_apply_sets_and_unsets_fields_and_keeps_the_rest() -> None:
    value = {"a": 1, "b": 2, "c": 3}
    applied = apply_value_change(value, {"set": {"b": 5, "d": 4}, "unset": ["c", "missing"]})
    assert applied == {"a": 1, "b": 5, "d": 4}
    assert value == {"a": 1, "b": 2, "c": 3}  # the value given is not changed


def test_apply_a_whole_value() -> None:
    assert apply_value_change({"a": 1}, {"value": [1, 2]}) == [1, 2]
    assert apply_value_change({"a": 1}, {"value": None}) is None


def test_apply_fields_to_a_value_that_is_not_an_object_starts_from_empty() -> None:
    assert apply_value_change(None, {"set": {"a": 1}, "unset": []}) == {"a": 1}
    assert apply_value_change([1], {"set": {"a": 1}}) == {"a": 1}


def test_round_trip_of_two_parallel_changes_to_different_fields_keeps_both() -> None:
    before = {"seat": "1A", "meal": "any"}
    seat = value_change(before, {**before, "seat": "12A"})
    meal = value_change(before, {**before, "meal": "veg"})
    assert seat is not None and meal is not None
    assert apply_value_change(apply_value_change(before, seat), meal) == {"seat": "12A", "meal": "veg"}
