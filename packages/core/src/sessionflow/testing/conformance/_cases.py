"""The case model and its loader: one JSON file per case in ``conformance/cases/``.

A case declares its tools, the model's scripted replies, its steps (what the user, and
the test, does, in order) and its expectations (the ``expect`` object of the case file and
of its ``check`` steps). `load_case` reads and validates one file, cross-field rules
included; the JSON reading itself is `Node`'s.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

from sessionflow.demo._model_script import ModelReply
from sessionflow.session.tools import AgentToolCallStatus, ToolEffect, ToolPolicy
from sessionflow.testing.conformance._carry_counter import CarryCounter, parse_carry_counter
from sessionflow.testing.conformance._case_files import CaseFileError, Node
from sessionflow.testing.conformance._expect import (
    Expectations,
    parse_effect,
    parse_expectations,
)

__all__ = [
    "CAPABILITIES",
    "BehaviourKind",
    "Capability",
    "CaseImage",
    "CaseTool",
    "CheckStep",
    "ConformanceCase",
    "KillPoint",
    "KillWorkerStep",
    "OutputCheck",
    "ReleaseGatesStep",
    "ResolveStep",
    "SendStep",
    "StartStep",
    "Step",
    "ToolBehaviour",
    "ToolVerify",
    "WaitGatesStep",
    "WaitIdleStep",
    "WaitInterruptStep",
    "WaitModelRequestsStep",
    "WaitToolCallsStep",
    "action_name",
    "bundled_cases_dir",
    "load_case",
    "load_cases",
    "parse_step",
]


Capability = Literal[
    "parallel_tool_calls",
    "reasoning_deltas",
    "images",
    "mcp_annotations",
    "continue_steps",
    "carry_state",
    "tool_state",
    "framework_approvals",
    "questions",
    "verified_outcomes",
    "steering",
]
CAPABILITIES: tuple[Capability, ...] = get_args(Capability)
BehaviourKind = Literal["return", "error", "crash", "block", "answer"]
WorkerMode = Literal["process", "in_process"]

_CASE_ID = re.compile(r"^[a-z][a-z0-9_]{0,59}$")
_GATE = re.compile(r"^[A-Za-z0-9_-]{1,60}$")
_REPLY_FIELDS = ("text", "text_chunks", "reasoning", "tool_calls", "usage", "fault", "delay_seconds")
DEFAULT_TIMEOUT_SECONDS = 90.0


# --------------------------------------------------------------------------- model


@dataclass(frozen=True, kw_only=True)
class ToolBehaviour:
    """What a tool does when it runs. Every run is logged before the behaviour starts.

    ``return``: answer ``text`` (repeated and cut to ``size`` characters when given).
    ``error``: raise `ToolExecutionError(message)`. ``crash``: raise a plain exception on
    attempts <= ``times``, then answer ``text``. ``block``: wait at FileGate ``gate`` on
    attempts <= ``attempts`` until the test releases it, then answer ``text``.
    ``state_update`` (``return`` and ``block``): the keys the run sets in the framework's
    tool state, returned with the text as a `ToolOutput`. ``answer``: answer the person's
    answer to the call's question (`ToolInvocation.answer`).
    """

    kind: BehaviourKind
    text: str = ""
    size: int | None = None
    message: str = ""
    times: int = 0
    gate: str = ""
    attempts: int = 1
    state_update: dict[str, Any] | None = None

    def output(self) -> str:
        if self.size is None:
            return self.text
        return (self.text * (self.size // len(self.text) + 1))[: self.size]


VerifyAnswerKind = Literal["succeeded", "failed", "unknown"]


@dataclass(frozen=True, kw_only=True)
class ToolVerify:
    """The tool's verify (`ToolSpec.verify`): it answers ``answer`` with ``text`` as the
    output (succeeded), the failure (failed) or the reason (unknown). Every run is logged
    (kind ``verify``)."""

    answer: VerifyAnswerKind
    text: str = ""


@dataclass(frozen=True, kw_only=True)
class CaseTool:
    name: str
    description: str
    parameters: dict[str, Any]
    effect: ToolEffect | None
    policy: ToolPolicy | None
    mcp_annotations: dict[str, Any] | None
    behaviour: ToolBehaviour
    framework_approval: Literal["required", "pre_approved"] | None = None
    """The framework's own rule for the tool (`ToolSpec.needs_approval` / `pre_approved`)."""
    question_argument: str | None = None
    """Every call is a question whose text is this argument (`ToolSpec.question`)."""
    verify: ToolVerify | None = None


