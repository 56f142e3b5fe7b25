"""Bodies kept by reference: what the session holds instead of a large message or output.

The session decides with small facts (status, size, digest); the bodies themselves live in
the payload store every worker reaches. A reference is only data here: reading and writing
the store is the engine binding's job, so this module stays pure.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

__all__ = [
    "INLINE_BODY_BYTES",
    "MEDIA_PREFIX",
    "PREVIEW_CHARS",
    "UNINDEXED_MESSAGE_BYTES",
    "BodyRef",
    "cap_text",
    "fits_inline",
    "inline_size",
    "is_media_ref",
    "preview_text",
    "utf8_size",
]

INLINE_BODY_BYTES = 8 * 1024
"""A body larger than this (as UTF-8 JSON) is stored by reference instead of in the session."""
UNINDEXED_MESSAGE_BYTES = 1024
"""Messages the stored index does not cover ride inline in every model step's input until
they add up to more than this; only then does a completed turn write an index chunk. A short
turn so skips a store write (an fsync on a folder, a round trip to S3) for at most this many
bytes more in each model step's input."""
PREVIEW_CHARS = 256
"""Characters of a stored body's text that the session keeps for people to read (every
model step's input and result carries it, so it stays short; `get_message` reads the rest)."""


MEDIA_PREFIX = "sessionflow-media:"
"""An image a client put in the payload store is sent as this prefix and its reference."""


def is_media_ref(image: str) -> bool:
    """True for an image reference into the payload store (else it is a path on disk)."""
    return image.startswith(MEDIA_PREFIX)


@dataclass(frozen=True, kw_only=True)
class BodyRef:
    """Where one body lives in the payload store.

    `driver` and `claim` are the store driver's own reference (Temporal External Storage's
    driver name and claim data); `size` is the body's size in bytes and `sha256` the digest
    of its stored bytes, so a reader can check what it got.
    """

    driver: str
    claim: dict[str, str]
    size: int
    sha256: str


def utf8_size(text: str) -> int:
    """Bytes of `text` as UTF-8; lone surrogates count as the replacement they become."""
    return len(text.encode("utf-8", "replace"))


def inline_size(framework_item: Any, text: str | None) -> int:
    """Bytes a message of this item and text adds to a payload that carries it inline."""
    encoded = json.dumps(framework_item, default=str, ensure_ascii=False)
    return utf8_size(encoded) + utf8_size(text or "")


def fits_inline(framework_item: Any, text: str | None, limit: int) -> bool:
    """True: a message of this item and text stays in the session under an inline `limit`."""
    return 0 < limit and inline_size(framework_item, text) <= limit


def _head(text: str, max_bytes: int) -> str:
    # Cut on a byte budget without splitting a character.
    return text.encode("utf-8", "replace")[:max_bytes].decode("utf-8", "ignore")


def preview_text(text: str, limit: int = PREVIEW_CHARS) -> str:
    """The first `limit` characters, with a marker saying how much was left out."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n[... cut: {len(text) - limit:,} more characters are stored with the session]"


def cap_text(text: str, max_bytes: int, *, what: str = "output") -> str:
    """What the model sees of a long tool output: its head and a note on what was cut.

    The head is at most `max_bytes` bytes of UTF-8; the whole output stays stored.
    """
    total = utf8_size(text)
    if total <= max_bytes:
        return text
    head = _head(text, max_bytes)
    kept = utf8_size(head)
    return (
        f"{head}\n\n[sessionflow: this {what} was cut to its first {kept:,} of {total:,} bytes; "
        "the whole of it is stored with the session]"
    )
