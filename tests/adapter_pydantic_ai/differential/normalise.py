"""What the differential tests normalise before comparing a plain run with a session, and why.

Only what must differ between two runs of the same agent is normalised. Every rule is in
`REQUEST_NORMALISATIONS` or `HISTORY_NORMALISATIONS` with its reason; the README lists them too.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, cast

__all__ = [
    "HISTORY_NORMALISATIONS",
    "REQUEST_NORMALISATIONS",
    "json_value",
    "normalise_history",
    "normalise_requests",
]

REQUEST_NORMALISATIONS: dict[str, str] = {
    "stream, stream_options": (
        "the adapter always streams its model request (`node.stream`), so a model step can "
        "publish its text and thinking deltas; `agent.run` (what Pydantic AI's examples call) "
        "sends no `stream` flag and no `stream_options`. Both keys are dropped from both runs."
    ),
}

HISTORY_NORMALISATIONS: dict[str, str] = {
    "timestamp": (
        "every message and part records when it was made (`timestamp`); two runs never make "
        "them at the same instant. Each is replaced by whether it is set, so a message that "
        "lost its timestamp still shows."
    ),
    "run_id": (
        "Pydantic AI draws a new run ID for every `agent.run`, and the session makes one run "
        "per model step; the ID is random either way. Each is replaced by whether it is set."
    ),
    "conversation_id": (
        "`agent.run` draws a random conversation ID; the adapter names the conversation "
        "after the session ID. Each is replaced by its order of first appearance "
        "(conversation-0, ...), so a history that switches conversations still shows."
    ),
    "provider_response_id": (
        "the scripted server names each response (chatcmpl-<n>) after a counter of every "
        "request it served, on any key, so the two runs never get the same names. Each is "
        "replaced by its order of first appearance (response-0, ...), so a response stored "
        "twice, or dropped, still shows."
    ),
    "a part's scripted item id": (
        "on OpenAI's Responses API each part keeps its output item's `id`; the scripted server "
        "names the items it makes (msg_<n>, rs_<n>, fc_<n>_<i>) after the same counter as its "
        "responses, so the two runs never get the same names. Each is replaced by its order "
        "of first appearance (item-0, ...); an id the script itself gives (a provider-run "
        "tool's item) is compared as it is."
    ),
    "provider_url": (
        "each run talks to its own key of the scripted server, and the URL names the key; "
        "the key is replaced by <key> (a side conversation keeps its suffix: <key>-backup), "
        "so a response from another conversation still shows."
    ),
    "failed_attempts: duration, the key in error": (
        "a response a fallback chain got after a failed model (`FallbackModel`, `ModelFallback`) "
        "lists the failed attempts: how long each took (wall clock), and the provider's error, "
        "whose text names the run's scripted server key. The duration is replaced by whether "
        "it is set, the key by <key>; the model, outcome and the rest of the error are compared."
    ),
    "the user's request: instructions, timestamp, run_id, conversation_id, system prompt": (
        "sessionflow stores a user's message when it arrives (the runner's "
        "`build_user_message`), before any run sends it, and a dynamic system prompt needs "
        "the run's deps; Pydantic AI fills these four fields in, and puts the system prompt "
        "first, in the request it sends. So plain's history has them and the session's "
        "stored message cannot: the adapter renders the system prompt at the session's first "
        "request and carries it to the head of every later step's history. They are dropped "
        "from every request that carries a user "
        "prompt, in both runs; its other parts (the prompt and its timestamp) are compared. "
        "The requests, compared whole, show the model got the same system prompt and "
        "instructions."
    ),
}

# Request fields Pydantic AI fills in when it sends a request (see HISTORY_NORMALISATIONS).
_SENT_REQUEST_FIELDS = ("instructions", "timestamp", "run_id", "conversation_id")

_STREAMING_KEYS = ("stream", "stream_options")

# The item ids the scripted server makes (`sessionflow.demo._model_wire._response_items`).
_SCRIPTED_ITEM_ID = re.compile(r"(?:msg|rs|fc)_\d+(?:_\d+)?")


def json_value(value: Any) -> Any:
    """``value`` as plain JSON: pydantic models as their JSON dump, dataclasses as dicts."""
    return json.loads(json.dumps(value, default=_default, sort_keys=True))


def normalise_requests(bodies: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One conversation's request bodies as the model saw them, minus `REQUEST_NORMALISATIONS`."""
    requests: list[dict[str, Any]] = []
    for body in bodies:
        request = cast(dict[str, Any], json_value(dict(body)))
        for key in _STREAMING_KEYS:
            request.pop(key, None)
        requests.append(request)
    return requests


def normalise_history(messages: Sequence[Mapping[str, Any]], *, key: str) -> list[dict[str, Any]]:
    """Dumped Pydantic AI messages (``ModelMessagesTypeAdapter.dump_python(..., mode="json")``)
    of the run on scripted server key ``key``, minus `HISTORY_NORMALISATIONS`."""
    renamed: dict[str, dict[str, str]] = {"conversation_id": {}, "provider_response_id": {}, "id": {}}
    prefixes = {"conversation_id": "conversation", "provider_response_id": "response", "id": "item"}

    def rename(node: Any) -> Any:
        if isinstance(node, dict):
            out: dict[str, Any] = {}
            for name, value in cast(dict[str, Any], node).items():
                if name in ("timestamp", "run_id"):
                    out[name] = "<set>" if value is not None else None
                elif name == "provider_url" and isinstance(value, str):
                    out[name] = value.replace(f"/k/{key}", "/k/<key>")
                elif name == "failed_attempts" and isinstance(value, list):
                    out[name] = [rename(_failed_attempt(a, key)) for a in cast(list[Any], value)]
                elif name == "id" and not (isinstance(value, str) and _SCRIPTED_ITEM_ID.fullmatch(value)):
                    out[name] = rename(value)
                elif name in renamed and isinstance(value, str):
                    names = renamed[name]
                    out[name] = names.setdefault(value, f"{prefixes[name]}-{len(names)}")
                else:
                    out[name] = rename(value)
            return out
        if isinstance(node, list):
            return [rename(v) for v in cast(list[Any], node)]
        return node

    return [cast(dict[str, Any], rename(_without_sent_fields(json_value(dict(m))))) for m in messages]


def _failed_attempt(attempt: Any, key: str) -> Any:
    if not isinstance(attempt, dict):
        return attempt
    out = dict(cast(dict[str, Any], attempt))
    if "duration" in out:
        out["duration"] = "<set>" if out["duration"] is not None else None
    if isinstance(out.get("error"), str):
        out["error"] = out["error"].replace(key, "<key>")
    return out


def _without_sent_fields(message: dict[str, Any]) -> dict[str, Any]:
    parts = cast(list[dict[str, Any]], message.get("parts", []))
    if message.get("kind") != "request" or not any(p.get("part_kind") == "user-prompt" for p in parts):
        return message
    kept = {k: v for k, v in message.items() if k not in _SENT_REQUEST_FIELDS}
    kept["parts"] = [p for p in parts if p.get("part_kind") != "system-prompt"]
    return kept


def _default(value: object) -> object:
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json")
    fields = getattr(value, "__dataclass_fields__", None)
    if isinstance(fields, dict):
        return {name: getattr(value, name) for name in cast(dict[str, Any], fields)}
    if isinstance(value, set | frozenset | tuple):
        return list(cast(Any, value))
    isoformat = getattr(value, "isoformat", None)
    if callable(isoformat):
        return isoformat()
    return repr(value)
