"""Patterns for `search_files`, compiled with RE2: matching takes linear time, always.

Python's ``re`` backtracks: ``(a+)+$`` against a line of ``a``s and a ``!`` runs for
ages while holding the GIL, which freezes the whole worker's event loop. RE2 matches
any pattern in time linear in the text, bounds its memory, and releases the GIL.
Compiling never raises anything but `ToolExecutionError`.
"""

from __future__ import annotations

from typing import Protocol

import re2

from sessionflow.kit import ToolExecutionError

__all__ = ["MAX_PATTERN_CHARS", "Matcher", "compile_pattern"]

MAX_PATTERN_CHARS = 4096
_MAX_MEMORY = 32 * 1024 * 1024
"""Bytes RE2 may use for one compiled pattern; a larger one is refused, not built."""


class Matcher(Protocol):
    def search(self, text: str) -> object | None: ...


def compile_pattern(pattern: str, *, regex: bool, ignore_case: bool) -> Matcher:
    """A compiled pattern (a plain substring unless ``regex``), or a refusal saying why."""
    if not pattern:
        raise ToolExecutionError("the pattern is empty")
    if len(pattern) > MAX_PATTERN_CHARS:
        raise ToolExecutionError(
            f"the pattern is too long ({len(pattern)} characters; at most {MAX_PATTERN_CHARS})"
        )
    try:
        pattern.encode("utf-8")
    except UnicodeEncodeError:
        raise ToolExecutionError("the pattern is not valid text (it contains a lone surrogate)") from None
    options = re2.Options()
    options.log_errors = False  # RE2 would print each bad pattern to the worker's stderr
    options.max_mem = _MAX_MEMORY
    options.case_sensitive = not ignore_case
    options.literal = not regex
    try:
        compiled: Matcher = re2.compile(pattern, options)  # pyright: ignore[reportUnknownMemberType]  (untyped binding)
    except Exception as error:  # re2.error, or anything the binding raises on odd input
        reason = error.args[0] if error.args else error
        if isinstance(reason, bytes):
            reason = reason.decode("utf-8", "replace")
        raise ToolExecutionError(
            f"the pattern is not a valid regular expression for RE2: {reason} (RE2 syntax: no "
            "backreferences or lookaround; repetition counts up to 1000)"
        ) from None
    return compiled
