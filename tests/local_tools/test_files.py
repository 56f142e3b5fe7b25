"""What the file tools do inside the workspace: reads, listings, searches, writes and edits."""

from __future__ import annotations

import os
import stat
from typing import Any

import pytest

from sessionflow.kit import ToolExecutionError
from sessionflow_local_tools import _files, _search, _writes
from tests.local_tools.conftest import SENTINEL_TEXT, Sandbox, Tools, Untouched


async def refused(tools: Tools, tool: str, /, **args: Any) -> str:
    with pytest.raises(ToolExecutionError) as caught:
        await tools.call(tool, **args)
    return caught.value.message


def test_the_harness_sees_a_read(sandbox: Sandbox, untouched: list[Untouched]) -> None:
    # The control for the corpus: the inotify watch does notice a plain read of the sentinel.
    watch = Untouched(sandbox.sentinel, sandbox.outside)
    untouched.append(watch)
    assert SENTINEL_TEXT in sandbox.sentinel.read_text()
    assert watch.events() != []


# --------------------------------------------------------------------------- reading


async def test_links_that_stay_inside_work(sandbox: Sandbox) -> None:
    ws, tools = sandbox.ws, sandbox.tools
    (ws / "node_modules/pkg/bin").mkdir(parents=True)
    (ws / "node_modules/pkg/bin/tool.js").write_text("console.log(1)\n")
    (ws / "node_modules/.bin").mkdir()
    os.symlink("../pkg/bin/tool.js", ws / "node_modules/.bin/tool")
    os.symlink(ws / "node_modules", ws / "abs-link")  # absolute, but inside
    assert await tools.call("read_file", path="node_modules/.bin/tool") == "console.log(1)\n"
    assert await tools.call("read_file", path="abs-link/.bin/tool") == "console.log(1)\n"
    assert await tools.call("read_file", path=str(ws / "node_modules/.bin/tool")) == "console.log(1)\n"
    assert await tools.call("read_file", path="node_modules/pkg/../pkg/bin/./tool.js") == "console.log(1)\n"


async def test_a_workspace_reached_through_a_link(sandbox: Sandbox) -> None:
    (sandbox.ws / "f.txt").write_text("x\n")
    alias = sandbox.root / "alias"
    os.symlink(sandbox.ws, alias)
    tools = Tools(alias)
    assert await tools.call("read_file", path=str(alias / "f.txt")) == "x\n"
    assert await tools.call("read_file", path=str(sandbox.ws / "f.txt")) == "x\n"
    assert "outside the workspace" in await refused(tools, "read_file", path=str(sandbox.sentinel))


