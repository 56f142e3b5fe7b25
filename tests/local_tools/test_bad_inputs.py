"""Every bad input gives a `ToolExecutionError` the model can read, never a crash or a hang.

The property test feeds every local tool arbitrary JSON arguments of its schema's shape
(hostile strings, NaN and Infinity, huge numbers, wrong types) and asserts that each
call returns text or raises `ToolExecutionError`, within its time limit.
"""

from __future__ import annotations

import asyncio
import json
import math
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sessionflow import ToolEffect, ToolPolicy
from sessionflow.kit import DeferredToolCall, ToolExecutionError
from sessionflow.session.proposals import check_proposal
from tests.local_tools.conftest import Sandbox, Tools

FILE_TOOLS = ("read_file", "list_directory", "search_files", "write_file", "edit_file")


async def refused(tools: Tools, tool: str, /, **args: Any) -> str:
    with pytest.raises(ToolExecutionError) as caught:
        await asyncio.wait_for(tools.call(tool, **args), timeout=30)
    return caught.value.message


@pytest.mark.parametrize(
    ("tool", "extra"),
    [
        ("read_file", {}),
        ("list_directory", {}),
        ("search_files", {"pattern": "x"}),
        ("write_file", {"content": "x"}),
        ("edit_file", {"old_string": "a", "new_string": "b"}),
    ],
)
async def test_a_lone_surrogate_in_a_path(sandbox: Sandbox, tool: str, extra: dict[str, str]) -> None:
    message = await refused(sandbox.tools, tool, path="bad\ud800name", **extra)
    assert "lone surrogate" in message
    message.encode("utf-8")


@pytest.mark.parametrize(
    "pattern",
    [
        "a{4294967296}",
        "a{1001}",
        "(" * 1300 + "a" + ")" * 1300,
        "(" * 3000 + "a" + ")" * 3000,
        "\ud800",
        "(?<=a)b",
    ],
    ids=["huge-count", "count-over-1000", "1300-nested", "3000-nested", "surrogate", "lookbehind"],
)
async def test_regexes_that_overflow_or_recurse(sandbox: Sandbox, pattern: str) -> None:
    (sandbox.ws / "f.txt").write_text("aaa\n")
    try:
        text = await asyncio.wait_for(sandbox.tools.call("search_files", pattern=pattern, regex=True), 30)
    except ToolExecutionError as error:
        assert "pattern" in error.message
    else:
        assert "searched 1 files" in text


@pytest.mark.parametrize(
    "url", ["\x01http://example.com/", "\x00http://x/", "http://exa mple.com/", "http://x/\ud800"]
)
async def test_urls_with_control_characters(sandbox: Sandbox, url: str) -> None:
    assert "control character" in await refused(sandbox.tools, "fetch_web_page", url=url)


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, 1e400])
async def test_non_finite_numbers_in_arguments(sandbox: Sandbox, value: float) -> None:
    (sandbox.ws / "f.txt").write_text("x\n")
    assert "integer" in await refused(sandbox.tools, "read_file", path="f.txt", limit=value)
    assert "integer" in await refused(sandbox.tools, "read_file", path="f.txt", offset=value)
    assert "integer" in await refused(sandbox.tools, "search_files", pattern="x", max_results=value)
    assert "finite" in await refused(
        sandbox.tools, "run_shell_command", command="true", timeout_seconds=value
    )


@pytest.mark.parametrize("raw", ["NaN", "Infinity", "-Infinity", "1e400"])
def test_the_schema_refuses_a_non_finite_shell_timeout(sandbox: Sandbox, raw: str) -> None:
    spec = sandbox.tools.specs["run_shell_command"]
    call = DeferredToolCall(
        tool_call_id="c1",
        tool_name="run_shell_command",
        arguments=f'{{"command": "true", "timeout_seconds": {raw}}}',
        policy=ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE),
    )
    refusal = check_proposal(call, {"run_shell_command": spec.parameters})
    assert refusal is not None and refusal.startswith("invalid_arguments"), refusal


# --------------------------------------------------------------------------- properties

HOSTILE = [
    "",
    ".",
    "..",
    "/",
    "//",
    "x.txt/",
    "f.txt/.",
    "\ud800",
    "\udcff",
    "\x00",
    "\x1b[2J",
    "a\nb",
    "../" * 50,
    "a/" * 3000,
    "x" * 5000,
    "/proc/self/mem",
    "/dev/zero",
    "(a+)+$",
    "a{4294967296}",
    "(" * 3000,
    "[",
    "*" * 200,
    "\x01http://x/",
    "http://127.0.0.1:1/",
    "file:///etc/passwd",
    "http://[::1",
    "http://x:99999/",
]
strings = st.one_of(st.sampled_from(HOSTILE), st.text(st.characters(codec=None), max_size=60))
numbers = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([math.nan, math.inf, -math.inf, 0, -1, 2**31, 2**63, 1e400]),
)
json_values = st.one_of(st.none(), st.booleans(), numbers, strings, st.lists(st.integers(), max_size=2))
SAFE_COMMANDS = ["true", "exit 3", "echo hi", "printf '\\033[31mred\\n'", "cat /dev/null"]


def _value(name: str, schema: Mapping[str, Any]) -> st.SearchStrategy[Any]:
    kind = schema.get("type")
    if name == "command":
        return st.one_of(st.sampled_from(SAFE_COMMANDS), st.sampled_from(["", " ", "\x00", "\ud800"]))
    if name == "url":
        return st.one_of(strings, strings.map(lambda s: "http://127.0.0.1:1/" + s))
    if kind == "string":
        return st.one_of(strings, json_values)
    if kind in ("integer", "number"):
        return st.one_of(numbers, json_values)
    return json_values


def _arguments(schema: Mapping[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    properties: Mapping[str, Any] = schema["properties"]
    required = set(schema.get("required", ()))
    optional = {name: _value(name, p) for name, p in properties.items() if name not in required}
    return st.fixed_dictionaries(
        {name: _value(name, properties[name]) for name in required}, optional=optional
    ) | st.dictionaries(st.sampled_from([*properties, "unknown"]), json_values, max_size=4)


TOOLS = [*FILE_TOOLS, "run_shell_command", "fetch_web_page"]
_WORKSPACE = Path(tempfile.mkdtemp(prefix="sessionflow-hostile-"))
(_WORKSPACE / "f.txt").write_text("aaa\nbbb\n")
(_WORKSPACE / "d").mkdir()
_TOOLS = Tools(_WORKSPACE)


@pytest.mark.parametrize("tool", TOOLS)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_any_arguments_return_or_raise_a_tool_error(tool: str, data: st.DataObject) -> None:
    arguments = data.draw(_arguments(_TOOLS.specs[tool].parameters))

    async def call() -> str:
        return await asyncio.wait_for(_TOOLS.call(tool, **arguments), timeout=60)

    try:
        text = asyncio.run(call())
    except ToolExecutionError as error:
        error.message.encode("utf-8")  # the model can read it
    else:
        text.encode("utf-8")
        json.dumps(text)
