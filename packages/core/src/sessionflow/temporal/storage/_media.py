"""Images on the payload store, and their local copies for runners.

A client puts an image's bytes in the store and sends the reference text (`MEDIA_PREFIX`
and the reference as JSON) in place of a path. A worker that needs the image copies it
once into its media cache, under a name made of its digest, so the path a runner stores in
its framework item is the same on every worker that shares the cache setting, and any
worker can bring the copy back from the store.
"""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
import uuid
from dataclasses import asdict
from pathlib import Path

from sessionflow._environment import read_env
from sessionflow.session.bodies import MEDIA_PREFIX, BodyRef, is_media_ref
from sessionflow.temporal.storage._bodies import BodyStore
from sessionflow.temporal.storage._store_errors import PayloadStoreError

__all__ = [
    "MEDIA_CACHE_ENV",
    "MEDIA_PREFIX",
    "is_media_ref",
    "media_cache_folder",
    "media_ref",
    "parse_media_ref",
]

MEDIA_CACHE_ENV = "SESSIONFLOW_MEDIA_CACHE"
_EXTENSIONS = {"image/png": "png", "image/jpeg": "jpg", "image/gif": "gif", "image/webp": "webp"}


def media_cache_folder() -> Path:
    """``$SESSIONFLOW_MEDIA_CACHE``, else ``<temp>/sessionflow-media``."""
    configured = read_env(MEDIA_CACHE_ENV)
    return Path(configured).expanduser() if configured else Path(tempfile.gettempdir()) / "sessionflow-media"


def media_ref(ref: BodyRef, media_type: str) -> str:
    return MEDIA_PREFIX + json.dumps({"ref": asdict(ref), "media_type": media_type}, separators=(",", ":"))


def parse_media_ref(text: str) -> tuple[BodyRef, str]:
    try:
        raw = json.loads(text[len(MEDIA_PREFIX) :])
        ref = raw["ref"]
        return (
            BodyRef(
                driver=ref["driver"],
                claim=dict(ref["claim"]),
                size=int(ref["size"]),
                sha256=str(ref["sha256"]),
            ),
            str(raw["media_type"]),
        )
    except (ValueError, KeyError, TypeError) as error:
        raise PayloadStoreError("media", f"cannot read the image reference {text[:80]!r}", error) from None


async def local_copy(bodies: BodyStore, text: str) -> tuple[Path, str]:
    """The image's path in this worker's media cache (fetched from the store when missing)."""
    ref, media_type = parse_media_ref(text)
    path = media_cache_folder() / f"{ref.sha256}.{_EXTENSIONS.get(media_type, 'bin')}"
    if await asyncio.to_thread(path.is_file):
        return path, media_type
    data = await bodies.get(ref, bytes)
    if not isinstance(data, bytes):
        raise PayloadStoreError(bodies.driver_name, "holds an image body of the wrong shape")
    await asyncio.to_thread(_write, path, data)
    return path, media_type


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".tmp-{uuid.uuid4().hex}")
    temporary.write_bytes(data)
    os.replace(temporary, path)
