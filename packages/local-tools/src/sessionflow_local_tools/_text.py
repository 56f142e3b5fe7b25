"""Model-visible text: valid UTF-8 whatever the bytes were, and capped with a clear marker."""

from __future__ import annotations

import re

__all__ = ["cap_text", "clean_text", "decode", "show_name", "terminal_safe"]

# C0 controls, DEL and C1 controls: a name holding one could fake a line of output or
# send escape sequences to a terminal.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")
_CONTROL_BUT_LAYOUT = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_PLAIN = re.compile("[^\x00-\x1f\x7f-\x9f\\\\\ud800-\udfff]*")
_SHORT = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def decode(data: bytes) -> str:
    """Bytes as text; bytes that are not UTF-8 appear as ``\\xNN``."""
    return data.decode("utf-8", "backslashreplace")


def clean_text(text: str) -> str:
    """``text`` with lone surrogates (undecodable file names) turned into ``\\xNN``.

    Every tool output passes through here, so it always encodes as UTF-8 on its way to the
    model and into the session's history.
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        pass
    else:
        return text
    try:
        return decode(text.encode("utf-8", "surrogateescape"))
    except UnicodeEncodeError:  # a surrogate no file name decoding makes
        return text.encode("utf-8", "backslashreplace").decode("utf-8")


def show_name(name: str) -> str:
    """A file name for display, on one line and free of terminal escapes.

    Bytes that are not UTF-8 show as ``\\xNN``; control characters (a newline, ESC, ...)
    show as ``\\n``, ``\\x1b`` and so on, and a backslash as ``\\\\``, so every shown
    name stands for exactly one name.
    """
    if _PLAIN.fullmatch(name):
        return name
    return "".join(_escape(char) for char in name)


def _escape(char: str) -> str:
    code = ord(char)
    if char == "\\":
        return "\\\\"
    if char in _SHORT:
        return _SHORT[char]
    if 0xDC80 <= code <= 0xDCFF:  # an undecodable byte kept by surrogateescape
        return f"\\x{code - 0xDC00:02x}"
    if code < 0x100 and _CONTROL.match(char):
        return f"\\x{code:02x}"
    if 0xD800 <= code <= 0xDFFF:  # a lone surrogate no file name decoding makes
        return f"\\u{code:04x}"
    return char


def terminal_safe(text: str) -> str:
    """``text`` with every control character but newline and tab removed, for a terminal.

    What a tool returned may hold escape sequences (from a file, a page or a command's
    output) that would move the cursor, retitle the window or hide text when printed.
    """
    return _CONTROL_BUT_LAYOUT.sub("", text.replace("\r\n", "\n"))


def cap_text(text: str, limit: int, what: str = "output") -> str:
    """``text`` cut to ``limit`` characters, with a marker saying how much was left out."""
    if len(text) <= limit:
        return text
    dropped = len(text) - limit
    return f"{text[:limit]}\n[... {what} truncated: {dropped} more characters not shown ...]"
