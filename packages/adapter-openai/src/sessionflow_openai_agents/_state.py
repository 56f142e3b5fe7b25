"""The framework run state: the SDK's `RunState` JSON, without what the session already stores.

* The run context is stored as JSON beside the SDK's state (`ContextCodec`), not through
  the SDK's own context serializer, so it comes back as the factory's type in every
  step. Run states of format 1 (written before the context was durable) hold no context:
  a step that resumes one builds a fresh context with the factory, as steps did then.
* The turn's input (every stored message before the turn, plus its user message) is left
  out when it equals what `model_input` rebuilds from the stored messages, so the state
  of a long session does not carry the whole conversation on every tool round. A handoff
  input filter that rewrites the input keeps the rewritten input in the state.
* ``starts_agent`` (optional, true only when set) says that the step resuming this state
  fires the run's start hooks, as the plain run does there (`_hooks`): the state was saved
  after a handoff, or at an approval the plain run stops for. A reader before it ignores the
  key and fires them in every step, as it did.
* ``steered`` (optional) names the steered messages in the run's input by their digests
  (`_steered`), so the turn's end stores them as the user's; a reader before it has none.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from agents import Agent, RunContextWrapper, RunState, TResponseInputItem

from sessionflow import SessionStateError

__all__ = ["SavedRunState", "dump_run_state", "parse_run_state", "with_step_state"]

FORMAT = "sessionflow-openai-agents/2"
_READ_FORMATS = ("sessionflow-openai-agents/1", FORMAT)
_NO_CONTEXT_META = {
    "original_type": "none",
    "serialized_via": "none",
    "requires_deserializer": False,
    "omitted": False,
}


def _no_context(context: Any) -> dict[str, Any]:
    return {}


def dump_run_state(
    state: RunState[Any, Any],
    turn_input: list[TResponseInputItem],
    context: Any,
    tool_state: Mapping[str, Any],
    *,
    starts_agent: bool = False,
    steered: Sequence[str] = (),
) -> str:
    """The state as text; ``context`` is the run context as JSON values (`ContextCodec.dump`),
    ``tool_state`` what neutral tool specs set in this turn, ``starts_agent`` whether the step
    that resumes it fires the run's start hooks, ``steered`` the digests of the steered
    messages in the run's input (`_steered`)."""
    data = state.to_json(context_serializer=_no_context)
    data["original_input"] = _as_the_run_had_it(state, data.get("original_input"))
    context_entry = cast(dict[str, Any], data["context"])
    context_entry["context"] = None
    context_entry["context_meta"] = dict(_NO_CONTEXT_META)
    input_from_messages = _canonical(data.get("original_input")) == _canonical(turn_input)
    if input_from_messages:
        data["original_input"] = []
    envelope = {
        "format": FORMAT,
        "input_from_messages": input_from_messages,
        "context": context,
        "tool_state": dict(tool_state),
        "state": data,
    }
    if starts_agent:
        envelope["starts_agent"] = True
    if steered:
        envelope["steered"] = list(steered)
    return json.dumps(envelope, separators=(",", ":"), ensure_ascii=False)


def with_step_state(text: str, context: Any, tool_state: Mapping[str, Any]) -> str:
    """The saved state ``text`` with the run context and the tool state as they are now: a
    step that did not advance the SDK's run (an agent tool's sub-agent moved) still hands
    them on."""
    envelope = cast(dict[str, Any], json.loads(text))
    envelope["context"] = context
    envelope["tool_state"] = dict(tool_state)
    return json.dumps(envelope, separators=(",", ":"), ensure_ascii=False)


@dataclass(frozen=True)
class SavedRunState:
    """A run state as stored: the SDK's part and the run context's JSON."""

    data: dict[str, Any]
    input_from_messages: bool
    context: Any
    """The run context as JSON values; None in a format-1 state or a run without context."""
    tool_state: dict[str, Any]
    """What neutral tool specs set in this turn (empty in a format-1 state)."""
    starts_agent: bool = False
    """The step that resumes this state fires the run's start hooks (`_hooks`)."""
    steered: tuple[str, ...] = ()
    """The digests of the steered messages in the run's input (`_steered`)."""

    async def restore(
        self, start: Agent[Any], turn_input: list[TResponseInputItem], wrapper: RunContextWrapper[Any]
    ) -> RunState[Any, Agent[Any]]:
        """The SDK's state, run in ``wrapper``: the state keeps that very object as its run
        context (and rebuilds its approvals into it), so the caller can decide the pending
        calls through it (`answer_interruptions`)."""
        data = dict(self.data)
        if self.input_from_messages:
            data["original_input"] = list(turn_input)
        return await RunState.from_json(start, data, context_override=wrapper)


def parse_run_state(text: str) -> SavedRunState:
    try:
        envelope = cast(dict[str, Any], json.loads(text))
    except ValueError:
        raise SessionStateError("the framework run state is not JSON") from None
    if envelope.get("format") not in _READ_FORMATS:
        raise SessionStateError(f"unsupported framework run state format {envelope.get('format')!r}")
    return SavedRunState(
        data=cast(dict[str, Any], envelope["state"]),
        input_from_messages=bool(envelope.get("input_from_messages")),
        context=envelope.get("context"),
        tool_state=cast(dict[str, Any], envelope.get("tool_state") or {}),
        starts_agent=envelope.get("starts_agent") is True,
        steered=tuple(cast(list[str], envelope.get("steered") or [])),
    )


def _as_the_run_had_it(state: RunState[Any, Any], serialized: Any) -> Any:
    """The run's input as the run had it: the SDK's serializer rewrites an assistant item
    whose content is text as a list of ``output_text`` parts, which a resumed run would then
    send the model (the plain run, never serialized, sends the text). The input as given is
    kept when it serializes to what the SDK wrote, so nothing else is lost."""
    raw: Any = getattr(state, "_original_input", None)
    normalise: Any = getattr(state, "_serialize_input", None)
    if not isinstance(raw, list) or normalise is None:
        return serialized
    if _canonical(normalise(raw)) != _canonical(serialized):
        return serialized
    return json.loads(json.dumps(raw, default=_model_dump))


def _model_dump(value: Any) -> Any:
    dump = getattr(value, "model_dump", None)
    return dump(mode="json", exclude_unset=True) if callable(dump) else str(value)


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
