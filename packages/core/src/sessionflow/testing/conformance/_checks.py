"""Observations and checks: what a case's session did, compared with what the case says.

An `Observation` gathers everything the checks look at, from the session, the model server
and the logs. `check_expectations` compares it with a case's expectations, and
`check_invariants` with the rules every case must keep, whatever it expects. Every failure
is one readable line.
"""

from __future__ import annotations

import base64
import json
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from sessionflow.demo._model_script import RecordedRequest
from sessionflow.session.events import AgentEvent, AgentEventType
from sessionflow.session.messages import MessageRole
from sessionflow.session.state import AgentSnapshot, AgentStatus
from sessionflow.session.tools import ToolEffect
from sessionflow.temporal.client._client import AgentSessionClient
from sessionflow.temporal.client._step_history import StepHistoryEntry
from sessionflow.testing.conformance._case_files import preview
from sessionflow.testing.conformance._expect import (
    SESSION_PLACEHOLDER,
    CallExpect,
    DeltaExpect,
    EventMatch,
    EventsExpect,
    Expectations,
    InvocationExpect,
    ModelRequestsExpect,
    SnapshotExpect,
    StepExpect,
)

__all__ = ["Observation", "check_expectations", "check_invariants", "read_durable_events"]

T = AgentEventType


# --------------------------------------------------------------------------- observation
# Everything the checks look at, gathered from the session, the model server and the logs.


@dataclass(frozen=True, kw_only=True)
class Observation:
    """One look at a session of a case.

    Attributes:
        session_id: The session's ID (also the prefix of every idempotency key).
        snapshot: `AgentSessionClient.get_agent_snapshot`.
        events: The durable event stream, in offset order.
        live_events: Events that arrived live (offset None) through `AgentSessionClient.events`.
        requests: Model requests as the scripted server recorded them (what the framework sent).
        invocations: The InvocationLog entries of kind ``tool`` (every real tool run).
        steps: The session's activities from its workflow history.
        images: Bytes of the case's images by name.
        resume_texts: The framework's own resume prompts (`FrameworkSpec.resume_texts`),
            which do not count as user text.
    """

    session_id: str
    snapshot: AgentSnapshot
    events: list[AgentEvent]
    live_events: list[AgentEvent] = field(default_factory=lambda: [])
    requests: list[RecordedRequest] = field(default_factory=lambda: [])
    invocations: list[dict[str, Any]] = field(default_factory=lambda: [])
    steps: list[StepHistoryEntry] = field(default_factory=lambda: [])
    images: dict[str, bytes] = field(default_factory=lambda: {})
    resume_texts: tuple[str, ...] = ()

    @property
    def idle(self) -> bool:
        state = self.snapshot.state
        return (
            state is not None
            and state.turn_count > 0
            and state.status is AgentStatus.WAITING_FOR_USER_MESSAGE
        )


async def read_durable_events(sessions: AgentSessionClient, session_id: str) -> list[AgentEvent]:
    """Every retained durable event of the session, oldest first."""
    events: list[AgentEvent] = []
    after = 0
    while True:
        page = await sessions.list_agent_events(session_id, after=after, limit=500)
        if not page.events:
            return events
        events += page.events
        after = page.next_offset


# --------------------------------------------------------------------------- expectations
# Compare an `Observation` with a case's expectations.


def check_expectations(expect: Expectations, obs: Observation) -> list[str]:
    """Every way ``obs`` differs from ``expect``; empty when it matches."""
    failures: list[str] = []
    if expect.snapshot is not None:
        failures += _snapshot(expect.snapshot, obs)
    failures += _tool_statuses(expect, obs)
    failures += _policies(expect, obs)
    for name, expected in expect.invocations.items():
        failures += _invocations(name, expected, obs)
    if expect.model_requests is not None:
        failures += _model_requests(expect.model_requests, obs)
    if expect.events is not None:
        failures += _events(expect.events, obs)
    if expect.steps is not None:
        failures += _steps(expect.steps, obs)
    return failures


# --------------------------------------------------------------------------- snapshot


