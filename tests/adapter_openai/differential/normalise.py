"""What the differential tests normalise before comparing a plain run with a session, and why.

Only what must differ between two runs of the same agent is normalised. Every rule is in
`REQUEST_NORMALISATIONS` with its reason; the README lists them too.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, cast

__all__ = ["REQUEST_NORMALISATIONS", "json_value", "normalise_items", "normalise_requests"]

REQUEST_NORMALISATIONS: dict[str, str] = {
    "stream": (
        "the adapter always calls the model with stream=true, so a model step can publish its "
        "deltas; `Runner.run` (what the SDK's examples call) sends stream=false. The flag is "
        "dropped only when the plain run used `Runner.run`: a plain `Runner.run_streamed` run "
        "is compared with it."
    ),
    "item id": (
        "the scripted server names the items of its replies (fc_<n>_<i>, msg_<n>, rs_<n>) after a "
        "counter of every request it has served, on any key: the plain run and the session, served "
        "one after the other, never get the same names. Each such id in a conversation's requests is "
        "replaced by its order of first appearance (item-0, item-1, ...), so a request that sends an "
        "item back under another id, or drops one, still shows. The same ids quoted inside text "
        "(the SDK's nested handoff history summarises earlier items as their JSON) are renamed the "
        "same way."
    ),
}

_SERVER_ITEM_ID = re.compile(r"^(fc|msg|rs|resp|mcp|ws)_\d+(_\d+)?$")
_QUOTED_ITEM_ID = re.compile(r'(?<="id": ")(fc|msg|rs|resp|mcp|ws)_\d+(_\d+)?(?=")')


def json_value(value: Any) -> Any:
    """``value`` as plain JSON: pydantic models as their JSON dump, dataclasses as dicts."""
    return json.loads(json.dumps(value, default=_default, sort_keys=True))


def _renamer() -> Any:
    ids: dict[str, str] = {}

    def rename(node: Any) -> Any:
        if isinstance(node, dict):
            item = cast(dict[str, Any], node)
            renamed = {k: rename(v) for k, v in item.items()}
            raw = item.get("id")
            if isinstance(raw, str) and _SERVER_ITEM_ID.match(raw):
                renamed["id"] = ids.setdefault(raw, f"item-{len(ids)}")
            return renamed
        if isinstance(node, list):
            return [rename(v) for v in cast(list[Any], node)]
        if isinstance(node, str) and "_" in node:
            return _QUOTED_ITEM_ID.sub(lambda m: ids.setdefault(m.group(0), f"item-{len(ids)}"), node)
        return node

    return rename


def normalise_items(items: Sequence[Any]) -> list[dict[str, Any]]:
    """A stored conversation (input items) as JSON, its item ids renamed as in the requests
    (the "item id" rule of `REQUEST_NORMALISATIONS`)."""
    rename = _renamer()
    return [cast(dict[str, Any], rename(json_value(item))) for item in items]


def normalise_requests(bodies: Sequence[Mapping[str, Any]], *, plain_streamed: bool) -> list[dict[str, Any]]:
    """One conversation's request bodies as the model saw them, minus `REQUEST_NORMALISATIONS`."""
    rename = _renamer()
    requests: list[dict[str, Any]] = []
    for body in bodies:
        request = cast(dict[str, Any], rename(json_value(dict(body))))
        if not plain_streamed:
            request.pop("stream", None)
        requests.append(request)
    return requests


def _default(value: object) -> object:
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json")
    fields = getattr(value, "__dataclass_fields__", None)
    if isinstance(fields, dict):
        return {name: getattr(value, name) for name in cast(dict[str, Any], fields)}
    if isinstance(value, set | frozenset | tuple):
        return list(cast(Any, value))
    return repr(value)
