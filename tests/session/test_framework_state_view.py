"""framework_state_view: a framework's state values as JSON within a byte bound.

The bound counts 2 bytes for the braces and, per key, its JSON, its value's compact JSON
and 2 bytes for the colon and a comma, all as UTF-8.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from sessionflow.session.framework_state import FRAMEWORK_STATE_BYTES, framework_state_view


def _size(values: Mapping[str, object]) -> int:
    return 2 + sum(
        len(json.dumps(key, ensure_ascii=False).encode())
        + 2
        + len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode())
        for key, value in values.items()
    )


def test_values_fill_the_bound_exactly_and_no_further() -> None:
    values = {"a": "x" * 10, "b": "y" * 10}
    whole = _size(values)
    assert whole == 2 + 2 * (3 + 2 + 12)
    assert framework_state_view(values, whole) == (values, [])
    kept, omitted = framework_state_view(values, whole - 1)
    assert kept == {"a": "x" * 10}
    assert omitted == ["b"]


def test_a_later_small_value_still_fits_after_a_large_one_is_left_out() -> None:
    values = {"big": "z" * 100, "small": 1}
    kept, omitted = framework_state_view(values, 20)
    assert kept == {"small": 1}
    assert omitted == ["big"]


def test_sizes_count_utf8_bytes_of_keys_and_values() -> None:
    values = {"é": "ü"}
    size = _size(values)
    assert size == 2 + 4 + 2 + 4
    assert framework_state_view(values, size)[0] == values
    assert framework_state_view(values, size - 1) == ({}, ["é"])


def test_values_json_cannot_hold_become_text_and_the_default_bound_is_64_kib() -> None:
    kept, omitted = framework_state_view({"when": set, "n": 3})
    assert kept == {"when": str(set), "n": 3}
    assert omitted == []
    assert FRAMEWORK_STATE_BYTES == 64 * 1024
    big = "w" * (FRAMEWORK_STATE_BYTES - _size({"k": ""}))
    assert framework_state_view({"k": big})[1] == []
    assert framework_state_view({"k": big + "w"})[1] == ["k"]