def _snapshot(expect: SnapshotExpect, obs: Observation) -> list[str]:
    snap = obs.snapshot
    state = snap.state
    found: list[str] = []

    def compare(what: str, expected: object, actual: object) -> None:
        if expected is not None and expected != actual:
            found.append(f"snapshot {what}: expected {expected!r}, got {actual!r}")

    compare("turn_count", expect.turn_count, state.turn_count if state else None)
    compare("status", expect.status, state.status if state else None)
    compare("message_count", expect.message_count, snap.message_count)
    if expect.min_message_count is not None and snap.message_count < expect.min_message_count:
        found.append(
            f"snapshot message_count: expected at least {expect.min_message_count}, got {snap.message_count}"
        )
    if expect.last_message_text is not None:
        last = snap.messages[-1].message.text if snap.messages else None
        found += expect.last_message_text.failures(last, "snapshot last message text")
    if expect.last_turn_error is not None:
        error = state.last_turn_error if state else None
        if expect.last_turn_error.null:
            if error is not None:
                found.append(f"snapshot last_turn_error: expected None, got {preview(error)}")
        elif expect.last_turn_error.match is not None:
            found += expect.last_turn_error.match.failures(error, "snapshot last_turn_error")
    found += _carried(expect, snap)
    compare("pending interrupts", expect.pending_interrupts, len(snap.pending_interrupts))
    compare("queued_message_count", expect.queued_message_count, snap.queued_message_count)
    compare("steered_message_count", expect.steered_message_count, snap.steered_message_count)
    if expect.user_texts is not None:
        users = tuple(m.message.text or "" for m in snap.messages if m.message.role is MessageRole.USER)
        if users != expect.user_texts:
            found.append(f"snapshot user messages: expected {list(expect.user_texts)}, got {list(users)}")
    if expect.usage is not None:
        compare("usage.requests", expect.usage.requests, snap.usage.requests)
        compare("usage.input_tokens", expect.usage.input_tokens, snap.usage.input_tokens)
        compare("usage.output_tokens", expect.usage.output_tokens, snap.usage.output_tokens)
    records = {r.tool_call_id: r.status for r in snap.tool_calls}
    for call_id, status in expect.tool_calls.items():
        actual = records.get(call_id)
        if actual is not status:
            found.append(
                f"snapshot tool call {call_id!r}: expected status {status.value!r}, got "
                f"{actual.value if actual else 'no record'!r} (records: {_statuses(records)})"
            )
    return found


def _carried(expect: SnapshotExpect, snap: AgentSnapshot) -> list[str]:
    found: list[str] = []
    wanted = expect.carried_state_preview
    if wanted is not None and wanted.null and snap.carried_state_preview is not None:
        found.append(
            f"snapshot carried_state_preview: expected None, got {preview(snap.carried_state_preview)}"
        )
    elif wanted is not None and wanted.match is not None:
        found += wanted.match.failures(snap.carried_state_preview, "snapshot carried_state_preview")
    by_reference = expect.carried_state_by_reference
    if by_reference is not None and by_reference is not snap.carried_state_by_reference:
        found.append(
            f"snapshot carried_state_by_reference: expected {by_reference}, got {snap.carried_state_by_reference}"
        )
    return found


def _statuses(records: dict[str, Any]) -> str:
    return ", ".join(f"{k}={getattr(v, 'value', v)}" for k, v in records.items()) or "none"


# --------------------------------------------------------------------------- tool records


def _key_matches(key: str, event: AgentEvent) -> bool:
    call_id = str(event.data.get("tool_call_id"))
    if "/" in key:
        turn, _, wanted = key.partition("/")
        return event.turn_id == turn and call_id == wanted
    return call_id == key


def _of_type(events: Iterable[AgentEvent], kind: AgentEventType) -> list[AgentEvent]:
    return [e for e in events if e.type is kind]


def _tool_statuses(expect: Expectations, obs: Observation) -> list[str]:
    finished = _of_type(obs.events, T.TOOL_CALL_FINISHED)
    seen = (
        ", ".join(f"{e.turn_id}/{e.data.get('tool_call_id')}={e.data.get('status')}" for e in finished)
        or "none"
    )
    found: list[str] = []
    for key, status in expect.tool_statuses.items():
        matching = [e for e in finished if _key_matches(key, e)]
        if not matching:
            found.append(
                f"tool call {key!r}: expected a tool_call_finished event with status {status.value!r}, "
                f"found none (finished: {seen})"
            )
        found += [
            f"tool call {key!r} ({e.turn_id}): expected final status {status.value!r}, got {e.data.get('status')!r}"
            for e in matching
            if e.data.get("status") != status.value
        ]
    return found


