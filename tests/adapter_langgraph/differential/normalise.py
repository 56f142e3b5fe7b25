"""What the differential tests normalise before comparing a plain run with a session, and why.

Only what must differ between two runs of the same graph is normalised. Every rule is in
`REQUEST_NORMALISATIONS` or `STATE_NORMALISATIONS`, with its reason; the README lists them too.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, cast

from langchain_core.messages import BaseMessage, message_to_dict

__all__ = [
    "REQUEST_NORMALISATIONS",
    "STATE_NORMALISATIONS",
    "json_value",
    "normalise_request",
    "normalise_state",
]

_UUID_TOOL_CALL_ID = (
    "langgraph-supervisor's handoff back to the supervisor (create_handoff_back_messages) makes up "
    "an AI message with a tool call whose ID is a random uuid4, in plain LangGraph too: two plain runs "
    "differ here. A tool call ID that is a whole UUID is replaced by its position of first appearance "
    "('uuid-0', ...), so the call and its tool message still match. The script's IDs are not UUIDs."
)

_SCRIPTED_SIGNATURE = (
    "The scripted model server signs each thinking block 'sig_scripted_<n>', n counting the "
    "server's responses over all its keys, so the plain run and the session (each on its own key "
    "of one server) get different numbers for the same reply. Each such signature is replaced by "
    "its position of first appearance ('sig-0', ...); a real provider's signature is the provider's."
)

REQUEST_NORMALISATIONS: dict[str, str] = {
    # Otherwise the request bodies are compared whole. Both runs stream (the plain run uses
    # `astream(stream_mode="messages")`, as a client showing tokens does), use the same
    # model object settings, and the scripted server's tool call IDs are the script's.
    "uuid tool call id": _UUID_TOOL_CALL_ID,
    "scripted signature": _SCRIPTED_SIGNATURE,
}

STATE_NORMALISATIONS: dict[str, str] = {
    "message id": (
        "LangGraph gives a message without an ID a random uuid4 (add_messages), and LangChain names "
        "a model's message after its random run ID: two plain runs differ here too. Each ID is "
        "replaced by its position of first appearance in the state ('id-0', 'id-1', ...), so "
        "references between messages (RemoveMessage) still compare. A message without an ID "
        "(the session stores the user's message before add_messages names it) gets a placeholder "
        "the same way."
    ),
    "uuid tool call id": _UUID_TOOL_CALL_ID,
    "scripted signature": _SCRIPTED_SIGNATURE,
}

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_TOOL_CALL_ID_KEYS = frozenset({"id", "tool_call_id"})


def json_value(value: Any) -> Any:
    """``value`` as plain JSON: messages as LangChain's message dicts, other objects as their dump."""
    return json.loads(json.dumps(value, default=_default, sort_keys=True))


def normalise_request(body: Mapping[str, Any]) -> dict[str, Any]:
    """The request body as the model saw it, UUID tool call IDs renamed (`REQUEST_NORMALISATIONS`)."""
    return cast(dict[str, Any], _rename_signatures(_rename_uuid_tool_call_ids(json_value(dict(body)))))


def normalise_state(values: Mapping[str, Any]) -> dict[str, Any]:
    """The state's values as JSON, message IDs replaced by their order of first appearance."""
    plain = cast(dict[str, Any], json_value(dict(values)))
    ids: dict[str, str] = {}

    def rename(node: Any) -> Any:
        if isinstance(node, dict):
            item = cast(dict[str, Any], node)
            data = item.get("data")
            if set(item) == {"type", "data"} and isinstance(data, dict):
                fields = dict(cast(dict[str, Any], data))
                raw = fields.get("id")
                # A message with no ID yet (the session stores the user's message before
                # add_messages would name it) gets a placeholder of its own.
                name = str(raw) if raw is not None else f"<none {len(ids)}>"
                fields["id"] = ids.setdefault(name, f"id-{len(ids)}")
                return {"type": item["type"], "data": {k: rename(v) for k, v in fields.items()}}
            return {k: rename(v) for k, v in item.items()}
        if isinstance(node, list):
            return [rename(v) for v in cast(list[Any], node)]
        return node

    return cast(dict[str, Any], _rename_signatures(_rename_uuid_tool_call_ids(rename(plain))))


def _rename_uuid_tool_call_ids(tree: Any) -> Any:
    """Each whole-UUID ``id``/``tool_call_id`` string, by its order of first appearance."""
    names: dict[str, str] = {}

    def rename(node: Any) -> Any:
        if isinstance(node, dict):
            item = cast(dict[str, Any], node)
            return {
                k: names.setdefault(v, f"uuid-{len(names)}")
                if k in _TOOL_CALL_ID_KEYS and isinstance(v, str) and _UUID.fullmatch(v)
                else rename(v)
                for k, v in item.items()
            }
        if isinstance(node, list):
            return [rename(v) for v in cast(list[Any], node)]
        return node

    return rename(tree)


_SIGNATURE = re.compile(r"sig_scripted_[0-9]+")


def _rename_signatures(tree: Any) -> Any:
    """Each scripted thinking signature (``signature`` values), by its order of first appearance."""
    names: dict[str, str] = {}

    def rename(node: Any) -> Any:
        if isinstance(node, dict):
            item = cast(dict[str, Any], node)
            return {
                k: names.setdefault(v, f"sig-{len(names)}")
                if k == "signature" and isinstance(v, str) and _SIGNATURE.fullmatch(v)
                else rename(v)
                for k, v in item.items()
            }
        if isinstance(node, list):
            return [rename(v) for v in cast(list[Any], node)]
        return node

    return rename(tree)


def _default(value: object) -> object:
    if isinstance(value, BaseMessage):
        return message_to_dict(value)
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json")
    if isinstance(value, set | frozenset | tuple):
        return list(cast(Any, value))
    return repr(value)
