"""An adversarial corpus against the file tools: every attempt to leave the workspace fails.

Each case builds its trap in a fresh sandbox, optionally changes the file system at an
exact moment between a check and its use (through `_paths.race_hook`), calls one tool,
and expects a refusal (or, for tools that may answer, an answer without the secret).
After every case the sentinel outside the workspace is byte-for-byte and inode-for-inode
the same, the kernel (inotify) saw nothing open, read, write or create anything in the
outside folder, and no file outside the workspace holds the written payload.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from sessionflow.kit import ToolExecutionError
from sessionflow_claude_agent_sdk import run_builtin_tool
from sessionflow_local_tools import _paths
from tests.local_tools.conftest import SENTINEL_TEXT, Sandbox, Untouched

PAYLOAD = "PWNED-PAYLOAD"

Setup = Callable[[Sandbox], None]


def _nothing(sb: Sandbox) -> None:
    return None


def _fmt(sb: Sandbox, text: str) -> str:
    return text.format(ws=sb.ws, out=sb.outside, twin=sb.evil_twin)


def _at(sb: Sandbox, name: str | bytes) -> str | bytes:
    if isinstance(name, bytes):
        return os.path.join(os.fsencode(sb.ws), name)
    return str(sb.ws / name)


def link(name: str | bytes, target: str) -> Setup:
    def setup(sb: Sandbox) -> None:
        path = _at(sb, name)
        parent = os.path.dirname(path)
        os.makedirs(parent, exist_ok=True)
        os.symlink(_fmt(sb, target), path)

    return setup


def write(name: str, text: str = "inside\n") -> Setup:
    def setup(sb: Sandbox) -> None:
        (sb.ws / name).parent.mkdir(parents=True, exist_ok=True)
        (sb.ws / name).write_text(text)

    return setup


def hard_link(name: str) -> Setup:
    def setup(sb: Sandbox) -> None:
        os.link(sb.sentinel, sb.ws / name)

    return setup


def fifo(name: str) -> Setup:
    def setup(sb: Sandbox) -> None:
        os.mkfifo(sb.ws / name)

    return setup


def steps(*setups: Setup) -> Setup:
    def setup(sb: Sandbox) -> None:
        for one in setups:
            one(sb)

    return setup


# -- moves made at the exact moment between a check and its use


def swap_dir_for_link(name: str, target: str = "{out}") -> Setup:
    """Move the workspace directory ``name`` away and put a link to ``target`` in its place."""

    def race(sb: Sandbox) -> None:
        os.rename(sb.ws / name, sb.moved / name)
        os.symlink(_fmt(sb, target), sb.ws / name)

    return race


def move_out(name: str) -> Setup:
    """Move the workspace directory ``name`` out of the workspace."""

    def race(sb: Sandbox) -> None:
        os.rename(sb.ws / name, sb.moved / Path(name).name)

    return race


def replace_with_link(name: str, target: str = "{out}/secret.txt") -> Setup:
    def race(sb: Sandbox) -> None:
        (sb.ws / name).unlink(missing_ok=True)
        os.symlink(_fmt(sb, target), sb.ws / name)

    return race


def replace_with_hard_link_to_decoy(name: str) -> Setup:
    def race(sb: Sandbox) -> None:
        decoy = sb.moved / "decoy.txt"
        decoy.write_text(SENTINEL_TEXT + " decoy\n")
        (sb.ws / name).unlink()
        os.link(decoy, sb.ws / name)

    return race


def rewrite(name: str, text: str) -> Setup:
    def race(sb: Sandbox) -> None:
        (sb.ws / name).write_text(text)

    return race


def replace_with_other_file(name: str) -> Setup:
    def race(sb: Sandbox) -> None:
        other = sb.ws / "other.tmp"
        other.write_text("someone else's\n")
        os.rename(other, sb.ws / name)

    return race


@dataclass(frozen=True)
class Case:
    id: str
    tool: str
    args: Mapping[str, object]
    refusal: str | None
    """A part of the refusal's message; None: the tool may answer, without the secret."""
    setup: Setup = _nothing
    race: tuple[str, Setup] | None = None
    """(stage, change): the change is made once, when the tool reaches that stage."""


NON_UTF8 = os.fsdecode(b"\xff\xfe-link")
NON_UTF8_DIR = os.fsdecode(b"d\xff")
OUT = "{out}"
SECRET = "{out}/secret.txt"

