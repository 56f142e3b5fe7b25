"""`StrandsRunner`: a Strands agent behind sessionflow's runner contract.

A model step is one call of the agent's model through Strands' own `stream_messages` (the
function Strands' event loop calls for each model call): the same messages, system prompt
and tool specs the agent would send, and the same parsing of the stream into a message.
A tool step runs one ``toolUse`` through the tool's own `AgentTool.stream`. The loop
between them (model, tools, model) is the session's, which Strands' event loop is in a
plain run.
"""

from __future__ import annotations

import asyncio
import copy
import json
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeAlias, cast

from strands.agent import Agent
from strands.event_loop.streaming import stream_messages
from strands.interrupt import Interrupt
from strands.types.content import split_system_prompt
from strands.types.tools import ToolResult, ToolUse

from sessionflow import AgentUsage, ImageInput, SessionStateError, UnsupportedOptionError
from sessionflow.kit import (
    AgentFrameworkRunner,
    AgentTurnContext,
    AgentTurnOutcome,
    CarryHook,
    ContinueRequested,
    DeferredToolCall,
    DeferredToolExecution,
    FrameworkMessage,
    OutputValidator,
    ToolCallsRequested,
    ToolExecutionResult,
    ToolSpec,
    TurnCompleted,
    VerifyCall,
    VerifyResult,
    apply_value_change,
    describe_tool_call_outcome,
    value_change,
)
from sessionflow_strands._carry import decode_carry, encode_carry
from sessionflow_strands._hooks import StepHooks, tool_agent
from sessionflow_strands._images import user_message_with_images, with_images
from sessionflow_strands._interrupts import (
    HeldInterrupt,
    interrupt_call,
    paused_interrupt,
    paused_update,
    question_text,
    responses,
)
from sessionflow_strands._messages import (
    WRITTEN_BY_KEY,
    RunState,
    framework_message,
    load_message,
    message_text,
    user_message,
)
from sessionflow_strands._structured_output import RESULT_KEY, StructuredOutput, structured_output_of
from sessionflow_strands._tools import deferred_call, run_agent_tool, run_spec, spec_tool_specs, verifiable

__all__ = ["AgentSource", "StrandsRunner"]

CARRIED_PREFIX = "[sessionflow] Carried from the previous turn: "
"""How a carry hook's carry is shown to the model, in the builtin runner's words."""

AgentSource: TypeAlias = "Agent | Callable[[], Agent]"
"""An agent, or a zero-argument factory that builds it (called once per process, on first use)."""


