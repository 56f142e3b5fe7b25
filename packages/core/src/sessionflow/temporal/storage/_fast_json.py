"""Reading a step's payload JSON straight into its dataclass, in C, when that is exact.

Temporal's JSON converter parses a payload into dicts and lists, then builds the dataclass
field by field in Python (`value_to_type`): most of a model step's conversion CPU. msgspec
decodes the bytes into the dataclass in one pass. It is stricter than `value_to_type` (an
int for a float is fine, but a float for an int, or NaN, is refused), so any payload it
refuses, and any class it cannot describe, is read by the converter as before: a value it
does build equals the one Temporal builds (tests/temporal/storage/test_dataclass_decoding.py checks
every recorded payload), and every error stays Temporal's.
"""

from __future__ import annotations

import dataclasses
import typing
from typing import Any, ClassVar

import msgspec
from temporalio.api.common.v1 import Payload
from temporalio.converter import JSONPlainPayloadConverter

__all__ = ["FastJSONPlainPayloadConverter"]

_MAX_DECODERS = 1024
"""Classes remembered at most (as `_dataclass_decoding`'s plans)."""


class FastJSONPlainPayloadConverter(JSONPlainPayloadConverter):
    """`JSONPlainPayloadConverter`, with dataclass payloads decoded by msgspec when it can."""

    # None: a class msgspec cannot decode exactly (an init=False field, a type it lacks).
    _msgspec_decoders: ClassVar[dict[type, msgspec.json.Decoder[Any] | None]] = {}

    def from_payload(self, payload: Payload, type_hint: type | None = None) -> Any:
        if type_hint is not None:
            decoder = self._msgspec_decoder(type_hint)
            if decoder is not None:
                try:
                    return decoder.decode(payload.data)
                except msgspec.MsgspecError:
                    pass  # Temporal's path reads it or raises its own error
        return super().from_payload(payload, type_hint)

    @classmethod
    def _msgspec_decoder(cls, hint: type) -> msgspec.json.Decoder[Any] | None:
        try:
            return cls._msgspec_decoders[hint]
        except KeyError:
            pass
        except TypeError:
            return None  # an unhashable hint: not a class
        decoder: msgspec.json.Decoder[Any] | None = None
        if dataclasses.is_dataclass(hint) and _all_init(hint, set()):
            try:
                decoder = msgspec.json.Decoder(hint)
            except (TypeError, ValueError, NameError):
                decoder = None
        if len(cls._msgspec_decoders) >= _MAX_DECODERS:
            cls._msgspec_decoders.clear()
        cls._msgspec_decoders[hint] = decoder
        return decoder


def _all_init(cls: type, seen: set[type]) -> bool:
    """No field of the class, or of a dataclass it names, is left out of `__init__`.

    `value_to_type` sets such fields after construction; msgspec does not, so those
    classes keep Temporal's path. Field types are looked at as the class declares them.
    """
    if cls in seen:
        return True
    seen.add(cls)
    for field in dataclasses.fields(cls):
        if not field.init:
            return False
    for nested in _nested_dataclasses(cls):
        if not _all_init(nested, seen):
            return False
    return True


def _nested_dataclasses(cls: type) -> list[type]:
    found: list[type] = []
    pending: list[Any] = list(typing.get_type_hints(cls).values())
    while pending:
        hint = pending.pop()
        if isinstance(hint, type) and dataclasses.is_dataclass(hint):
            found.append(hint)
        pending.extend(typing.get_args(hint))
    return found
