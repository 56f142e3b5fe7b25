"""The file's JSON Schema, generated from its model, and validation listing every problem.

`config_schema` is made from `sessionflow_cli.config._file_model.ConfigFile` with
pydantic's `TypeAdapter`, then flattened (no ``$ref``), stripped of pydantic's titles and
defaults, and given one mapping per framework section the installed plugins register.
The per-turn session settings keep their small hand-written schema
(``_settings_schema.json``): they are a few switches, not a file.
"""

from __future__ import annotations

import difflib
import hashlib
import importlib.metadata
import json
from collections.abc import Iterable, Sequence
from functools import cache
from importlib import resources
from typing import Any, cast

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError, best_match  # pyright: ignore[reportUnknownVariableType]

from sessionflow_cli.config._errors import ConfigError, Problem, json_pointer
from sessionflow_cli.config._model import ADDRESS_PATTERN, URL_PATTERN

__all__ = [
    "config_schema",
    "config_schema_text",
    "framework_sections",
    "generate_schema",
    "settings_schema",
    "validate",
]

_SCHEMA_ID = "https://github.com/sessionflow/sessionflow/cli-config.schema.json"

Json = dict[str, Any]


# -- the configuration file's schema ----------------------------------------------------------


@cache
def _model_schema() -> Json:
    """The generated schema, from the cache in the state folder (when that exists) when the
    model is unchanged.

    Generating takes pydantic about a tenth of a second, at every command start; the cache
    file's name holds a hash of what the schema is made from (the model's and this
    module's source, pydantic's version), so a changed model makes a new one.
    """
    from sessionflow.home import write_private
    from sessionflow_cli.config._paths import state_home

    if not state_home().is_dir():
        # The command makes its folders at start; a library call never makes them for a cache.
        return generate_schema()
    made_from = hashlib.sha256()
    for module in ("_file_model.py", "_schema.py"):
        made_from.update(resources.files("sessionflow_cli.config").joinpath(module).read_bytes())
    made_from.update(importlib.metadata.version("pydantic").encode())
    cache = state_home() / "cache" / f"config-schema-{made_from.hexdigest()[:20]}.json"
    try:
        return cast(Json, json.loads(cache.read_text(encoding="utf-8")))
    except (OSError, ValueError):
        pass
    schema = generate_schema()
    try:
        write_private(cache, json.dumps(schema))
    except OSError:
        pass  # a read-only home only costs the time
    return schema


def generate_schema() -> Json:
    """The schema of `ConfigFile` as pydantic generates it, made plain: inlined, no titles."""
    from pydantic import TypeAdapter

    from sessionflow_cli.config._file_model import ConfigFile

    generated = TypeAdapter(ConfigFile).json_schema()
    definitions = cast(Json, generated.pop("$defs", {}))
    schema = cast(Json, _plain(generated, definitions))
    root: Json = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": _SCHEMA_ID,
        "title": "sessionflow CLI configuration",
    }
    root.update(schema)
    return root


def _plain(node: Any, definitions: Json) -> Any:
    if isinstance(node, list):
        return [_plain(item, definitions) for item in cast(list[Any], node)]
    if not isinstance(node, dict):
        return node
    node = cast(Json, node)
    if "$ref" in node:
        name = str(node["$ref"]).rpartition("/")[2]
        merged = {**cast(Json, definitions[name]), **{k: v for k, v in node.items() if k != "$ref"}}
        return _plain(merged, definitions)
    out: Json = {}
    for key, value in node.items():
        if key == "title" or (key == "default" and value is None):
            continue
        if key == "properties":
            # Property names are not schema keywords: a property called "title" stays.
            out[key] = {name: _plain(sub, definitions) for name, sub in cast(Json, value).items()}
            continue
        out[key] = _plain(value, definitions)
    choices = out.get("anyOf")
    if isinstance(choices, list) and {"type": "null"} in choices:
        # An optional key (`X | None`): null means "not set" (`plain` drops it), so the
        # value's own schema, which also takes null; its errors then name its own keyword.
        others = [c for c in cast(list[Json], choices) if c != {"type": "null"}]
        if len(others) == 1 and isinstance(others[0].get("type"), str):
            del out["anyOf"]
            only = dict(others[0])
            only["type"] = [only["type"], "null"]
            out = {**only, **out}
        else:
            out["anyOf"] = [*others, {"type": "null"}]
    return out


def framework_sections(current: str | None = None) -> tuple[str, ...]:
    """The names a framework section may have: the frameworks of the built-in plugins and
    of ``SESSIONFLOW_LOAD_PLUGINS``, the installed ``sessionflow`` entry points, and `current`."""
    return tuple(sorted({*_known_frameworks(), *((current,) if current else ())}))


@cache
def _known_frameworks() -> frozenset[str]:
    from sessionflow.plugins import ENTRY_POINT_GROUP, PluginError, SessionflowPlugins

    names = {ep.name for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)}
    plugins = SessionflowPlugins()
    try:
        # The built-in plugins and an explicit list, without importing every installed adapter.
        plugins.load(autoload=False)
        names.update(plugins.frameworks())
    except PluginError:
        pass
    return frozenset(names)