async def test_read_file_pages_with_offset_and_limit(sandbox: Sandbox) -> None:
    (sandbox.ws / "n.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    tools = sandbox.tools
    assert await tools.call("read_file", path="n.txt", offset=3, limit=2) == (
        "line 3\nline 4\n[... truncated: showing lines 3-4 of n.txt; more lines follow. "
        "Call read_file with offset=5 to read on.]"
    )
    assert await tools.call("read_file", path="n.txt", offset=10) == "line 10\n"
    assert "only 10 lines" in await tools.call("read_file", path="n.txt", offset=11)
    assert await tools.call("read_file", path="n.txt") == (sandbox.ws / "n.txt").read_text()
    assert "must be between" in await refused(tools, "read_file", path="n.txt", limit=0)


async def test_read_file_caps_long_lines_and_total_size(sandbox: Sandbox) -> None:
    (sandbox.ws / "wide.txt").write_text("a" * 10_000 + "\nnext\n")
    text = await sandbox.tools.call("read_file", path="wide.txt")
    assert text.startswith("a" * _files.MAX_LINE_CHARS + " [... line truncated: 6001 more bytes ...]\nnext")
    (sandbox.ws / "big.txt").write_text(("b" * 99 + "\n") * 5000)
    big = await sandbox.tools.call("read_file", path="big.txt")
    assert big.endswith("Call read_file with offset=2001 to read on.]")
    (sandbox.ws / "huge.txt").write_text(("c" * 999 + "\n") * 1000)
    huge = await sandbox.tools.call("read_file", path="huge.txt", limit=1000)
    assert len(huge) < _files.MAX_READ_CHARS + 200 and "offset=201 " in huge


async def test_read_file_describes_binary_and_empty_files(sandbox: Sandbox) -> None:
    (sandbox.ws / "b.bin").write_bytes(b"\x89PNG\x00\x01\x02")
    (sandbox.ws / "e.txt").write_text("")
    assert (
        await sandbox.tools.call("read_file", path="b.bin")
        == "[b.bin is a binary file of 7 bytes; not shown]"
    )
    assert await sandbox.tools.call("read_file", path="e.txt") == "[e.txt is empty]"
    assert "is a directory" in await refused(sandbox.tools, "read_file", path=".")
    assert "no such file" in await refused(sandbox.tools, "read_file", path="nope.txt")
    assert "empty" in await refused(sandbox.tools, "read_file", path="")


async def test_non_utf8_names_and_content(sandbox: Sandbox) -> None:
    name = os.fsdecode(b"caf\xe9.txt")  # not UTF-8: decoded with surrogateescape
    (sandbox.ws / name).write_bytes(b"price: 5\xa4\n")
    listing = await sandbox.tools.call("list_directory", path=".")
    assert "caf\\xe9.txt (10 bytes)" in listing
    assert await sandbox.tools.call("read_file", path=name) == "price: 5\\xa4\n"
    assert await sandbox.tools.call("edit_file", path=name, old_string="5", new_string="6") == (
        "Edited caf\\xe9.txt: replaced 1 occurrence."
    )
    assert (sandbox.ws / name).read_bytes() == b"price: 6\xa4\n"  # the odd byte survived the edit
    found = await sandbox.tools.call("search_files", pattern="price")
    assert found.startswith("caf\\xe9.txt:1: price: 6\\xa4")
    found.encode("utf-8")  # always valid text for the model


async def test_list_directory(sandbox: Sandbox) -> None:
    ws = sandbox.ws
    (ws / "dir").mkdir()
    (ws / "f.txt").write_text("abc")
    os.symlink("f.txt", ws / "l")
    os.mkfifo(ws / "p")
    assert await sandbox.tools.call("list_directory") == (
        ".: 4 entries\ndir/\nf.txt (3 bytes)\nl -> f.txt (symbolic link)\np (special file)"
    )
    assert await sandbox.tools.call("list_directory", path="dir") == "dir: 0 entries (empty directory)"
    assert "not a directory" in await refused(sandbox.tools, "list_directory", path="f.txt")
    for i in range(_files.MAX_LIST_ENTRIES + 5):
        (ws / "dir" / f"f{i:05}").touch()
    listing = await sandbox.tools.call("list_directory", path="dir")
    assert listing.endswith("[... truncated: 5 more entries not shown ...]")


# --------------------------------------------------------------------------- searching


async def test_search_files(sandbox: Sandbox) -> None:
    ws, tools = sandbox.ws, sandbox.tools
    (ws / "src/pkg").mkdir(parents=True)
    (ws / "src/pkg/a.py").write_text("import os\nTODO: fix\n")
    (ws / "src/b.txt").write_text("todo later\n")
    (ws / ".git").mkdir()
    (ws / ".git/config").write_text("TODO in git\n")
    assert await tools.call("search_files", pattern="TODO") == "src/pkg/a.py:2: TODO: fix\n[searched 2 files]"
    assert (await tools.call("search_files", pattern="todo", ignore_case=True)).splitlines()[:2] == [
        "src/b.txt:1: todo later",
        "src/pkg/a.py:2: TODO: fix",
    ]
    assert (await tools.call("search_files", pattern=r"^import \w+$", regex=True)).startswith(
        "src/pkg/a.py:1:"
    )
    assert (await tools.call("search_files", pattern="o", include="*.txt", path="src")).startswith(
        "src/b.txt:1:"
    )
    assert (await tools.call("search_files", pattern="fix", path="src/pkg/a.py")).startswith(
        "src/pkg/a.py:2:"
    )
    assert "not a valid regular expression" in await refused(tools, "search_files", pattern="(", regex=True)


async def test_search_files_caps_its_results(sandbox: Sandbox) -> None:
    (sandbox.ws / "many.txt").write_text("hit\n" * 50 + "x" * 1000 + "hit\n")
    text = await sandbox.tools.call("search_files", pattern="hit", max_results=3)
    assert text.splitlines()[:4] == [
        "many.txt:1: hit",
        "many.txt:2: hit",
        "many.txt:3: hit",
        "[... truncated: stopped at 3 matches; narrow the search to see more ...]",
    ]
    long_line = await sandbox.tools.call("search_files", pattern="xhit")
    assert long_line.startswith(f"many.txt:51: {'x' * _search.MAX_LINE_CHARS} [... line truncated]")


# --------------------------------------------------------------------------- writing


async def test_write_file_creates_and_replaces(sandbox: Sandbox) -> None:
    ws, tools = sandbox.ws, sandbox.tools
    assert (
        await tools.call("write_file", path="a/b/c.txt", content="one\n")
        == "Wrote 4 bytes to a/b/c.txt (created)."
    )
    assert (ws / "a/b/c.txt").read_text() == "one\n"
    os.chmod(ws / "a/b/c.txt", 0o640)
    assert (
        await tools.call("write_file", path="a/b/c.txt", content="two\n")
        == "Wrote 4 bytes to a/b/c.txt (replaced)."
    )
    assert (
        await tools.call("write_file", path="a/b/c.txt", content="two\n")
        == "Wrote 4 bytes to a/b/c.txt (replaced)."
    )
    assert (ws / "a/b/c.txt").read_text() == "two\n"
    assert stat.S_IMODE((ws / "a/b/c.txt").stat().st_mode) == 0o640
    assert "is a directory" in await refused(tools, "write_file", path="a", content="x")
    assert sorted(p.name for p in (ws / "a/b").iterdir()) == ["c.txt"]  # no temporary files left


async def test_edit_file(sandbox: Sandbox) -> None:
    ws, tools = sandbox.ws, sandbox.tools
    (ws / "e.py").write_text("x = 1\ny = 1\n")
    assert "occurs 2 times" in await refused(tools, "edit_file", path="e.py", old_string="1", new_string="2")
    assert "not found" in await refused(tools, "edit_file", path="e.py", old_string="z", new_string="2")
    assert "the same" in await refused(tools, "edit_file", path="e.py", old_string="x", new_string="x")
    assert "use write_file" in await refused(
        tools, "edit_file", path="new.py", old_string="x", new_string="y"
    )
    assert await tools.call("edit_file", path="e.py", old_string="x = 1", new_string="x = 2") == (
        "Edited e.py: replaced 1 occurrence."
    )
    assert await tools.call(
        "edit_file", path="e.py", old_string="= ", new_string=":= ", replace_all=True
    ) == ("Edited e.py: replaced 2 occurrences.")
    assert (ws / "e.py").read_text() == "x := 2\ny := 1\n"


async def test_edit_file_refuses_files_over_4_mib(sandbox: Sandbox) -> None:
    (sandbox.ws / "big.txt").write_bytes(b"a" * _writes.MAX_EDIT_BYTES + b"b")
    message = await refused(sandbox.tools, "edit_file", path="big.txt", old_string="b", new_string="c")
    assert "at most 4194304" in message
    (sandbox.ws / "fits.txt").write_bytes(b"a" * (_writes.MAX_EDIT_BYTES - 1) + b"b")
    await sandbox.tools.call("edit_file", path="fits.txt", old_string="b", new_string="c")
    assert (sandbox.ws / "fits.txt").read_bytes().endswith(b"ac")


# --------------------------------------------------------------------------- authorization


async def test_a_switched_off_group_runs_nothing(sandbox: Sandbox) -> None:
    off = {"local_tools": {"groups": ["shell", "web_fetch", "browser"]}}
    for name, args in [
        ("read_file", {"path": "x"}),
        ("write_file", {"path": "x.txt", "content": "no"}),
        ("edit_file", {"path": "x.txt", "old_string": "a", "new_string": "b"}),
    ]:
        message = await refused(sandbox.tools, name, settings=off, **args)
        assert message == f"tool {name} is switched off for this session"
    assert not (sandbox.ws / "x.txt").exists()


async def test_arguments_are_checked(sandbox: Sandbox) -> None:
    assert "unknown argument(s): recursive" in await refused(
        sandbox.tools, "list_directory", path=".", recursive=True
    )
    assert "must be a string" in await refused(sandbox.tools, "read_file", path=3)
    assert "is required" in await refused(sandbox.tools, "write_file", path="x")
