"""Wire formats of the model APIs the scripted server speaks.

Pure functions from a :class:`ModelReply` (plus the request body) to response bytes,
shaped exactly like OpenAI Chat Completions, OpenAI Responses, Anthropic Messages and
Gemini's generateContent (`_model_wire_gemini`) so the official SDKs parse them.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any, cast

from sessionflow.demo._model_script import ModelReply, ScriptedToolCall, ScriptedUsage, WireApi
from sessionflow.demo._model_wire_gemini import render_gemini_error, render_gemini_reply
from sessionflow.kit._frameworks import ModelApi

__all__ = [
    "MODEL_ID",
    "WireResponse",
    "render_count_tokens",
    "render_error",
    "render_gemini",
    "render_model",
    "render_models",
    "render_reply",
]

MODEL_ID = "scripted-model"

_JSON = "application/json"
_SSE = "text/event-stream; charset=utf-8"


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


@dataclass(frozen=True)
class WireResponse:
    """A complete HTTP answer; ``drop`` means close the connection instead."""

    status: int
    body: bytes = b""
    content_type: str = _JSON
    headers: tuple[tuple[str, str], ...] = ()
    drop: bool = False


def _json_response(body: Any, status: int = 200, headers: tuple[tuple[str, str], ...] = ()) -> WireResponse:
    return WireResponse(status=status, body=_dumps(body).encode(), headers=headers)


# --------------------------------------------------------------------------- errors


def render_error(
    api: WireApi | None,
    status: int,
    message: str,
    headers: tuple[tuple[str, str], ...] = (),
) -> WireResponse:
    """An error in ``api``'s error shape; ``None`` (route unknown) merges both shapes."""
    openai_type = {400: "invalid_request_error", 404: "invalid_request_error", 429: "requests"}.get(
        status, "server_error"
    )
    anthropic_type = {
        400: "invalid_request_error",
        404: "not_found_error",
        429: "rate_limit_error",
        529: "overloaded_error",
    }.get(status, "api_error")
    code = {404: "not_found", 429: "rate_limit_exceeded"}.get(status)
    if api == "gemini":
        body: dict[str, Any] = render_gemini_error(status, message)
    elif api == "anthropic_messages":
        body = {"type": "error", "error": {"type": anthropic_type, "message": message}}
    elif api is None:
        body = {
            "type": "error",
            "error": {"type": anthropic_type, "message": message, "param": None, "code": code},
        }
    else:
        body = {"error": {"message": message, "type": openai_type, "param": None, "code": code}}
    return _json_response(body, status=status, headers=headers)


# --------------------------------------------------------------------------- replies


def render_reply(api: ModelApi, reply: ModelReply, request: dict[str, Any], seq: int) -> WireResponse:
    """Render a non-fault reply; ``seq`` makes the generated ids unique."""
    stream = request.get("stream") is True
    if reply.output_items and api != "responses":
        raise ValueError(f"hosted output items are a Responses API feature, not {api}'s")
    if api == "chat_completions":
        return _chat_stream(reply, request, seq) if stream else _chat(reply, request, seq)
    if api == "responses":
        return _responses_stream(reply, request, seq) if stream else _responses(reply, request, seq)
    return _anthropic_stream(reply, request, seq) if stream else _anthropic(reply, request, seq)


def _model(request: dict[str, Any]) -> str:
    model = request.get("model")
    return model if isinstance(model, str) and model else MODEL_ID


def _fragments(text: str) -> list[str]:
    """Split tool arguments in two so clients must concatenate streamed fragments."""
    if len(text) < 2:
        return [text] if text else []
    middle = len(text) // 2
    return [text[:middle], text[middle:]]


def _has_text_output(reply: ModelReply) -> bool:
    # A reply with neither text nor tool calls gets an empty message, unless it asks for
    # none (`ModelReply.reasoning_only`).
    # Hosted output items are an answer of their own, as the provider sends them, and so is
    # a refusal (each wire renders it in its own shape).
    return reply.full_text is not None or (
        not reply.tool_calls and not reply.output_items and reply.message and reply.refusal is None
    )


# Chat Completions ------------------------------------------------------------------


def _chat_usage(usage: ScriptedUsage) -> dict[str, Any]:
    return {
        "prompt_tokens": usage.input_tokens,
        "completion_tokens": usage.output_tokens,
        "total_tokens": usage.input_tokens + usage.output_tokens,
        "prompt_tokens_details": {"cached_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 0},
    }


def _chat_tool_call(call: ScriptedToolCall) -> dict[str, Any]:
    return {
        "id": call.id,
        "type": "function",
        "function": {"name": call.name, "arguments": call.arguments_json()},
    }


def _chat(reply: ModelReply, request: dict[str, Any], seq: int) -> WireResponse:
    text = reply.full_text
    message: dict[str, Any] = {
        "role": "assistant",
        "content": text if text is not None or reply.tool_calls or reply.refusal is not None else "",
        "refusal": reply.refusal,
    }
    if reply.reasoning is not None:
        message["reasoning_content"] = reply.reasoning
    if reply.tool_calls:
        message["tool_calls"] = [_chat_tool_call(c) for c in reply.tool_calls]
    return _json_response(
        {
            "id": f"chatcmpl-{seq}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": _model(request),
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": "tool_calls" if reply.tool_calls else "stop",
                    "logprobs": None,
                }
            ],
            "usage": _chat_usage(reply.effective_usage),
            "system_fingerprint": None,
        }
    )


