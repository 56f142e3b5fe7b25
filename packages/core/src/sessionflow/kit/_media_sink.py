"""Where media that a tool produces go besides its folder: the running step's payload store.

The engine binding sets `MEDIA_SINK` while a tool step runs; tool sources that save media
(the MCP results renderer) hand each saved file to it, so the bytes live on the same store
as the session's other payloads, and clean-up removes them with the session. No engine
import here: the core's tool sources stay free of temporalio.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from pathlib import Path

__all__ = ["MEDIA_SINK", "SAVED_MEDIA", "MediaSink", "hand_over_saved_media"]

MediaSink = Callable[[bytes, str], Awaitable[None]]

MEDIA_SINK: ContextVar[MediaSink | None] = ContextVar("sessionflow_media_sink", default=None)
"""Set by the tool step: stores one medium's bytes (with its MIME type) on the payload store."""

SAVED_MEDIA: ContextVar[list[tuple[Path, str]] | None] = ContextVar("sessionflow_saved_media", default=None)
"""Set around a render that saves media: each saved file and MIME type is appended."""


async def hand_over_saved_media(saved: list[tuple[Path, str]]) -> None:
    """Give every saved file to the running step's sink, if there is one."""
    sink = MEDIA_SINK.get()
    if sink is None:
        return
    for path, mime_type in saved:
        await sink(path.read_bytes(), mime_type)
