"""`-p/--prompt`'s message: the argument, standard input, or both (Claude Code's rule).

- `-p TEXT` at a terminal: TEXT.
- `-p -`, or `-p` without TEXT: standard input, which must not be a terminal.
- `-p TEXT` with input piped or redirected from a file: TEXT, an empty line, then the
  input (`git diff | sessionflow -p "review this"`), as `claude -p` does.

Standard input counts as given only when it is a pipe, a file or a socket: `/dev/null` and
other devices are read as nothing, so a command run by a program with no input does not wait.
"""

from __future__ import annotations

import os
import stat
import sys
from typing import TextIO

from sessionflow_cli._errors import UsageError

__all__ = ["READ_STDIN", "prompt_text", "stdin_is_given"]

READ_STDIN = "-"


def stdin_is_given(stream: TextIO) -> bool:
    """Input is piped or redirected from a file (not a terminal, not a device such as /dev/null)."""
    try:
        if stream.isatty():
            return False
        mode = os.fstat(stream.fileno()).st_mode
    except (OSError, ValueError):
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISREG(mode) or stat.S_ISSOCK(mode)


def prompt_text(given: str | None, stream: TextIO | None = None) -> str | None:
    """The message `-p` sends; None without `-p`.

    Raises:
        UsageError: `-p -` (or a bare `-p`) at a terminal, or a message that is blank.
    """
    if given is None:
        return None
    source: TextIO = sys.stdin if stream is None else stream
    piped = stdin_is_given(source)
    if given == READ_STDIN and not piped:
        raise UsageError(
            "-p without a message reads standard input, and there is none: give the message "
            '(sessionflow -p "...") or pipe it in (echo "..." | sessionflow -p)'
        )
    text = given if given != READ_STDIN else ""
    if piped:
        piped_text = source.read().strip("\n")
        if piped_text.strip():
            text = f"{text}\n\n{piped_text}" if text.strip() else piped_text
    if not text.strip():
        raise UsageError("-p got an empty message: give the message or pipe it in")
    return text
