"""One schema source: the configuration file's model, its printed schema, and errors that
list every problem at once with its JSON Pointer and line and column."""

from __future__ import annotations

import dataclasses
import importlib.metadata
import json
import pickle
import stat
import types
import typing
from pathlib import Path
from typing import Any, cast

import pytest
from jsonschema import Draft202012Validator
from pydantic import TypeAdapter, ValidationError

from sessionflow_cli.config import ConfigError, config_schema, default_text, parse_config
from sessionflow_cli.config._file_model import ConfigFile
from sessionflow_cli.config._schema import _model_schema, framework_sections, generate_schema  # pyright: ignore[reportPrivateUsage]
from sessionflow_cli.config._yaml import parse_document, plain
from tests.cli.conftest import Cli

CASES = cast(
    dict[str, Any], json.loads((Path(__file__).parents[2] / "conformance" / "cli_config.json").read_text())
)
ENTRY_POINTS = {ep.name for ep in importlib.metadata.entry_points(group="sessionflow")}
SCRIPTED = {"scripted", "scripted-text", "scripted-fs", "scripted-gated"}


def test_the_printed_schema_is_the_models_with_the_installed_frameworks(cli: Cli) -> None:
    result = cli.run("init", "--print-schema")
    assert result.returncode == 0, result.stderr
    printed = json.loads(result.stdout)
    Draft202012Validator.check_schema(printed)
    fields = {f.name for f in dataclasses.fields(ConfigFile)}
    sections = set(printed["properties"]) - fields
    # Every installed framework (entry points, the built-in plugin, the test plugin), no other.
    assert sections == ENTRY_POINTS | {"builtin"} | SCRIPTED
    assert printed == config_schema(sections)
    assert printed["additionalProperties"] is False


def _schema_of(annotation: Any) -> type | None:
    """The model class a field's annotation holds (through Annotated, Optional, list), if any."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _schema_of(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType, list):
        found = [_schema_of(arg) for arg in typing.get_args(annotation)]
        return next((f for f in found if f is not None), None)
    return (
        cast(type, annotation)
        if isinstance(annotation, type) and dataclasses.is_dataclass(annotation)
        else None
    )


def _object(node: dict[str, Any]) -> dict[str, Any]:
    """The object schema in a property's schema (itself, an anyOf choice, or array items)."""
    if "properties" in node:
        return node
    for choice in node.get("anyOf", []):
        if "properties" in choice:
            return cast(dict[str, Any], choice)
    if "items" in node:
        return _object(node["items"])
    raise AssertionError(f"no object schema in {node}")


def _agree(model: type, schema: dict[str, Any], where: str) -> None:
    hints = typing.get_type_hints(model, include_extras=True)
    names = {f.name for f in dataclasses.fields(cast(Any, model))}
    assert set(schema["properties"]) >= names, where
    assert schema.get("additionalProperties") is False, where
    for name in names:
        inner = _schema_of(hints[name])
        if inner is not None:
            _agree(inner, _object(schema["properties"][name]), f"{where}/{name}")


def test_every_key_of_the_model_is_in_the_schema_and_no_other() -> None:
    schema = config_schema([])
    assert set(schema["properties"]) == {f.name for f in dataclasses.fields(ConfigFile)}
    _agree(ConfigFile, schema, "")


def _documents() -> list[Any]:
    docs: list[Any] = [
        plain(parse_document(c["yaml"], source="case"))
        for c in CASES["files"]
        if c["yaml"] != "@defaults" and c.get("error", {}).get("code") != "yaml"
    ]
    docs += [
        {"model": "m", "servr": "auto"},
        {"server": {"address": "auto", "tls": {"client_private_key": "k"}}},
        {"connectors": [{"name": "a", "url": "https://x/mcp", "args": ["x"]}]},
        {"local_tools": {"shell": {"timeout": 0}}},
        {"local_tools": {"shell": {"timeout": 10, "allow": ["a", "a"]}}},
        {"payloads": {"threshold": 5}},
        {"approval": {"always": []}, "media": {"folder": ""}},
        {"server": "[::1]:7233", "models": ["a", "b"]},
    ]
    return [d for d in docs if d is not None]


@pytest.mark.parametrize("document", _documents(), ids=lambda d: json.dumps(d)[:60])
def test_the_model_and_the_schema_take_the_same_files(document: Any) -> None:
    schema = config_schema([])
    by_schema = Draft202012Validator(schema).is_valid(document)  # pyright: ignore[reportUnknownMemberType]
    try:
        TypeAdapter(ConfigFile).validate_python(document)
        by_model = True
    except (ValidationError, TypeError):
        by_model = False
    assert by_schema == by_model


def test_the_defaults_init_writes_fit_the_schema() -> None:
    document = plain(parse_document(default_text("builtin"), source="defaults"))
    document = {k: v for k, v in document.items() if v is not None}
    assert Draft202012Validator(config_schema(["builtin"])).is_valid(document)  # pyright: ignore[reportUnknownMemberType]


THREE_MISTAKES = """\
model: scripted
servr: auto
local_tools:
  shell:
    timeout: 601
models: [a, a]
"""


