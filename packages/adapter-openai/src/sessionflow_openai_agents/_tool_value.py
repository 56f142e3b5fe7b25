"""A tool's returned object, kept with its call so a later model step sees it as the tool returned it.

The model sees a tool's result as text, but the SDK hands the object itself to a custom
``tool_use_behavior`` function (`FunctionToolResult.output`) and to ``on_tool_end``. The
tool runs in its own session step, and the model step after it answers the call with a
stub; so a tool step that returned a pydantic model or a dataclass records it in its state update
(`_step_update`: ``"value": {"type": "<module>:<qualname>", "data"}``, the class by reference), and
the stub returns the object rebuilt from it. The SDK turns it into the same text the tool
step recorded, so the model's input does not change.

A structured result of content parts (a list of `ToolOutputText`, `ToolOutputImage`, ... or
their dicts, as an MCP tool returns) is recorded as the parts' JSON (``"parts"``), so the
model gets the same list of parts, not their joined text.

Anything else (text, numbers, a class defined inside a function, which cannot be found
again by name) is not recorded: the stub returns the recorded text, as before.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
from collections.abc import Iterable, Sequence
from typing import Any, cast

from agents import ItemHelpers
from pydantic import BaseModel, TypeAdapter

__all__ = ["decode_tool_values", "encode_tool_value"]


def encode_tool_value(value: Any) -> dict[str, Any] | None:
    """The record of ``value`` for the step's update, or None when the recorded text stands for it."""
    by_class = _by_class(value)
    if by_class is not None:
        return by_class
    if not isinstance(value, str) and _is_structured(value):
        many = isinstance(value, list | tuple)
        parts = [_plain(part) for part in cast(Sequence[Any], value)] if many else _plain(value)
        return {"parts": parts}
    return None


def _is_structured(value: Any) -> bool:
    # The SDK sends such a value as a list of parts rather than as text.
    converted = cast(Any, ItemHelpers)._convert_tool_output(value)
    return isinstance(converted, list)


def _plain(part: Any) -> Any:
    return part.model_dump(mode="json", exclude_none=True) if isinstance(part, BaseModel) else part


def _by_class(value: Any) -> dict[str, Any] | None:
    kind: type[Any] = type(cast(object, value))
    if not (isinstance(value, BaseModel) or dataclasses.is_dataclass(kind)):
        return None
    if "<locals>" in kind.__qualname__ or _find(f"{kind.__module__}:{kind.__qualname__}") is not kind:
        return None
    data: Any = TypeAdapter[Any](kind).dump_python(value, mode="json")
    return {"type": f"{kind.__module__}:{kind.__qualname__}", "data": data}


def decode_tool_values(updates: Iterable[tuple[str, str]]) -> dict[str, Any]:
    """The recorded objects by tool call ID, from the tool steps' updates (`_step_update`)."""
    values: dict[str, Any] = {}
    for call_id, update in updates:
        try:
            parsed: Any = json.loads(update)
        except ValueError:
            continue  # StepState.apply names the bad update
        if not isinstance(parsed, dict) or not isinstance(cast(dict[str, Any], parsed).get("value"), dict):
            continue
        record = cast(dict[str, Any], cast(dict[str, Any], parsed)["value"])
        if "parts" in record:
            values[call_id] = record["parts"]
            continue
        kind = _find(str(record["type"]))
        if kind is None:
            continue  # the class is gone (a deploy renamed it): the stub returns the text
        values[call_id] = TypeAdapter[Any](kind).validate_python(record["data"])
    return values


def _find(reference: str) -> type[Any] | None:
    module_name, _, qualname = reference.partition(":")
    try:
        found: Any = importlib.import_module(module_name)
        for part in qualname.split("."):
            found = getattr(found, part)
    except (ImportError, AttributeError):
        return None
    if not isinstance(found, type):
        return None
    kind = cast(type[Any], found)
    # Only classes whose instances this module records: never an arbitrary callable.
    return kind if issubclass(kind, BaseModel) or dataclasses.is_dataclass(kind) else None
