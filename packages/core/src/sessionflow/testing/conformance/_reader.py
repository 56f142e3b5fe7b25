"""Read JSON case files with errors that name the file and the JSON pointer of the bad field."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from sessionflow.session import UserError

__all__ = ["CaseFileError", "Node"]


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