CASES: list[Case] = [
    # -- absolute paths and '..'
    Case("absolute-outside", "read_file", {"path": SECRET}, "outside the workspace"),
    Case("absolute-evil-twin-prefix", "read_file", {"path": "{twin}/secret.txt"}, "outside the workspace"),
    Case(
        "absolute-through-workspace-dotdot",
        "read_file",
        {"path": "{ws}/../outside/secret.txt"},
        "climbs above",
    ),
    Case("relative-dotdot", "read_file", {"path": "../outside/secret.txt"}, "climbs above"),
    Case("dot-then-dotdot", "read_file", {"path": "./../outside/secret.txt"}, "climbs above"),
    Case(
        "dotdot-after-subdir",
        "read_file",
        {"path": "sub/../../outside/secret.txt"},
        "climbs above",
        write("sub/f"),
    ),
    Case("list-parent", "list_directory", {"path": ".."}, "climbs above"),
    Case(
        "search-filesystem-root",
        "search_files",
        {"pattern": SENTINEL_TEXT, "path": "/"},
        "outside the workspace",
    ),
    Case(
        "edit-absolute-outside",
        "edit_file",
        {"path": SECRET, "old_string": "TOP", "new_string": PAYLOAD},
        "outside",
    ),
    Case("write-dotdot", "write_file", {"path": "../outside/new.txt", "content": PAYLOAD}, "climbs above"),
    Case(
        "write-missing-dir-then-dotdot",
        "write_file",
        {"path": "new/../../outside/new.txt", "content": PAYLOAD},
        "no such file",
    ),
    # -- symbolic links pointing out
    Case("absolute-link", "read_file", {"path": "link"}, "outside the workspace", link("link", SECRET)),
    Case(
        "relative-link", "read_file", {"path": "link"}, "climbs above", link("link", "../outside/secret.txt")
    ),
    Case(
        "chained-links",
        "read_file",
        {"path": "a"},
        "outside the workspace",
        steps(link("a", "b"), link("b", "c"), link("c", SECRET)),
    ),
    Case(
        "chain-with-inside-hop",
        "read_file",
        {"path": "a"},
        "climbs above",
        steps(link("a", "sub/b"), link("sub/b", "../../outside/secret.txt")),
    ),
    Case(
        "absolute-link-spelling-workspace-then-dotdot",
        "read_file",
        {"path": "x"},
        "climbs above",
        link("x", "{ws}/../outside/secret.txt"),
    ),
    Case(
        "link-to-evil-twin",
        "read_file",
        {"path": "t"},
        "outside the workspace",
        link("t", "{twin}/secret.txt"),
    ),
    Case("dir-link-read", "read_file", {"path": "d/secret.txt"}, "outside the workspace", link("d", OUT)),
    Case("dir-link-relative", "read_file", {"path": "d/secret.txt"}, "climbs above", link("d", "../outside")),
    Case("dir-link-list", "list_directory", {"path": "d"}, "outside the workspace", link("d", OUT)),
    Case("dir-link-search", "search_files", {"pattern": "SECRET", "path": "d"}, "outside", link("d", OUT)),
    Case(
        "dir-link-write", "write_file", {"path": "d/new.txt", "content": PAYLOAD}, "outside", link("d", OUT)
    ),
    Case("parent-link", "read_file", {"path": "up/outside/secret.txt"}, "climbs above", link("up", "..")),
    Case("root-link", "read_file", {"path": "r/etc/hostname"}, "outside the workspace", link("r", "/")),
    Case(
        "link-loop",
        "read_file",
        {"path": "a"},
        "too many symbolic links",
        steps(link("a", "b"), link("b", "a")),
    ),
    Case(
        "write-through-final-link",
        "write_file",
        {"path": "l", "content": PAYLOAD},
        "symbolic link",
        link("l", SECRET),
    ),
    Case(
        "edit-through-final-link",
        "edit_file",
        {"path": "l", "old_string": "TOP", "new_string": PAYLOAD},
        "symbolic link",
        link("l", SECRET),
    ),
    Case(
        "write-through-inside-link-to-outside-link",
        "write_file",
        {"path": "a", "content": PAYLOAD},
        "symbolic link",
        steps(link("a", "b"), link("b", SECRET)),
    ),
    # -- hard links
    Case("hard-link-read", "read_file", {"path": "h"}, "hard links", hard_link("h")),
    Case(
        "hard-link-edit",
        "edit_file",
        {"path": "h", "old_string": "TOP", "new_string": PAYLOAD},
        "hard links",
        hard_link("h"),
    ),
    Case("hard-link-write", "write_file", {"path": "h", "content": PAYLOAD}, "hard links", hard_link("h")),
    Case("hard-link-search-skipped", "search_files", {"pattern": "SECRET"}, None, hard_link("h")),
    # -- special files
    Case("fifo-read", "read_file", {"path": "p"}, "not a regular file", fifo("p")),
    Case(
        "fifo-edit",
        "edit_file",
        {"path": "p", "old_string": "a", "new_string": "b"},
        "not a regular file",
        fifo("p"),
    ),
    Case("fifo-write", "write_file", {"path": "p", "content": PAYLOAD}, "not a regular file", fifo("p")),
    Case("fifo-search-skipped", "search_files", {"pattern": "x"}, None, steps(fifo("p"), write("f.txt"))),
    # -- odd names
    Case("very-long-path", "read_file", {"path": "a/" * 3000 + "f"}, "too long"),
    Case("very-long-name", "write_file", {"path": "x" * 300, "content": PAYLOAD}, "too long"),
    Case("nul-byte", "read_file", {"path": "secret\x00.txt"}, "NUL byte"),
    Case("nul-byte-write", "write_file", {"path": "../outside/x\x00", "content": PAYLOAD}, "NUL byte"),
    Case(
        "non-utf8-link",
        "read_file",
        {"path": NON_UTF8},
        "outside the workspace",
        link(b"\xff\xfe-link", SECRET),
    ),
    Case("non-utf8-dir-link-list", "list_directory", {"path": NON_UTF8_DIR}, "outside", link(b"d\xff", OUT)),
    Case(
        "non-utf8-dir-link-write",
        "write_file",
        {"path": NON_UTF8_DIR + "/new.txt", "content": PAYLOAD},
        "outside",
        link(b"d\xff", OUT),
    ),
    # -- whole-workspace tools next to traps
    Case(
        "search-everything-among-traps",
        "search_files",
        {"pattern": "SECRET", "ignore_case": True},
        None,
        steps(
            link("l", SECRET), link("d", OUT), link("t", "{twin}/secret.txt"), hard_link("h"), write("f.txt")
        ),
    ),
    Case("list-among-traps", "list_directory", {"path": "."}, None, steps(link("l", SECRET), link("d", OUT))),
    # -- a directory swapped for a link between check and use
    Case(
        "race-read-dir-swapped",
        "read_file",
        {"path": "sub/f.txt"},
        "changed while the tool ran",
        write("sub/f.txt"),
        ("resolved", swap_dir_for_link("sub")),
    ),
    Case(
        "race-list-dir-swapped",
        "list_directory",
        {"path": "sub"},
        "changed while the tool ran",
        write("sub/f.txt"),
        ("resolved", swap_dir_for_link("sub")),
    ),
    Case(
        "race-search-dir-swapped",
        "search_files",
        {"pattern": "SECRET", "path": "sub"},
        "changed while the tool ran",
        write("sub/f.txt"),
        ("resolved", swap_dir_for_link("sub")),
    ),
    Case(
        "race-write-dir-swapped",
        "write_file",
        {"path": "sub/new.txt", "content": PAYLOAD},
        "changed while the tool ran",
        write("sub/f.txt"),
        ("resolved", swap_dir_for_link("sub")),
    ),
    Case(
        "race-edit-dir-swapped",
        "edit_file",
        {"path": "sub/f.txt", "old_string": "inside", "new_string": PAYLOAD},
        "changed while the tool ran",
        write("sub/f.txt"),
        ("resolved", swap_dir_for_link("sub")),
    ),
    Case(
        "race-file-swapped-for-link",
        "read_file",
        {"path": "f.txt"},
        "changed while the tool ran",
        write("f.txt"),
        ("resolved", replace_with_link("f.txt")),
    ),
    Case(
        "race-dir-moved-out-while-walking",
        "read_file",
        {"path": "a/b/f.txt"},
        "outside the workspace",
        write("a/b/f.txt", SENTINEL_TEXT + " moved\n"),
        ("walk", move_out("a")),
    ),
    # -- races against the rename of a write
    Case(
        "race-rename-dir-moved-out",
        "write_file",
        {"path": "sub/new.txt", "content": PAYLOAD},
        "outside the workspace",
        write("sub/f.txt"),
        ("before_rename", move_out("sub")),
    ),
    Case(
        "race-rename-edit-dir-moved-out",
        "edit_file",
        {"path": "sub/f.txt", "old_string": "inside", "new_string": PAYLOAD},
        "outside the workspace",
        write("sub/f.txt"),
        ("before_rename", move_out("sub")),
    ),
    Case(
        "race-rename-name-became-link",
        "write_file",
        {"path": "f.txt", "content": PAYLOAD},
        "symbolic link",
        write("f.txt"),
        ("before_rename", replace_with_link("f.txt")),
    ),
    Case(
        "race-rename-edit-name-became-link",
        "edit_file",
        {"path": "f.txt", "old_string": "inside", "new_string": PAYLOAD},
        "symbolic link",
        write("f.txt"),
        ("before_rename", replace_with_link("f.txt")),
    ),
    Case(
        "race-rename-edit-name-became-hard-link",
        "edit_file",
        {"path": "f.txt", "old_string": "inside", "new_string": PAYLOAD},
        "hard links",
        write("f.txt"),
        ("before_rename", replace_with_hard_link_to_decoy("f.txt")),
    ),
    Case(
        "race-rename-edit-content-changed",
        "edit_file",
        {"path": "f.txt", "old_string": "inside", "new_string": PAYLOAD},
        "changed since edit_file read it",
        write("f.txt"),
        ("before_rename", rewrite("f.txt", "inside, and more\n")),
    ),
    Case(
        "race-after-rename-name-replaced",
        "write_file",
        {"path": "f.txt", "content": "mine\n"},
        "holds a different file",
        write("f.txt"),
        ("after_rename", replace_with_other_file("f.txt")),
    ),
]


