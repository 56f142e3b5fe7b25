"""The building blocks of case files, below the case model: JSON values, text matchers, PNGs.

`Node` reads one JSON value of a case file; every error it raises is a `CaseFileError` that
names the file and the JSON pointer of the bad field. `TextMatch` is a text matcher of a case
file: a string means "equals"; an object combines conditions. `write_png` writes the tiny,
real PNG files of image cases with the standard library only.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from sessionflow.session.errors import UserError

__all__ = ["CaseFileError", "Node", "TextMatch", "parse_text_match", "preview", "solid_png", "write_png"]


# --------------------------------------------------------------------------- JSON values
# Read JSON case files with errors that name the file and the JSON pointer of the bad field.


class CaseFileError(UserError, ValueError):
    """A case file is malformed. The message names the file and the JSON pointer of the field.

    Attributes:
        path: The case file.
        pointer: RFC 6901 JSON pointer of the offending value (``""`` is the whole document).
        reason: What is wrong, without the location.
    """

    def __init__(self, path: Path, pointer: str, reason: str) -> None:
        super().__init__(f"{path}: at {pointer or '/'} (JSON pointer): {reason}")
        self.path = path
        self.pointer = pointer
        self.reason = reason

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.path, self.pointer, self.reason))


def _escape(token: str | int) -> str:
    return str(token).replace("~", "~0").replace("/", "~1")


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


@dataclass(frozen=True)
class Node:
    """One JSON value of a case file and where it sits."""

    path: Path
    pointer: str
    value: object

    def error(self, reason: str) -> CaseFileError:
        return CaseFileError(self.path, self.pointer, reason)

    def _child(self, token: str | int, value: object) -> Node:
        return Node(self.path, f"{self.pointer}/{_escape(token)}", value)

    # -- objects -------------------------------------------------------------------------

    def object(self, *, required: Collection[str] = (), optional: Collection[str] = ()) -> dict[str, Node]:
        """The members of an object; unknown keys and missing required keys are errors."""
        value: Any = self.value
        if not isinstance(value, dict):
            raise self.error(f"expected an object, got {_kind(value)}")
        raw = cast(dict[str, object], value)
        allowed = set(required) | set(optional)
        unknown = sorted(set(raw) - allowed)
        if unknown:
            raise self._child(unknown[0], raw[unknown[0]]).error(
                f"unknown field {unknown[0]!r}; allowed here: {', '.join(sorted(allowed)) or 'none'}"
            )
        missing = [key for key in required if key not in raw]
        if missing:
            raise self.error(f"missing required field {missing[0]!r}")
        return {key: self._child(key, value) for key, value in raw.items()}

    def mapping(self) -> dict[str, Node]:
        """An object with free-form keys (tool call IDs, tool names)."""
        value: Any = self.value
        if not isinstance(value, dict):
            raise self.error(f"expected an object, got {_kind(value)}")
        raw = cast(dict[str, object], value)
        return {key: self._child(key, value) for key, value in raw.items()}

    def raw_object(self) -> dict[str, Any]:
        """The object as plain JSON (for schemas and annotations passed through unchanged)."""
        value: Any = self.value
        if not isinstance(value, dict):
            raise self.error(f"expected an object, got {_kind(value)}")
        return cast(dict[str, Any], value)

    # -- arrays --------------------------------------------------------------------------

    def array(self, *, min_items: int = 0) -> list[Node]:
        value: Any = self.value
        if not isinstance(value, list):
            raise self.error(f"expected an array, got {_kind(value)}")
        items = cast(list[object], value)
        if len(items) < min_items:
            raise self.error(f"expected at least {min_items} item(s), got {len(items)}")
        return [self._child(index, value) for index, value in enumerate(items)]

    def strings(self, *, min_items: int = 0) -> tuple[str, ...]:
        return tuple(item.string() for item in self.array(min_items=min_items))

    def ints(self, *, minimum: int | None = None) -> tuple[int, ...]:
        return tuple(item.integer(minimum=minimum) for item in self.array())

    # -- scalars -------------------------------------------------------------------------

    @property
    def is_null(self) -> bool:
        return self.value is None

    def string(self, *, allow_empty: bool = False, choices: Collection[str] | None = None) -> str:
        if not isinstance(self.value, str):
            raise self.error(f"expected a string, got {_kind(self.value)}")
        if not allow_empty and not self.value.strip():
            raise self.error("must not be empty")
        if choices is not None and self.value not in choices:
            raise self.error(f"{self.value!r} is not one of {', '.join(repr(c) for c in choices)}")
        return self.value

    def integer(self, *, minimum: int | None = None) -> int:
        if isinstance(self.value, bool) or not isinstance(self.value, int):
            raise self.error(f"expected an integer, got {_kind(self.value)}")
        if minimum is not None and self.value < minimum:
            raise self.error(f"must be >= {minimum}, got {self.value}")
        return self.value

    def number(self, *, positive: bool = False) -> float:
        if isinstance(self.value, bool) or not isinstance(self.value, int | float):
            raise self.error(f"expected a number, got {_kind(self.value)}")
        if positive and self.value <= 0:
            raise self.error(f"must be > 0, got {self.value}")
        return float(self.value)

    def boolean(self) -> bool:
        if not isinstance(self.value, bool):
            raise self.error(f"expected true or false, got {_kind(self.value)}")
        return self.value


# --------------------------------------------------------------------------- text matchers
# Text matchers of case files: a string means "equals"; an object combines conditions.


_PREVIEW = 160


def preview(text: str | None) -> str:
    """A short repr of a possibly huge text, for failure messages."""
    if text is None:
        return "None"
    if len(text) <= _PREVIEW:
        return repr(text)
    return f"{text[:_PREVIEW]!r}... ({len(text)} characters)"


@dataclass(frozen=True, kw_only=True)
class TextMatch:
    """Conditions on one text; every condition given must hold."""

    equals: str | None = None
    contains: tuple[str, ...] = ()
    not_contains: tuple[str, ...] = ()
    startswith: str | None = None
    endswith: str | None = None
    length: int | None = None

    def failures(self, actual: str | None, what: str) -> list[str]:
        """Why ``actual`` does not match, one line per broken condition (empty when it matches)."""
        if actual is None:
            return [f"{what}: expected text, got None"]
        found: list[str] = []
        if self.equals is not None and actual != self.equals:
            found.append(f"{what}: expected {preview(self.equals)}, got {preview(actual)}")
        found += [
            f"{what}: expected to contain {s!r}, got {preview(actual)}"
            for s in self.contains
            if s not in actual
        ]
        found += [
            f"{what}: expected not to contain {s!r}, got {preview(actual)}"
            for s in self.not_contains
            if s in actual
        ]
        if self.startswith is not None and not actual.startswith(self.startswith):
            found.append(f"{what}: expected to start with {self.startswith!r}, got {preview(actual)}")
        if self.endswith is not None and not actual.endswith(self.endswith):
            found.append(f"{what}: expected to end with {self.endswith!r}, got {preview(actual)}")
        if self.length is not None and len(actual) != self.length:
            found.append(f"{what}: expected {self.length} characters, got {len(actual)}")
        return found


def _one_or_many(node: Node) -> tuple[str, ...]:
    if isinstance(node.value, str):
        return (node.string(),)
    return node.strings(min_items=1)


def parse_text_match(node: Node) -> TextMatch:
    """``"text"`` (equals) or ``{"equals"|"contains"|"not_contains"|"startswith"|"endswith"|"length"}``."""
    if isinstance(node.value, str):
        return TextMatch(equals=node.string(allow_empty=True))
    fields = node.object(optional=("equals", "contains", "not_contains", "startswith", "endswith", "length"))
    if not fields:
        raise node.error("a text matcher needs at least one condition")
    return TextMatch(
        equals=fields["equals"].string(allow_empty=True) if "equals" in fields else None,
        contains=_one_or_many(fields["contains"]) if "contains" in fields else (),
        not_contains=_one_or_many(fields["not_contains"]) if "not_contains" in fields else (),
        startswith=fields["startswith"].string() if "startswith" in fields else None,
        endswith=fields["endswith"].string() if "endswith" in fields else None,
        length=fields["length"].integer(minimum=0) if "length" in fields else None,
    )


# --------------------------------------------------------------------------- PNG files
# Tiny real PNG files for image cases, written with the standard library only.


def _chunk(kind: bytes, data: bytes) -> bytes:
    return (
        struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    )


def solid_png(width: int, height: int, rgb: tuple[int, int, int]) -> bytes:
    """An 8-bit RGB PNG of one colour."""
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    row = b"\x00" + bytes(rgb) * width  # filter type 0, then the pixels
    pixels = zlib.compress(row * height)
    return b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header) + _chunk(b"IDAT", pixels) + _chunk(b"IEND", b"")


def write_png(path: Path, width: int, height: int, rgb: tuple[int, int, int]) -> bytes:
    """Write the PNG to ``path`` and return its bytes."""
    data = solid_png(width, height, rgb)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return data
