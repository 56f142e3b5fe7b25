"""A Python callable's parameters as a pydantic model: the JSON schema the model sees, and the
validation that turns the model's JSON arguments into the declared types before the call."""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, cast, get_args, get_origin

import pydantic
from pydantic.fields import FieldInfo

__all__ = ["ToolArguments", "parameters_schema", "tool_arguments"]

# Keys whose value is data, not a schema: never rewritten (a default may hold a "title").
_DATA_KEYS = frozenset({"default", "enum", "const", "examples"})
# Keys whose value maps names (not keywords) to schemas.
_NAMED_SCHEMAS = frozenset({"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"})
_DEFS = "#/$defs/"


@dataclass(frozen=True)
class ToolArguments:
    """A callable's parameters (those the model fills): their schema and their validator."""

    model: type[pydantic.BaseModel]
    names: Mapping[str, str]
    """The model's field name of each parameter (fields are `p0`, `p1`, ... aliased to the
    parameter names, so a parameter may be called `json` or `model_config`)."""
    schema: dict[str, Any]

    def validate(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """The arguments converted to the declared types, by parameter name.

        Raises:
            pydantic.ValidationError: They do not fit the parameters.
        """
        validated = self.model.model_validate(dict(arguments))
        return {name: getattr(validated, field) for name, field in self.names.items()}


def tool_arguments(function: Callable[..., Any], *, skip: frozenset[str] = frozenset()) -> ToolArguments:
    """The parameters of `function` (keyword-style, without `skip` and `*args`/`**kwargs`).

    Every type pydantic validates may be used (Enum, Literal, dataclasses, TypedDict,
    pydantic models, unions, containers, ...). A description comes from
    `Annotated[x, "description"]` or `Annotated[x, pydantic.Field(description=...)]`.

    Raises:
        TypeError: A parameter's type has no JSON schema (pydantic cannot validate it from JSON).
    """
    signature = inspect.signature(function)
    hints = typing.get_type_hints(function, include_extras=True)
    fields: dict[str, Any] = {}
    names: dict[str, str] = {}
    for parameter in signature.parameters.values():
        if parameter.name in skip or parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            continue
        field = f"p{len(names)}"
        names[parameter.name] = field
        hint = _described(hints.get(parameter.name, parameter.annotation))
        default = ... if parameter.default is inspect.Parameter.empty else parameter.default
        fields[field] = (Annotated[hint, pydantic.Field(alias=parameter.name)], default)
    try:
        model = pydantic.create_model(
            f"{getattr(function, '__name__', 'tool')}_arguments",
            __config__=pydantic.ConfigDict(extra="forbid"),
            **fields,
        )
        raw = model.model_json_schema(by_alias=True)
    except pydantic.PydanticUserError as error:  # a type pydantic cannot validate or describe
        raise TypeError(
            f"tool parameters of {getattr(function, '__qualname__', function)!r}: {error}"
        ) from None
    return ToolArguments(model=model, names=names, schema=_tidy(raw))


def parameters_schema(function: Callable[..., Any], *, skip: frozenset[str] = frozenset()) -> dict[str, Any]:
    """An object schema for a function's parameters (keyword-style), from its type hints."""
    return tool_arguments(function, skip=skip).schema


def _described(hint: Any) -> Any:
    """`Annotated[x, "text"]` as `Annotated[x, Field(description="text")]`; other hints as they are."""
    if hint is inspect.Parameter.empty:
        return Any
    if get_origin(hint) is not Annotated:
        return hint
    base, *metadata = get_args(hint)
    converted = [
        pydantic.Field(description=m) if isinstance(m, str) else m
        for m in metadata
        if not (isinstance(m, str) and any(isinstance(o, FieldInfo) and o.description for o in metadata))
    ]
    return Annotated[base, *converted] if converted else base


def _tidy(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema as providers take it: `$ref`s inlined (kept only where a type is recursive),
    no generated titles, and `required` always present."""
    defs = cast(dict[str, Any], schema.pop("$defs", {}))
    recursive: set[str] = set()

    def walk(node: Any, expanding: frozenset[str]) -> Any:
        if isinstance(node, list):
            return [walk(item, expanding) for item in cast(list[Any], node)]
        if not isinstance(node, dict):
            return node
        node = cast(dict[str, Any], node)
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(_DEFS):
            name = ref.removeprefix(_DEFS)
            if name in expanding:
                recursive.add(name)
                return node
            target = cast(dict[str, Any], walk(defs[name], expanding | {name}))
            siblings = {k: walk(v, expanding) for k, v in node.items() if k != "$ref"}
            return {**target, **siblings}
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key == "title" and isinstance(value, str):
                continue
            if key in _DATA_KEYS:
                out[key] = value
            elif key in _NAMED_SCHEMAS and isinstance(value, dict):
                out[key] = {n: walk(s, expanding) for n, s in cast(dict[str, Any], value).items()}
            else:
                out[key] = walk(value, expanding)
        return out

    tidy = cast(dict[str, Any], walk(schema, frozenset()))
    kept: dict[str, Any] = {}
    while pending := recursive - kept.keys():
        for name in pending:
            kept[name] = walk(defs[name], frozenset({name}))
    if kept:
        tidy["$defs"] = kept
    tidy.setdefault("required", [])
    return tidy