def _policies(expect: Expectations, obs: Observation) -> list[str]:
    deferred = _of_type(obs.events, T.TOOL_CALL_DEFERRED)
    found: list[str] = []
    for key, policy in expect.policies.items():
        matching = [e for e in deferred if _key_matches(key, e)]
        if not matching:
            found.append(f"tool call {key!r}: expected a tool_call_deferred event, found none")
        for e in matching:
            actual = (e.data.get("effect"), e.data.get("requires_approval"))
            if actual != (policy.effect.value, policy.requires_approval):
                found.append(
                    f"tool call {key!r} ({e.data.get('tool_name')}): expected effect {policy.effect.value!r} with "
                    f"requires_approval={policy.requires_approval}, got effect {actual[0]!r} with "
                    f"requires_approval={actual[1]}"
                )
    return found


def _invocations(name: str, expect: InvocationExpect, obs: Observation) -> list[str]:
    runs = [entry for entry in obs.invocations if entry.get("name") == name]
    found: list[str] = []
    if expect.count is not None and len(runs) != expect.count:
        found.append(f"tool {name!r}: expected {expect.count} real run(s), got {len(runs)}")
    attempts = tuple(int(entry.get("attempt", 0)) for entry in runs)
    if expect.attempts is not None and attempts != expect.attempts:
        found.append(
            f"tool {name!r}: expected runs with attempts {list(expect.attempts)}, got {list(attempts)}"
        )
    keys = tuple(str(entry.get("idempotency_key")) for entry in runs)
    if expect.idempotency_keys is not None:
        wanted = tuple(k.replace(SESSION_PLACEHOLDER, obs.session_id) for k in expect.idempotency_keys)
        if keys != wanted:
            found.append(f"tool {name!r}: expected idempotency keys {list(wanted)}, got {list(keys)}")
    if expect.distinct_idempotency_keys is not None and len(set(keys)) != expect.distinct_idempotency_keys:
        found.append(
            f"tool {name!r}: expected {expect.distinct_idempotency_keys} distinct idempotency key(s), "
            f"got {sorted(set(keys))}"
        )
    return found


# --------------------------------------------------------------------------- model requests


def _model_requests(expect: ModelRequestsExpect, obs: Observation) -> list[str]:
    found: list[str] = []
    if expect.count is not None and len(obs.requests) != expect.count:
        found.append(f"model requests: expected {expect.count}, the server recorded {len(obs.requests)}")
    for call in expect.calls:
        if call.call > len(obs.requests):
            found.append(
                f"model call {call.call}: never made (the server recorded {len(obs.requests)} request(s))"
            )
            continue
        found += _call(call, obs.requests[call.call - 1], obs)
    return found


def _call(expect: CallExpect, request: RecordedRequest, obs: Observation) -> list[str]:
    what = f"model call {expect.call}"
    found: list[str] = []
    sent = request.sent_texts()
    found += [
        f"{what}: the model did not see {s!r} (it saw {_texts(sent)})"
        for s in expect.saw
        if not request.saw(s)
    ]
    found += [f"{what}: the model saw {s!r}, which it must not" for s in expect.not_saw if request.saw(s)]
    results = request.tool_results()
    for call_id, match in expect.tool_results.items():
        if call_id not in results:
            found.append(
                f"{what}: no tool result for call {call_id!r} (results for: {sorted(results) or 'none'})"
            )
        else:
            found += match.failures(results[call_id], f"{what}: tool result for {call_id!r}")
    if expect.tool_result_ids is not None and sorted(results) != sorted(expect.tool_result_ids):
        found.append(
            f"{what}: expected tool results for {sorted(expect.tool_result_ids)}, got {sorted(results)}"
        )
    if expect.tools_offered is not None and sorted(request.tool_names()) != sorted(expect.tools_offered):
        found.append(
            f"{what}: expected tools {sorted(expect.tools_offered)} offered, got {sorted(request.tool_names())}"
        )
    if expect.last_user_text is not None:
        found += expect.last_user_text.failures(
            request.last_user_text(ignore=obs.resume_texts), f"{what}: last user text"
        )
    if expect.conversation_tail is not None:
        entries = request.conversation(ignore=obs.resume_texts)
        tail = entries[-len(expect.conversation_tail) :]
        if tuple(tail) != expect.conversation_tail:
            found.append(
                f"{what}: the conversation ends with {tail}, expected {list(expect.conversation_tail)}"
            )
    body = json.dumps(request.body)
    for name in expect.images:
        encoded = base64.b64encode(obs.images.get(name, b"")).decode()
        if not obs.images.get(name) or encoded not in body:
            found.append(
                f"{what}: image {name!r} (base64 of the PNG the test sent) is not in the request body"
            )
    return found


