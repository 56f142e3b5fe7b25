"""Images a session stored by reference, read back for a model call.

A runner that supports images keeps only a reference in its framework item: the path of
the worker's local copy (the model activity makes sure that copy exists before the step
runs) and the media type. This module is the one reader of that reference, so no adapter
reads image files or spells data URLs of its own. It does file I/O, which is why it sits
beside the pure `sessionflow.session` package and not in it; it needs no engine.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, cast

from sessionflow.session.runner import ImageInput

__all__ = [
    "IMAGE_REF_TYPE",
    "image_base64",
    "image_bytes",
    "image_data_url",
    "image_ref_part",
    "stored_image",
    "with_images_read",
]

IMAGE_REF_TYPE = "image_ref"
"""The ``type`` of the content part the built-in and OpenAI runners store for an image."""


def image_ref_part(image: ImageInput) -> dict[str, str]:
    """The content part that stores ``image`` by reference: ``{"type": "image_ref", ...}``."""
    return {"type": IMAGE_REF_TYPE, "path": image.path, "media_type": image.media_type}


def stored_image(part: Mapping[str, Any]) -> ImageInput | None:
    """The image an `image_ref_part` refers to, or None for any other content part."""
    if part.get("type") != IMAGE_REF_TYPE:
        return None
    return ImageInput(path=str(part["path"]), media_type=str(part["media_type"]))


def image_bytes(image: ImageInput) -> bytes:
    """The image's bytes, read from its path now."""
    return Path(image.path).read_bytes()


def image_base64(image: ImageInput) -> str:
    """The image's bytes as base64 text."""
    return base64.b64encode(image_bytes(image)).decode("ascii")


def image_data_url(image: ImageInput) -> str:
    """The image as a ``data:`` URL (``data:<media type>;base64,<bytes>``)."""
    return f"data:{image.media_type};base64,{image_base64(image)}"


def with_images_read(item: Mapping[str, Any], wire_part: Callable[[ImageInput], Any]) -> dict[str, Any]:
    """``item`` with every `image_ref_part` in its ``content`` list replaced by ``wire_part(image)``.

    ``wire_part`` spells the image the way the model's API takes it (for example with
    `image_data_url`); an item whose content is not a list comes back unchanged.
    """
    content = item.get("content")
    if not isinstance(content, list):
        return dict(item)
    parts: list[Any] = []
    for part in cast(list[Any], content):
        image = stored_image(cast(Mapping[str, Any], part)) if isinstance(part, Mapping) else None
        parts.append(part if image is None else wire_part(image))
    return {**item, "content": parts}
