"""What the snapshot shows of the thread: its state after the turn, as JSON (`TurnCompleted.framework_state`).

It is ``graph.get_state(config).values``, the same values plain LangGraph returns, with
the message channel left out when it is the session's stored transcript (the snapshot's
messages are that channel). When a node replaced the channel (a summary), the channel is
shown too, under its key. Messages are LangChain's message dicts (as stored messages are),
other objects their pydantic dump, and anything else JSON cannot hold its `str`. The
session bounds the view (64 KiB; a key that does not fit is named in
`AgentSnapshot.framework_state_omitted`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, cast

from langchain_core.messages import BaseMessage, message_to_dict

from sessionflow_langgraph._carry import visible_state
from sessionflow_langgraph._run_state import starts_with

__all__ = ["thread_view"]


def thread_view(
    values: Mapping[str, Any], messages_key: str, history: Sequence[BaseMessage]
) -> dict[str, Any]:
    """The state's keys as JSON; the message channel only when it is not the stored transcript."""
    shown: dict[str, Any] = visible_state(values, messages_key)
    channel: Any = values.get(messages_key)
    if channel is not None and not (
        isinstance(channel, list) and starts_with(cast(list[Any], channel), history)
    ):
        shown = {messages_key: channel, **shown}
    return cast(dict[str, Any], json.loads(json.dumps(shown, default=_json_default, ensure_ascii=False)))


def _json_default(value: object) -> object:
    if isinstance(value, BaseMessage):
        return message_to_dict(value)
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json")
    if isinstance(value, set | frozenset | tuple):
        return list(cast(Any, value))
    return str(value)