def test_a_file_with_three_mistakes_reports_all_three_with_lines_and_pointers(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config("builtin", THREE_MISTAKES, path=tmp_path / "builtin.yaml", cwd=tmp_path)
    problems = caught.value.problems
    assert [(p.pointer, p.line, p.column) for p in problems] == [
        ("/servr", 2, 1),
        ("/local_tools/shell/timeout", 5, 14),
        ("/models", 6, 9),
    ]
    assert problems[0].message == "unknown key 'servr'; did you mean 'server'?"
    shown = caught.value.as_json()
    assert shown["source"] == str(tmp_path / "builtin.yaml")
    assert [
        (p["pointer"], p["line"], p["column"]) for p in cast(list[dict[str, Any]], shown["problems"])
    ] == [
        ("/servr", 2, 1),
        ("/local_tools/shell/timeout", 5, 14),
        ("/models", 6, 9),
    ]
    assert pickle.loads(pickle.dumps(caught.value)).problems == problems
    assert str(caught.value).splitlines() == [
        "3 problems:",
        "  line 2, column 1, at \"/servr\": unknown key 'servr'; did you mean 'server'?",
        '  line 5, column 14, at "/local_tools/shell/timeout": 601 is greater than the maximum of 600',
        "  line 6, column 9, at \"/models\": ['a', 'a'] has non-unique elements",
    ]


def test_the_command_lists_every_problem_and_exits_2(cli: Cli) -> None:
    path = cli.write_config(THREE_MISTAKES)
    result = cli.run("-f", "scripted", "-p", "hello")
    assert result.returncode == 2, result.stderr
    assert f"error: {path}: 3 problems:" in result.stderr
    for expected in (
        "line 2, column 1, at \"/servr\": unknown key 'servr'; did you mean 'server'?",
        'line 5, column 14, at "/local_tools/shell/timeout"',
        'line 6, column 9, at "/models"',
    ):
        assert expected in result.stderr


def test_servr_is_not_a_framework_section(cli: Cli) -> None:
    cli.write_config(f"model: scripted\nservr: auto\nserver: {cli.server_address}\n")
    result = cli.run("-f", "scripted", "-p", "hello")
    assert result.returncode == 2, result.stderr
    assert "line 2, column 1, at \"/servr\": unknown key 'servr'; did you mean 'server'?" in result.stderr


def test_framework_sections_are_the_installed_frameworks(tmp_path: Path) -> None:
    assert {"builtin", *ENTRY_POINTS} <= set(framework_sections())
    assert "mine" in framework_sections("mine")
    text = "builtin: {base_url: x}\nlanggraph: {}\nlanggrap: {}\n"
    with pytest.raises(ConfigError) as caught:
        parse_config("builtin", text, path=tmp_path / "builtin.yaml", cwd=tmp_path)
    (problem,) = caught.value.problems
    assert (problem.pointer, problem.line, problem.column) == ("/langgrap", 3, 1)
    assert problem.message == "unknown key 'langgrap'; did you mean 'langgraph'?"
    # The running framework's section is known even when no plugin lists it.
    config = parse_config("mine", "mine: {a: 1}\n", path=tmp_path / "mine.yaml", cwd=tmp_path)
    assert config.framework_settings == {"a": 1}


def test_rule_problems_are_listed_together_with_their_lines(tmp_path: Path) -> None:
    text = "model: m\nsystem_prompt_file: nowhere.md\nworkspace: no/such/folder\nconnectors:\n  - {name: x, command: a}\n  - {name: x, command: b}\n"
    with pytest.raises(ConfigError) as caught:
        parse_config("builtin", text, path=tmp_path / "builtin.yaml", cwd=tmp_path)
    error = caught.value
    assert (error.code, error.pointer) == ("missing_file", "/system_prompt_file")
    assert [(p.code, p.pointer, p.line, p.column) for p in error.problems] == [
        ("missing_file", "/system_prompt_file", 2, 21),
        ("missing_directory", "/workspace", 3, 12),
        ("duplicate", "/connectors/1/name", 6, 12),
    ]


def test_a_nested_unknown_key_points_at_the_key(tmp_path: Path) -> None:
    text = "local_tools:\n  shell:\n    sandbox: {netwrk: true}\n"
    with pytest.raises(ConfigError) as caught:
        parse_config("builtin", text, path=tmp_path / "builtin.yaml", cwd=tmp_path)
    error = caught.value
    # The error's own pointer is the mapping's (as the conformance cases say); the problem's the key's.
    assert (error.pointer, error.keyword) == ("/local_tools/shell/sandbox", "additionalProperties")
    assert (
        str(error)
        == "line 3, column 15, at \"/local_tools/shell/sandbox/netwrk\": unknown key 'netwrk'; did you mean 'network'?"
    )


def test_the_generated_schema_is_cached_in_an_existing_state_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "sf"
    monkeypatch.setenv("SESSIONFLOW_HOME", str(home))
    _model_schema.cache_clear()
    try:
        assert _model_schema() == generate_schema()
        assert not home.exists()  # no folder is made for a cache
        home.mkdir()
        _model_schema.cache_clear()
        assert _model_schema() == generate_schema()
        (cached,) = (home / "cache").glob("config-schema-*.json")
        assert json.loads(cached.read_text()) == generate_schema()
        assert stat.S_IMODE(cached.stat().st_mode) == 0o600
        cached.write_text("{not json")  # a broken cache is made again
        _model_schema.cache_clear()
        assert _model_schema() == generate_schema()
        assert json.loads(cached.read_text()) == generate_schema()
    finally:
        _model_schema.cache_clear()


@pytest.mark.parametrize("value", [".nan", ".inf", "0", "true"])
def test_the_resident_workers_idle_timeout_is_a_positive_finite_number(tmp_path: Path, value: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config("builtin", f"worker:\n  idle_timeout: {value}\n", path=tmp_path / "c.yaml", cwd=tmp_path)
    assert caught.value.pointer == "/worker/idle_timeout"
    assert "line 2, column 17" in str(caught.value)
    config = parse_config("builtin", "worker:\n  idle_timeout: 2.5\n", path=tmp_path / "c.yaml", cwd=tmp_path)
    assert config.worker_idle_timeout == 2.5
