"""`CachedDataclassConverter`: dataclasses read as Temporal's `value_to_type` reads them.

Every recorded step payload decodes to the same value through it as through Temporal's
default converter (a worker of an earlier version), and the edge cases of `value_to_type`
(``init=False`` fields, unknown keys, a missing required field, a value that is not an
object, a dataclass inside a union) behave alike.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any

import pytest
from temporalio.api.common.v1 import Payload
from temporalio.converter import DataConverter

from sessionflow.temporal._payloads import RunModelInput, RunModelResult, ToolCallInput
from sessionflow.temporal.storage._compact_payloads import COMPACT_DATA_CONVERTER
from sessionflow.temporal.storage._dataclass_decoding import CachedDataclassConverter
from sessionflow.temporal.storage._fast_json import FastJSONPlainPayloadConverter
from tests.temporal.storage.test_compact_payloads import _recorded  # pyright: ignore[reportPrivateUsage]

CACHED = COMPACT_DATA_CONVERTER.payload_converter
DEFAULT = DataConverter.default.payload_converter


def test_every_recorded_payload_decodes_as_temporal_decodes_it() -> None:
    recorded = _recorded()
    assert len(recorded) > 100
    different = [
        where for where, kind, p in recorded if CACHED.from_payload(p, kind) != DEFAULT.from_payload(p, kind)
    ]
    assert not different, different


@dataclass
class _Inner:
    name: str
    size: int = 0


@dataclass
class _Outer:
    inner: _Inner
    items: list[_Inner] = field(default_factory=lambda: [])
    either: _Inner | int | None = None
    derived: str = field(default="", init=False)


def _json(value: dict[str, Any]) -> Payload:
    return Payload(metadata={"encoding": b"json/plain"}, data=json.dumps(value).encode())


def _both(value: dict[str, Any], kind: type[Any]) -> tuple[Any, Any]:
    return CACHED.from_payload(_json(value), kind), DEFAULT.from_payload(_json(value), kind)


def test_nested_lists_unions_unknown_keys_and_init_false_fields() -> None:
    raw = {
        "inner": {"name": "a", "unknown": 1},
        "items": [{"name": "b", "size": 2}, {"name": "c"}],
        "either": {"name": "d"},
        "derived": "kept",
    }
    cached, default = _both(raw, _Outer)
    assert cached == default
    assert cached.items[1] == _Inner("c") and cached.either == _Inner("d") and cached.derived == "kept"
    assert _both({"inner": {"name": "a"}, "either": 3}, _Outer)[0].either == 3


def test_bad_values_fail_as_temporal_fails() -> None:
    for raw in ({"inner": {"size": 1}}, {"inner": "not an object"}, {"inner": {"name": "a", "size": "x"}}):
        _assert_same_error(raw, _Outer)


def _assert_same_error(raw: dict[str, Any], kind: type[Any]) -> None:
    """Both converters refuse the value, with the same exception and message."""
    errors: list[str] = []
    for converter in (CACHED, DEFAULT):
        with pytest.raises(Exception) as caught:
            converter.from_payload(_json(raw), kind)
        errors.append(f"{type(caught.value).__name__}: {caught.value}")
    assert errors[0] == errors[1], raw


def test_a_class_s_field_types_are_looked_up_once() -> None:
    converter = CachedDataclassConverter()
    converter.to_typed_value(_Inner, {"name": "a"})
    plan = CachedDataclassConverter._plans[_Inner]  # pyright: ignore[reportPrivateUsage]
    converter.to_typed_value(_Inner, {"name": "b"})
    assert CachedDataclassConverter._plans[_Inner] is plan  # pyright: ignore[reportPrivateUsage]
    assert [name for name, _, _ in plan] == [f.name for f in dataclasses.fields(_Inner)]


@dataclass
class _Step:
    name: str
    count: int = 0
    share: float = 0.0
    inner: _Inner | None = None


def test_step_payloads_are_read_by_msgspec_and_what_it_refuses_by_temporal_s_path() -> None:
    # The wire types take the C path; a class with an init=False field keeps Temporal's.
    fast = FastJSONPlainPayloadConverter._msgspec_decoder  # pyright: ignore[reportPrivateUsage]
    assert all(fast(kind) is not None for kind in (RunModelInput, RunModelResult, ToolCallInput, _Step))
    assert fast(_Outer) is None
    for raw in (
        {"name": "a", "count": 2, "share": 1, "inner": {"name": "b"}},
        {"name": "a", "count": 2.0},  # msgspec refuses a float for an int; Temporal makes it 2
        {"name": "a", "share": 0.5, "unknown": [1]},
        {"name": "a", "count": True},  # msgspec refuses a bool for an int; Temporal makes it 1
    ):
        cached, default = _both(raw, _Step)
        assert cached == default and type(cached.count) is int and type(cached.share) is float, raw
    for raw in ({"count": 1}, {"name": 3}, {"name": "a", "share": "x"}, {"name": "a", "inner": 5}):
        _assert_same_error(raw, _Step)