def _texts(texts: list[str]) -> str:
    return "[" + ", ".join(preview(t) for t in texts[-8:]) + "]"


# --------------------------------------------------------------------------- events


def _is_subsequence(wanted: tuple[AgentEventType, ...], actual: list[AgentEventType]) -> bool:
    remaining = iter(actual)
    return all(any(kind is item for item in remaining) for kind in wanted)


def _event_matches(match: EventMatch, event: AgentEvent) -> bool:
    if event.type is not match.type or (match.turn_id is not None and event.turn_id != match.turn_id):
        return False
    return all(key in event.data and event.data[key] == value for key, value in match.data.items())


def _describe(match: EventMatch) -> str:
    where = f" in {match.turn_id}" if match.turn_id else ""
    return f"{match.type.value} with data {match.data}{where}"


def _events(expect: EventsExpect, obs: Observation) -> list[str]:
    found: list[str] = []
    types = [e.type for e in obs.events]
    if expect.subsequence and not _is_subsequence(expect.subsequence, types):
        found.append(
            f"events: expected the subsequence {[t.value for t in expect.subsequence]}, "
            f"got {[t.value for t in types]}"
        )
    for match in expect.contains:
        count = sum(1 for e in obs.events if _event_matches(match, e))
        if match.count is None and count == 0:
            found.append(f"events: expected an event {_describe(match)}, found none")
        elif match.count is not None and count != match.count:
            found.append(f"events: expected {match.count} event(s) {_describe(match)}, found {count}")
    for match in expect.absent:
        hits = [e for e in obs.events if _event_matches(match, e)]
        if hits:
            found.append(f"events: expected no event {_describe(match)}, found {len(hits)}: {hits[0].data}")
    for delta in expect.deltas:
        found += _deltas(delta, obs)
    return found


def _deltas(expect: DeltaExpect, obs: Observation) -> list[str]:
    pool: list[AgentEvent] = []
    if expect.source in ("live", "any"):
        pool += obs.live_events
    if expect.source in ("durable", "any"):
        pool += obs.events
    deltas = [e for e in pool if e.type is expect.type]
    what = f"{expect.type.value} events ({expect.source})"
    if len(deltas) < expect.min_count:
        return [f"{what}: expected at least {expect.min_count}, got {len(deltas)}"]
    found: list[str] = []
    for event in deltas:
        identity = (event.turn_id, event.step_execution_id, event.attempt)
        if not event.turn_id or not event.step_execution_id or event.attempt < 1:
            found.append(
                f"{what}: a delta lacks its identity (turn_id, step_execution_id, attempt) = {identity}"
            )
        wanted = (expect.turn_id, expect.step_execution_id, expect.attempt)
        if any(w is not None and w != a for w, a in zip(wanted, identity, strict=True)):
            found.append(f"{what}: expected identity {wanted} (None = any), got {identity}")
    if expect.joined is not None:
        joined = "".join(str(e.data.get("text", "")) for e in deltas)
        found += expect.joined.failures(joined, f"{what} joined")
    return found


# --------------------------------------------------------------------------- steps


def _full_step_type(name: str) -> str:
    return name if "." in name else f"sessionflow.{name}"


def _steps(expect: tuple[StepExpect, ...], obs: Observation) -> list[str]:
    actual = [(s.step_type, s.final_attempt, s.outcome) for s in obs.steps]
    wanted = [(_full_step_type(s.type), s.final_attempt, s.outcome) for s in expect]
    matches = len(actual) == len(wanted) and all(
        a[0] == w[0] and (w[1] is None or a[1] == w[1]) and (w[2] is None or a[2] == w[2])
        for a, w in zip(actual, wanted, strict=True)
    )
    if matches:
        return []
    return [f"step history: expected {wanted} (None = any), got {actual}"]


# --------------------------------------------------------------------------- invariants
# Rules every case must keep, whatever it expects.


_TURN_KEY = re.compile(r"^(?P<session>.+)/(?P<turn>turn-\d+)/(?P<call>[^/]+)$")


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