@dataclass(frozen=True, kw_only=True)
class CaseImage:
    """A small solid-colour PNG the driver writes before the session starts."""

    name: str
    width: int
    height: int
    rgb: tuple[int, int, int]


@dataclass(frozen=True, kw_only=True)
class OutputCheck:
    """The case's output validator: a final answer without ``must_contain`` gets ``retry_prompt``."""

    must_contain: str
    retry_prompt: str

    def __call__(self, text: str) -> str | None:
        return None if self.must_contain in text else self.retry_prompt


@dataclass(frozen=True, kw_only=True)
class ConformanceCase:
    """One conformance case, loaded from ``<id>.json``."""

    id: str
    title: str
    path: Path
    requires: tuple[Capability, ...]
    worker: WorkerMode
    system_prompt: str | None
    interrupt_deadline_seconds: float | None
    timeout_seconds: float
    images: dict[str, CaseImage]
    tools: tuple[CaseTool, ...]
    model: tuple[ModelReply, ...]
    steps: tuple[Step, ...]
    expect: Expectations
    gates: frozenset[str] = field(default_factory=lambda: frozenset[str]())
    output_check: OutputCheck | None = None
    carry_counter: CarryCounter | None = None
    """The case's `CarryHook`, handed to the framework as `HarnessContext.carry`."""

    @property
    def tool_policies(self) -> dict[str, ToolPolicy]:
        return {tool.name: tool.policy for tool in self.tools if tool.policy is not None}


# --------------------------------------------------------------------------- tools


def _behaviour(node: Node) -> ToolBehaviour:
    kind_node = node.object(
        required=("kind",), optional=("text", "size", "message", "times", "gate", "attempts", "state_update")
    )["kind"]
    kind = kind_node.string(choices=get_args(BehaviourKind))
    if kind == "return":
        fields = node.object(required=("kind", "text"), optional=("size", "state_update"))
        text = fields["text"].string(allow_empty=True)
        size = fields["size"].integer(minimum=0) if "size" in fields else None
        if size is not None and not text:
            raise fields["text"].error("a sized output needs a non-empty text to repeat")
        return ToolBehaviour(kind="return", text=text, size=size, state_update=_state_update(fields))
    if kind == "answer":
        node.object(required=("kind",))
        return ToolBehaviour(kind="answer")
    if kind == "error":
        fields = node.object(required=("kind", "message"))
        return ToolBehaviour(kind="error", message=fields["message"].string())
    if kind == "crash":
        fields = node.object(required=("kind", "times"), optional=("text",))
        return ToolBehaviour(
            kind="crash",
            times=fields["times"].integer(minimum=1),
            text=fields["text"].string(allow_empty=True) if "text" in fields else "ok",
        )
    fields = node.object(required=("kind", "gate"), optional=("text", "attempts", "state_update"))
    gate = fields["gate"].string()
    if not _GATE.match(gate):
        raise fields["gate"].error(f"gate name {gate!r} must match {_GATE.pattern}")
    return ToolBehaviour(
        kind="block",
        gate=gate,
        text=fields["text"].string(allow_empty=True) if "text" in fields else "ok",
        attempts=fields["attempts"].integer(minimum=1) if "attempts" in fields else 1,
        state_update=_state_update(fields),
    )


def _state_update(fields: dict[str, Node]) -> dict[str, Any] | None:
    if "state_update" not in fields:
        return None
    update = fields["state_update"].raw_object()
    if not update:
        raise fields["state_update"].error("a state_update sets at least one key")
    return update


def _policy(node: Node) -> ToolPolicy:
    fields = node.object(required=("effect",), optional=("requires_approval",))
    approval = fields.get("requires_approval")
    return ToolPolicy(
        effect=parse_effect(fields["effect"]),
        requires_approval=None if approval is None or approval.is_null else approval.boolean(),
    )


def _verify(node: Node) -> ToolVerify:
    fields = node.object(required=("answer",), optional=("text",))
    answer = fields["answer"].string(choices=get_args(VerifyAnswerKind))
    text = fields["text"].string(allow_empty=True) if "text" in fields else ""
    if answer == "succeeded":
        return ToolVerify(answer="succeeded", text=text)
    return ToolVerify(answer="failed" if answer == "failed" else "unknown", text=text)


