"""Play a turn against a runner in this process, the way the session would, to test one step at a time."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from sessionflow import (
    AgentEvent,
    AgentEventType,
    AgentMessage,
    AgentSessionOptions,
    AgentToolCall,
    AgentToolCallStatus,
)
from sessionflow.kit import (
    AgentEventWriter,
    AgentTurnContext,
    AgentTurnOutcome,
    ContinueRequested,
    DeferredToolCall,
    DeferredToolExecution,
    FrameworkMessage,
    ToolCallsRequested,
    ToolExecutionError,
    TurnCompleted,
    tool_invocation_scope,
)
from sessionflow_pydantic_ai import PydanticAIRunner

Decide = Callable[[DeferredToolCall], AgentToolCall | None]
"""Returns a final record to use instead of running the call, or None to run it."""


@dataclass
class PlayedTurn:
    """Everything one played turn produced."""

    outcomes: list[AgentTurnOutcome] = field(default_factory=lambda: [])
    records: dict[str, AgentToolCall] = field(default_factory=lambda: {})
    events: list[AgentEvent] = field(default_factory=lambda: [])
    messages: list[FrameworkMessage] = field(default_factory=lambda: [])
    latest: set[str] = field(default_factory=lambda: set[str]())
    """The calls the last model step deferred: only their updates are new to the next one."""

    @property
    def completed(self) -> TurnCompleted:
        last = self.outcomes[-1]
        assert isinstance(last, TurnCompleted), last
        return last

    def deltas(self, event_type: AgentEventType) -> str:
        return "".join(str(e.data["text"]) for e in self.events if e.type is event_type)


def record(call: DeferredToolCall, status: AgentToolCallStatus, **fields: Any) -> AgentToolCall:
    return AgentToolCall(
        tool_call_id=call.tool_call_id,
        tool_name=call.tool_name,
        arguments=call.arguments,
        policy=call.policy,
        deferral_order=1,
        status=status,
        **fields,
    )


def stored(messages: Sequence[FrameworkMessage]) -> list[AgentMessage]:
    """Messages as the session stores them (the turn IDs do not matter to a runner)."""
    return [AgentMessage(sequence=i, turn_id="turn-1", message=m) for i, m in enumerate(messages, start=1)]


def context(
    history: Sequence[AgentMessage],
    played: PlayedTurn,
    *,
    run_state: str | None,
    options: AgentSessionOptions | None = None,
    session_settings: Mapping[str, Any] | None = None,
    flow_id: str = "s1",
    turn_id: str = "turn-1",
    carried_state: str | None = None,
) -> AgentTurnContext:
    """The context of one model step; events go to `played.events`.

    As the session does, a call's state update is handed only to the model step after it
    (an earlier step applied the updates of the calls before it)."""
    writer = AgentEventWriter(played.events.append, turn_id=turn_id, step_execution_id="step", attempt=1)
    return AgentTurnContext(
        flow_id=flow_id,
        turn_id=turn_id,
        attempt=1,
        messages=list(history),
        framework_run_state=run_state,
        tool_calls={
            call_id: r if call_id in played.latest else replace(r, state_update=None)
            for call_id, r in played.records.items()
        },
        carried_state=carried_state,
        policy_resolver=(options or AgentSessionOptions()).resolve_tool_policy,
        events=writer,
        heartbeat=lambda *args: None,
        session_settings=dict(session_settings or {}),
    )


async def play_turn(
    runner: PydanticAIRunner,
    text: str,
    *,
    history: Sequence[AgentMessage] = (),
    options: AgentSessionOptions | None = None,
    decide: Decide | None = None,
    session_settings: Mapping[str, Any] | None = None,
    max_steps: int = 10,
    flow_id: str = "s1",
    carried_state: str | None = None,
) -> PlayedTurn:
    """Run model steps and tool calls until the turn completes, like the session does."""
    messages = [m.message for m in history] + [runner.build_user_message(text)]
    turn_id = f"turn-{sum(1 for m in messages if m.role.value == 'user')}"
    played = PlayedTurn()
    run_state: str | None = None
    for _ in range(max_steps):
        turn = context(
            stored(messages),
            played,
            run_state=run_state,
            options=options,
            session_settings=session_settings,
            flow_id=flow_id,
            turn_id=turn_id,
            carried_state=carried_state,
        )
        outcome = await runner.run_model_step(turn)
        played.outcomes.append(outcome)
        if isinstance(outcome, TurnCompleted):
            played.messages = [*messages, *outcome.new_messages]
            return played
        if isinstance(outcome, ContinueRequested):  # Pydantic AI asks the model again
            run_state = outcome.framework_run_state
            continue
        assert isinstance(outcome, ToolCallsRequested)
        run_state = outcome.framework_run_state
        played.latest = {call.tool_call_id for call in outcome.tool_calls}
        for call in outcome.tool_calls:
            decided = decide(call) if decide is not None else None
            played.records[call.tool_call_id] = decided or await run_call(
                runner, call, flow_id=flow_id, turn_id=turn_id, run_state=run_state
            )
    raise AssertionError(f"the turn did not complete in {max_steps} model steps")


async def run_call(
    runner: PydanticAIRunner,
    call: DeferredToolCall,
    *,
    flow_id: str = "s1",
    turn_id: str = "turn-1",
    run_state: str | None = None,
) -> AgentToolCall:
    """Run one call through the runner and record its outcome as the session would."""
    running = record(call, AgentToolCallStatus.RUNNING)
    execution = DeferredToolExecution(
        flow_id=flow_id,
        turn_id=turn_id,
        tool_call=running,
        attempt=1,
        events=AgentEventWriter(None, turn_id=turn_id, step_execution_id="tool", attempt=1),
        heartbeat=lambda *args: None,
        run_state=run_state,
    )
    try:
        # What the tool activity does around every tool step.
        with tool_invocation_scope(execution.invocation):
            result = await runner.execute_deferred_tool_call(execution)
    except ToolExecutionError as error:
        return record(call, AgentToolCallStatus.FAILED, error=error.message, state_update=error.state_update)
    return record(call, AgentToolCallStatus.SUCCEEDED, output=result.output, state_update=result.state_update)
