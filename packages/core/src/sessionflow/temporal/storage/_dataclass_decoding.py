"""Decoding payload JSON into dataclasses with each class's field types looked up once.

Temporal's `value_to_type` calls `typing.get_type_hints` for every dataclass value it
builds. Our step inputs are nested dataclasses in modules with postponed annotations, so
every call evaluates each field's annotation text again: a model step's input, a list of
messages each with its own dataclasses, paid ~1 ms per message before the step began.
This converter builds dataclasses exactly as `value_to_type` does (fields by name, unknown
keys ignored, missing ones left to the constructor, ``init=False`` fields set after), from
field types it resolves once per class, and with a decoder per field chosen once: the
common shapes (a str, an int, an optional, a list, a nested dataclass, Any) are read
directly, and anything else, or a value of another type than expected, goes to
`value_to_type` as before, so that its conversions and its errors stay Temporal's.
"""

from __future__ import annotations

import dataclasses
import enum
import types
import typing
from collections.abc import Callable
from typing import Any, ClassVar

from temporalio.converter import JSONTypeConverter, value_to_type

__all__ = ["CachedDataclassConverter"]

_Decode = Callable[[Any], Any]
_Plan = tuple[tuple[str, _Decode, bool], ...]
"""Each field's name, its decoder and whether the constructor takes it."""

_EXACT = (str, int, float, bool)
"""Types whose JSON value is taken as it is when it already has exactly that type."""

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
                (f.name, self._decoder(hints[f.name]), f.init) for f in dataclasses.fields(hint)
            )
        taken: dict[str, Any] = {}
        late: dict[str, Any] = {}
        for name, decode, init in plan:
            if name not in fields:
                continue  # the constructor raises for a required one, as Temporal lets it
            try:
                converted = decode(fields[name])
            except Exception as error:
                raise TypeError(f"Failed converting field {name} on dataclass {hint}") from error
            (taken if init else late)[name] = converted
        built = hint(**taken)
        for name, converted in late.items():
            object.__setattr__(built, name, converted)
        return built

    def _decoder(self, hint: Any) -> _Decode:
        """How one field's JSON value becomes its typed value; `value_to_type` when unsure."""
        converters = [self]

        def general(value: Any) -> Any:
            return value_to_type(hint, value, converters)

        if hint is Any:
            return _as_is
        if hint in _EXACT:

            def exact(value: Any) -> Any:
                # `type() is`, not isinstance: a bool is an int, and Temporal refuses or converts it.
                return value if type(value) is hint else general(value)

            return exact
        if _is_str_enum(hint):

            def member(value: Any) -> Any:
                return hint(value) if type(value) is str else general(value)

            return member
        if isinstance(hint, type) and dataclasses.is_dataclass(hint):

            def nested(value: Any) -> Any:
                return self.to_typed_value(hint, value) if isinstance(value, dict) else general(value)

            return nested
        origin = typing.get_origin(hint)
        args = typing.get_args(hint)
        if origin is list and len(args) == 1:
            item = self._decoder(args[0])

            def items(value: Any) -> Any:
                if type(value) is not list:
                    return general(value)
                return [item(v) for v in typing.cast(list[Any], value)]

            return items
        if (origin is typing.Union or origin is types.UnionType) and len(args) == 2 and type(None) in args:
            # `X | None`: Temporal tries X first, which refuses a None for every X handled
            # here, then None; any other value is X's.
            (inner,) = [a for a in args if a is not type(None)]
            if inner is Any or not (
                inner in _EXACT or typing.get_origin(inner) is list or _is_dataclass(inner)
            ):
                return general
            some = self._decoder(inner)

            def optional(value: Any) -> Any:
                return None if value is None else some(value)

            return optional
        return general


def _as_is(value: Any) -> Any:
    return value


def _is_dataclass(hint: Any) -> bool:
    return isinstance(hint, type) and dataclasses.is_dataclass(hint)


def _is_str_enum(hint: Any) -> bool:
    return isinstance(hint, type) and issubclass(hint, enum.Enum) and issubclass(hint, str)
