"""What a case expects: the ``expect`` object of a case file (and of its ``check`` steps), and its parsing."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from sessionflow.session.events import AgentEventType
from sessionflow.session.state import AgentStatus
from sessionflow.session.tools import AgentToolCallStatus, ToolEffect
from sessionflow.testing.conformance._case_files import Node, TextMatch, parse_text_match

__all__ = [
    "SESSION_PLACEHOLDER",
    "CallExpect",
    "DeltaExpect",
    "EventMatch",
    "EventsExpect",
    "Expectations",
    "InvocationExpect",
    "ModelRequestsExpect",
    "NullableText",
    "PolicyExpect",
    "SnapshotExpect",
    "StepExpect",
    "UsageExpect",
    "parse_effect",
    "parse_expectations",
]


def parse_effect(node: Node) -> ToolEffect:
    return ToolEffect(node.string(choices=[e.value for e in ToolEffect]))


SESSION_PLACEHOLDER = "{session}"
"""Replaced by the session ID in expected idempotency keys."""

DeltaSource = Literal["live", "durable", "any"]
_STEP_OUTCOMES = ("completed", "failed", "timed_out", "canceled", "running")


@dataclass(frozen=True, kw_only=True)
class NullableText:
    """``null`` (must be None) or a text matcher."""

    null: bool
    match: TextMatch | None = None


@dataclass(frozen=True, kw_only=True)
class UsageExpect:
    requests: int | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None


@dataclass(frozen=True, kw_only=True)
class SnapshotExpect:
    turn_count: int | None = None
    status: AgentStatus | None = None
    message_count: int | None = None
    min_message_count: int | None = None
    last_message_text: TextMatch | None = None
    last_turn_error: NullableText | None = None
    pending_interrupts: int | None = None
    queued_message_count: int | None = None
    steered_message_count: int | None = None
    user_texts: tuple[str, ...] | None = None
    """The texts of the stored user messages, in order (the snapshot's newest messages)."""
    usage: UsageExpect | None = None
    tool_calls: dict[str, AgentToolCallStatus] = field(default_factory=lambda: {})
    carried_state_preview: NullableText | None = None
    carried_state_by_reference: bool | None = None


@dataclass(frozen=True, kw_only=True)
class PolicyExpect:
    effect: ToolEffect
    requires_approval: bool


@dataclass(frozen=True, kw_only=True)
class InvocationExpect:
    count: int | None = None
    attempts: tuple[int, ...] | None = None
    idempotency_keys: tuple[str, ...] | None = None
    distinct_idempotency_keys: int | None = None


@dataclass(frozen=True, kw_only=True)
class CallExpect:
    """What the model was sent on its ``call``-th request (1-based, counting every attempt)."""

    call: int
    saw: tuple[str, ...] = ()
    not_saw: tuple[str, ...] = ()
    tool_results: dict[str, TextMatch] = field(default_factory=lambda: {})
    tool_result_ids: tuple[str, ...] | None = None
    tools_offered: tuple[str, ...] | None = None
    last_user_text: TextMatch | None = None
    images: tuple[str, ...] = ()
    conversation_tail: tuple[tuple[str, str], ...] | None = None
    """The request's conversation ends with these entries, exactly and in order:
    ``("tool_result", call_id)`` or ``("user", text)`` (`RecordedRequest.conversation`)."""


@dataclass(frozen=True, kw_only=True)
class ModelRequestsExpect:
    count: int | None = None
    calls: tuple[CallExpect, ...] = ()


@dataclass(frozen=True, kw_only=True)
class EventMatch:
    """Durable events of ``type`` whose ``data`` contains ``data`` (and whose turn is ``turn_id``)."""

    type: AgentEventType
    data: dict[str, Any] = field(default_factory=lambda: {})
    turn_id: str | None = None
    count: int | None = None


@dataclass(frozen=True, kw_only=True)
class DeltaExpect:
    type: AgentEventType
    source: DeltaSource = "any"
    joined: TextMatch | None = None
    min_count: int = 1
    turn_id: str | None = None
    step_execution_id: str | None = None
    attempt: int | None = None


@dataclass(frozen=True, kw_only=True)
class EventsExpect:
    subsequence: tuple[AgentEventType, ...] = ()
    contains: tuple[EventMatch, ...] = ()
    absent: tuple[EventMatch, ...] = ()
    deltas: tuple[DeltaExpect, ...] = ()


@dataclass(frozen=True, kw_only=True)
class StepExpect:
    type: str
    final_attempt: int | None = None
    outcome: str | None = None


@dataclass(frozen=True, kw_only=True)
class Expectations:
    snapshot: SnapshotExpect | None = None
    tool_statuses: dict[str, AgentToolCallStatus] = field(default_factory=lambda: {})
    policies: dict[str, PolicyExpect] = field(default_factory=lambda: {})
    invocations: dict[str, InvocationExpect] = field(default_factory=lambda: {})
    model_requests: ModelRequestsExpect | None = None
    events: EventsExpect | None = None
    steps: tuple[StepExpect, ...] | None = None

    def image_names(self) -> set[str]:
        calls = self.model_requests.calls if self.model_requests else ()
        return {name for call in calls for name in call.images}


# --------------------------------------------------------------------------- parsing expectations


def _opt_int(fields: dict[str, Node], key: str, minimum: int = 0) -> int | None:
    return fields[key].integer(minimum=minimum) if key in fields else None


def _status(node: Node) -> AgentToolCallStatus:
    return AgentToolCallStatus(node.string(choices=[s.value for s in AgentToolCallStatus]))


def _statuses(node: Node) -> dict[str, AgentToolCallStatus]:
    return {key: _status(value) for key, value in node.mapping().items()}


def _event_type(node: Node) -> AgentEventType:
    return AgentEventType(node.string(choices=[t.value for t in AgentEventType]))


def _nullable_text(node: Node) -> NullableText:
    return NullableText(null=True) if node.is_null else NullableText(null=False, match=parse_text_match(node))


def _usage(node: Node) -> UsageExpect:
    fields = node.object(optional=("requests", "input_tokens", "output_tokens"))
    return UsageExpect(
        requests=_opt_int(fields, "requests"),
        input_tokens=_opt_int(fields, "input_tokens"),
        output_tokens=_opt_int(fields, "output_tokens"),
    )


def _snapshot(node: Node) -> SnapshotExpect:
    fields = node.object(
        optional=(
            "turn_count",
            "status",
            "message_count",
            "min_message_count",
            "last_message_text",
            "last_turn_error",
            "pending_interrupts",
            "queued_message_count",
            "steered_message_count",
            "user_texts",
            "usage",
            "tool_calls",
            "carried_state_preview",
            "carried_state_by_reference",
        )
    )
    status = fields.get("status")
    return SnapshotExpect(
        turn_count=_opt_int(fields, "turn_count"),
        status=AgentStatus(status.string(choices=[s.value for s in AgentStatus])) if status else None,
        message_count=_opt_int(fields, "message_count"),
        min_message_count=_opt_int(fields, "min_message_count"),
        last_message_text=parse_text_match(fields["last_message_text"])
        if "last_message_text" in fields
        else None,
        last_turn_error=_nullable_text(fields["last_turn_error"]) if "last_turn_error" in fields else None,
        pending_interrupts=_opt_int(fields, "pending_interrupts"),
        queued_message_count=_opt_int(fields, "queued_message_count"),
        steered_message_count=_opt_int(fields, "steered_message_count"),
        user_texts=fields["user_texts"].strings() if "user_texts" in fields else None,
        usage=_usage(fields["usage"]) if "usage" in fields else None,
        tool_calls=_statuses(fields["tool_calls"]) if "tool_calls" in fields else {},
        carried_state_preview=_nullable_text(fields["carried_state_preview"])
        if "carried_state_preview" in fields
        else None,
        carried_state_by_reference=fields["carried_state_by_reference"].boolean()
        if "carried_state_by_reference" in fields
        else None,
    )


def _expected_policy(node: Node) -> PolicyExpect:
    fields = node.object(required=("effect", "requires_approval"))
    return PolicyExpect(
        effect=parse_effect(fields["effect"]),
        requires_approval=fields["requires_approval"].boolean(),
    )


def _invocation(node: Node) -> InvocationExpect:
    fields = node.object(optional=("count", "attempts", "idempotency_keys", "distinct_idempotency_keys"))
    if not fields:
        raise node.error("an invocation expectation needs at least one of its fields")
    return InvocationExpect(
        count=_opt_int(fields, "count"),
        attempts=fields["attempts"].ints(minimum=1) if "attempts" in fields else None,
        idempotency_keys=fields["idempotency_keys"].strings() if "idempotency_keys" in fields else None,
        distinct_idempotency_keys=_opt_int(fields, "distinct_idempotency_keys"),
    )


def _call(node: Node) -> CallExpect:
    fields = node.object(
        required=("call",),
        optional=(
            "saw",
            "not_saw",
            "tool_results",
            "tool_result_ids",
            "tools_offered",
            "last_user_text",
            "images",
            "conversation_tail",
        ),
    )
    return CallExpect(
        call=fields["call"].integer(minimum=1),
        saw=fields["saw"].strings() if "saw" in fields else (),
        not_saw=fields["not_saw"].strings() if "not_saw" in fields else (),
        tool_results={key: parse_text_match(value) for key, value in fields["tool_results"].mapping().items()}
        if "tool_results" in fields
        else {},
        tool_result_ids=fields["tool_result_ids"].strings() if "tool_result_ids" in fields else None,
        tools_offered=fields["tools_offered"].strings() if "tools_offered" in fields else None,
        last_user_text=parse_text_match(fields["last_user_text"]) if "last_user_text" in fields else None,
        images=fields["images"].strings(min_items=1) if "images" in fields else (),
        conversation_tail=tuple(_tail_entry(item) for item in fields["conversation_tail"].array())
        if "conversation_tail" in fields
        else None,
    )


def _tail_entry(node: Node) -> tuple[str, str]:
    fields = node.object(optional=("tool_result", "user"))
    if len(fields) != 1:
        raise node.error("a conversation entry names exactly one of 'tool_result', 'user'")
    kind = next(iter(fields))
    return (kind, fields[kind].string())


def _model_requests(node: Node) -> ModelRequestsExpect:
    fields = node.object(optional=("count", "calls"))
    return ModelRequestsExpect(
        count=_opt_int(fields, "count"),
        calls=tuple(_call(item) for item in fields["calls"].array()) if "calls" in fields else (),
    )


def _event_match(node: Node) -> EventMatch:
    fields = node.object(required=("type",), optional=("data", "turn_id", "count"))
    return EventMatch(
        type=_event_type(fields["type"]),
        data=fields["data"].raw_object() if "data" in fields else {},
        turn_id=fields["turn_id"].string() if "turn_id" in fields else None,
        count=_opt_int(fields, "count"),
    )


def _delta(node: Node) -> DeltaExpect:
    fields = node.object(
        required=("type",),
        optional=("source", "joined", "min_count", "turn_id", "step_execution_id", "attempt"),
    )
    kind = _event_type(fields["type"])
    if not kind.is_delta:
        raise fields["type"].error("a delta expectation needs type 'text_delta' or 'reasoning_delta'")
    source: DeltaSource = "any"
    if "source" in fields:
        raw = fields["source"].string(choices=("live", "durable", "any"))
        source = "live" if raw == "live" else "durable" if raw == "durable" else "any"
    return DeltaExpect(
        type=kind,
        source=source,
        joined=parse_text_match(fields["joined"]) if "joined" in fields else None,
        min_count=fields["min_count"].integer(minimum=1) if "min_count" in fields else 1,
        turn_id=fields["turn_id"].string() if "turn_id" in fields else None,
        step_execution_id=fields["step_execution_id"].string() if "step_execution_id" in fields else None,
        attempt=_opt_int(fields, "attempt", minimum=1),
    )


def _events(node: Node) -> EventsExpect:
    fields = node.object(optional=("subsequence", "contains", "absent", "deltas"))
    return EventsExpect(
        subsequence=tuple(_event_type(item) for item in fields["subsequence"].array())
        if "subsequence" in fields
        else (),
        contains=tuple(_event_match(item) for item in fields["contains"].array())
        if "contains" in fields
        else (),
        absent=tuple(_event_match(item) for item in fields["absent"].array()) if "absent" in fields else (),
        deltas=tuple(_delta(item) for item in fields["deltas"].array()) if "deltas" in fields else (),
    )


def _expected_step(node: Node) -> StepExpect:
    fields = node.object(required=("type",), optional=("final_attempt", "outcome"))
    return StepExpect(
        type=fields["type"].string(),
        final_attempt=_opt_int(fields, "final_attempt", minimum=1),
        outcome=fields["outcome"].string(choices=_STEP_OUTCOMES) if "outcome" in fields else None,
    )


def parse_expectations(node: Node) -> Expectations:
    fields = node.object(
        optional=("snapshot", "tool_statuses", "policies", "invocations", "model_requests", "events", "steps")
    )
    return Expectations(
        snapshot=_snapshot(fields["snapshot"]) if "snapshot" in fields else None,
        tool_statuses=_statuses(fields["tool_statuses"]) if "tool_statuses" in fields else {},
        policies={key: _expected_policy(value) for key, value in fields["policies"].mapping().items()}
        if "policies" in fields
        else {},
        invocations={key: _invocation(value) for key, value in fields["invocations"].mapping().items()}
        if "invocations" in fields
        else {},
        model_requests=_model_requests(fields["model_requests"]) if "model_requests" in fields else None,
        events=_events(fields["events"]) if "events" in fields else None,
        steps=tuple(_expected_step(item) for item in fields["steps"].array()) if "steps" in fields else None,
    )
