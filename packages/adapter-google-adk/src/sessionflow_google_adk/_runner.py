"""`GoogleAdkRunner`: a Google ADK agent, one model call per model step and one tool call
per tool step, through ADK's own `Runner`, plugins and session service."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import AsyncGenerator, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, cast

from google.adk.agents.base_agent import BaseAgent
from google.adk.agents.llm_agent import LlmAgent
from google.adk.agents.run_config import RunConfig
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from google.adk.models.llm_response import LlmResponse
from google.adk.sessions.state import State
from google.adk.tools.exit_loop_tool import exit_loop
from google.adk.tools.function_tool import FunctionTool
from google.adk.tools.transfer_to_agent_tool import TransferToAgentTool
from google.genai import types

from sessionflow import AgentUsage, ImageInput, MessageRole, ToolEffect
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
    declared_effect,
    declared_policy,
    describe_tool_call_outcome,
    tool_arguments_object,
    with_tool_asks,
)
from sessionflow_google_adk._adk_session import dump_event, load_event, run_step, step_run_config
from sessionflow_google_adk._images import image_parts, with_images_read
from sessionflow_google_adk._refusals import check_agent, first_llm_agent
from sessionflow_google_adk._step_plugin import (
    CARRIED_STATE_KEY,
    DEFERRED_RESPONSE,
    DeferredCall,
    RecordedCall,
    StepPlugin,
)
from sessionflow_google_adk._tool_specs import SpecTool
from sessionflow_google_adk._warmup import warm_up

__all__ = ["RUN_STATE_VERSION", "GoogleAdkRunner"]

RUN_STATE_VERSION = 1


class GoogleAdkRunner(AgentFrameworkRunner):
    """Runs ``agent`` (an ADK `LlmAgent`) as a session.

    The session's stored messages are ADK events, so the ADK session (its events and its
    state) is the durable session; a model step's run state is the ADK session so far.
    """

    def __init__(
        self,
        agent: BaseAgent,
        *,
        app_name: str = "sessionflow",
        run_config: RunConfig | None = None,
        carry: CarryHook | None = None,
        output_validator: OutputValidator | None = None,
    ) -> None:
        check_agent(agent)
        self._agent = agent
        self._app_name = app_name
        self._run_config = step_run_config(run_config)
        self._carry_hook = carry
        self._output_validator = output_validator
        # The spec tools by name (the harness's), for their verify; of two, ADK runs the first.
        self._specs: dict[str, ToolSpec] = {}
        for tool in _spec_tools(agent):
            self._specs.setdefault(tool.spec.name, tool.spec)

    def build_user_message(self, text: str) -> FrameworkMessage:
        event = Event(author="user", content=types.Content(role="user", parts=[types.Part(text=text)]))
        return FrameworkMessage(role=MessageRole.USER, framework_item=dump_event(event), text=text)

    def build_user_message_with_images(self, text: str, images: Sequence[ImageInput]) -> FrameworkMessage:
        parts = [types.Part(text=text), *image_parts(images)]
        event = Event(author="user", content=types.Content(role="user", parts=parts))
        return FrameworkMessage(role=MessageRole.USER, framework_item=dump_event(event), text=text)

    def accepts_steering(self) -> bool:
        """Steered messages are user events after the step's tool responses, starting an
        ADK invocation of their own (`_follow_up`), as ADK runs a new message."""
        return True

    async def run_model_step(self, turn: AgentTurnContext) -> AgentTurnOutcome:
        if turn.framework_run_state:
            state = json.loads(turn.framework_run_state)
            invocation_id = str(state["invocation_id"])
            events = [load_event(item) for item in state["events"]]
            pending: list[str] = list(state["pending"])
            turn_start = int(state["turn_start"])
        else:
            # Each turn is one ADK invocation, named after the turn so a repeat resumes it.
            invocation_id = f"e-{turn.turn_id}"
            events = [load_event(m.message.framework_item) for m in turn.messages]
            events[-1] = events[-1].model_copy(update={"invocation_id": invocation_id})
            turn_start = len(events)
            pending = []
        asked: Event | None = None
        replayed: LlmResponse | None = None
        recorded: dict[str, RecordedCall] = {}
        if pending and not turn.steered_messages:
            # ADK itself answers the calls of the last model response: the step replays that
            # response and hands each call its tool step's result and actions, so ADK builds
            # the responses event (its merge of parallel calls) and acts on it as a plain run
            # does (a LoopAgent's exit on `escalate`, a tool's transfer, skip_summarization).
            asked = events.pop()
            replayed = LlmResponse(content=asked.content, custom_metadata=asked.custom_metadata)
            recorded = {call_id: _recorded(call_id, turn) for call_id in pending}
        elif pending:
            # A steered message goes after the responses: they are an event of the session,
            # and the message starts an invocation of its own (`_follow_up`).
            events.append(_responses_event(events[-1], pending, turn))
        if turn.steered_messages:
            invocation_id = _follow_up(turn, events, turn_start)
            events += [
                load_event(m.framework_item).model_copy(update={"invocation_id": invocation_id})
                for m in turn.steered_messages
            ]
        plugin = StepPlugin(temp_state=self._temp_state(turn), replay=replayed, recorded=recorded)

        def deltas(partial: Event) -> None:
            for part in partial.content.parts or [] if partial.content else []:
                if part.text and part.thought:
                    turn.events.write_reasoning_delta(part.text)
                elif part.text:
                    turn.events.write_text_delta(part.text)

        yielded, session = await run_step(
            self._agent,
            app_name=self._app_name,
            session_id=turn.session_id,
            events=with_images_read(events),
            invocation_id=invocation_id,
            plugin=plugin,
            run_config=self._run_config,
            on_partial=deltas,
        )
        # ADK's resumability events (an agent's `agent_state`, `end_of_agent`: where a
        # workflow agent is, which agent ended) stay in the run state, so the next step
        # resumes the tree where this one stopped; the stored messages leave them out.
        if asked is not None:
            # The replayed response is the one already recorded (with its usage): keep that.
            events.append(asked)
            yielded = [e for e in yielded if not _replay_of(e, asked)]
        produced = [e for e in yielded if not _deferred_placeholder(e)]
        events += produced
        usage = _usage(produced)
        if plugin.deferred:
            calls = [await _deferred(call, turn) for call in plugin.deferred]
            run_state = _run_state(invocation_id, turn_start, events, session.state, plugin.deferred)
            return ToolCallsRequested(framework_run_state=run_state, tool_calls=calls, usage=usage)
        if plugin.cut.is_set():
            # The tree goes on to another model call (a transferred-to agent's, a workflow
            # agent's next sub-agent's): a model step of its own, resuming the invocation.
            return ContinueRequested(
                framework_run_state=_run_state(invocation_id, turn_start, events, session.state, []),
                note="the ADK agent tree calls the model again",
                usage=usage,
            )
        final_text = next((text for e in reversed(produced) if (text := _message(e).text)), "")
        retry_prompt = self._output_validator(final_text) if self._output_validator is not None else None
        if retry_prompt is not None:
            # The answer stays in the turn's events; the prompt is a user event after it, in
            # an invocation of its own, as ADK runs a follow-up message.
            invocation_id = _follow_up(turn, events, turn_start)
            asked = Event(
                invocation_id=invocation_id,
                author="user",
                content=types.Content(role="user", parts=[types.Part(text=retry_prompt)]),
            )
            events.append(asked)
            return ContinueRequested(
                framework_run_state=_run_state(invocation_id, turn_start, events, session.state, []),
                note="the output validator refused the answer and asks the model again",
                usage=usage,
            )
        carry = self._carry_hook(turn.carried_state, final_text) if self._carry_hook is not None else None
        return TurnCompleted(
            new_messages=[_message(e) for e in events[turn_start:] if _kept(e)],
            usage=usage,
            carry=carry,
            framework_state={"adk_state": dict(session.state)},
        )

    def _temp_state(self, turn: AgentTurnContext) -> dict[str, Any]:
        """What a step puts in the invocation's ``temp:`` state: the carry hook's carry."""
        if self._carry_hook is None or not turn.carried_state:
            return {}
        return {CARRIED_STATE_KEY: turn.carried_state}

    async def execute_deferred_tool_call(self, call: DeferredToolExecution) -> ToolExecutionResult:
        if call.run_state is None:
            raise ValueError("a Google ADK tool step needs its model step's run state")
        state = json.loads(call.run_state)
        events = [load_event(item) for item in state["events"]]
        asked = events[-1]  # the model's response that asked for this call
        plugin = StepPlugin(
            run_call_id=call.tool_call.tool_call_id,
            replay=LlmResponse(content=asked.content, custom_metadata=asked.custom_metadata),
        )
        yielded, _ = await run_step(
            self._agent,
            app_name=self._app_name,
            session_id=call.session_id,
            events=events[:-1],
            invocation_id=str(state["invocation_id"]),
            plugin=plugin,
            run_config=self._run_config,
        )
        for event in yielded:
            for part in (event.content.parts or []) if event.content else []:
                response = part.function_response
                if response is not None and response.id == call.tool_call.tool_call_id:
                    update = {
                        "part": part.model_dump(mode="json", exclude_none=True),
                        "actions": event.actions.model_dump(mode="json", exclude_none=True, by_alias=True),
                    }
                    return ToolExecutionResult(
                        output=_response_text(response.response),
                        state_update=json.dumps(update, separators=(",", ":")),
                    )
        raise RuntimeError(f"ADK did not run tool call {call.tool_call.tool_call_id!r}")

    async def verify_tool_call(self, call: DeferredToolExecution) -> VerifyResult | None:
        """A spec tool's `ToolSpec.verify`, for a write whose step died; None when it has none.

        Verify runs outside ADK's runner: it only asks the system written to, so it needs
        no session and no invocation.
        """
        spec = self._specs.get(call.tool_call.tool_name)
        if spec is None or spec.verify is None:
            return None
        return await spec.run_verify(call.tool_call.parsed_arguments(), VerifyCall.of(call))

    def tool_catalog(self, session_settings: Mapping[str, Any]) -> Mapping[str, Mapping[str, Any]] | None:
        return None

    def worker_scope(self) -> AbstractAsyncContextManager[None]:
        return self._warm()

    @asynccontextmanager
    async def _warm(self) -> AsyncGenerator[None]:
        # `check_agent` made sure the tree has LlmAgents (a workflow agent of none calls no model).
        if (agent := first_llm_agent(self._agent)) is not None:
            await warm_up(agent, self._run_config)
        yield


async def _deferred(call: DeferredCall, turn: AgentTurnContext) -> DeferredToolCall:
    """The session's view of a call: its policy from the tool's effect mark (or a spec's
    effect), ADK's confirmation as the framework's approval, and for a spec with a verify,
    deferred verifiable with the basis taken now (durable before the write can start)."""
    tool = call.tool
    if isinstance(tool, SpecTool):
        effect, policy = tool.spec.framework_effect, tool.spec.policy
    else:
        effect, policy = declared_effect(_marked(tool)), declared_policy(_marked(tool))
        if effect is None and _is_control_tool(tool):
            effect = ToolEffect.READ
    deferred = DeferredToolCall(
        tool_call_id=call.call_id,
        tool_name=tool.name,
        arguments=json.dumps(call.arguments, separators=(",", ":")),
        policy=turn.resolve_tool_policy(tool.name, effect, declared_policy=policy),
        framework_approval="required" if call.needs_confirmation else None,
    )
    if not isinstance(tool, SpecTool):
        return deferred
    deferred = with_tool_asks(deferred, tool.spec)
    if tool.spec.verify is None:
        return deferred
    arguments = tool_arguments_object(deferred.arguments)
    basis = await tool.spec.deferral_basis(arguments) if arguments is not None else None
    return dataclasses.replace(deferred, verifiable=True, verify_basis=basis)


def _follow_up(turn: AgentTurnContext, events: Sequence[Event], turn_start: int) -> str:
    """The ID of the ADK invocation a user message in the middle of a turn starts (a
    steered message, a retry prompt): ADK takes a user message only as the start of an
    invocation (`Runner.run_async` ignores a text message given to resume one that has its
    user message). Named after the turn and its user messages so far, so a repeated step
    names it the same."""
    users = sum(1 for event in events[turn_start - 1 :] if event.author == "user")
    return f"e-{turn.turn_id}-{users + 1}"


def _run_state(
    invocation_id: str,
    turn_start: int,
    events: Sequence[Event],
    adk_state: Mapping[str, Any],
    deferred: Sequence[DeferredCall],
) -> str:
    """A model step's run state: the turn's invocation so far, the calls it waits for, and
    the session's state as the step left it (``state``: what `sessionflow.builtin.tool_state`
    reads in a tool step; ``temp:`` keys are the step's own)."""
    state = {
        "version": RUN_STATE_VERSION,
        "invocation_id": invocation_id,
        "turn_start": turn_start,
        "events": [dump_event(e) for e in events],
        "pending": [call.call_id for call in deferred],
        "state": {k: v for k, v in adk_state.items() if not k.startswith(State.TEMP_PREFIX)},
    }
    return json.dumps(state, separators=(",", ":"))


