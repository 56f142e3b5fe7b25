"""Model-visible text: valid UTF-8 whatever the bytes were, and capped with a clear marker."""

from __future__ import annotations

import os

__all__ = ["cap_text", "clean_text", "decode", "show_name"]


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
    """A file name for display; names that are not UTF-8 show their bytes as ``\\xNN``."""
    return clean_text(name) if not _is_fs_name(name) else decode(os.fsencode(name))


def _is_fs_name(name: str) -> bool:
    try:
        os.fsencode(name)
    except UnicodeEncodeError:
        return False
    return True


def cap_text(text: str, limit: int, what: str = "output") -> str:
    """``text`` cut to ``limit`` characters, with a marker saying how much was left out."""
    if len(text) <= limit:
        return text
    dropped = len(text) - limit
    return f"{text[:limit]}\n[... {what} truncated: {dropped} more characters not shown ...]"