class StrandsRunner(AgentFrameworkRunner):
    """Drives one Strands agent: one model call per model step, one tool call per tool step.

    Stateless between calls: every call rebuilds what it needs from its arguments, so a
    call may repeat after a crash, and steps of many sessions share the one agent object
    (a step reads its model, system prompt and tools; it never writes ``agent.messages``
    or ``agent.state``: a tool step gets a copy of the agent holding the session's).

    Args:
        agent: The agent, or a zero-argument factory returning it.
        tool_sources: Neutral tool specs offered beside the agent's own tools.
        carry: Decides the carry itself (`CarryHook`, a harness's): it gets the carry the turn
            started with and the final answer, and returns the next turn's (None: none). The
            next turn's model calls see it as a system prompt block (``[sessionflow] Carried
            from the previous turn: ...``, as the builtin runner words it), and it replaces
            the runner's own carry: `agent.state` then lasts for the turn.
        output_validator: Checks the final answer's text (a harness's): None accepts it; a
            string is a prompt the model gets as the next user message, after the refused
            answer, in a model step of its own (`ContinueRequested`), as a follow-up
            ``agent(prompt)`` would send it.
        show_state: Show a non-empty `agent.state` to every model call as a last system
            prompt block, ``Tool state: {...}`` (the builtin runner's words): the harness
            agent's tool state, which specs set with `ToolOutput.state_update`.
    """

    def __init__(
        self,
        agent: AgentSource,
        *,
        tool_sources: Sequence[ToolSpec] = (),
        carry: CarryHook | None = None,
        output_validator: OutputValidator | None = None,
        show_state: bool = False,
    ) -> None:
        self._agent_source = agent
        self._agent: Agent | None = agent if isinstance(agent, Agent) else None
        self._agent_lock = threading.Lock()
        self.tool_sources: tuple[ToolSpec, ...] = tuple(tool_sources)
        self._specs = {spec.name: spec for spec in self.tool_sources}
        self._carry_hook = carry
        self._output_validator = output_validator
        self._show_state = show_state
        if self._agent is not None:
            _check_agent(self._agent, self._specs)

    @property
    def agent(self) -> Agent:
        """The agent, built by the factory on first use (once per process)."""
        with self._agent_lock:
            if self._agent is None:
                source = self._agent_source
                built = source() if callable(source) else source
                if not isinstance(built, Agent):
                    raise UnsupportedOptionError(
                        "agent",
                        f"the agent factory returned {type(built).__name__}, expected a strands Agent",
                    )
                _check_agent(built, self._specs)
                self._agent = built
            return self._agent

    async def _resolved_agent(self) -> Agent:
        if self._agent is not None:
            return self._agent
        # A factory may import model SDKs for seconds; off the event loop, heartbeats keep going.
        return await asyncio.to_thread(lambda: self.agent)

    def build_user_message(self, text: str) -> FrameworkMessage:
        return user_message(text)

    def build_user_message_with_images(self, text: str, images: Sequence[ImageInput]) -> FrameworkMessage:
        return user_message_with_images(text, images)

    def accepts_steering(self) -> bool:
        """Steered messages join the run as user messages after the step's tool results."""
        return True

    async def run_model_step(self, turn: AgentTurnContext) -> AgentTurnOutcome:
        agent = await self._resolved_agent()
        structured = structured_output_of(agent)
        history = [with_images(load_message(m.message.framework_item)) for m in turn.messages]
        if turn.framework_run_state is None:
            # A carry hook's carry is its own text, not the runner's encoding.
            carried = turn.carried_state if self._carry_hook is None else None
            state = RunState(agent_state=decode_carry(carried, cast(dict[str, Any], agent.state.get() or {})))
            hooks = StepHooks(agent, history, state.agent_state)
            cancelled = await hooks.start_invocation()
            if cancelled is not None:
                # As Strands answers an invocation a hook cancels: its text, no model call.
                return await self._completed(turn, hooks, state, [cancelled], AgentUsage(requests=0))
        else:
            state = RunState.from_json(turn.framework_run_state)
            if state.pending:
                updates = _call_updates(state, turn)
                asked = self._ask_for_interrupts(turn, agent, state, updates)
                if asked is not None:
                    # Calls wait on Strands interrupts: as Strands' resume, no model call until
                    # every one is answered.
                    return asked
                state = _with_tool_results(state, turn, updates)
                hooks = StepHooks(agent, [*history, *state.messages[:-1]], state.agent_state)
                await hooks.tools_ended(state.messages[-1])
                output = _structured_result(state, updates)
                if output is not None:
                    # As Strands stops once its structured output tool validated: no model call.
                    return await self._completed(
                        turn, hooks, state, state.messages, AgentUsage(requests=0), structured=output
                    )
            else:
                hooks = StepHooks(agent, [*history, *state.messages], state.agent_state)
        if turn.steered_messages:
            # As the person's next message: a user message of its own after the tool results
            # (or after the turn's prompt, at a first step), stored where it sits. (Strands'
            # own mid-run input merges into the last message of the same role; Chat
            # Completions would then send the text before the tool results.)
            steered = [with_images(load_message(m.framework_item)) for m in turn.steered_messages]
            state = RunState(
                messages=[*state.messages, *steered], agent_state=state.agent_state, forced=state.forced
            )
            for message in steered:
                await hooks.message_added(message)
        # What Strands' event loop sends (`_handle_model_execution`): the content-block form
        # of the system prompt when the agent has one, the registry's specs in its order.
        system = (
            agent.system_prompt_content if agent.system_prompt_content is not None else agent.system_prompt
        )
        extra: list[dict[str, Any]] = []
        if self._carry_hook is not None and turn.carried_state:
            extra.append({"text": CARRIED_PREFIX + turn.carried_state})
        if self._show_state and state.agent_state:
            extra.append({"text": "Tool state: " + json.dumps(state.agent_state, ensure_ascii=False)})
        if extra:
            blocks = [{"text": system}] if isinstance(system, str) else list(system or [])
            system = cast(Any, [*blocks, *extra])
        cancel = await hooks.before_model_call()
        if cancel is not None:
            # As Strands answers a model call a hook cancels: its text, no call.
            reply: dict[str, Any] = {"role": "assistant", "content": [{"text": cancel}]}
            step_usage = AgentUsage(requests=0)
            await hooks.after_model_call("end_turn", reply)
        else:
            # The agent's messages as the hooks left them, as plain sends `agent.messages`.
            messages = cast(list[dict[str, Any]], hooks.agent.messages)
            reply, step_usage, stop_reason = await self._call_model(
                turn, agent, system, messages, structured, state.forced
            )
            await hooks.after_model_call(stop_reason, reply)
        await hooks.message_added(reply)
        produced = [*state.messages, reply]
        blocks = cast(list[dict[str, Any]], reply.get("content") or [])
        uses = [cast(dict[str, Any], b["toolUse"]) for b in blocks if "toolUse" in b]
        if uses:
            tools_cancel = await hooks.before_tools(reply)
            if tools_cancel is not None:
                # As Strands answers a tool response a hook cancels: an error result for
                # every call, no tool run, and the model called again.
                results: dict[str, Any] = {
                    "role": "user",
                    "content": [
                        {
                            "toolResult": {
                                "toolUseId": str(use["toolUseId"]),
                                "status": "error",
                                "content": [{"text": tools_cancel}],
                            }
                        }
                        for use in uses
                    ],
                }
                await hooks.tools_ended(results)
                later = RunState(
                    messages=[*produced, results], agent_state=state.agent_state, forced=state.forced
                )
                return ContinueRequested(
                    framework_run_state=later.to_json(),
                    note="a BeforeToolsEvent hook cancelled the tool calls",
                    usage=step_usage,
                )
            tools = agent.tool_registry.registry
            if structured is not None:
                tools = {**tools, structured.name: structured.tool}
            calls = [
                await verifiable(
                    deferred_call(use, turn, tools, self._specs), self._specs.get(str(use["name"]))
                )
                for use in uses
            ]
            later = RunState(
                messages=produced,
                pending=[c.tool_call_id for c in calls],
                agent_state=state.agent_state,
                forced=state.forced,
            )
            return ToolCallsRequested(framework_run_state=later.to_json(), tool_calls=calls, usage=step_usage)
        if structured is not None and not state.forced:
            # As Strands forces its structured output tool after a text answer: a user message
            # asking for it (stored with role system: the runner wrote it), in a model step of
            # its own with the tool forced.
            asked = {"role": "user", "content": [{"text": structured.prompt}], WRITTEN_BY_KEY: "system"}
            await hooks.message_added(asked)
            later = RunState(messages=[*produced, asked], agent_state=state.agent_state, forced=True)
            return ContinueRequested(
                framework_run_state=later.to_json(),
                note="the model answered in text; structured output is forced",
                usage=step_usage,
            )
        if structured is not None:
            output = structured.from_text(reply)
            return await self._completed(turn, hooks, state, produced, step_usage, structured=output)
        final_text = message_text(reply)
        retry = self._output_validator(final_text) if self._output_validator is not None else None
        if retry is not None:
            # Stored with role system: the runner wrote it, not the person (the builtin's rule).
            # Strands sends a model role and content only, so the mark never reaches it.
            asked = {"role": "user", "content": [{"text": retry}], WRITTEN_BY_KEY: "system"}
            later = RunState(messages=[*produced, asked], agent_state=state.agent_state, forced=state.forced)
            return ContinueRequested(
                framework_run_state=later.to_json(),
                note="the output validator refused the answer and asks the model again",
                usage=step_usage,
            )
        return await self._completed(turn, hooks, state, produced, step_usage)

    def _ask_for_interrupts(
        self, turn: AgentTurnContext, agent: Agent, state: RunState, updates: Mapping[str, dict[str, Any]]
    ) -> ToolCallsRequested | None:
        """One question per call that stopped at a Strands interrupt (`_interrupts`), with
        the updates of the calls that finished kept; None when no call waits."""
        waiting = [
            (call_id, interrupt)
            for call_id in state.pending
            if (interrupt := paused_interrupt(updates.get(call_id), call_id)) is not None
        ]
        if not waiting:
            return None
        uses = {
            str(use["toolUseId"]): use
            for block in cast(list[dict[str, Any]], state.messages[-1].get("content") or [])
            if (use := cast(dict[str, Any] | None, block.get("toolUse"))) is not None
        }
        # Every call's agent.state change, in the model's order, as the results would apply them.
        agent_state = state.agent_state
        for call_id in state.pending:
            change = cast(dict[str, Any] | None, (updates.get(call_id) or {}).get("state"))
            if change is not None:
                agent_state = cast(dict[str, Any], apply_value_change(agent_state, change))
        taken = [*turn.tool_calls, *state.pending]
        held: list[dict[str, Any]] = []
        calls: list[DeferredToolCall] = []
        tools = agent.tool_registry.registry
        for call_id, interrupt in waiting:
            real = deferred_call(uses[call_id], turn, tools, self._specs)
            answered = cast(dict[str, dict[str, Any]], updates[call_id].get("answered") or {})
            record, call = interrupt_call(real, interrupt, taken=taken, answered=answered)
            taken.append(call.tool_call_id)
            held.append(record.to_json())
            calls.append(call)
        waiting_ids = {call_id for call_id, _ in waiting}
        # Finished calls in the order Strands keeps them on resume: those of earlier rounds
        # first, then this round's, in the model's order.
        done = {call_id: state.done[call_id] for call_id in state.done}
        done.update(
            (call_id, {k: v for k, v in update.items() if k != "state"})
            for call_id in state.pending
            if call_id not in waiting_ids
            and call_id not in done
            and (update := updates.get(call_id)) is not None
        )
        later = RunState(
            messages=state.messages,
            pending=state.pending,
            agent_state=agent_state,
            done=done,
            interrupts=held,
            forced=state.forced,
        )
        return ToolCallsRequested(
            framework_run_state=later.to_json(), tool_calls=calls, usage=AgentUsage(requests=0)
        )

    async def _call_model(
        self,
        turn: AgentTurnContext,
        agent: Agent,
        system: Any,
        messages: list[dict[str, Any]],
        structured: StructuredOutput | None,
        forced: bool,
    ) -> tuple[dict[str, Any], AgentUsage, str]:
        """One call of the agent's model through Strands' `stream_messages`: the reply, its
        usage and its stop reason; text and reasoning deltas go to the session's events."""
        system_text, system_content = split_system_prompt(system)
        registry = structured.registry(agent) if structured is not None else agent.tool_registry
        specs = [*registry.get_all_tool_specs(), *spec_tool_specs(self.tool_sources)]
        choice: Any = None
        native: Any = None
        if structured is not None:
            specs, choice, native = structured.request(agent, cast(Any, specs), forced)
        stop: tuple[Any, ...] | None = None
        async for event in stream_messages(
            agent.model,
            system_text,
            cast(Any, copy.deepcopy(messages)),
            cast(Any, specs),
            system_prompt_content=system_content,
            invocation_state={},
            tool_choice=choice,
            structured_output_model=native,
        ):
            data = cast(Mapping[str, Any], event)
            if "stop" in data:
                stop = cast(tuple[Any, ...], data["stop"])
            elif data.get("reasoningText"):
                turn.events.write_reasoning_delta(str(data["reasoningText"]))
            elif isinstance(data.get("data"), str) and data["data"]:
                turn.events.write_text_delta(str(data["data"]))
        if stop is None:
            raise RuntimeError("Strands' model stream ended without a stop event")
        stop_reason, message, usage, _ = stop
        reply = cast(dict[str, Any], json.loads(json.dumps(message, default=str)))
        step_usage = AgentUsage(
            requests=1,
            input_tokens=int(usage.get("inputTokens", 0)),
            output_tokens=int(usage.get("outputTokens", 0)),
        )
        return reply, step_usage, str(stop_reason)

    async def _completed(
        self,
        turn: AgentTurnContext,
        hooks: StepHooks,
        state: RunState,
        produced: list[dict[str, Any]],
        usage: AgentUsage,
        *,
        structured: dict[str, Any] | None = None,
    ) -> TurnCompleted:
        await hooks.end_invocation(produced[-1])
        final_text = message_text(produced[-1])
        if self._carry_hook is not None:
            carry = self._carry_hook(turn.carried_state, final_text)
        else:
            carry = encode_carry(state.agent_state)
        return TurnCompleted(
            new_messages=[framework_message(m) for m in produced],
            usage=usage,
            carry=carry,
            framework_state=(
                {"agent_state": state.agent_state}
                if structured is None
                else {"agent_state": state.agent_state, RESULT_KEY: structured}
            ),
        )

    async def execute_deferred_tool_call(self, call: DeferredToolExecution) -> ToolExecutionResult:
        agent = await self._resolved_agent()
        record = call.tool_call
        state = RunState.from_json(call.run_state) if call.run_state else RunState()
        tool_use: ToolUse = {
            "toolUseId": record.tool_call_id,
            "name": record.tool_name,
            "input": record.parsed_arguments(),
        }
        spec = self._specs.get(record.tool_name)
        before = state.agent_state
        held = _held_interrupt(state, record.tool_call_id)
        answered: dict[str, dict[str, Any]] = {}
        if held is not None:
            # A question's answer: the call that waited on it runs again, the answer the
            # interrupt's response, as Strands' resume runs it (`_interrupts`).
            answered = held.with_answer(record.answer if record.answer is not None else "")
            tool_use = _waiting_use(state, held)
        # What the model asked, to tell whether a hook changed the input in place.
        arguments = copy.deepcopy(tool_use.get("input"))
        outcome: ToolResult | list[Interrupt]
        output_json: dict[str, Any] | None = None
        if spec is not None and held is None:
            outcome, state_update = await run_spec(spec, tool_use, call.invocation)
            after = {**before, **state_update}
        else:
            # Strands' own executor, hooks and all; a tool it does not have gets its error result.
            view = tool_agent(agent, state.messages, state.agent_state, responses(answered))
            structured = structured_output_of(agent)
            context = None
            if structured is not None:
                # The invocation's registry, with Strands' structured output tool in it.
                view.tool_registry = structured.registry(agent)
                context = structured.context()
            outcome = await run_agent_tool(tool_use, view, context)
            after = cast(dict[str, Any], view.state.get() or {})
            validated = context.get_result(tool_use["toolUseId"]) if context is not None else None
            if validated is not None and not isinstance(outcome, list):
                output_json = validated.model_dump(mode="json")
        if isinstance(outcome, list):
            # Stopped at an interrupt: the next model step asks the person.
            paused = {**paused_update(outcome), "state": value_change(before, after)}
            if answered:
                paused["answered"] = answered
            asks = "; ".join(question_text(i.name, i.reason) for i in outcome)
            return ToolExecutionResult(
                output=f"Waiting for an answer: {asks}",
                state_update=json.dumps(paused, ensure_ascii=False, default=str),
            )
        result = outcome
        update: dict[str, Any] = {"result": result, "state": value_change(before, after)}
        if output_json is not None:
            update[RESULT_KEY] = output_json
        used = tool_use.get("input")
        if json.dumps(used, default=str, sort_keys=True) != json.dumps(
            arguments, default=str, sort_keys=True
        ):
            # A BeforeToolCallEvent hook changed the call's input in place. In a plain run
            # that dict is the one in the model's message, so the next model call sends
            # the changed input: the next model step writes it there too (`_with_tool_results`).
            update["input"] = json.loads(json.dumps(used, default=str))
        return ToolExecutionResult(
            output=_result_text(result), state_update=json.dumps(update, ensure_ascii=False, default=str)
        )

    async def verify_tool_call(self, call: DeferredToolExecution) -> VerifyResult | None:
        """A spec's `ToolSpec.verify`, for a write whose step died; None when it has none."""
        spec = self._specs.get(call.tool_call.tool_name)
        if spec is None or spec.verify is None:
            return None
        return await spec.run_verify(call.tool_call.parsed_arguments(), VerifyCall.of(call))


