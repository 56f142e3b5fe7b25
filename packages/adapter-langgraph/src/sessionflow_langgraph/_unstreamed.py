"""A streamed model response kept as a non-streamed call would have returned it.

A model step streams every model call (the session's text deltas), and LangChain then
merges the chunks into the message the node receives. For some providers that merged
message is not the one a plain ``invoke`` returns: ``ChatAnthropic`` leaves each content
block's stream ``index``, a ``tool_use`` block with an empty ``input`` beside its
``partial_json``, and a lone text answer as a list of one text block instead of a string;
the OpenAI Responses API leaves ``index`` on every block. That message is what the graph's
state holds, what the session stores, and what later requests send back (a list of text
blocks where plain sends a string).

`unstream` rewrites the message in place, from the model's ``on_llm_end`` (before the node
gets it), into the shape the provider's non-streamed path builds, so every later node,
request and stored message is plain's. What LangChain does not keep of a stream (the
response ``id`` and the raw ``usage`` in ``response_metadata``) cannot be rebuilt; those
stay the stream's. A message without streaming leftovers is left alone.
"""

from __future__ import annotations

import json
from typing import Any, cast

from langchain_core.messages import AIMessage

__all__ = ["unstream"]

_STREAM_KEYS = ("index", "partial_json")


def unstream(message: AIMessage) -> None:
    """Rewrite ``message`` (in place) as the provider's non-streamed call would have built it."""
    content: Any = message.content
    if not isinstance(content, list):
        return
    blocks = cast(list[Any], content)
    if not any(isinstance(b, dict) and any(k in b for k in _STREAM_KEYS) for b in blocks):
        return  # not streamed, or nothing left over
    provider = str(message.response_metadata.get("model_provider") or "")
    args_by_id = {call.get("id"): call.get("args") for call in message.tool_calls}
    cleaned = [_block(cast(dict[str, Any], b), args_by_id) if isinstance(b, dict) else b for b in blocks]
    if provider == "anthropic" and _lone_text(cleaned):
        # langchain_anthropic's _format_output: one text block without citations is a string.
        message.content = str(cleaned[0]["text"])
        return
    message.content = cleaned


def _block(block: dict[str, Any], args_by_id: dict[Any, Any]) -> dict[str, Any]:
    kept = {k: v for k, v in block.items() if k not in _STREAM_KEYS}
    if "partial_json" in block and block.get("type") in ("tool_use", "server_tool_use"):
        kept["input"] = _tool_input(block, args_by_id)
    summary: Any = kept.get("summary")
    if isinstance(summary, list):  # OpenAI Responses reasoning: each summary part has an index too
        kept["summary"] = [
            {k: v for k, v in cast(dict[str, Any], part).items() if k != "index"}
            if isinstance(part, dict)
            else part
            for part in cast(list[Any], summary)
        ]
    return kept


def _tool_input(block: dict[str, Any], args_by_id: dict[Any, Any]) -> Any:
    """The arguments the stream carried: LangChain's parsed call, else the raw JSON parsed."""
    parsed = args_by_id.get(block.get("id"))
    if parsed is not None:
        return parsed
    raw: Any = block.get("partial_json")
    if isinstance(raw, str) and raw:
        try:
            return json.loads(raw)
        except ValueError:
            return block.get("input", {})
    return block.get("input", {})


def _lone_text(blocks: list[Any]) -> bool:
    if len(blocks) != 1 or not isinstance(blocks[0], dict):
        return False
    only = cast(dict[str, Any], blocks[0])
    return only.get("type") == "text" and not only.get("citations") and isinstance(only.get("text"), str)
