"""Gemini's ``generateContent`` and ``streamGenerateContent`` wire format (the Gemini
Developer API that `google-genai` speaks), for the scripted model server.

A request is ``POST .../v1beta/models/{model}:generateContent`` (one JSON answer) or
``...:streamGenerateContent?alt=sse`` (a ``data:`` event per chunk, each a whole
``GenerateContentResponse``). The model is in the path, not the body; the server passes
it in.
"""

from __future__ import annotations

import json
import re
from typing import Any

from sessionflow.demo._model_script import ModelReply, ScriptedUsage

__all__ = ["GEMINI_ROUTE", "render_gemini_error", "render_gemini_reply"]

# ``rest`` of the server's route: the API version, the model, and the method.
GEMINI_ROUTE = re.compile(
    r"^/v1(?:beta|alpha)?\d*/models/(?P<model>[^/:]+):(?P<method>generateContent|streamGenerateContent)$"
)

_STATUS = {
    400: "INVALID_ARGUMENT",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
}


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def render_gemini_error(status: int, message: str) -> dict[str, Any]:
    """Google's error body (``google.rpc.Status`` in JSON)."""
    return {"error": {"code": status, "message": message, "status": _STATUS.get(status, "UNKNOWN")}}


def _usage(usage: ScriptedUsage, thoughts: int = 0) -> dict[str, Any]:
    body: dict[str, Any] = {
        "promptTokenCount": usage.input_tokens,
        "candidatesTokenCount": usage.output_tokens,
        "totalTokenCount": usage.input_tokens + usage.output_tokens + thoughts,
    }
    if thoughts:
        body["thoughtsTokenCount"] = thoughts
    return body


def _call_parts(reply: ModelReply) -> list[dict[str, Any]]:
    # Gemini sends a call's arguments whole, as an object (never as a string to join).
    return [
        {"functionCall": {"id": call.id, "name": call.name, "args": call.arguments_dict()}}
        for call in reply.tool_calls
    ]


def _response(
    model: str, seq: int, parts: list[dict[str, Any]], *, final: bool, usage: dict[str, Any] | None
) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    if final:
        candidate["finishReason"] = "STOP"
    body: dict[str, Any] = {"candidates": [candidate], "modelVersion": model, "responseId": f"gemini-{seq}"}
    if usage is not None:
        body["usageMetadata"] = usage
    return body


def render_gemini_reply(reply: ModelReply, model: str, seq: int, *, stream: bool) -> tuple[bytes, bool]:
    """The answer's body, and whether it is an SSE stream.

    Reasoning is a ``thought`` part before the text. A reply with neither text nor calls
    answers an empty text part, as Gemini does, unless it asks for none.
    """
    thought = [{"text": reply.reasoning, "thought": True}] if reply.reasoning is not None else []
    thoughts = len(reply.reasoning or "") // 4
    usage = _usage(reply.effective_usage, thoughts)
    text = reply.full_text
    if text is None and not reply.tool_calls and reply.message:
        text = ""
    if not stream:
        parts = [*thought, *([{"text": text}] if text is not None else []), *_call_parts(reply)]
        return _dumps(_response(model, seq, parts, final=True, usage=usage)).encode(), False
    chunks: list[list[dict[str, Any]]] = [[part] for part in thought]
    chunks += [[{"text": piece}] for piece in reply.stream_chunks()]
    if reply.tool_calls:
        chunks.append(_call_parts(reply))
    if not chunks:
        chunks.append([{"text": text}] if text is not None else [])
    events = [
        _response(
            model,
            seq,
            parts,
            final=index == len(chunks) - 1,
            usage=usage if index == len(chunks) - 1 else None,
        )
        for index, parts in enumerate(chunks)
    ]
    return "".join(f"data: {_dumps(event)}\r\n\r\n" for event in events).encode(), True