def _call_updates(state: RunState, turn: AgentTurnContext) -> dict[str, dict[str, Any]]:
    """The update of each pending call: those that finished before an interrupt, then this
    step's; an interrupt call's update stands for the call that waited on it, and a declined
    (or failed) interrupt call leaves that call unrun, with the session's account as its result."""
    updates: dict[str, dict[str, Any]] = dict(state.done)
    updates.update(
        (call_id, cast(dict[str, Any], json.loads(text))) for call_id, text in turn.state_updates()
    )
    for raw in state.interrupts:
        held = HeldInterrupt.from_json(raw)
        update = updates.pop(held.tool_call_id, None)
        if update is not None:
            updates[held.waiting_call] = update
            continue
        record = turn.recorded_tool_call(held.tool_call_id)
        updates[held.waiting_call] = {
            "result": {
                "toolUseId": held.waiting_call,
                "status": "error",
                "content": [{"text": describe_tool_call_outcome(record)}],
            }
        }
    return updates


def _structured_result(state: RunState, updates: Mapping[str, dict[str, Any]]) -> dict[str, Any] | None:
    """The structured output a call of the last tool response validated (`extract_result`)."""
    for block in cast(list[dict[str, Any]], state.messages[-2].get("content") or []):
        use = cast(dict[str, Any] | None, block.get("toolUse"))
        update = updates.get(str(use.get("toolUseId"))) if use is not None else None
        if update is not None and RESULT_KEY in update:
            return cast(dict[str, Any], update[RESULT_KEY])
    return None


