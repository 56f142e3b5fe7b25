"""A framework-free runner driven by a JSON script, for the core's own tests.

The script lives in a state folder every process can read, keyed by session ID, so the
test process writes it and worker child processes follow it. Each model call and tool call
is logged to an `InvocationLog`, including the texts the "model" was sent.

Script shape (`ScriptedSession`)::

    {"turns": [[step, ...], ...], "tools": {"name": {...tool spec...}}}

A step is the reply to the n-th model call of a turn: `{"text": ...}` for a final answer or
`{"tool_calls": [{"id", "name", "arguments"}]}`, optionally with `usage`, `deltas`,
`fail_attempts` (raise on attempts up to N), `gate` + `gate_attempts` (wait at a FileGate),
`deltas_by_attempt` (text deltas per attempt number), `reasoning`, `delay_after_deltas`,
`abort` (raise TurnAborted with that message), `continue` (end the step with
`ContinueRequested`: the next call sees the text as a user message; `state_bytes` pads the
run state to at least that many bytes, to send it by reference; it pads a tool call step's
run state too), `carry` on a final answer (the turn's `TurnCompleted.carry`; null or absent
carries nothing; `carry_bytes` pads it), `supersede` on a final answer (sequences of stored
messages the "framework's history" no longer holds: `TurnCompleted.superseded`). Steered
messages (`AgentTurnContext.steered_messages`) join the run after the tool results, as
items marked ``"steered": true``, stored as user messages. Each model log entry has `carried`, the carried
state the step got, and `state_updates`, the updates it was handed (a text longer than 200
characters as `<length>:<digest>`); the tool log has the run state the tool step got
(`run_state_calls`: the model call that deferred it; `run_state_bytes`).
A tool spec has `effect` (the framework's metadata), `output`, `error` (ToolExecutionError),
`user_error` (raise `UserError`, which is not retryable by its class),
`crash_attempts`, `gate` + `gate_attempts`, `returns_answer` (the answer given with the approval), `sleep` (seconds),
`state_update` (returned with the output: a string, or JSON for anything else) and
`state_update_bytes` (an update of that many bytes, different for every call),
`framework_approval` (``"required"`` or ``"pre_approved"``, the framework's own rule) and
`question` (the call asks this text; ``true`` asks the call's ``question`` argument),
`skip_run_state` (the call is deferred with `skip_run_state`: its tool step gets no run state),
`preview` (`{"kind", "summary", "text"}`: the call is deferred with that `ApprovalPreview`, as a
worker's `approval_preview` would make it),
and `verify` (the tool's calls are deferred verifiable): `{"result": "succeeded" | "failed" |
"unknown", "output", "output_bytes", "message", "fail_attempts", "gate", "basis"}`; `basis` is recorded at deferral and
handed back; every verify run is logged as kind `verify`.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from sessionflow.kit._approved_arguments import check_run_arguments
from sessionflow.session.approval_preview import ApprovalPreview
from sessionflow.session.errors import TurnAborted, UserError
from sessionflow.session.messages import FrameworkMessage, MessageRole
from sessionflow.session.outcomes import (
    AgentTurnOutcome,
    ContinueRequested,
    ToolCallsRequested,
    TurnCompleted,
)
from sessionflow.session.runner import AgentFrameworkRunner, AgentTurnContext, DeferredToolExecution
from sessionflow.session.tools import (
    DeferredToolCall,
    ToolEffect,
    ToolExecutionError,
    ToolExecutionResult,
    describe_tool_call_outcome,
)
from sessionflow.session.usage import AgentUsage
from sessionflow.session.verify import EffectUnknown, NoEffect, TookEffect, VerifyResult
from sessionflow.testing._gates import FileGate, InvocationLog

__all__ = ["ScriptedRunner", "read_script", "scripted_text", "write_script"]

Json = dict[str, Any]


def _script_path(state_dir: Path, session_id: str) -> Path:
    return state_dir / f"script-{session_id}.json"


def write_script(
    state_dir: Path,
    session_id: str,
    turns: Sequence[Sequence[Mapping[str, object]]],
    tools: Mapping[str, Mapping[str, object]] | None = None,
    *,
    log_seen: str = "text",
) -> None:
    """Write the script one session follows. Call again to replace it between turns.

    `log_seen="sizes"` logs what the model saw as sizes and digests (long sessions).
    """
    state_dir.mkdir(parents=True, exist_ok=True)
    path = _script_path(state_dir, session_id)
    temp = path.with_suffix(".tmp")
    temp.write_text(json.dumps({"turns": turns, "tools": tools or {}, "log_seen": log_seen}))
    temp.replace(path)


def read_script(state_dir: Path, session_id: str) -> Json:
    return json.loads(_script_path(state_dir, session_id).read_text())


def scripted_text(item: Any) -> str:
    """The model-visible text of one scripted framework item."""
    if not isinstance(item, dict):
        return str(item)
    entry = cast(Json, item)
    if entry.get("tool_calls"):
        calls = cast(list[Json], entry["tool_calls"])
        return "calls " + ", ".join(f"{c['name']}({c['arguments']})#{c['id']}" for c in calls)
    return str(entry.get("content", ""))


@dataclass
class _RunState:
    calls: int
    items: list[Json]


class ScriptedRunner(AgentFrameworkRunner):
    """Follows the session's script; model calls take no time and make no network request."""

    def __init__(self, state_dir: Path | str) -> None:
        self.state_dir = Path(state_dir)
        self.log = InvocationLog(self.state_dir / "invocations.jsonl")

    def build_user_message(self, text: str) -> FrameworkMessage:
        return FrameworkMessage(
            role=MessageRole.USER, framework_item={"role": "user", "content": text}, text=text
        )

    async def run_model_step(self, turn: AgentTurnContext) -> AgentTurnOutcome:
        script = read_script(self.state_dir, turn.session_id)
        run = _RunState(calls=0, items=[])
        if turn.framework_run_state is not None:
            raw = json.loads(turn.framework_run_state)
            run = _RunState(calls=int(raw["calls"]), items=list(raw["items"]))
            # Results of the calls just made, from their final records, in model order
            # (none after a continue: its state ends with the prompt, not with calls).
            requested = cast(list[Json], run.items[-1].get("tool_calls") or [])
            for call in requested:
                record = turn.recorded_tool_call(str(call["id"]))
                run.items.append(
                    {
                        "role": "tool",
                        "tool_call_id": call["id"],
                        "content": describe_tool_call_outcome(record),
                    }
                )
        # Messages that steer the turn come after the results, marked as the person's.
        run.items += [{**cast(Json, m.framework_item), "steered": True} for m in turn.steered_messages]
        seen = [scripted_text(m.message.framework_item) for m in turn.messages] + [
            scripted_text(item) for item in run.items
        ]
        if script.get("log_seen") == "sizes":
            # Long sessions: what the model saw, as sizes and digests, keeps the log small.
            seen = [f"{len(text)}:{hashlib.sha256(text.encode()).hexdigest()[:16]}" for text in seen]
        number = int(turn.turn_id.removeprefix("turn-"))
        self.log.record(
            "model",
            "model",
            session=turn.session_id,
            turn=turn.turn_id,
            call=run.calls + 1,
            attempt=turn.attempt,
            seen=seen,
            message_count=len(turn.messages),
            settings=dict(turn.session_settings),
            carried=_logged(turn.carried_state),
            state_updates=[[tool_call_id, _logged(update)] for tool_call_id, update in turn.state_updates()],
        )
        turns = cast(list[list[Json]], script["turns"])
        if number > len(turns) or run.calls >= len(turns[number - 1]):
            raise RuntimeError(
                f"script for {turn.session_id!r} has no model step {run.calls + 1} in {turn.turn_id}"
            )
        step = turns[number - 1][run.calls]
        what = f"model call {run.calls + 1} of {turn.turn_id}"
        try:
            await self._gate(step, turn.attempt)
            by_attempt = cast(dict[str, list[str]], step.get("deltas_by_attempt", {}))
            for delta in by_attempt.get(str(turn.attempt), cast(list[str], step.get("deltas", []))):
                turn.events.write_text_delta(delta)
            if "reasoning" in step:
                turn.events.write_reasoning_delta(str(step["reasoning"]))
            if "delay_after_deltas" in step:
                await asyncio.sleep(float(step["delay_after_deltas"]))
        except asyncio.CancelledError:
            self.log.record(
                "cancelled", "model", session=turn.session_id, turn=turn.turn_id, attempt=turn.attempt
            )
            raise
        self._fail(step, turn.attempt, what)
        if "abort" in step:
            raise TurnAborted(str(step["abort"]))
        usage = _usage(step)
        if "tool_calls" in step:
            calls = cast(list[Json], step["tool_calls"])
            tools = cast(dict[str, Json], script.get("tools", {}))
            deferred = [self._defer(turn, call, tools.get(str(call["name"]), {})) for call in calls]
            item = {
                "role": "assistant",
                "tool_calls": [
                    {"id": d.tool_call_id, "name": d.tool_name, "arguments": d.arguments} for d in deferred
                ],
            }
            state = {"calls": run.calls + 1, "items": [*run.items, item]}
            return ToolCallsRequested(
                framework_run_state=_padded(state, int(step.get("state_bytes", 0))),
                tool_calls=deferred,
                usage=usage,
            )
        if "continue" in step:
            prompt = {"role": "user", "content": str(step["continue"])}
            state = {"calls": run.calls + 1, "items": [*run.items, prompt]}
            encoded = json.dumps(state)
            padding = max(0, int(step.get("state_bytes", 0)) - len(encoded))
            if padding:
                encoded = json.dumps({**state, "padding": "p" * padding})
            return ContinueRequested(framework_run_state=encoded, note=str(step["continue"]), usage=usage)
        final = {"role": "assistant", "content": str(step.get("text", ""))}
        new_messages = [self._as_message(item) for item in [*run.items, final]]
        superseded = [int(s) for s in cast(list[Any], step.get("supersede", []))]
        return TurnCompleted(
            new_messages=new_messages, usage=usage, carry=_carry(step), superseded=superseded
        )

    @staticmethod
    def _defer(turn: AgentTurnContext, call: Json, tool: Json) -> DeferredToolCall:
        effect = tool.get("effect")
        arguments = call.get("arguments", {})
        question = tool.get("question")
        if question is True:
            question = str(cast(Json, arguments).get("question", "")) if isinstance(arguments, dict) else ""
        verify = cast(Json | None, tool.get("verify"))
        return DeferredToolCall(
            tool_call_id=str(call["id"]),
            tool_name=str(call["name"]),
            arguments=arguments if isinstance(arguments, str) else json.dumps(arguments, sort_keys=True),
            policy=turn.resolve_tool_policy(str(call["name"]), ToolEffect(effect) if effect else None),
            framework_approval=tool.get("framework_approval"),
            question=None if question is None else str(question),
            verifiable=verify is not None,
            verify_basis=str(verify["basis"]) if verify is not None and "basis" in verify else None,
            skip_run_state=bool(tool.get("skip_run_state", False)),
            preview=ApprovalPreview(**cast(dict[str, Any], tool["preview"])) if "preview" in tool else None,
        )

    def accepts_steering(self) -> bool:
        return True

    @staticmethod
    def _as_message(item: Json) -> FrameworkMessage:
        # A user item inside a turn is a continue's prompt, written by the runner, unless
        # it steered the turn: then the person wrote it.
        role = {"tool": MessageRole.TOOL, "user": MessageRole.SYSTEM}.get(
            str(item["role"]), MessageRole.ASSISTANT
        )
        if item.get("steered"):
            role = MessageRole.USER
        return FrameworkMessage(role=role, framework_item=item, text=scripted_text(item))

    def _tool_spec(self, call: DeferredToolExecution) -> Json:
        """The script's spec of the called tool; {} for a tool the script does not name."""
        script = read_script(self.state_dir, call.session_id)
        return cast(dict[str, Json], script.get("tools", {})).get(call.tool_call.tool_name, {})

    async def execute_deferred_tool_call(self, call: DeferredToolExecution) -> ToolExecutionResult:
        record = call.tool_call
        tool = self._tool_spec(call)
        if "rewrite_arguments" in tool:
            # As a framework middleware that changes the call on its way to the tool: the
            # tool runs these arguments, once a person approved exactly them.
            check_run_arguments(cast(dict[str, Json], tool["rewrite_arguments"]), tool_name=record.tool_name)
        self.log.record(
            "tool",
            record.tool_name,
            session=call.session_id,
            turn=call.turn_id,
            tool_call_id=record.tool_call_id,
            attempt=call.attempt,
            idempotency_key=call.idempotency_key,
            arguments=record.arguments,
            settings=dict(call.session_settings),
            run_state_calls=json.loads(call.run_state)["calls"] if call.run_state is not None else None,
            run_state_bytes=len(call.run_state or ""),
        )
        try:
            await self._gate(tool, call.attempt)
        except asyncio.CancelledError:
            self.log.record(
                "cancelled", record.tool_name, session=call.session_id, tool_call_id=record.tool_call_id
            )
            raise
        if "sleep" in tool:
            await asyncio.sleep(float(tool["sleep"]))
        self._fail(tool, call.attempt, f"tool {record.tool_name!r}")
        if "user_error" in tool:
            raise UserError(str(tool["user_error"]))
        if "error" in tool:
            raise ToolExecutionError(str(tool["error"]))
        if "state_update" in tool or "state_update_bytes" in tool:
            return ToolExecutionResult(
                output=str(tool.get("output", f"{record.tool_name} done")),
                state_update=_state_update(tool, call),
            )
        if tool.get("returns_answer"):
            return ToolExecutionResult(output=f"the user answered: {record.answer}")
        if "output_bytes" in tool:
            size = int(tool["output_bytes"])
            if tool.get("unique_output"):
                return ToolExecutionResult(output=_unique_text(call, size))
            return ToolExecutionResult(output="x" * size)
        return ToolExecutionResult(output=str(tool.get("output", f"{record.tool_name} done")))

    async def verify_tool_call(self, call: DeferredToolExecution) -> VerifyResult | None:
        record = call.tool_call
        tool = self._tool_spec(call)
        verify = cast(Json | None, tool.get("verify"))
        self.log.record(
            "verify",
            record.tool_name,
            session=call.session_id,
            turn=call.turn_id,
            tool_call_id=record.tool_call_id,
            attempt=call.attempt,
            idempotency_key=call.idempotency_key,
            basis=record.verify_basis,
        )
        if verify is None:
            return None
        await self._gate(verify, call.attempt)
        self._fail(verify, call.attempt, f"verify of {record.tool_name!r}")
        match verify.get("result"):
            case "succeeded":
                if "output_bytes" in verify:
                    return TookEffect(output="v" * int(verify["output_bytes"]))
                return TookEffect(output=str(verify.get("output", f"{record.tool_name} done (verified)")))
            case "failed":
                return NoEffect(message=str(verify.get("message", f"{record.tool_name} did not take effect")))
            case _:
                return EffectUnknown(reason=str(verify.get("message", "")))

    async def _gate(self, spec: Json, attempt: int) -> None:
        gate = spec.get("gate")
        if gate and attempt <= int(spec.get("gate_attempts", 1)):
            await FileGate(self.state_dir, str(gate)).wait_for_release()

    @staticmethod
    def _fail(spec: Json, attempt: int, what: str) -> None:
        if attempt <= int(spec.get("fail_attempts", spec.get("crash_attempts", 0))):
            raise RuntimeError(f"scripted failure of {what} on attempt {attempt}")


