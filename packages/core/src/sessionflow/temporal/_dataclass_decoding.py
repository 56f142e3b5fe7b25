"""Decoding payload JSON into dataclasses with each class's field types looked up once.

Temporal's `value_to_type` calls `typing.get_type_hints` for every dataclass value it
builds. Our step inputs are nested dataclasses in modules with postponed annotations, so
every call evaluates each field's annotation text again: a model step's input, a list of
messages each with its own dataclasses, paid ~1 ms per message before the step began.
This converter builds dataclasses exactly as `value_to_type` does (fields by name, unknown
keys ignored, missing ones left to the constructor, ``init=False`` fields set after), from
field types it resolves once per class.
"""

from __future__ import annotations

import dataclasses
import typing
from typing import Any, ClassVar

from temporalio.converter import JSONTypeConverter, value_to_type

__all__ = ["CachedDataclassConverter"]

_Plan = tuple[tuple[str, Any, bool], ...]
"""Each field's name, resolved type and whether the constructor takes it."""

_MAX_PLANS = 1024
"""Classes remembered at most. Ours are a few dozen, passed through the workflow sandbox
as one set of classes; a process that builds classes on the fly only starts over."""


class CachedDataclassConverter(JSONTypeConverter):
    """Builds a dataclass from a JSON object; every other value is left to Temporal."""

    _plans: ClassVar[dict[type, _Plan]] = {}

    def to_typed_value(self, hint: type, value: Any) -> Any:
        # Typed `type` by Temporal, the hint is any annotation: `list[X]`, `X | None`, ...
        annotation: Any = hint
        if not (isinstance(annotation, type) and dataclasses.is_dataclass(annotation)):
            return JSONTypeConverter.Unhandled
        if not isinstance(value, dict):
            raise TypeError(f"Cannot convert to dataclass {hint}, value is {type(value)} not dict")
        fields = typing.cast(dict[str, Any], value)
        plan = self._plans.get(hint)
        if plan is None:
            if len(self._plans) >= _MAX_PLANS:
                self._plans.clear()
            hints = typing.get_type_hints(hint)
            plan = self._plans[hint] = tuple(
                (f.name, hints[f.name], f.init) for f in dataclasses.fields(hint)
            )
        taken: dict[str, Any] = {}
        late: dict[str, Any] = {}
        converters = [self]
        for name, field_hint, init in plan:
            if name not in fields:
                continue  # the constructor raises for a required one, as Temporal lets it
            try:
                converted = value_to_type(field_hint, fields[name], converters)
            except Exception as error:
                raise TypeError(f"Failed converting field {name} on dataclass {hint}") from error
            (taken if init else late)[name] = converted
        built = hint(**taken)
        for name, converted in late.items():
            object.__setattr__(built, name, converted)
        return built
