"""The steps of a case: what the user (and the test) does, in order."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sessionflow.testing.conformance._expect import Expectations, parse_expectations
from sessionflow.testing.conformance._reader import Node

__all__ = [
    "CheckStep",
    "KillPoint",
    "KillWorkerStep",
    "ReleaseGatesStep",
    "ResolveStep",
    "SendStep",
    "StartStep",
    "Step",
    "WaitGatesStep",
    "WaitIdleStep",
    "WaitInterruptStep",
    "WaitModelRequestsStep",
    "action_name",
    "parse_step",
]


@dataclass(frozen=True, kw_only=True)
class StartStep:
    text: str | None


@dataclass(frozen=True, kw_only=True)
class SendStep:
    text: str
    images: tuple[str, ...] = ()
    expect_accepted: bool = True


@dataclass(frozen=True, kw_only=True)
class WaitIdleStep:
    turns: int


@dataclass(frozen=True, kw_only=True)
class WaitInterruptStep:
    tool_call_id: str
    tool_name: str | None = None
    arguments: dict[str, Any] | None = None
    has_deadline: bool | None = None


@dataclass(frozen=True, kw_only=True)
class ResolveStep:
    tool_call_id: str
    approved: bool
    rejection_message: str | None = None
    expect_accepted: bool = True


@dataclass(frozen=True, kw_only=True)
class WaitGatesStep:
    gates: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class ReleaseGatesStep:
    gates: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class WaitModelRequestsStep:
    count: int


@dataclass(frozen=True, kw_only=True)
class KillPoint:
    """Exactly one of: a FileGate reached, the N-th model request recorded, an approval pending."""

    gate: str | None = None
    model_request: int | None = None
    interrupt: str | None = None


@dataclass(frozen=True, kw_only=True)
class KillWorkerStep:
    at: KillPoint | None = None


@dataclass(frozen=True, kw_only=True)
class CheckStep:
    expect: Expectations


Step = (
    StartStep
    | SendStep
    | WaitIdleStep
    | WaitInterruptStep
    | ResolveStep
    | WaitGatesStep
    | ReleaseGatesStep
    | WaitModelRequestsStep
    | KillWorkerStep
    | CheckStep
)


def _kill_point(node: Node) -> KillPoint:
    fields = node.object(optional=("gate", "model_request", "interrupt"))
    if len(fields) != 1:
        raise node.error("a kill point names exactly one of 'gate', 'model_request', 'interrupt'")
    return KillPoint(
        gate=fields["gate"].string() if "gate" in fields else None,
        model_request=fields["model_request"].integer(minimum=1) if "model_request" in fields else None,
        interrupt=fields["interrupt"].string() if "interrupt" in fields else None,
    )


_STEP_FIELDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "start": ((), ("text",)),
    "send": (("text",), ("images", "expect_accepted")),
    "wait_idle": (("turns",), ()),
    "wait_interrupt": (("tool_call_id",), ("tool_name", "arguments", "has_deadline")),
    "resolve": (("tool_call_id", "approved"), ("rejection_message", "expect_accepted")),
    "wait_gates": (("gates",), ()),
    "release_gates": (("gates",), ()),
    "wait_model_requests": (("count",), ()),
    "kill_worker": ((), ("at",)),
    "check": (("expect",), ()),
}


def parse_step(node: Node) -> Step:
    action = node.object(
        required=("action",), optional=[k for r, o in _STEP_FIELDS.values() for k in (*r, *o)]
    )["action"].string(choices=tuple(_STEP_FIELDS))
    required, optional = _STEP_FIELDS[action]
    f = node.object(required=("action", *required), optional=optional)
    accepted = f["expect_accepted"].boolean() if "expect_accepted" in f else True
    match action:
        case "start":
            return StartStep(text=f["text"].string() if "text" in f and not f["text"].is_null else None)
        case "send":
            images = f["images"].strings(min_items=1) if "images" in f else ()
            return SendStep(text=f["text"].string(), images=images, expect_accepted=accepted)
        case "wait_idle":
            return WaitIdleStep(turns=f["turns"].integer(minimum=1))
        case "wait_interrupt":
            return WaitInterruptStep(
                tool_call_id=f["tool_call_id"].string(),
                tool_name=f["tool_name"].string() if "tool_name" in f else None,
                arguments=f["arguments"].raw_object() if "arguments" in f else None,
                has_deadline=f["has_deadline"].boolean() if "has_deadline" in f else None,
            )
        case "resolve":
            message = f.get("rejection_message")
            return ResolveStep(
                tool_call_id=f["tool_call_id"].string(),
                approved=f["approved"].boolean(),
                rejection_message=None if message is None or message.is_null else message.string(),
                expect_accepted=accepted,
            )
        case "wait_gates":
            return WaitGatesStep(gates=f["gates"].strings(min_items=1))
        case "release_gates":
            return ReleaseGatesStep(gates=f["gates"].strings(min_items=1))
        case "wait_model_requests":
            return WaitModelRequestsStep(count=f["count"].integer(minimum=1))
        case "kill_worker":
            return KillWorkerStep(at=_kill_point(f["at"]) if "at" in f else None)
        case _:
            return CheckStep(expect=parse_expectations(f["expect"]))


def action_name(step: Step) -> str:
    """The ``action`` of a step, as written in the case file."""
    names: dict[type, str] = {
        StartStep: "start",
        SendStep: "send",
        WaitIdleStep: "wait_idle",
        WaitInterruptStep: "wait_interrupt",
        ResolveStep: "resolve",
        WaitGatesStep: "wait_gates",
        ReleaseGatesStep: "release_gates",
        WaitModelRequestsStep: "wait_model_requests",
        KillWorkerStep: "kill_worker",
        CheckStep: "check",
    }
    return names[type(step)]
