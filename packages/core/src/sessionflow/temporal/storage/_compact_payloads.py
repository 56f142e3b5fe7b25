"""Payload JSON that leaves out a dataclass field holding its default absence.

Step inputs and results are nested dataclasses (`RunModelInput`, `ToolCallInput`,
`AgentToolCall`...) whose optional fields are mostly None, False, 0 or empty in any one
step. Temporal's default encoder (`dataclasses.asdict`) writes every one of them, and those
nulls were a third of a tool turn's history. This encoder writes a field only when it holds
something, so a step's payload says what the step carries.

It is the same format, read by the same decoder: Temporal builds a dataclass from the keys
a payload has and lets the missing ones take their defaults. So a worker of an earlier
version (Temporal's default converter) reads these payloads, and this one reads theirs.
The rule it adds to `_payloads.py`'s: a field whose default is an absence (None, False, 0,
"" or an empty container) keeps that default for good, since a payload that leaves the
field out means it.

Only absences are left out. A default that is a choice (`accepts_asks=True`, a timeout)
is written even when it holds: a reader must not depend on today's default for it.
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar, cast

from temporalio.converter import (
    AdvancedJSONEncoder,
    CompositePayloadConverter,
    DataConverter,
    DefaultPayloadConverter,
    JSONPlainPayloadConverter,
)

from sessionflow.temporal.storage._dataclass_decoding import CachedDataclassConverter
from sessionflow.temporal.storage._encryption import RefusedPlaintextConverter
from sessionflow.temporal.storage._fast_json import FastJSONPlainPayloadConverter

__all__ = ["COMPACT_DATA_CONVERTER", "CompactJSONEncoder", "CompactPayloadConverter"]

_KEEP = object()


def _absence(default: Any) -> Any:
    # Containers compare by value, so one empty instance stands for every default_factory call.
    if default is None or default is False or (type(default) is int and default == 0):
        return default
    if isinstance(default, str | list | dict | tuple | set | frozenset) and not default:
        return cast(Any, default)
    return _KEEP


def _omittable(cls: type) -> tuple[tuple[str, Any], ...]:
    fields: list[tuple[str, Any]] = []
    for f in dataclasses.fields(cls):
        if f.default is not dataclasses.MISSING:
            default = f.default
        elif f.default_factory is not dataclasses.MISSING:
            default = f.default_factory()
        else:
            default = _KEEP
        # A field the constructor does not take is written as Temporal writes it.
        fields.append((f.name, _absence(default) if f.init else _KEEP))
    return tuple(fields)


class CompactJSONEncoder(AdvancedJSONEncoder):
    """`AdvancedJSONEncoder`, but a dataclass field equal to its absent default is left out.

    A dataclass becomes a shallow dict (the encoder reaches nested values itself), which
    also spares `asdict`'s deep copy of every nested field.
    """

    _fields: ClassVar[dict[type, tuple[tuple[str, Any], ...]]] = {}

    def default(self, o: Any) -> Any:
        cls: type = type(cast(object, o))
        if dataclasses.is_dataclass(o) and not isinstance(o, type):
            fields = self._fields.get(cls)
            if fields is None:
                fields = self._fields[cls] = _omittable(cls)
            out: dict[str, Any] = {}
            for name, absent in fields:
                value = getattr(o, name)
                # `is` first: most absences are the None and False singletons.
                if absent is not _KEEP and (
                    value is absent or (type(value) is type(absent) and value == absent)
                ):
                    continue
                out[name] = value
            return out
        return super().default(o)


class CompactPayloadConverter(CompositePayloadConverter):
    """Temporal's default payload converters, with `CompactJSONEncoder` for JSON (and
    msgspec, or else `CachedDataclassConverter`, to read it back)."""

    def __init__(self) -> None:
        # Temporal builds a payload converter for every serialization context (several per
        # step), and these converters hold no state: one set serves them all.
        super().__init__(*_CONVERTERS)


# Temporal's own list, so every other value is written as a default worker writes it.
_CONVERTERS = (
    *(
        FastJSONPlainPayloadConverter(
            encoder=CompactJSONEncoder, custom_type_converters=[CachedDataclassConverter()]
        )
        if isinstance(c, JSONPlainPayloadConverter)
        else c
        for c in DefaultPayloadConverter.default_encoding_payload_converters
    ),
    # Last: it writes nothing, and reads only what a strict encryption codec refused.
    RefusedPlaintextConverter(),
)


COMPACT_DATA_CONVERTER = DataConverter(payload_converter_class=CompactPayloadConverter)
"""Temporal's default data converter with compact dataclass JSON."""