def _tool(node: Node) -> CaseTool:
    fields = node.object(
        required=("name", "description", "parameters", "behaviour"),
        optional=("effect", "policy", "mcp_annotations", "framework_approval", "question_argument", "verify"),
    )
    parameters = fields["parameters"].raw_object()
    if parameters.get("type") != "object":
        raise fields["parameters"].error('parameters must be a JSON schema with "type": "object"')
    effect = fields.get("effect")
    annotations = fields.get("mcp_annotations")
    approval = (
        fields["framework_approval"].string(choices=("required", "pre_approved"))
        if "framework_approval" in fields
        else None
    )
    return CaseTool(
        name=fields["name"].string(),
        description=fields["description"].string(allow_empty=True),
        parameters=parameters,
        effect=None if effect is None or effect.is_null else parse_effect(effect),
        policy=_policy(fields["policy"]) if "policy" in fields else None,
        mcp_annotations=None if annotations is None or annotations.is_null else annotations.raw_object(),
        behaviour=_behaviour(fields["behaviour"]),
        framework_approval="required" if approval == "required" else "pre_approved" if approval else None,
        question_argument=fields["question_argument"].string() if "question_argument" in fields else None,
        verify=_verify(fields["verify"]) if "verify" in fields else None,
    )


def _image(name: str, node: Node) -> CaseImage:
    fields = node.object(required=("width", "height", "rgb"))
    rgb = fields["rgb"].ints(minimum=0)
    if len(rgb) != 3 or any(channel > 255 for channel in rgb):
        raise fields["rgb"].error("rgb must be three integers from 0 to 255")
    return CaseImage(
        name=name,
        width=fields["width"].integer(minimum=1),
        height=fields["height"].integer(minimum=1),
        rgb=(rgb[0], rgb[1], rgb[2]),
    )


def _reply(node: Node) -> ModelReply:
    node.object(optional=_REPLY_FIELDS)
    try:
        return ModelReply.from_json(node.raw_object())
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise node.error(f"invalid model reply (ModelReply.to_json form): {exc!r}") from None


# --------------------------------------------------------------------------- steps
# The steps of a case: what the user (and the test) does, in order.


@dataclass(frozen=True, kw_only=True)
class StartStep:
    text: str | None


@dataclass(frozen=True, kw_only=True)
class SendStep:
    text: str
    images: tuple[str, ...] = ()
    expect_accepted: bool = True
    double_texting: str | None = None
    """The message's double-texting policy (``steer``...); None: the session's."""
    message_id: str | None = None
    """The send's ID; sending it twice is a retry (idempotent)."""


@dataclass(frozen=True, kw_only=True)
class WaitIdleStep:
    turns: int


@dataclass(frozen=True, kw_only=True)
class WaitInterruptStep:
    tool_call_id: str
    tool_name: str | None = None
    arguments: dict[str, Any] | None = None
    has_deadline: bool | None = None
    kind: Literal["approval", "question"] | None = None
    question: str | None = None


@dataclass(frozen=True, kw_only=True)
class ResolveStep:
    tool_call_id: str
    approved: bool
    rejection_message: str | None = None
    expect_accepted: bool = True
    answer: str | None = None
    """The answer to a question, given with ``approved: true``."""


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
class WaitToolCallsStep:
    """Wait until the running turn's records show these statuses (one call finished first)."""

    statuses: dict[str, AgentToolCallStatus]


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
    | WaitToolCallsStep
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
    "send": (("text",), ("images", "expect_accepted", "double_texting", "message_id")),
    "wait_idle": (("turns",), ()),
    "wait_interrupt": (("tool_call_id",), ("tool_name", "arguments", "has_deadline", "kind", "question")),
    "resolve": (("tool_call_id", "approved"), ("rejection_message", "expect_accepted", "answer")),
    "wait_gates": (("gates",), ()),
    "release_gates": (("gates",), ()),
    "wait_model_requests": (("count",), ()),
    "wait_tool_calls": (("statuses",), ()),
    "kill_worker": ((), ("at",)),
    "check": (("expect",), ()),
}