def _carry(step: Json) -> str | None:
    carry = step.get("carry")
    if carry is None:
        return None
    text = str(carry)
    return text + "c" * max(0, int(step.get("carry_bytes", 0)) - len(text))


def _logged(text: str | None) -> str | None:
    """How the logs keep a carry or a state update: as is, or as `<length>:<digest>` when long."""
    if text is None or len(text) <= 200:
        return text
    return f"{len(text)}:{hashlib.sha256(text.encode()).hexdigest()[:16]}"


def _padded(state: Json, size: int) -> str:
    encoded = json.dumps(state)
    padding = max(0, size - len(encoded))
    return json.dumps({**state, "padding": "p" * padding}) if padding else encoded


def _unique_text(call: DeferredToolExecution, size: int) -> str:
    """``size`` characters that differ for every call, so the content-addressed store cannot share them."""
    seed = f"{call.idempotency_key}|"
    return (seed * (size // len(seed) + 1))[:size]


def _state_update(tool: Json, call: DeferredToolExecution) -> str:
    if "state_update_bytes" in tool:
        return _unique_text(call, int(tool["state_update_bytes"]))
    update = tool["state_update"]
    return update if isinstance(update, str) else json.dumps(update, sort_keys=True)


def _usage(step: Json) -> AgentUsage:
    raw = cast(Json, step.get("usage", {}))
    return AgentUsage(
        requests=1,
        input_tokens=int(raw.get("input_tokens", 10)),
        output_tokens=int(raw.get("output_tokens", 5)),
    )
