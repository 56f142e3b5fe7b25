"""The JSON Schemas shipped in the package, and validation that reports one error."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any, cast

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError, best_match  # pyright: ignore[reportUnknownVariableType]

from sessionflow_cli.config._errors import ConfigError, json_pointer

__all__ = ["config_schema", "config_schema_text", "settings_schema", "validate"]


def _text(name: str) -> str:
    return resources.files("sessionflow_cli.config").joinpath(name).read_text(encoding="utf-8")


def config_schema_text() -> str:
    """The configuration file's schema, as shipped."""
    return _text("_schema.json")


@cache
def config_schema() -> dict[str, Any]:
    return cast(dict[str, Any], json.loads(config_schema_text()))


@cache
def settings_schema() -> dict[str, Any]:
    return cast(dict[str, Any], json.loads(_text("_settings_schema.json")))


@cache
def _validator(which: str) -> Draft202012Validator:
    schema = config_schema() if which == "config" else settings_schema()
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def validate(which: str, instance: Any, *, source: str) -> None:
    """Raise `ConfigError` code ``schema`` for the most relevant violation, if any."""
    errors: list[ValidationError] = list(_validator(which).iter_errors(instance))  # pyright: ignore[reportUnknownMemberType]
    if not errors:
        return
    error = cast(ValidationError, best_match(errors))
    path: list[str | int] = list(error.absolute_path)
    keyword = str(error.validator)
    message = str(error.message)
    raise ConfigError(
        "schema",
        json_pointer(path),
        f"schema keyword {keyword}",
        keyword=keyword,
        hint=_shorten(message),
        source=source,
    )


def _shorten(message: str, limit: int = 160) -> str:
    return message if len(message) <= limit else message[: limit - 3] + "..."
