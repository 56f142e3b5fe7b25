"""The JSON schema `tool()` gives the model, for each kind of parameter type pydantic knows."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import jsonschema
import pydantic
import pytest
from typing_extensions import TypedDict

from sessionflow.builtin import tool
from sessionflow.builtin._schema import parameters_schema
from sessionflow.kit import ToolInvocation


class Color(enum.Enum):
    """A paint colour."""

    RED = "red"
    BLUE = "blue"


class Size(enum.IntEnum):
    SMALL = 1
    LARGE = 2


@dataclass
class Point:
    x: float
    y: float = 0.0


class Options(TypedDict):
    deep: bool
    depth: int


class Address(pydantic.BaseModel):
    street: str
    city: str = pydantic.Field(description="The city's name.")


class Person(pydantic.BaseModel):
    name: str
    home: Address
    others: list[Address] = []


class Tree(pydantic.BaseModel):
    value: int
    children: list[Tree] = []


def _properties(schema: dict[str, Any]) -> dict[str, Any]:
    return schema["properties"]


def test_enum_parameters_list_their_values() -> None:
    def f(color: Color, size: Size = Size.SMALL) -> str:
        return ""

    schema = parameters_schema(f)
    assert _properties(schema)["color"] == {
        "enum": ["red", "blue"],
        "type": "string",
        "description": "A paint colour.",
    }
    assert _properties(schema)["size"] == {"enum": [1, 2], "type": "integer", "default": 1}
    assert schema["required"] == ["color"]


def test_literal_parameter() -> None:
    def f(mode: Literal["fast", "slow"], level: Literal[1, 2, 3] = 2) -> str:
        return ""

    assert _properties(parameters_schema(f)) == {
        "mode": {"enum": ["fast", "slow"], "type": "string"},
        "level": {"enum": [1, 2, 3], "type": "integer", "default": 2},
    }


def test_dataclass_parameter_is_an_object_inline() -> None:
    def f(point: Point) -> str:
        return ""

    schema = parameters_schema(f)
    assert "$defs" not in schema
    assert _properties(schema)["point"] == {
        "type": "object",
        "properties": {"x": {"type": "number"}, "y": {"type": "number", "default": 0.0}},
        "required": ["x"],
        "additionalProperties": False,
    }


def test_typed_dict_parameter() -> None:
    def f(options: Options) -> str:
        return ""

    assert _properties(parameters_schema(f))["options"] == {
        "type": "object",
        "properties": {"deep": {"type": "boolean"}, "depth": {"type": "integer"}},
        "required": ["deep", "depth"],
        "additionalProperties": False,
    }


def test_nested_models_are_inlined_with_their_descriptions() -> None:
    def f(person: Person) -> str:
        return ""

    schema = parameters_schema(f)
    address = {
        "type": "object",
        "properties": {
            "street": {"type": "string"},
            "city": {"type": "string", "description": "The city's name."},
        },
        "required": ["street", "city"],
    }
    assert "$defs" not in schema and "$ref" not in repr(schema)
    assert _properties(schema)["person"] == {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "home": address,
            "others": {"type": "array", "items": address, "default": []},
        },
        "required": ["name", "home"],
    }


def test_a_recursive_model_keeps_its_definition() -> None:
    def f(tree: Tree) -> str:
        return ""

    schema = parameters_schema(f)
    assert schema["$defs"]["Tree"]["properties"]["children"]["items"] == {"$ref": "#/$defs/Tree"}
    assert _properties(schema)["tree"]["properties"]["value"] == {"type": "integer"}
    # The schema still works: a nested tree passes, a wrong leaf fails.
    jsonschema.validate({"tree": {"value": 1, "children": [{"value": 2}]}}, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"tree": {"value": 1, "children": [{"value": "x"}]}}, schema)


def test_optional_and_defaults() -> None:
    def f(a: int | None, b: str = "hi", c: Point | None = None, d: list[int] | None = None) -> str:
        return ""

    schema = parameters_schema(f)
    assert _properties(schema)["a"] == {"anyOf": [{"type": "integer"}, {"type": "null"}]}
    assert _properties(schema)["b"] == {"type": "string", "default": "hi"}
    assert _properties(schema)["c"]["default"] is None
    assert _properties(schema)["c"]["anyOf"][1] == {"type": "null"}
    assert _properties(schema)["c"]["anyOf"][0]["properties"]["x"] == {"type": "number"}
    assert _properties(schema)["d"] == {
        "anyOf": [{"type": "array", "items": {"type": "integer"}}, {"type": "null"}],
        "default": None,
    }
    assert schema["required"] == ["a"]


def test_annotated_descriptions() -> None:
    def f(
        city: Annotated[str, "The city to look up."],
        days: Annotated[int, pydantic.Field(description="How many days.", ge=1, le=7)] = 1,
        color: Annotated[Color, "The colour wanted."] = Color.RED,
    ) -> str:
        return ""

    properties = _properties(parameters_schema(f))
    assert properties["city"] == {"type": "string", "description": "The city to look up."}
    assert properties["days"] == {
        "type": "integer",
        "description": "How many days.",
        "minimum": 1,
        "maximum": 7,
        "default": 1,
    }
    # The parameter's own description wins over the enum's docstring.
    assert properties["color"]["description"] == "The colour wanted."
    assert properties["color"]["default"] == "red"


def test_top_level_shape_and_no_generated_titles() -> None:
    def f(title: str, json: int = 0, invocation: ToolInvocation | None = None) -> str:
        return ""

    spec = tool(f)
    # A parameter may be called "title" or shadow a pydantic attribute ("json").
    assert spec.parameters == {
        "type": "object",
        "properties": {"title": {"type": "string"}, "json": {"type": "integer", "default": 0}},
        "required": ["title"],
        "additionalProperties": False,
    }
    jsonschema.Draft202012Validator.check_schema(dict(spec.parameters))


def test_no_parameters_is_an_empty_object() -> None:
    def f() -> str:
        return ""

    assert parameters_schema(f) == {
        "type": "object",
        "properties": {},
        "required": [],
        "additionalProperties": False,
    }


class Opaque:
    """A class pydantic knows no schema for."""


def test_a_type_without_a_schema_is_refused_when_the_tool_is_made() -> None:
    def f(thing: Opaque) -> str:
        return ""

    with pytest.raises(TypeError, match="Opaque"):
        tool(f)
