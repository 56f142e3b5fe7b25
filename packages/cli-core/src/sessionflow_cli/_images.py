"""`/image <path>`: check an image file and copy it into the local media folder.

The size is checked before the file is read; the type comes from the bytes, never from
the name. A copy is named by its SHA-256 and the type's extension, so the same image
is stored once and every worker on this machine reads it from the same place.
"""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from sessionflow import UserError
from sessionflow.home import open_private, private_dir

__all__ = [
    "MAX_IMAGES_PER_MESSAGE",
    "MAX_IMAGE_BYTES",
    "AttachedImage",
    "ImageRejected",
    "attach_image",
    "resolve_image_path",
    "sniff_media_type",
]

MAX_IMAGE_BYTES = 3_750_000
MAX_IMAGES_PER_MESSAGE = 20

_EXTENSIONS = {"image/png": "png", "image/jpeg": "jpg", "image/gif": "gif", "image/webp": "webp"}


class ImageRejected(UserError):
    """The file cannot be attached; the message says why."""


@dataclass(frozen=True, kw_only=True)
class AttachedImage:
    """An image copied into the media folder."""

    name: str
    stored: Path
    media_type: str
    size: int

    def describe(self) -> str:
        return f"{self.name} ({self.media_type}, {_human_size(self.size)})"


def sniff_media_type(head: bytes) -> str | None:
    """PNG, JPEG, GIF or WebP by their leading bytes, else None."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if len(head) >= 12 and head.startswith(b"RIFF") and head[8:12] == b"WEBP":
        return "image/webp"
    return None


def resolve_image_path(text: str, cwd: Path) -> Path:
    """A leading ``~`` is the home folder; a relative path is relative to `cwd`."""
    path = Path(text.strip()).expanduser()
    return path if path.is_absolute() else cwd / path


def attach_image(text: str, *, cwd: Path, media_folder: Path, already: int) -> AttachedImage:
    """Check the image at `text` and copy it into `media_folder`.

    Raises:
        ImageRejected: The path is empty, missing or not a regular file, the file is over
            `MAX_IMAGE_BYTES`, its bytes are not PNG, JPEG, GIF or WebP, or the message
            already has `MAX_IMAGES_PER_MESSAGE` images.
    """
    if not text.strip():
        raise ImageRejected("usage: /image <path>")
    if already >= MAX_IMAGES_PER_MESSAGE:
        raise ImageRejected(f"a message carries at most {MAX_IMAGES_PER_MESSAGE} images")
    path = resolve_image_path(text, cwd)
    try:
        info = path.stat()
    except OSError:
        raise ImageRejected(f"{path} does not exist") from None
    if not stat.S_ISREG(info.st_mode):
        raise ImageRejected(f"{path} is not a regular file")
    if info.st_size > MAX_IMAGE_BYTES:
        raise ImageRejected(f"{path.name} has {info.st_size:,} bytes; the limit is {MAX_IMAGE_BYTES:,}")
    try:
        with path.open("rb") as handle:
            # Read one byte past the limit: the file may have grown since stat().
            data = handle.read(MAX_IMAGE_BYTES + 1)
    except OSError as error:
        raise ImageRejected(f"{path} cannot be read: {error.strerror or error}") from None
    if len(data) > MAX_IMAGE_BYTES:
        raise ImageRejected(f"{path.name} is over {MAX_IMAGE_BYTES:,} bytes")
    media_type = sniff_media_type(data[:16])
    if media_type is None:
        raise ImageRejected(f"{path.name} is not a PNG, JPEG, GIF or WebP image")
    digest = hashlib.sha256(data).hexdigest()
    stored = media_folder / f"{digest}.{_EXTENSIONS[media_type]}"
    if not stored.is_file():
        private_dir(media_folder, tighten_existing=False)  # folders it creates 0700, the file 0600
        tmp = stored.with_name(f".{stored.name}.{os.getpid()}.tmp")
        with os.fdopen(open_private(tmp), "wb") as file:
            file.write(data)
        os.replace(tmp, stored)
    return AttachedImage(name=path.name, stored=stored, media_type=media_type, size=len(data))


def _human_size(size: int) -> str:
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{size / 1024:.0f} KB"
    return f"{size / (1024 * 1024):.1f} MB"