def _held_interrupt(state: RunState, tool_call_id: str) -> HeldInterrupt | None:
    for raw in state.interrupts:
        if raw.get("id") == tool_call_id:
            return HeldInterrupt.from_json(raw)
    return None


def _waiting_use(state: RunState, held: HeldInterrupt) -> ToolUse:
    """The model's ``toolUse`` of the call that waits on ``held``, as a fresh copy."""
    for block in cast(list[dict[str, Any]], state.messages[-1].get("content") or []):
        use = cast(dict[str, Any] | None, block.get("toolUse"))
        if use is not None and use.get("toolUseId") == held.waiting_call:
            return cast(ToolUse, copy.deepcopy(use))
    raise SessionStateError(f"the run state has no tool call {held.waiting_call!r} waiting on an interrupt")


def _with_tool_results(
    state: RunState, turn: AgentTurnContext, updates: Mapping[str, dict[str, Any]]
) -> RunState:
    """The run state with the deferred calls' results as Strands appends them (one user
    message of ``toolResult`` blocks, in the model's order) and their `agent.state` changes."""
    agent_state = state.agent_state
    for call_id in state.pending:
        change = cast(dict[str, Any] | None, updates.get(call_id, {}).get("state"))
        if change is not None:
            agent_state = cast(dict[str, Any], apply_value_change(agent_state, change))
    results: list[dict[str, Any]] = []
    # After an interrupt, Strands puts the results it kept first and the resumed calls' after
    # them (`PendingToolExecution.completed_tool_results`); otherwise the model's order.
    order = [*state.done, *(c for c in state.pending if c not in state.done)]
    for call_id in order:
        update = updates.get(call_id)
        if update is not None:
            results.append({"toolResult": update["result"]})
        else:
            # Failed, rejected or outcome unknown: the session's account, as an error result.
            record = turn.recorded_tool_call(call_id)
            results.append(
                {
                    "toolResult": {
                        "toolUseId": call_id,
                        "status": "error",
                        "content": [{"text": describe_tool_call_outcome(record)}],
                    }
                }
            )
    message = {"role": "user", "content": results}
    changed = {
        call_id: u["input"] for call_id, u in updates.items() if call_id in state.pending and "input" in u
    }
    return RunState(
        messages=[*_with_inputs(state.messages, changed), message],
        pending=[],
        agent_state=agent_state,
        forced=state.forced,
    )


