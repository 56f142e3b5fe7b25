"""Text and reasoning deltas from the messages LangGraph streams (``stream_mode="messages"``)."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, BaseMessage

from sessionflow.kit import AgentEventWriter

__all__ = ["write_deltas"]


def write_deltas(events: AgentEventWriter, message: BaseMessage) -> None:
    """Publish the text and reasoning one streamed AI message chunk (or whole message) carries.

    LangGraph streams a model's chunks as they arrive, and a message no model streamed
    (a non-streaming model, or a node's own message) once, whole. Reasoning comes from
    the standard ``reasoning`` content blocks (Anthropic thinking, OpenAI Responses
    summaries) or, for OpenAI-compatible servers, from ``additional_kwargs["reasoning_content"]``.
    """
    if not isinstance(message, AIMessage):
        return  # an AIMessageChunk is an AIMessage; tool and user messages carry no deltas
    saw_reasoning = False
    for block in message.content_blocks:
        kind = block.get("type")
        if kind == "text":
            events.write_text_delta(_text(block.get("text")))
        elif kind == "reasoning":
            saw_reasoning = True
            events.write_reasoning_delta(_text(block.get("reasoning")))
    if not saw_reasoning:
        events.write_reasoning_delta(_text(message.additional_kwargs.get("reasoning_content")))


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""