def _interrupt_kind(node: Node) -> Literal["approval", "question"]:
    return "question" if node.string(choices=("approval", "question")) == "question" else "approval"


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
            return SendStep(
                text=f["text"].string(),
                images=images,
                expect_accepted=accepted,
                double_texting=f["double_texting"].string(choices=("enqueue", "interrupt", "reject", "steer"))
                if "double_texting" in f
                else None,
                message_id=f["message_id"].string() if "message_id" in f else None,
            )
        case "wait_idle":
            return WaitIdleStep(turns=f["turns"].integer(minimum=1))
        case "wait_interrupt":
            return WaitInterruptStep(
                tool_call_id=f["tool_call_id"].string(),
                tool_name=f["tool_name"].string() if "tool_name" in f else None,
                arguments=f["arguments"].raw_object() if "arguments" in f else None,
                has_deadline=f["has_deadline"].boolean() if "has_deadline" in f else None,
                kind=_interrupt_kind(f["kind"]) if "kind" in f else None,
                question=f["question"].string() if "question" in f else None,
            )
        case "resolve":
            message = f.get("rejection_message")
            return ResolveStep(
                tool_call_id=f["tool_call_id"].string(),
                approved=f["approved"].boolean(),
                rejection_message=None if message is None or message.is_null else message.string(),
                expect_accepted=accepted,
                answer=f["answer"].string(allow_empty=True) if "answer" in f else None,
            )
        case "wait_gates":
            return WaitGatesStep(gates=f["gates"].strings(min_items=1))
        case "release_gates":
            return ReleaseGatesStep(gates=f["gates"].strings(min_items=1))
        case "wait_model_requests":
            return WaitModelRequestsStep(count=f["count"].integer(minimum=1))
        case "wait_tool_calls":
            return WaitToolCallsStep(
                statuses={
                    key: AgentToolCallStatus(value.string(choices=[s.value for s in AgentToolCallStatus]))
                    for key, value in f["statuses"].mapping().items()
                }
            )
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
        WaitToolCallsStep: "wait_tool_calls",
        KillWorkerStep: "kill_worker",
        CheckStep: "check",
    }
    return names[type(step)]


# --------------------------------------------------------------------------- case


def _check_references(case: ConformanceCase, steps: list[Node], expect: Node) -> None:
    """Cross-field rules: names a step or expectation uses must be declared by the case."""
    if not steps or not isinstance(case.steps[0], StartStep):
        raise (steps[0] if steps else expect).error('the first step must be {"action": "start"}')
    for node, step in zip(steps, case.steps, strict=True):
        if isinstance(step, StartStep) and step is not case.steps[0]:
            raise node.error("a case starts its session once")
        if isinstance(step, SendStep):
            unknown = [name for name in step.images if name not in case.images]
            if unknown:
                raise node.error(f"image {unknown[0]!r} is not declared in /images")
        gates: tuple[str, ...] = ()
        if isinstance(step, WaitGatesStep | ReleaseGatesStep):
            gates = step.gates
        elif isinstance(step, KillWorkerStep):
            if case.worker == "in_process":
                raise node.error(
                    'kill_worker needs "worker": "process": an in-process worker cannot be killed'
                )
            if step.at is not None and step.at.gate is not None:
                gates = (step.at.gate,)
        unknown_gates = [gate for gate in gates if gate not in case.gates]
        if unknown_gates:
            raise node.error(f"gate {unknown_gates[0]!r} is not the gate of any 'block' tool")
    expected_images = case.expect.image_names()
    for step in case.steps:
        if isinstance(step, CheckStep):
            expected_images |= step.expect.image_names()
    unknown_images = sorted(expected_images - set(case.images))
    if unknown_images:
        raise expect.error(f"image {unknown_images[0]!r} is not declared in /images")


def _output_check(node: Node) -> OutputCheck:
    fields = node.object(required=("must_contain", "retry_prompt"))
    return OutputCheck(
        must_contain=fields["must_contain"].string(), retry_prompt=fields["retry_prompt"].string()
    )


def _check_capabilities(case: ConformanceCase, root: Node) -> None:
    if case.output_check is not None and "continue_steps" not in case.requires:
        raise root.error('a case with an output_check must list "continue_steps" in /requires')
    if case.carry_counter is not None and "carry_state" not in case.requires:
        raise root.error('a case with a carry_counter must list "carry_state" in /requires')
    if any(tool.behaviour.state_update for tool in case.tools) and "tool_state" not in case.requires:
        raise root.error('a case whose tools return a state_update must list "tool_state" in /requires')
    if any(tool.framework_approval for tool in case.tools) and "framework_approvals" not in case.requires:
        raise root.error(
            'a case with a tool\'s framework_approval must list "framework_approvals" in /requires'
        )
    if any(tool.question_argument for tool in case.tools) and "questions" not in case.requires:
        raise root.error('a case with a question tool must list "questions" in /requires')
    if any(tool.verify is not None for tool in case.tools) and "verified_outcomes" not in case.requires:
        raise root.error('a case whose tools declare a verify must list "verified_outcomes" in /requires')
    uses_images = bool(case.images)
    if uses_images and "images" not in case.requires:
        raise root.error('a case that sends images must list "images" in /requires')
    uses_mcp = any(tool.mcp_annotations is not None and tool.effect is None for tool in case.tools)
    if uses_mcp and "mcp_annotations" not in case.requires:
        raise root.error(
            'a case whose tools rely on mcp_annotations must list "mcp_annotations" in /requires'
        )