def _chat_stream(reply: ModelReply, request: dict[str, Any], seq: int) -> WireResponse:
    base: dict[str, Any] = {
        "id": f"chatcmpl-{seq}",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": _model(request),
    }
    deltas: list[dict[str, Any]] = []
    if reply.reasoning:
        deltas.append({"reasoning_content": reply.reasoning})
    deltas.extend({"content": piece} for piece in reply.stream_chunks())
    # OpenAI streams a refusal as `refusal` deltas in place of content (two, so clients join).
    deltas.extend({"refusal": piece} for piece in _fragments(reply.refusal or ""))
    for index, call in enumerate(reply.tool_calls):
        head = {
            "index": index,
            "id": call.id,
            "type": "function",
            "function": {"name": call.name, "arguments": ""},
        }
        deltas.append({"tool_calls": [head]})
        deltas.extend(
            {"tool_calls": [{"index": index, "function": {"arguments": fragment}}]}
            for fragment in _fragments(call.arguments_json())
        )
    # The role rides on the first real delta: an extra empty-content chunk would make
    # some clients open an empty text part on tool-call-only turns.
    if deltas:
        deltas[0] = {"role": "assistant", **deltas[0]}
    else:
        deltas.append({"role": "assistant", "content": ""})

    def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "finish_reason": finish_reason, "logprobs": None}
        return {**base, "choices": [choice]}

    chunks = [chunk(d) for d in deltas]
    final = chunk({}, "tool_calls" if reply.tool_calls else "stop")
    usage = _chat_usage(reply.effective_usage)
    options: Any = request.get("stream_options")
    include_usage = isinstance(options, dict) and cast(dict[str, Any], options).get("include_usage") is True
    if include_usage:
        chunks += [final, {**base, "choices": [], "usage": usage}]
    else:
        # Without include_usage real servers vary; carrying usage on the finishing
        # chunk keeps usage observable without an extra choice-less chunk.
        chunks.append({**final, "usage": usage})
    body = "".join(f"data: {_dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
    return WireResponse(status=200, body=body.encode(), content_type=_SSE)


# Responses ---------------------------------------------------------------------------


def _responses_usage(usage: ScriptedUsage) -> dict[str, Any]:
    return {
        "input_tokens": usage.input_tokens,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": usage.output_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": usage.input_tokens + usage.output_tokens,
    }


def _response_object(
    request: dict[str, Any], seq: int, status: str, output: list[dict[str, Any]], usage: dict[str, Any] | None
) -> dict[str, Any]:
    def echo(name: str, default: Any) -> Any:
        value = request.get(name)
        return default if value is None else value

    return {
        "id": f"resp_{seq}",
        "object": "response",
        "created_at": int(time.time()),
        "status": status,
        "error": None,
        "incomplete_details": None,
        "instructions": request.get("instructions"),
        "max_output_tokens": request.get("max_output_tokens"),
        "model": _model(request),
        "output": output,
        "parallel_tool_calls": echo("parallel_tool_calls", True),
        "previous_response_id": request.get("previous_response_id"),
        "reasoning": {"effort": None, "summary": None},
        "store": echo("store", False),
        "temperature": echo("temperature", 1.0),
        "text": echo("text", {"format": {"type": "text"}}),
        "tool_choice": echo("tool_choice", "auto"),
        "tools": echo("tools", []),
        "top_p": echo("top_p", 1.0),
        "truncation": echo("truncation", "disabled"),
        "usage": usage,
        "user": None,
        "metadata": echo("metadata", {}),
    }


def _response_items(reply: ModelReply, seq: int) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    if reply.reasoning is not None:
        items.append(
            {
                "id": f"rs_{seq}",
                "type": "reasoning",
                "summary": [{"type": "summary_text", "text": reply.reasoning}],
            }
        )
    items.extend(dict(item) for item in reply.output_items)
    if reply.refusal is not None:
        items.append(
            {
                "id": f"msg_{seq}",
                "type": "message",
                "role": "assistant",
                "status": "completed",
                "content": [_refusal_part(reply.refusal)],
            }
        )
    if _has_text_output(reply):
        items.append(
            {
                "id": f"msg_{seq}",
                "type": "message",
                "role": "assistant",
                "status": "completed",
                "content": [_output_text(reply.full_text or "")],
            }
        )
    for index, call in enumerate(reply.tool_calls):
        items.append(
            {
                "id": f"fc_{seq}_{index}",
                "type": "function_call",
                "call_id": call.id,
                "name": call.name,
                "arguments": call.arguments_json(),
                "status": "completed",
            }
        )
    return items


def _refusal_part(refusal: str) -> dict[str, Any]:
    return {"type": "refusal", "refusal": refusal}


def _output_text(text: str) -> dict[str, Any]:
    return {"type": "output_text", "text": text, "annotations": [], "logprobs": []}


def _responses(reply: ModelReply, request: dict[str, Any], seq: int) -> WireResponse:
    usage = _responses_usage(reply.effective_usage)
    return _json_response(_response_object(request, seq, "completed", _response_items(reply, seq), usage))


def _responses_stream(reply: ModelReply, request: dict[str, Any], seq: int) -> WireResponse:
    events: list[dict[str, Any]] = []

    def emit(event_type: str, **fields: Any) -> None:
        events.append({"type": event_type, "sequence_number": len(events), **fields})

    emit("response.created", response=_response_object(request, seq, "in_progress", [], None))
    emit("response.in_progress", response=_response_object(request, seq, "in_progress", [], None))
    items = _response_items(reply, seq)
    for out, item in enumerate(items):
        item_id = item["id"]
        kind = item["type"]
        if kind == "reasoning":
            emit("response.output_item.added", output_index=out, item={**item, "summary": []})
            summary = reply.reasoning or ""
            ids: dict[str, Any] = {"item_id": item_id, "output_index": out, "summary_index": 0}
            emit("response.reasoning_summary_part.added", **ids, part={"type": "summary_text", "text": ""})
            emit("response.reasoning_summary_text.delta", **ids, delta=summary)
            emit("response.reasoning_summary_text.done", **ids, text=summary)
            emit(
                "response.reasoning_summary_part.done", **ids, part={"type": "summary_text", "text": summary}
            )
        elif kind == "message":
            emit(
                "response.output_item.added",
                output_index=out,
                item={**item, "status": "in_progress", "content": []},
            )
            ids = {"item_id": item_id, "output_index": out, "content_index": 0}
            if reply.refusal is not None:
                emit("response.content_part.added", **ids, part=_refusal_part(""))
                for piece in _fragments(reply.refusal):
                    emit("response.refusal.delta", **ids, delta=piece)
                emit("response.refusal.done", **ids, refusal=reply.refusal)
                emit("response.content_part.done", **ids, part=_refusal_part(reply.refusal))
                emit("response.output_item.done", output_index=out, item=item)
                continue
            text = reply.full_text or ""
            emit("response.content_part.added", **ids, part=_output_text(""))
            for piece in reply.stream_chunks():
                emit("response.output_text.delta", **ids, delta=piece, logprobs=[])
            emit("response.output_text.done", **ids, text=text, logprobs=[])
            emit("response.content_part.done", **ids, part=_output_text(text))
        elif kind != "function_call":
            # A hosted item arrives whole, as the provider's own work (no deltas to join).
            emit("response.output_item.added", output_index=out, item=item)
        else:
            emit(
                "response.output_item.added",
                output_index=out,
                item={**item, "arguments": "", "status": "in_progress"},
            )
            for fragment in _fragments(item["arguments"]):
                emit(
                    "response.function_call_arguments.delta",
                    item_id=item_id,
                    output_index=out,
                    delta=fragment,
                )
            emit(
                "response.function_call_arguments.done",
                item_id=item_id,
                output_index=out,
                name=item["name"],
                arguments=item["arguments"],
            )
        emit("response.output_item.done", output_index=out, item=item)
    usage = _responses_usage(reply.effective_usage)
    emit("response.completed", response=_response_object(request, seq, "completed", items, usage))
    body = "".join(f"event: {e['type']}\ndata: {_dumps(e)}\n\n" for e in events)
    return WireResponse(status=200, body=body.encode(), content_type=_SSE)


# Anthropic Messages ------------------------------------------------------------------


def _anthropic_usage(input_tokens: int, output_tokens: int) -> dict[str, Any]:
    return {
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }


def _anthropic_blocks(reply: ModelReply, seq: int) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    if reply.reasoning is not None:
        blocks.append({"type": "thinking", "thinking": reply.reasoning, "signature": f"sig_scripted_{seq}"})
    if _has_text_output(reply):
        blocks.append({"type": "text", "text": reply.full_text or ""})
    blocks.extend(
        {"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments_dict()}
        for c in reply.tool_calls
    )
    return blocks


def _anthropic_stop(reply: ModelReply) -> tuple[str, dict[str, Any] | None]:
    """The reply's ``stop_reason`` and ``stop_details`` (a refusal's only)."""
    if reply.refusal is not None:
        return "refusal", {"type": "refusal", "category": None, "explanation": reply.refusal}
    return ("tool_use" if reply.tool_calls else "end_turn"), None


def _anthropic_message(
    request: dict[str, Any],
    seq: int,
    content: list[dict[str, Any]],
    stop_reason: str | None,
    usage: dict[str, Any],
    stop_details: dict[str, Any] | None = None,
) -> dict[str, Any]:
    message: dict[str, Any] = {
        "id": f"msg_scripted_{seq}",
        "type": "message",
        "role": "assistant",
        "model": _model(request),
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": usage,
    }
    if stop_details is not None:  # only a refusal's: other answers are sent as they were
        message["stop_details"] = stop_details
    return message


def _anthropic(reply: ModelReply, request: dict[str, Any], seq: int) -> WireResponse:
    usage = reply.effective_usage
    stop_reason, stop_details = _anthropic_stop(reply)
    return _json_response(
        _anthropic_message(
            request,
            seq,
            _anthropic_blocks(reply, seq),
            stop_reason,
            _anthropic_usage(usage.input_tokens, usage.output_tokens),
            stop_details,
        )
    )


def _anthropic_stream(reply: ModelReply, request: dict[str, Any], seq: int) -> WireResponse:
    usage = reply.effective_usage
    events: list[dict[str, Any]] = [
        {
            "type": "message_start",
            "message": _anthropic_message(request, seq, [], None, _anthropic_usage(usage.input_tokens, 0)),
        }
    ]
    calls = iter(reply.tool_calls)
    for index, block in enumerate(_anthropic_blocks(reply, seq)):
        kind = block["type"]
        start: dict[str, Any]
        deltas: list[dict[str, Any]]
        if kind == "thinking":
            start = {"type": "thinking", "thinking": "", "signature": ""}
            deltas = [
                {"type": "thinking_delta", "thinking": block["thinking"]},
                {"type": "signature_delta", "signature": block["signature"]},
            ]
        elif kind == "text":
            start = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": piece} for piece in reply.stream_chunks()]
        else:
            start = {**block, "input": {}}
            deltas = [
                {"type": "input_json_delta", "partial_json": fragment}
                for fragment in _fragments(_dumps(next(calls).arguments_dict()))
            ]
        events.append({"type": "content_block_start", "index": index, "content_block": start})
        events.extend({"type": "content_block_delta", "index": index, "delta": d} for d in deltas)
        events.append({"type": "content_block_stop", "index": index})
    stop_reason, stop_details = _anthropic_stop(reply)
    stop: dict[str, Any] = {"stop_reason": stop_reason, "stop_sequence": None}
    if stop_details is not None:
        stop["stop_details"] = stop_details
    events.append(
        {
            "type": "message_delta",
            "delta": stop,
            "usage": _anthropic_usage(usage.input_tokens, usage.output_tokens),
        }
    )
    events.append({"type": "message_stop"})
    body = "".join(f"event: {e['type']}\ndata: {_dumps(e)}\n\n" for e in events)
    return WireResponse(status=200, body=body.encode(), content_type=_SSE)


def render_gemini(reply: ModelReply, model: str, seq: int, *, stream: bool) -> WireResponse:
    """A Gemini ``generateContent`` answer (``stream``: ``streamGenerateContent``'s SSE)."""
    if reply.output_items:
        raise ValueError("hosted output items are a Responses API feature, not Gemini's")
    if reply.refusal is not None:
        raise ValueError("Gemini has no explicit refusal (a blocked answer is a finish reason)")
    body, is_stream = render_gemini_reply(reply, model, seq, stream=stream)
    return WireResponse(status=200, body=body, content_type=_SSE if is_stream else _JSON)


# --------------------------------------------------------------------------- side endpoints


def render_count_tokens(request: dict[str, Any]) -> WireResponse:
    """A rough, deterministic estimate (about four characters per token)."""
    sized = {k: request.get(k) for k in ("system", "messages", "tools")}
    return _json_response({"input_tokens": max(1, len(_dumps(sized)) // 4)})


def _model_entry(model_id: str) -> dict[str, Any]:
    # One entry that satisfies both the OpenAI and the Anthropic model schema.
    return {
        "id": model_id,
        "object": "model",
        "created": 0,
        "owned_by": "sessionflow",
        "type": "model",
        "display_name": "Scripted model",
        "created_at": "2025-01-01T00:00:00Z",
    }


def render_models() -> WireResponse:
    return _json_response(
        {
            "object": "list",
            "data": [_model_entry(MODEL_ID)],
            "has_more": False,
            "first_id": MODEL_ID,
            "last_id": MODEL_ID,
        }
    )


def render_model(model_id: str) -> WireResponse:
    return _json_response(_model_entry(model_id))
