"""Names print as one unambiguous line; trailing slashes, deep and long paths get clear errors."""

from __future__ import annotations

import os
from typing import Any

import pytest

from sessionflow.kit import ToolExecutionError
from sessionflow_local_tools import terminal_safe
from sessionflow_local_tools._paths import MAX_PATH_BYTES, MAX_PATH_DEPTH
from tests.local_tools.conftest import Sandbox, Tools


async def refused(tools: Tools, tool: str, /, **args: Any) -> str:
    with pytest.raises(ToolExecutionError) as caught:
        await tools.call(tool, **args)
    return caught.value.message


async def test_a_name_with_a_newline_is_one_escaped_entry(sandbox: Sandbox) -> None:
    (sandbox.ws / "evil\nfake.txt (3 bytes)").write_text("x\n")
    (sandbox.ws / "esc\x1b[31mred").write_text("needle\n")
    (sandbox.ws / "back\\slash").write_text("needle\n")
    listing = await sandbox.tools.call("list_directory")
    assert listing.splitlines() == [
        ".: 3 entries",
        "back\\\\slash (7 bytes)",
        "esc\\x1b[31mred (7 bytes)",
        "evil\\nfake.txt (3 bytes) (2 bytes)",
    ]
    found = await sandbox.tools.call("search_files", pattern="needle")
    assert found.splitlines()[:2] == ["back\\\\slash:1: needle", "esc\\x1b[31mred:1: needle"]
    assert "\x1b" not in listing + found


def test_the_terminal_never_gets_control_characters() -> None:
    shown = terminal_safe("ok\x1b[2J\x1b]0;title\x07\r\nnext\tcol\x9b\x00")
    assert shown == "ok[2J]0;title\nnext\tcol"


@pytest.mark.parametrize(
    ("tool", "extra"), [("read_file", {}), ("edit_file", {"old_string": "a", "new_string": "b"})]
)
async def test_a_trailing_slash_on_a_file_is_an_error(
    sandbox: Sandbox, tool: str, extra: dict[str, str]
) -> None:
    (sandbox.ws / "x.txt").write_text("a\n")
    for path in ("x.txt/", "x.txt/."):
        assert "ends with '/'" in await refused(sandbox.tools, tool, path=path, **extra)
    assert (sandbox.ws / "x.txt").read_text() == "a\n"


async def test_write_file_with_a_trailing_slash_creates_nothing(sandbox: Sandbox) -> None:
    assert "ends with '/'" in await refused(sandbox.tools, "write_file", path="newfile/", content="x")
    assert "ends with '/'" in await refused(sandbox.tools, "write_file", path="sub/newfile/", content="x")
    assert list(sandbox.ws.iterdir()) == []
    (sandbox.ws / "d").mkdir()
    assert (await sandbox.tools.call("list_directory", path="d/")).startswith("d: 0 entries")


async def test_a_path_deeper_than_the_limit(sandbox: Sandbox) -> None:
    deep = "/".join(["d"] * (MAX_PATH_DEPTH + 20))
    os.makedirs(sandbox.ws / deep)
    (sandbox.ws / deep / "f.txt").write_text("deep\n")
    for tool, extra in (("read_file", {}), ("list_directory", {}), ("write_file", {"content": "x"})):
        target = deep if tool == "list_directory" else f"{deep}/f.txt"
        assert "too deep" in await refused(sandbox.tools, tool, path=target, **extra)
    assert "too deep" in await refused(sandbox.tools, "write_file", path=f"{deep}/new/f.txt", content="x")
    ok = "/".join(["d"] * (MAX_PATH_DEPTH - 1))
    assert (await sandbox.tools.call("list_directory", path=ok)).endswith("d/")


async def test_a_path_over_4095_bytes(sandbox: Sandbox) -> None:
    long = "/".join(["x" * 200] * 21)  # 4220 bytes, every name allowed
    for tool, extra in (("read_file", {}), ("write_file", {"content": "x"})):
        message = await refused(sandbox.tools, tool, path=long, **extra)
        assert f"at most {MAX_PATH_BYTES}" in message and "4220 bytes" in message
    multibyte = "é" * 2100  # 2100 characters, 4200 bytes
    assert "4200 bytes" in await refused(sandbox.tools, "read_file", path=multibyte)
    assert "256 bytes; at most 255" in await refused(sandbox.tools, "write_file", path="n" * 256, content="x")
