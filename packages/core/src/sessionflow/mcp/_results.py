"""Turn a ``tools/call`` result into the text the model sees, saving media to a folder."""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import mimetypes
import os
from pathlib import Path

from mcp.types import (
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    ContentBlock,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    TextResourceContents,
)

from sessionflow.home import open_private, private_dir
from sessionflow.kit._media_sink import SAVED_MEDIA

__all__ = ["MAX_MEDIA_BYTES", "default_media_dir", "render_content", "save_media"]

MAX_MEDIA_BYTES = 20 * 1024 * 1024
"""Larger images, audio and blobs in tool results are not saved; the model is told so."""

_EXTENSIONS = {
    "image/png": ".png",
    "image/jpeg": ".jpg",
    "image/gif": ".gif",
    "image/webp": ".webp",
    "image/svg+xml": ".svg",
    "audio/wav": ".wav",
    "audio/mpeg": ".mp3",
}


def default_media_dir() -> Path:
    """``~/.sessionflow/media`` (the data folder's, `sessionflow.home.home_layout`): where tool
    result media go unless a source names a folder."""
    from sessionflow.home import sessionflow_home

    return sessionflow_home() / "media"


def save_media(media_dir: Path, data: bytes, mime_type: str) -> Path:
    """Write ``data`` under a name made of its SHA-256, so saving it again is harmless."""
    extension = _EXTENSIONS.get(mime_type) or mimetypes.guess_extension(mime_type) or ".bin"
    private_dir(media_dir, tighten_existing=False)  # folders it creates 0700, the file 0600
    path = (media_dir / f"{hashlib.sha256(data).hexdigest()}{extension}").absolute()
    if not path.exists():
        temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        with os.fdopen(open_private(temporary), "wb") as file:
            file.write(data)
        os.replace(temporary, path)
    saved = SAVED_MEDIA.get()
    if saved is not None:
        saved.append((path, mime_type))
    return path


def render_content(result: CallToolResult, media_dir: Path) -> str:
    """The model-visible text of a result: text blocks as they are, media as references.

    Images become ``[image: <path> (<mime>)]`` after they are saved to ``media_dir``;
    audio and binary resources are saved the same way. A result with no content blocks
    but structured content shows the structured content as JSON.
    """
    parts = [_render_block(block, media_dir) for block in result.content]
    if not parts and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False))
    return "\n".join(parts)


def _render_block(block: ContentBlock, media_dir: Path) -> str:
    if isinstance(block, TextContent):
        return block.text
    if isinstance(block, ImageContent):
        return _media("image", block.data, block.mime_type, media_dir)
    if isinstance(block, AudioContent):
        return _media("audio", block.data, block.mime_type, media_dir)
    if isinstance(block, ResourceLink):
        mime = f" ({block.mime_type})" if block.mime_type else ""
        return f"[resource link: {block.name} <{block.uri}>{mime}]"
    return _render_resource(block, media_dir)


def _render_resource(block: EmbeddedResource, media_dir: Path) -> str:
    resource: TextResourceContents | BlobResourceContents = block.resource
    if isinstance(resource, TextResourceContents):
        return resource.text
    mime = resource.mime_type or "application/octet-stream"
    kind = "image" if mime.startswith("image/") else "resource"
    return _media(kind, resource.blob, mime, media_dir, uri=str(resource.uri))


def _media(kind: str, data: str, mime_type: str, media_dir: Path, uri: str | None = None) -> str:
    source = f" from {uri}" if uri else ""
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return f"[{kind}{source}: not valid base64 ({mime_type})]"
    if len(raw) > MAX_MEDIA_BYTES:
        return f"[{kind}{source}: {len(raw)} bytes, over the {MAX_MEDIA_BYTES} byte limit, not saved ({mime_type})]"
    path = save_media(media_dir, raw, mime_type)
    return f"[{kind}: {path} ({mime_type}){source}]"
