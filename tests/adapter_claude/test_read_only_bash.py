"""`_read_only_bash`: the commands Claude Code lets run unasked, and those it asks about.

Each case was run against the pinned CLI with a ``can_use_tool`` that records what it is
asked: "free" ones never reached it, the others did.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sessionflow_claude_agent_sdk._read_only_bash import is_read_only_command

FREE = [
    "ls",
    "ls -la",
    "pwd",
    "echo hi",
    "cat a.txt",
    "head -n 1 a.txt",
    "wc -l a.txt",
    "grep hello a.txt",
    "ls | wc -l",
    "ls && pwd",
    "git status",
    "find . -name '*.txt'",
    "sort a.txt",
    "date",
    "which ls",
    "tail a.txt",
    "diff a.txt a.txt",
    "file a.txt",
    "stat a.txt",
    "du -sh .",
    "sed -n 1p a.txt",
    "cut -c1 a.txt",
    "tr a b < a.txt",
    "echo hi > /dev/null",
    "test -f a.txt",
]
ASKED = [
    "ls > out.txt",
    "find . -delete",
    "rm a.txt",
    "touch b.txt",
    "echo $(rm x)",
    "cd /tmp && ls",
    "cat /etc/hostname",
    "ls /",
    "env",
    "printenv HOME",
    "python3 -c 'print(1)'",
    "sed -i s/a/b/ a.txt",
    "awk '{print}' a.txt",
    "uniq a.txt",
    "ls; rm -f zz",
]


@pytest.mark.parametrize("command", FREE)
def test_claude_code_runs_these_unasked(command: str, tmp_path: Path) -> None:
    assert is_read_only_command(command, tmp_path)


@pytest.mark.parametrize("command", ASKED)
def test_claude_code_asks_about_these(command: str, tmp_path: Path) -> None:
    assert not is_read_only_command(command, tmp_path)


@pytest.mark.parametrize(
    "command", ["cat ../outside.txt", "ls ~", "sleep 1 &", "ls `pwd`", "git push", "tail -f a.txt"]
)
def test_what_the_subset_leaves_to_a_question(command: str, tmp_path: Path) -> None:
    assert not is_read_only_command(command, tmp_path)