def config_schema(frameworks: Iterable[str] | None = None) -> Json:
    """The configuration file's schema, with a section for each of `frameworks` (by default
    `framework_sections`)."""
    schema = json.loads(json.dumps(_model_schema()))
    properties = cast(Json, schema["properties"])
    for name in sorted(framework_sections() if frameworks is None else set(frameworks)):
        if name not in properties:
            properties[name] = {
                "description": f"The {name} framework's own settings.",
                "type": ["object", "null"],
            }
    schema["additionalProperties"] = False
    return cast(Json, schema)


def config_schema_text(frameworks: Iterable[str] | None = None) -> str:
    """The configuration file's schema as ``init --print-schema`` prints it."""
    return json.dumps(config_schema(frameworks), indent=2) + "\n"


# -- the session settings' schema -------------------------------------------------------------


@cache
def settings_schema() -> Json:
    text = (
        resources.files("sessionflow_cli.config")
        .joinpath("_settings_schema.json")
        .read_text(encoding="utf-8")
    )
    return cast(Json, json.loads(text))


# -- validation -----------------------------------------------------------------------------------


@cache
def _validator(which: str, frameworks: tuple[str, ...] = ()) -> Draft202012Validator:
    schema = config_schema(frameworks) if which == "config" else settings_schema()
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def validate(
    which: str,
    instance: Any,
    *,
    source: str,
    frameworks: Sequence[str] = (),
    locate: Any = None,
) -> None:
    """Raise `ConfigError` code ``schema`` listing every violation, if there is any.

    The error's own code, pointer and keyword are the most relevant violation's
    (jsonschema's `best_match`); `ConfigError.problems` holds all of them, in file order,
    each with its line and column when `locate` (pointer parts to ``(line, column)``) knows it.
    An unknown key is a problem of its own, with the closest known key as a suggestion.
    """
    validator = _validator(which, tuple(sorted(frameworks)))
    errors: list[ValidationError] = list(validator.iter_errors(instance))  # pyright: ignore[reportUnknownMemberType]
    if not errors:
        return
    error = cast(ValidationError, best_match(errors))
    keyword = str(error.validator)
    problems: list[Problem] = []
    for each in errors:
        problems.extend(_problems(each, locate))
    problems.sort(key=lambda p: (p.line or 0, p.column or 0, p.pointer))
    raise ConfigError(
        "schema",
        json_pointer(list(error.absolute_path)),
        f"schema keyword {keyword}",
        keyword=keyword,
        hint=_shorten(_message(error)),
        source=source,
        # Session settings keep their one-line message (`<code> at "<pointer>"`): a failed
        # model call carries it.
        problems=tuple(problems) if which == "config" else (),
    )


def _problems(error: ValidationError, locate: Any) -> list[Problem]:
    path: list[str | int] = list(error.absolute_path)
    keyword = str(error.validator)
    instance: Any = error.instance
    if keyword == "additionalProperties" and isinstance(instance, dict):
        schema = cast(Json, error.schema)
        known = sorted(cast(Json, schema.get("properties", {})))
        unknown = [str(k) for k in cast(Json, instance) if k not in known]
        if unknown:
            return [
                _problem("unknown_key", [*path, key], _unknown(key, known), keyword, locate, key=True)
                for key in unknown
            ]
    return [_problem("schema", path, _shorten(_message(error)), keyword, locate)]


def _unknown(key: str, known: Sequence[str]) -> str:
    close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
    suggestion = f"; did you mean {close[0]!r}?" if close else f"; known keys: {', '.join(known)}"
    return f"unknown key {key!r}{suggestion}"


def _problem(
    code: str, path: list[str | int], message: str, keyword: str, locate: Any, *, key: bool = False
) -> Problem:
    where: tuple[int, int] | None = locate(path, key) if locate is not None else None
    return Problem(
        code=code,
        pointer=json_pointer(path),
        message=message,
        keyword=keyword,
        line=where[0] if where else None,
        column=where[1] if where else None,
    )


_PATTERNS = {
    ADDRESS_PATTERN: "is neither auto nor host:port",
    URL_PATTERN: "is not an http:// or https:// URL",
}


def _message(error: ValidationError) -> str:
    keyword = str(error.validator)
    instance: Any = error.instance
    if keyword == "type":
        value: Any = error.validator_value
        wanted = cast(list[Any], value) if isinstance(value, list) else [value]
        named = [str(t) for t in wanted if t != "null"]
        return f"{instance!r} is not of type {' or '.join(repr(t) for t in named)}"
    if keyword == "pattern" and str(error.validator_value) in _PATTERNS:
        return f"{instance!r} {_PATTERNS[str(error.validator_value)]}"
    if keyword == "oneOf" and str(error.validator_value) == str(
        [{"required": ["command"]}, {"required": ["url"]}]
    ):
        return "a connector has either a command or a url"
    if keyword == "anyOf" and error.context:
        # The choice whose type fits the value says the most.
        fitting = [c for c in error.context if str(c.validator) != "type"]
        if fitting:
            return _message(fitting[0])
    return str(error.message)


def _shorten(message: str, limit: int = 160) -> str:
    return message if len(message) <= limit else message[: limit - 3] + "..."
