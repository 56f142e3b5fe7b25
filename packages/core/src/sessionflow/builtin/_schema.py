"""JSON schemas for Python callables, taken from their type hints."""

from __future__ import annotations

import inspect
import types
import typing
from collections.abc import Callable
from typing import Any, Literal, Union, get_args, get_origin

__all__ = ["json_schema_for", "parameters_schema"]


def json_schema_for(hint: Any) -> dict[str, Any]:
    """The JSON schema of one annotation; unknown types accept any value."""
    if hint is inspect.Parameter.empty or hint is Any:
        return {}
    origin = get_origin(hint)
    args = get_args(hint)
    if origin in (Union, types.UnionType):
        options = [a for a in args if a is not type(None)]
        schema = (
            json_schema_for(options[0])
            if len(options) == 1
            else {"anyOf": [json_schema_for(a) for a in options]}
        )
        if len(options) < len(args):
            return {"anyOf": [schema, {"type": "null"}]}
        return schema
    if origin is Literal:
        return {"enum": list(args)}
    if origin in (list, tuple, set, frozenset, typing.Sequence) or hint in (list, tuple, set):
        return {"type": "array", "items": json_schema_for(args[0]) if args else {}}
    if origin is dict or hint is dict:
        return {"type": "object", "additionalProperties": json_schema_for(args[1]) if len(args) == 2 else {}}
    simple = {str: "string", int: "integer", float: "number", bool: "boolean"}
    if hint in simple:
        return {"type": simple[hint]}
    return {}


def parameters_schema(function: Callable[..., Any], *, skip: frozenset[str] = frozenset()) -> dict[str, Any]:
    """An object schema for a function's parameters (keyword-style), from its type hints."""
    signature = inspect.signature(function)
    hints = typing.get_type_hints(function)
    properties: dict[str, Any] = {}
    required: list[str] = []
    for name, parameter in signature.parameters.items():
        if name in skip or parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            continue
        properties[name] = json_schema_for(hints.get(name, parameter.annotation))
        if parameter.default is inspect.Parameter.empty:
            required.append(name)
        else:
            properties[name]["default"] = parameter.default
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}
