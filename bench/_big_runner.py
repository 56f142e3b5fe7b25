"""The runner and worker child of `bench.big_session`: one tool turn that adds a big output.

A turn is: model -> one read tool (`read_big`) returning `output_bytes` of unique text ->
model -> a short answer. The "model" does O(1) work per call: it never walks or hashes the
conversation (the test kit's `ScriptedRunner` hashes every message it is given, which at
100 MB would time the test kit, not sessionflow). What it does check is cheap and proves the
step got the whole session: the message count and the length of the newest tool output.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys

from sessionflow import AgentSessionFlow, AgentUsage, MessageRole, SessionStateError, ToolEffect
from sessionflow.kit import (
    AgentFrameworkRunner,
    AgentTurnContext,
    AgentTurnOutcome,
    DeferredToolCall,
    DeferredToolExecution,
    FrameworkMessage,
    ToolCallsRequested,
    ToolExecutionResult,
    TurnCompleted,
)

__all__ = ["MESSAGES_PER_TURN", "TOOL_NAME", "BigOutputRunner", "big_flow", "worker_main"]

TOOL_NAME = "read_big"
MESSAGES_PER_TURN = 4
"""user, assistant (tool call), tool (the output), assistant (answer)."""


class BigOutputRunner(AgentFrameworkRunner):
    """An `AgentFrameworkRunner` whose tool returns `output_bytes` of text unique to the call."""

    def __init__(self, output_bytes: int) -> None:
        self.output_bytes = output_bytes

    def build_user_message(self, text: str) -> FrameworkMessage:
        return FrameworkMessage(
            role=MessageRole.USER, framework_item={"role": "user", "content": text}, text=text
        )

    async def run_model_step(self, turn: AgentTurnContext) -> AgentTurnOutcome:
        usage = AgentUsage(requests=1, input_tokens=8, output_tokens=8)
        number = int(turn.turn_id.removeprefix("turn-"))
        # Every earlier turn left 4 messages, and this turn's user message comes last
        # ([-3] is then the previous turn's tool message).
        if len(turn.messages) != (number - 1) * MESSAGES_PER_TURN + 1:
            raise SessionStateError(f"{turn.turn_id} got {len(turn.messages)} messages")
        call_id = f"call-{number}"
        if turn.framework_run_state is None:
            call = DeferredToolCall(
                tool_call_id=call_id,
                tool_name=TOOL_NAME,
                arguments=json.dumps({"turn": number}),
                policy=turn.resolve_tool_policy(TOOL_NAME, ToolEffect.READ),
            )
            return ToolCallsRequested(
                framework_run_state=json.dumps({"step": 1}), tool_calls=[call], usage=usage
            )
        if number > 1:
            # The previous turn's output must come back whole (read through the store), not its preview.
            previous = turn.messages[-3].message.framework_item
            if not isinstance(previous, dict) or len(str(previous.get("content", ""))) != self.output_bytes:  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType]
                raise SessionStateError(f"{turn.turn_id}: the previous tool output did not come back whole")
        output = turn.recorded_tool_call(call_id).output or ""
        request = {"role": "assistant", "tool_calls": [call_id]}
        answer = f"read {len(output)} characters"
        return TurnCompleted(
            new_messages=[
                FrameworkMessage(
                    role=MessageRole.ASSISTANT, framework_item=request, text=f"calls {TOOL_NAME}"
                ),
                FrameworkMessage(
                    role=MessageRole.TOOL,
                    framework_item={"role": "tool", "tool_call_id": call_id, "content": output},
                    text=output,
                ),
                FrameworkMessage(
                    role=MessageRole.ASSISTANT,
                    framework_item={"role": "assistant", "content": answer},
                    text=answer,
                ),
            ],
            usage=usage,
        )

    async def execute_deferred_tool_call(self, call: DeferredToolExecution) -> ToolExecutionResult:
        # Different bytes for every call, so the content-addressed store cannot share them.
        seed = f"{call.idempotency_key}|"
        return ToolExecutionResult(output=(seed * (self.output_bytes // len(seed) + 1))[: self.output_bytes])


def big_flow(flow_type: str, output_bytes: int, continue_as_new_after_events: int) -> AgentSessionFlow:
    return AgentSessionFlow(
        BigOutputRunner(output_bytes),
        flow_type=flow_type,
        continue_as_new_after_events=continue_as_new_after_events,
    )


def worker_main() -> None:
    """Child: `address flow_type output_bytes can_events cache`; serves until stdin closes.

    The payload store comes from ``$SESSIONFLOW_PAYLOADS`` (set by the parent), as in production.
    """
    address, flow_type = sys.argv[1], sys.argv[2]
    output_bytes, can_events, cache = (int(a) for a in sys.argv[3:6])

    async def run() -> None:
        from sessionflow import connect, serve_agent_flows

        client = await connect(address)
        stop = asyncio.Event()
        flow = big_flow(flow_type, output_bytes, can_events)
        task = asyncio.create_task(serve_agent_flows(client, [flow], stop=stop, max_cached_workflows=cache))
        print(f"ready {os.getpid()}", flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
        stop.set()
        await task

    asyncio.run(run())