def _with_inputs(messages: list[dict[str, Any]], inputs: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The messages with the ``toolUse`` inputs a tool step's hooks changed in place (by call ID)."""
    if not inputs:
        return messages
    patched = copy.deepcopy(messages)
    for message in patched:
        for block in cast(list[dict[str, Any]], message.get("content") or []):
            use = cast(dict[str, Any] | None, block.get("toolUse"))
            if use is not None and use.get("toolUseId") in inputs:
                use["input"] = inputs[str(use["toolUseId"])]
    return patched


def _result_text(result: ToolResult) -> str:
    parts: list[str] = []
    for block in result.get("content") or []:
        if "text" in block:
            parts.append(str(block["text"]))
        elif "json" in block:
            parts.append(json.dumps(block["json"], ensure_ascii=False, default=str))
    return "\n".join(parts)


def _check_agent(agent: Agent, specs: Mapping[str, ToolSpec]) -> None:
    """Refuse at build what a session cannot run as the plain agent does."""
    if getattr(agent, "_session_manager", None) is not None:
        raise UnsupportedOptionError(
            "session_manager",
            "the agent has a Strands session manager; the durable session already stores its "
            "messages and state, so build the agent without session_manager",
        )
    if agent.messages:
        raise UnsupportedOptionError(
            "messages",
            "the agent was built with messages; a session's history is its stored messages, so pass "
            "them to start_session(history=history_messages(messages)) instead",
        )
    clash = sorted(set(specs) & set(agent.tool_registry.registry))
    if clash:
        raise UnsupportedOptionError(
            "tool_sources", f"tool name(s) {', '.join(clash)} are both agent tools and tool_sources"
        )
