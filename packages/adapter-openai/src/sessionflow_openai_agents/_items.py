"""Stored messages as Responses-style input items, and run items as stored messages."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, cast

from agents import (
    TResponseInputItem,
)

from sessionflow import AgentMessage, ImageInput, MessageRole
from sessionflow.kit import FrameworkMessage, image_data_url, image_ref_part, with_images_read

__all__ = [
    "answer_message",
    "final_output_text",
    "final_output_value",
    "history_message",
    "input_items",
    "model_input",
    "user_message",
]

Json = dict[str, Any]


def user_message(text: str, images: Sequence[ImageInput] = ()) -> FrameworkMessage:
    """A user message; images are kept as store paths and read when the model is called."""
    if not images:
        return FrameworkMessage(
            role=MessageRole.USER, framework_item={"role": "user", "content": text}, text=text
        )
    parts: list[Json] = [{"type": "input_text", "text": text}]
    parts += [image_ref_part(image) for image in images]
    return FrameworkMessage(
        role=MessageRole.USER, framework_item={"role": "user", "content": parts}, text=text
    )


def model_input(messages: Sequence[AgentMessage]) -> list[TResponseInputItem]:
    """The run's input: every stored message's item, with image references read into data URLs."""
    return [cast(TResponseInputItem, _wire_item(cast(Json, m.message.framework_item))) for m in messages]


def input_items(messages: Sequence[FrameworkMessage]) -> list[TResponseInputItem]:
    """Messages not stored yet (steered ones) as the run's input items, images read as in
    `model_input`."""
    return [cast(TResponseInputItem, _wire_item(cast(Json, m.framework_item))) for m in messages]


def _wire_item(item: Json) -> Json:
    return with_images_read(item, _input_image)


def _input_image(image: ImageInput) -> Json:
    return {"type": "input_image", "detail": "auto", "image_url": image_data_url(image)}


def history_message(item: Json, *, user_role: MessageRole = MessageRole.USER) -> FrameworkMessage:
    """A stored message for one item of the SDK's history (``result.to_input_list()``):
    an assistant message with its text, a tool output with its text, anything else
    (a call, reasoning) as the assistant's without text. A user item takes ``user_role``."""
    item = _jsonable(item)
    if item.get("role") == "user":
        content = item.get("content")
        return FrameworkMessage(
            role=user_role, framework_item=item, text=content if isinstance(content, str) else None
        )
    if str(item.get("type", "")).endswith("_output"):
        output = item.get("output")
        return FrameworkMessage(
            role=MessageRole.TOOL, framework_item=item, text=output if isinstance(output, str) else None
        )
    text = _message_text(item) if item.get("role") == "assistant" else None
    return FrameworkMessage(role=MessageRole.ASSISTANT, framework_item=item, text=text)


def _message_text(item: Json) -> str | None:
    content = item.get("content")
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return None
    parts = cast(list[Json], content)
    texts = [str(p.get("text", "")) for p in parts if p.get("type") == "output_text"]
    return "".join(texts) if texts else None


def answer_message(final_output: Any) -> FrameworkMessage:
    """An assistant message with ``final_output`` as its text: the answer a tripwire's
    handler (``on_guardrail_tripwire``) gives, as the SDK's examples answer a tripwire."""
    text = final_output_text(final_output)
    return FrameworkMessage(
        role=MessageRole.ASSISTANT, framework_item={"role": "assistant", "content": text}, text=text
    )


def final_output_value(final_output: Any) -> Any:
    """A final output as JSON values (a pydantic model as its dump)."""
    return _jsonable_value(final_output)


def final_output_text(final_output: Any) -> str:
    """A final output as text: a string as it is, anything else as its JSON."""
    return final_output if isinstance(final_output, str) else json.dumps(_jsonable_value(final_output))


def _jsonable(item: Any) -> Json:
    return cast(Json, _jsonable_value(item))


def _jsonable_value(value: Any) -> Any:
    # Input items are TypedDicts that may still hold SDK models; a round trip makes them plain.
    return json.loads(json.dumps(value, default=_encode))


def _encode(value: Any) -> Any:
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json", exclude_unset=True)
    return str(value)
