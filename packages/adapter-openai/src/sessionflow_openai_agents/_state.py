"""The framework run state: the SDK's `RunState` JSON, without what the session already stores.

* The run context is never stored. It is rebuilt by the context factory on every step and
  passed back with ``context_override`` (the SDK's own advice), so contexts need not be
  JSON and secrets in them never reach the workflow history.
* The turn's input (every stored message before the turn, plus its user message) is left
  out when it equals what `model_input` rebuilds from the stored messages, so the state
  of a long session does not carry the whole conversation on every tool round. A handoff
  input filter that rewrites the input keeps the rewritten input in the state.
"""

from __future__ import annotations

import json
from typing import Any, cast

from agents import Agent, RunContextWrapper, RunState, TResponseInputItem

from sessionflow.session import SessionStateError

__all__ = ["dump_run_state", "load_run_state"]

FORMAT = "sessionflow-openai-agents/1"
_NO_CONTEXT_META = {
    "original_type": "none",
    "serialized_via": "none",
    "requires_deserializer": False,
    "omitted": False,
}


def _no_context(context: Any) -> dict[str, Any]:
    return {}


def dump_run_state(state: RunState[Any, Any], turn_input: list[TResponseInputItem]) -> str:
    data = state.to_json(context_serializer=_no_context)
    context_entry = cast(dict[str, Any], data["context"])
    context_entry["context"] = None
    context_entry["context_meta"] = dict(_NO_CONTEXT_META)
    input_from_messages = _canonical(data.get("original_input")) == _canonical(turn_input)
    if input_from_messages:
        data["original_input"] = []
    envelope = {"format": FORMAT, "input_from_messages": input_from_messages, "state": data}
    return json.dumps(envelope, separators=(",", ":"), ensure_ascii=False)


async def load_run_state(
    start: Agent[Any], text: str, turn_input: list[TResponseInputItem], context: Any
) -> RunState[Any, Agent[Any]]:
    try:
        envelope = cast(dict[str, Any], json.loads(text))
    except ValueError:
        raise SessionStateError("the framework run state is not JSON") from None
    if envelope.get("format") != FORMAT:
        raise SessionStateError(f"unsupported framework run state format {envelope.get('format')!r}")
    data = cast(dict[str, Any], envelope["state"])
    if envelope.get("input_from_messages"):
        data["original_input"] = list(turn_input)
    return await RunState.from_json(start, data, context_override=RunContextWrapper(context=context))


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
