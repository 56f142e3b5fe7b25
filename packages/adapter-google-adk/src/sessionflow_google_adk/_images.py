"""Images in user messages: stored as references to the image store, sent as bytes.

The stored ADK event holds each image as a ``file_data`` part whose URI is the image's
path in the store (``file://``) and whose display name marks it as sessionflow's; a step
reads the bytes into an ``inline_data`` part for its own run only, so neither the session
nor a run state holds the bytes.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from urllib.parse import unquote, urlsplit

from google.adk.events.event import Event
from google.genai import types

from sessionflow import ImageInput

__all__ = ["image_parts", "with_images_read"]

_STORED = "sessionflow-image"


def image_parts(images: Sequence[ImageInput]) -> list[types.Part]:
    return [
        types.Part(
            file_data=types.FileData(
                file_uri=Path(image.path).absolute().as_uri(),
                mime_type=image.media_type,
                display_name=_STORED,
            )
        )
        for image in images
    ]


def with_images_read(events: Sequence[Event]) -> list[Event]:
    """``events`` with each stored image reference replaced by the image's bytes, read now."""
    return [_read(event) for event in events]


def _read(event: Event) -> Event:
    parts = event.content.parts if event.content is not None else None
    if not parts or not any(_stored(part) for part in parts):
        return event
    content = types.Content(
        role=event.content.role if event.content else "user", parts=[_bytes(p) for p in parts]
    )
    return event.model_copy(update={"content": content})


def _stored(part: types.Part) -> bool:
    data = part.file_data
    return data is not None and data.display_name == _STORED and (data.file_uri or "").startswith("file://")


def _bytes(part: types.Part) -> types.Part:
    if not _stored(part) or part.file_data is None:
        return part
    path = Path(unquote(urlsplit(part.file_data.file_uri or "").path))
    return types.Part(inline_data=types.Blob(data=path.read_bytes(), mime_type=part.file_data.mime_type))
