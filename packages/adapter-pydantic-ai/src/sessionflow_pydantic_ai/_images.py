"""Images in user messages: stored as references to the image store, sent as bytes."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from pydantic_ai.messages import (
    BinaryContent,
    ImageUrl,
    ModelMessage,
    ModelRequest,
    UserContent,
    UserPromptPart,
)

from sessionflow import ImageInput, MessageRole
from sessionflow.kit import FrameworkMessage, image_bytes
from sessionflow_pydantic_ai._messages import dump_messages

__all__ = ["InlinedImages", "user_message_with_images"]

_PATH_KEY = "sessionflow_image_path"
_MEDIA_TYPE_KEY = "sessionflow_media_type"


def user_message_with_images(text: str, images: Sequence[ImageInput]) -> FrameworkMessage:
    """A user turn whose images are `ImageUrl` references; the session never stores the bytes."""
    content: list[UserContent] = [text]
    for image in images:
        location = Path(image.path).absolute()
        content.append(
            ImageUrl(
                url=location.as_uri(),
                vendor_metadata={_PATH_KEY: str(location), _MEDIA_TYPE_KEY: image.media_type},
            )
        )
    request = ModelRequest(parts=[UserPromptPart(content=content)])
    return FrameworkMessage(role=MessageRole.USER, framework_item=dump_messages([request])[0], text=text)


class InlinedImages:
    """Reads stored image references into bytes for a run, and knows them again after it.

    A history the framework keeps beyond a step (`_framework_history`) must hold the
    references, never the bytes: `restore` turns each image read by `inline` back into its
    reference, wherever the run left it.
    """

    def __init__(self) -> None:
        self._read: list[tuple[BinaryContent, ImageUrl]] = []

    def inline(self, messages: list[ModelMessage]) -> list[ModelMessage]:
        """`messages` with every stored image reference replaced by the image's bytes, read now."""
        return [self._inline(m) if isinstance(m, ModelRequest) else m for m in messages]

    def restore(self, messages: Sequence[ModelMessage]) -> list[ModelMessage]:
        """`messages` with every image `inline` read replaced by its reference again."""
        if not self._read:
            return list(messages)
        return [self._restore(m) if isinstance(m, ModelRequest) else m for m in messages]

    def _inline(self, request: ModelRequest) -> ModelRequest:
        if not any(isinstance(p, UserPromptPart) and not isinstance(p.content, str) for p in request.parts):
            return request
        parts = [
            replace(p, content=[self._image_bytes(c) for c in p.content])
            if isinstance(p, UserPromptPart) and not isinstance(p.content, str)
            else p
            for p in request.parts
        ]
        return replace(request, parts=parts)

    def _image_bytes(self, content: UserContent) -> UserContent:
        if not isinstance(content, ImageUrl):
            return content
        metadata = content.vendor_metadata
        if not metadata or _PATH_KEY not in metadata:
            return content
        image = ImageInput(path=str(metadata[_PATH_KEY]), media_type=str(metadata[_MEDIA_TYPE_KEY]))
        read = BinaryContent(data=image_bytes(image), media_type=image.media_type)
        self._read.append((read, content))
        return read

    def _restore(self, request: ModelRequest) -> ModelRequest:
        if not any(isinstance(p, UserPromptPart) and not isinstance(p.content, str) for p in request.parts):
            return request
        parts = [
            replace(p, content=[self._reference(c) for c in p.content])
            if isinstance(p, UserPromptPart) and not isinstance(p.content, str)
            else p
            for p in request.parts
        ]
        return replace(request, parts=parts)

    def _reference(self, content: UserContent) -> UserContent:
        if not isinstance(content, BinaryContent):
            return content
        for read, reference in self._read:
            # The same object, or a copy a processor made of it.
            if content is read or (content.data == read.data and content.media_type == read.media_type):
                return reference
        return content
