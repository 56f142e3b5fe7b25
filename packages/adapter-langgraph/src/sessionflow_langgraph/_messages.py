"""Stored session messages <-> LangChain messages.

A stored `FrameworkMessage.framework_item` is the LangChain message dict of
`langchain_core.messages.message_to_dict` (``{"type": ..., "data": {...}}``), made
JSON-safe. Images are stored as ``sessionflow_image`` blocks naming a path in a store
every worker reaches; the bytes are read only when the message goes to the model.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from typing import Any, cast

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    ChatMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    message_to_dict,
    messages_from_dict,
)

from sessionflow import AgentMessage, ImageInput, MessageRole
from sessionflow.kit import FrameworkMessage, image_base64

__all__ = [
    "IMAGE_BLOCK_TYPE",
    "framework_message",
    "history_message",
    "message_text",
    "user_message",
    "user_message_with_images",
]

IMAGE_BLOCK_TYPE = "sessionflow_image"

_ROLES: dict[type[BaseMessage], MessageRole] = {
    HumanMessage: MessageRole.USER,
    AIMessage: MessageRole.ASSISTANT,
    ToolMessage: MessageRole.TOOL,
    SystemMessage: MessageRole.SYSTEM,
}
_CHAT_ROLES = {"user": MessageRole.USER, "human": MessageRole.USER, "system": MessageRole.SYSTEM}


def user_message(text: str) -> FrameworkMessage:
    return framework_message(HumanMessage(content=text))


def user_message_with_images(text: str, images: Sequence[ImageInput]) -> FrameworkMessage:
    blocks: list[str | dict[str, Any]] = [{"type": "text", "text": text}]
    blocks += [
        {"type": IMAGE_BLOCK_TYPE, "path": image.path, "mime_type": image.media_type} for image in images
    ]
    return framework_message(HumanMessage(content=blocks))


def framework_message(message: BaseMessage) -> FrameworkMessage:
    """The stored form of one LangChain message."""
    item = json.loads(json.dumps(message_to_dict(message), default=_json_default))
    text = message_text(message)
    return FrameworkMessage(role=_role(message), framework_item=item, text=text or None)


def history_message(stored: AgentMessage) -> BaseMessage:
    """The LangChain message of a stored one, with an ID and its images' bytes.

    Messages stored without an ID get ``sessionflow-<sequence>``, so every step of a turn
    sees the same IDs and `add_messages` never merges two different messages.
    """
    item = cast(dict[str, Any], stored.message.framework_item)
    message = messages_from_dict([item])[0]
    if message.id is None:
        message.id = f"sessionflow-{stored.sequence}"
    if isinstance(message.content, list) and any(_is_image_ref(block) for block in message.content):
        message = message.model_copy(update={"content": [_load_image(block) for block in message.content]})
    return message


def message_text(message: BaseMessage) -> str:
    """The plain text of a message's content (text blocks joined)."""
    return str(message.text)


def _role(message: BaseMessage) -> MessageRole:
    for kind, role in _ROLES.items():
        if isinstance(message, kind):
            return role
    if isinstance(message, ChatMessage):
        return _CHAT_ROLES.get(message.role, MessageRole.ASSISTANT)
    return MessageRole.ASSISTANT


def _is_image_ref(block: str | dict[str, Any]) -> bool:
    return isinstance(block, dict) and block.get("type") == IMAGE_BLOCK_TYPE


def _load_image(block: str | dict[str, Any]) -> str | dict[str, Any]:
    if not _is_image_ref(block):
        return block
    ref = cast(dict[str, Any], block)
    # The block keeps LangChain's key name, ``mime_type``; the core reads the file.
    image = ImageInput(path=str(ref["path"]), media_type=str(ref["mime_type"]))
    return {"type": "image", "base64": image_base64(image), "mime_type": image.media_type}


def _json_default(value: object) -> object:
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json")
    if isinstance(value, bytes):
        return base64.b64encode(value).decode()
    return str(value)