def _parse(path: Path, root: Node) -> ConformanceCase:
    case_id = path.stem
    if not _CASE_ID.match(case_id):
        raise root.error(
            f"the file name {path.name!r} must be <id>.json with an id matching {_CASE_ID.pattern}"
        )
    f = root.object(
        required=("title", "model", "steps", "expect"),
        optional=(
            "requires",
            "worker",
            "system_prompt",
            "timings",
            "timeout_seconds",
            "images",
            "tools",
            "output_check",
            "carry_counter",
        ),
    )
    requires = f["requires"].array() if "requires" in f else []
    by_name: dict[str, Capability] = {c: c for c in CAPABILITIES}
    capabilities: list[Capability] = [by_name[node.string(choices=CAPABILITIES)] for node in requires]
    timings = f["timings"].object(optional=("interrupt_deadline_seconds",)) if "timings" in f else {}
    deadline = timings.get("interrupt_deadline_seconds")
    tools = tuple(_tool(node) for node in f["tools"].array()) if "tools" in f else ()
    names = [tool.name for tool in tools]
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise f["tools"].error(f"tool {duplicates[0]!r} is declared twice")
    prompt = f.get("system_prompt")
    worker = f["worker"].string(choices=("process", "in_process")) if "worker" in f else "process"
    step_nodes = f["steps"].array(min_items=1)
    case = ConformanceCase(
        id=case_id,
        title=f["title"].string(),
        path=path,
        requires=tuple(capabilities),
        worker="in_process" if worker == "in_process" else "process",
        system_prompt=None if prompt is None or prompt.is_null else prompt.string(),
        interrupt_deadline_seconds=deadline.number(positive=True) if deadline is not None else None,
        timeout_seconds=f["timeout_seconds"].number(positive=True)
        if "timeout_seconds" in f
        else DEFAULT_TIMEOUT_SECONDS,
        images={name: _image(name, node) for name, node in f["images"].mapping().items()}
        if "images" in f
        else {},
        tools=tools,
        model=tuple(_reply(node) for node in f["model"].array(min_items=1)),
        steps=tuple(parse_step(node) for node in step_nodes),
        expect=parse_expectations(f["expect"]),
        gates=frozenset(tool.behaviour.gate for tool in tools if tool.behaviour.kind == "block"),
        output_check=_output_check(f["output_check"]) if "output_check" in f else None,
        carry_counter=parse_carry_counter(f["carry_counter"]) if "carry_counter" in f else None,
    )
    _check_references(case, step_nodes, f["expect"])
    _check_capabilities(case, root)
    return case


def load_case(path: Path | str) -> ConformanceCase:
    """Load and validate one case file.

    Raises:
        CaseFileError: The file is not valid JSON or a field is wrong; the message names
            the file and the JSON pointer of the field.
    """
    path = Path(path)
    try:
        data: object = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise CaseFileError(
            path, "", f"not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
        ) from None
    except OSError as exc:
        raise CaseFileError(path, "", f"cannot read the file: {exc}") from None
    return _parse(path, Node(path, "", data))


def load_cases(directory: Path | str) -> list[ConformanceCase]:
    """Every ``*.json`` case in ``directory``, sorted by file name."""
    directory = Path(directory)
    if not directory.is_dir():
        raise FileNotFoundError(f"conformance case directory {directory} does not exist")
    cases = [load_case(path) for path in sorted(directory.glob("*.json"))]
    if not cases:
        raise FileNotFoundError(f"conformance case directory {directory} has no *.json cases")
    return cases


def bundled_cases_dir() -> Path:
    """The cases shipped with sessionflow.

    A wheel carries them in ``sessionflow/testing/conformance/cases``. In the repository
    that path is a symlink to ``conformance/cases`` at the root (so hatch copies the files
    into both the sdist and the wheel); the resolved folder is returned, so messages name
    the file to edit.
    """
    here = Path(__file__).resolve().parent
    packaged = here / "cases"
    if packaged.is_dir():
        return packaged.resolve()
    for parent in here.parents:
        candidate = parent / "conformance" / "cases"
        if candidate.is_dir() and any(candidate.glob("*.json")):
            return candidate
    raise FileNotFoundError(
        f"no conformance cases next to {here} (expected {packaged}) or in a conformance/cases folder above it"
    )
