"""A tool's returned object, kept with its call so a later model step sees it as the tool returned it.

The model sees a tool's result as text, but the SDK hands the object itself to a custom
``tool_use_behavior`` function (`FunctionToolResult.output`) and to ``on_tool_end``. The
tool runs in its own session step, and the model step after it answers the call with a
stub; so a tool step that returned a pydantic model or a dataclass records it as its state
update (``{"format", "type": "<module>:<qualname>", "data"}``, the class by reference), and
the stub returns the object rebuilt from it. The SDK turns it into the same text the tool
step recorded, so the model's input does not change.

Anything else (text, numbers, lists, a class defined inside a function, which cannot be
found again by name) is not recorded: the stub returns the recorded text, as before.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
from collections.abc import Iterable
from typing import Any, cast

from pydantic import BaseModel, TypeAdapter

__all__ = ["decode_tool_values", "encode_tool_value"]

FORMAT = "sessionflow-openai-agents/tool-value-1"


def encode_tool_value(value: Any) -> str | None:
    """The state update recording ``value``, or None when it is not an object kept by class."""
    kind: type[Any] = type(cast(object, value))
    if not (isinstance(value, BaseModel) or dataclasses.is_dataclass(kind)):
        return None
    if "<locals>" in kind.__qualname__ or _find(f"{kind.__module__}:{kind.__qualname__}") is not kind:
        return None
    data: Any = TypeAdapter[Any](kind).dump_python(value, mode="json")
    record = {"format": FORMAT, "type": f"{kind.__module__}:{kind.__qualname__}", "data": data}
    return json.dumps(record, separators=(",", ":"), ensure_ascii=False)


def decode_tool_values(updates: Iterable[tuple[str, str]]) -> dict[str, Any]:
    """The recorded objects by tool call ID; updates of another format are not this module's."""
    values: dict[str, Any] = {}
    for call_id, update in updates:
        try:
            parsed: Any = json.loads(update)
        except ValueError:
            continue
        if not isinstance(parsed, dict):
            continue
        record = cast(dict[str, Any], parsed)
        if record.get("format") != FORMAT:
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