def test_the_corpus_is_large_enough() -> None:
    assert len(CASES) >= 30
    assert len({case.id for case in CASES}) == len(CASES)


def _files_outside_holding(sb: Sandbox, needle: str) -> list[Path]:
    found: list[Path] = []
    for folder, dirs, files in os.walk(sb.root):
        if Path(folder) == sb.ws:
            dirs.clear()
            continue
        for name in files:
            path = Path(folder) / name
            if path.is_file() and not path.is_symlink() and needle in path.read_text(errors="replace"):
                found.append(path)
    return found


# Claude Code's tools map onto the same hardened runtime; the corpus runs through them too.
CLAUDE_NAMES = {
    "read_file": "Read",
    "list_directory": "Glob",
    "search_files": "Grep",
    "write_file": "Write",
    "edit_file": "Edit",
}


def _as_claude(tool: str, args: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    mapped = dict(args)
    if tool in ("read_file", "write_file", "edit_file"):
        mapped["file_path"] = mapped.pop("path")
    elif tool == "list_directory":
        mapped = {"pattern": "*", "path": mapped.get("path", ".")}
    elif tool == "search_files" and "ignore_case" in mapped:
        mapped["-i"] = mapped.pop("ignore_case")
    return CLAUDE_NAMES[tool], mapped


@pytest.mark.parametrize("front", ["cli", "claude"])
@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
async def test_no_escape(
    case: Case, front: str, sandbox: Sandbox, untouched: list[Untouched], monkeypatch: pytest.MonkeyPatch
) -> None:
    sb = sandbox
    case.setup(sb)
    before = sb.sentinel_state()
    watch = Untouched(sb.sentinel, sb.outside)
    untouched.append(watch)
    fired: list[str] = []
    if case.race is not None:
        stage, change = case.race

        def hook(reached: str) -> None:
            if reached == stage and not fired:
                fired.append(reached)
                change(sb)

        monkeypatch.setattr(_paths, "race_hook", hook)
    args: dict[str, Any] = {k: _fmt(sb, v) if isinstance(v, str) else v for k, v in case.args.items()}

    output, refusal = "", None
    try:
        if front == "cli":
            output = await asyncio.wait_for(sb.tools.call(case.tool, **args), timeout=10)
        else:
            name, mapped = _as_claude(case.tool, args)
            output = await asyncio.wait_for(run_builtin_tool(name, mapped, sb.ws), timeout=10)
    except ToolExecutionError as error:
        refusal = error.message

    if case.race is not None:
        assert fired, f"the race at {case.race[0]!r} never happened"
    if case.refusal is None:
        assert refusal is None, refusal
    else:
        assert refusal is not None, f"not refused; answered {output[:300]!r}"
        assert case.refusal in refusal
    # No escape: nothing outside was opened, read, written or created, and nothing leaked.
    assert watch.events() == []
    assert sb.sentinel_state() == before
    assert SENTINEL_TEXT not in output and SENTINEL_TEXT not in (refusal or "")
    assert _files_outside_holding(sb, PAYLOAD) == []
    assert not [p for p in sb.moved.rglob("*.sessionflow-tmp")], "a temporary file was left behind"