def _spec_tools(agent: BaseAgent) -> list[SpecTool]:
    # ADK types `tools` with bare callables; only the spec tools matter here.
    tools: list[object] = list(agent.tools) if isinstance(agent, LlmAgent) else []  # pyright: ignore[reportUnknownArgumentType, reportUnknownMemberType]
    return [tool for tool in tools if isinstance(tool, SpecTool)]


def _is_control_tool(tool: object) -> bool:
    """ADK's own tools that only steer the tree (`transfer_to_agent`, `exit_loop`): they
    change the invocation's actions, nothing outside the session, so they are reads."""
    return isinstance(tool, TransferToAgentTool) or _marked(tool) is exit_loop


def _marked(tool: object) -> object:
    # A FunctionTool's effect is marked on the function it wraps (`sessionflow.effect`).
    return tool.func if isinstance(tool, FunctionTool) else tool


def _deferred_placeholder(event: Event) -> bool:
    """Whether ``event`` is the responses ADK recorded for calls a model step deferred."""
    responses = event.get_function_responses()
    return bool(responses) and all(r.response == DEFERRED_RESPONSE for r in responses)


def _kept(event: Event) -> bool:
    """Whether an event of the turn belongs to the stored session: not ADK's bookkeeping
    for resumption (which a plain, non-resumable run does not write)."""
    return event.content is not None or bool(event.actions.state_delta)


