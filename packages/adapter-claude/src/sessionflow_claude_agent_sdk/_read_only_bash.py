"""Bash commands Claude Code lets run without asking: read-only ones, inside the working directory.

Claude Code allows a ``Bash`` call that only reads (``ls``, ``cat a.txt``, ``git status``,
``ls | wc -l``) without a permission prompt, so ``can_use_tool`` never hears of it. The model
step asks the user's permission options only where Claude Code would, so it needs the same
answer. This is a conservative subset of Claude Code's check, each entry one the tests
showed Claude Code lets through: a command outside it is treated as one Claude Code asks
about, so the worst case is a question plain Claude Code would not have asked, never a
call run that it would have asked about.

A command is read-only here when every part of it (split at ``|``, ``&&``, ``||``) is a known
read-only program with no flag that writes or runs something, its path arguments stay
inside the working directory, and it has no substitution, no background ``&`` and no output
redirection other than to ``/dev/null``.

In ``acceptEdits`` mode Claude Code also lets the common file commands run unasked
(``touch``, ``mkdir``, ``cp``, ``mv``, ``rm``, ``rmdir``, ``sed -i``) and output redirected
into a file, all inside the working directory (`is_file_edit_command`).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Sequence
from pathlib import Path

__all__ = ["is_file_edit_command", "is_read_only_command"]

_PARTS = re.compile(r"\|\||&&|\|")
_FORBIDDEN = ("$(", "`", "<(", ">(", "\n", ";", "$")
_TO_NULL = re.compile(r"\s*\d?>\s*/dev/null")


def _no_flags(*flags: str) -> Callable[[Sequence[str]], bool]:
    def check(args: Sequence[str]) -> bool:
        return not any(a == f or a.startswith(f + "=") for a in args for f in flags)

    return check


def _sed(args: Sequence[str]) -> bool:
    # Only printing a line range: ``sed -n 1p file`` / ``sed -n '2,5p'``.
    return len(args) >= 2 and args[0] == "-n" and re.fullmatch(r"[0-9]+(,[0-9$]+)?p", args[1]) is not None


def _git(args: Sequence[str]) -> bool:
    return bool(args) and args[0] in {"status", "log", "diff", "show"} and _no_flags("--output")(args[1:])


def _find(args: Sequence[str]) -> bool:
    writes = {"-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0", "-fprintf", "-fls"}
    return not any(a in writes for a in args)


_ANY: Callable[[Sequence[str]], bool] = lambda args: True  # noqa: E731

_PROGRAMS: dict[str, Callable[[Sequence[str]], bool]] = {
    "ls": _ANY,
    "pwd": _ANY,
    "echo": _ANY,
    "cat": _ANY,
    "head": _ANY,
    "tail": _no_flags("-f", "-F", "--follow"),
    "wc": _ANY,
    "grep": _ANY,
    "sort": _no_flags("-o", "--output"),
    "date": lambda args: not any(a.startswith(("-s", "--set")) for a in args),
    "which": _ANY,
    "diff": _ANY,
    "file": _ANY,
    "stat": _ANY,
    "du": _ANY,
    "cut": _ANY,
    "tr": _ANY,
    "test": _ANY,
    "sed": _sed,
    "git": _git,
    "find": _find,
}
"""Each program Claude Code was seen to let run unasked, and the check of its arguments."""


_FILE_EDITS: dict[str, Callable[[Sequence[str]], bool]] = {
    "touch": _ANY,
    "mkdir": _ANY,
    "cp": _ANY,
    "mv": _ANY,
    "rm": _ANY,
    "rmdir": _ANY,
    "sed": _ANY,
}
"""The file commands Claude Code was seen to let run unasked in ``acceptEdits`` mode."""

_TO_FILE = re.compile(r"\s*(?:>>|>)\s*(?P<path>[^\s;&|<>]+)")


def is_read_only_command(command: str, cwd: Path) -> bool:
    """Whether Claude Code would run `command` in `cwd` without asking (see the module's docstring)."""
    return _judged(_TO_NULL.sub("", command.strip()), cwd, _PROGRAMS)


def is_file_edit_command(command: str, cwd: Path) -> bool:
    """Whether Claude Code would run `command` in `cwd` unasked in ``acceptEdits`` mode."""
    text = _TO_NULL.sub("", command.strip())
    for target in _TO_FILE.finditer(text):
        if not _inside(target.group("path"), cwd):
            return False
    return _judged(_TO_FILE.sub("", text), cwd, {**_PROGRAMS, **_FILE_EDITS})


def _judged(text: str, cwd: Path, programs: dict[str, Callable[[Sequence[str]], bool]]) -> bool:
    if (
        not text
        or any(mark in text for mark in _FORBIDDEN)
        or ">" in text
        or re.search(r"(?<!&)&(?!&)", text)
    ):
        return False
    for part in _PARTS.split(text):
        try:
            words = shlex.split(part)
        except ValueError:
            return False
        words = _without_input_redirect(words, cwd)
        if not words:
            return False
        check = programs.get(words[0])
        if check is None or not check(words[1:]):
            return False
        if not all(_inside(word, cwd) for word in words[1:] if not word.startswith("-")):
            return False
    return True


def _without_input_redirect(words: list[str], cwd: Path) -> list[str] | None:
    out: list[str] = []
    index = 0
    while index < len(words):
        word = words[index]
        if word == "<":
            if index + 1 >= len(words) or not _inside(words[index + 1], cwd):
                return None
            index += 2
            continue
        if word.startswith("<"):
            if not _inside(word[1:], cwd):
                return None
            index += 1
            continue
        out.append(word)
        index += 1
    return out


def _inside(word: str, cwd: Path) -> bool:
    """An argument that names no path outside `cwd` (a pattern or plain text stays inside)."""
    if word.startswith("~"):
        return False
    if not (word.startswith("/") or ".." in Path(word).parts):
        return True
    try:
        (cwd / word).resolve().relative_to(cwd.resolve())
    except ValueError:
        return False
    return True
