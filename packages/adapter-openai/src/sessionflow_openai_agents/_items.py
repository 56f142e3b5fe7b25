"""Stored messages as Responses-style input items, and run items as stored messages."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, cast

from agents import (
    HandoffOutputItem,
    ItemHelpers,
    MessageOutputItem,
    RunItem,
    ToolApprovalItem,
    ToolCallOutputItem,
    TResponseInputItem,
)

from sessionflow import AgentMessage, ImageInput, MessageRole
from sessionflow.kit import FrameworkMessage, image_data_url, image_ref_part, with_images_read

__all__ = [
    "answer_message",
    "final_output_text",
    "final_output_value",
    "model_input",
    "run_item_messages",
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


def _wire_item(item: Json) -> Json:
    return with_images_read(item, _input_image)


def _input_image(image: ImageInput) -> Json:
    return {"type": "input_image", "detail": "auto", "image_url": image_data_url(image)}


def run_item_messages(items: Sequence[RunItem]) -> list[FrameworkMessage]:
    """The run's items as stored messages, in order; pending approvals are not history."""
    messages: list[FrameworkMessage] = []
    for item in items:
        if isinstance(item, ToolApprovalItem):
            continue
        framework_item = _jsonable(item.to_input_item())
        if isinstance(item, MessageOutputItem):
            messages.append(
                FrameworkMessage(
                    role=MessageRole.ASSISTANT,
                    framework_item=framework_item,
                    text=ItemHelpers.text_message_output(item),
                )
            )
        elif isinstance(item, ToolCallOutputItem | HandoffOutputItem):
            output = framework_item.get("output")
            text = output if isinstance(output, str) else None
            messages.append(FrameworkMessage(role=MessageRole.TOOL, framework_item=framework_item, text=text))
        else:
            messages.append(FrameworkMessage(role=MessageRole.ASSISTANT, framework_item=framework_item))
    return messages


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
