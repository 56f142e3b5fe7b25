"""Rules every case must keep, whatever it expects."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from sessionflow.session import AgentEvent, AgentEventType, ToolEffect
from sessionflow.testing.conformance._observe import Observation

__all__ = ["check_invariants"]

T = AgentEventType
_TURN_KEY = re.compile(r"^(?P<session>.+)/(?P<turn>turn-\d+)/(?P<call>[^/]+)$")


def _of_type(events: Iterable[AgentEvent], kind: AgentEventType) -> list[AgentEvent]:
    return [e for e in events if e.type is kind]


def check_invariants(obs: Observation) -> list[str]:
    """Rules every case must keep, whatever it expects (checked once the session is idle)."""
    found: list[str] = []
    offsets = [e.offset for e in obs.events]
    if any(o is None for o in offsets) or offsets != sorted(set(o for o in offsets if o is not None)):
        found.append(f"invariant: durable event offsets must be unique and increasing, got {offsets}")
    for event in obs.events:
        if not event.turn_id or not event.step_execution_id or event.attempt < 1:
            found.append(
                f"invariant: durable event {event.type.value} at offset {event.offset} lacks its identity"
            )
    deferred = {
        (e.turn_id, str(e.data.get("tool_call_id"))): e for e in _of_type(obs.events, T.TOOL_CALL_DEFERRED)
    }
    finished = Counter(
        (e.turn_id, str(e.data.get("tool_call_id"))) for e in _of_type(obs.events, T.TOOL_CALL_FINISHED)
    )
    if obs.idle:
        for key in deferred:
            if finished[key] != 1:
                found.append(
                    f"invariant: tool call {key[0]}/{key[1]} finished {finished[key]} times, expected once"
                )
    found += [
        f"invariant: tool call {k[0]}/{k[1]} finished but was never deferred"
        for k in finished
        if k not in deferred
    ]
    found += _run_invariants(obs, deferred)
    return found


def _approved(obs: Observation, turn: str, call_id: str) -> bool:
    step = f"{turn}/tool/{call_id}"
    return any(
        e.type is T.INTERRUPT_RESOLVED and e.step_execution_id == step and e.data.get("approved") is True
        for e in obs.events
    )


def _run_invariants(obs: Observation, deferred: dict[tuple[str, str], AgentEvent]) -> list[str]:
    found: list[str] = []
    runs: Counter[tuple[str, str]] = Counter()
    for entry in obs.invocations:
        key = str(entry.get("idempotency_key"))
        call_id = str(entry.get("tool_call_id"))
        parsed = _TURN_KEY.match(key)
        if parsed is None or parsed["session"] != obs.session_id or parsed["call"] != call_id:
            found.append(
                f"invariant: tool {entry.get('name')!r} call {call_id!r} ran with idempotency key {key!r}, "
                f"expected '{obs.session_id}/<turn>/{call_id}'"
            )
            continue
        runs[(parsed["turn"], call_id)] += 1
    for (turn, call_id), count in runs.items():
        event = deferred.get((turn, call_id))
        if event is None:
            continue  # retention may have dropped it; nothing to compare against
        effect = ToolEffect(str(event.data.get("effect")))
        if count > effect.max_attempts_allowed:
            found.append(
                f"invariant: {effect.value} tool call {turn}/{call_id} ran {count} times, "
                f"at most {effect.max_attempts_allowed} allowed"
            )
        if event.data.get("requires_approval") is True and not _approved(obs, turn, call_id):
            found.append(f"invariant: tool call {turn}/{call_id} ran without an approval")
    return found
