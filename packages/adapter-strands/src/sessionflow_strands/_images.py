"""Images in a user message: stored by reference, read into Strands' image blocks for a model call.

The session keeps an image as a reference (`sessionflow.kit.image_ref_part`: the worker's
local copy and its media type), never its bytes; a model step reads it into the block a
plain ``agent([{"text": ...}, {"image": ...}])`` sends: ``{"image": {"format": "png",
"source": {"bytes": ...}}}``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sessionflow import ImageInput
from sessionflow.kit import FrameworkMessage, image_bytes, image_ref_part, with_images_read
from sessionflow_strands._messages import Message, framework_message

__all__ = ["user_message_with_images", "with_images"]


def user_message_with_images(text: str, images: Sequence[ImageInput]) -> FrameworkMessage:
    """The user message: its text, then each image as a stored reference."""
    content: list[Any] = [{"text": text}, *(image_ref_part(image) for image in images)]
    return framework_message({"role": "user", "content": content})


def with_images(message: Message) -> Message:
    """``message`` with every stored image read into a Strands image block."""
    return with_images_read(message, _image_block)


def _image_block(image: ImageInput) -> dict[str, Any]:
    # Strands' image formats are the media type's subtype: png, jpeg, gif, webp.
    return {"image": {"format": image.media_type.split("/")[-1], "source": {"bytes": image_bytes(image)}}}