def _replay_of(event: Event, asked: Event) -> bool:
    """Whether ``event`` is ADK's event for the replayed model response ``asked``."""
    calls = [call.id for call in event.get_function_calls()]
    return bool(calls) and calls == [call.id for call in asked.get_function_calls()]


def _recorded(call_id: str, turn: AgentTurnContext) -> RecordedCall:
    """What a call's tool step recorded: its response and its actions; for a call that did
    not run (failed, rejected, outcome unknown), the error ADK reports for a failed call."""
    record = turn.recorded_tool_call(call_id)
    if record.state_update:
        update = json.loads(record.state_update)
        part = types.Part.model_validate(update["part"])
        response = part.function_response.response if part.function_response else None
        return RecordedCall(dict(response or {}), dict(update["actions"]))
    return RecordedCall({"error": describe_tool_call_outcome(record)}, {})


def _responses_event(asked: Event, pending: Sequence[str], turn: AgentTurnContext) -> Event:
    """One event holding every response to the calls of ``asked``, as ADK merges the
    responses of parallel calls: the parts in model order, and the tools' actions (state
    changes included) deep-merged in that order, a later call's value winning a key both
    set, whichever finished first."""
    parts: list[types.Part] = []
    merged: dict[str, Any] = {}
    for call_id in pending:
        record = turn.recorded_tool_call(call_id)
        if record.state_update:
            update = json.loads(record.state_update)
            parts.append(types.Part.model_validate(update["part"]))
            _deep_merge(merged, update["actions"])
        else:
            name = record.tool_name
            error = {"error": describe_tool_call_outcome(record)}
            parts.append(
                types.Part(function_response=types.FunctionResponse(id=call_id, name=name, response=error))
            )
    return Event(
        invocation_id=asked.invocation_id,
        author=asked.author,
        branch=asked.branch,
        content=types.Content(role="user", parts=parts),
        actions=EventActions.model_validate(merged),
    )


