"""Checked reads of a tool call's JSON arguments; a bad argument is the model's error to see."""

from __future__ import annotations

import math
from collections.abc import Mapping, Set
from typing import Any

from sessionflow.kit import ToolExecutionError

__all__ = ["Arguments"]


class Arguments:
    """The arguments of one call, refusing unknown names and values of the wrong type."""

    def __init__(self, raw: Mapping[str, Any], known: Set[str]) -> None:
        unknown = sorted(set(raw) - set(known))
        if unknown:
            raise ToolExecutionError(f"unknown argument(s): {', '.join(unknown)}")
        self._raw = raw

    def text(self, name: str, default: str | None = None) -> str:
        value = self._raw.get(name, default)
        if value is None:
            raise ToolExecutionError(f"argument {name!r} is required")
        if not isinstance(value, str):
            raise ToolExecutionError(f"argument {name!r} must be a string")
        return value

    def optional_text(self, name: str) -> str | None:
        value = self._raw.get(name)
        if value is None:
            return None
        if not isinstance(value, str):
            raise ToolExecutionError(f"argument {name!r} must be a string")
        return value

    def integer(self, name: str, default: int, *, minimum: int, maximum: int) -> int:
        value = self._raw.get(name, default)
        if value is None:
            value = default
        # bool is an int in Python but not in JSON schema; NaN and Infinity (which Python's
        # JSON parser accepts) are no integers, and int() of them raises.
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or (isinstance(value, float) and not value.is_integer())
        ):
            raise ToolExecutionError(f"argument {name!r} must be an integer")
        number = int(value)
        if not minimum <= number <= maximum:
            raise ToolExecutionError(f"argument {name!r} must be between {minimum} and {maximum}")
        return number

    def number(self, name: str) -> float | None:
        value = self._raw.get(name)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ToolExecutionError(f"argument {name!r} must be a number")
        try:
            number = float(value)
        except OverflowError:  # an int too large for a float
            raise ToolExecutionError(f"argument {name!r} is too large") from None
        if not math.isfinite(number):
            raise ToolExecutionError(f"argument {name!r} must be a finite number, not {number}")
        return number

    def flag(self, name: str, default: bool = False) -> bool:
        value = self._raw.get(name, default)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise ToolExecutionError(f"argument {name!r} must be true or false")
        return value