def _deep_merge(into: dict[str, Any], other: Mapping[str, Any]) -> None:
    """ADK's merge of parallel calls' actions (its `deep_merge_dicts`, not public API)."""
    for key, value in other.items():
        current = into.get(key)
        if isinstance(current, dict) and isinstance(value, Mapping):
            _deep_merge(cast(dict[str, Any], current), cast(Mapping[str, Any], value))
        else:
            into[key] = value


def _response_text(response: dict[str, Any] | None) -> str:
    if response is not None and set(response) == {"result"}:
        result = response["result"]
        return result if isinstance(result, str) else json.dumps(result)
    return json.dumps(response)


def _usage(events: Sequence[Event]) -> AgentUsage:
    """The usage of the model calls of ``events`` (each model response carries its own)."""
    requests = input_tokens = output_tokens = 0
    for event in events:
        if event.usage_metadata is not None:
            requests += 1
            input_tokens += event.usage_metadata.prompt_token_count or 0
            output_tokens += event.usage_metadata.candidates_token_count or 0
    return AgentUsage(requests=requests, input_tokens=input_tokens, output_tokens=output_tokens)


def _message(event: Event) -> FrameworkMessage:
    parts = event.content.parts or [] if event.content else []
    text = "".join(p.text for p in parts if p.text and not p.thought) or None
    if event.get_function_responses():
        role = MessageRole.TOOL
    elif event.author == "user":
        role = MessageRole.USER
    else:
        role = MessageRole.ASSISTANT
    return FrameworkMessage(role=role, framework_item=dump_event(event), text=text)
