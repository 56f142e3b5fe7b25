"""A support agent (OpenAI Agents SDK) as a durable session: a read tool, a refund that asks
first, the answer streamed, and a session that outlives this program.

    OPENAI_API_KEY=... python examples/openai-agents/support_agent.py "My order 7 arrived broken."
    python examples/openai-agents/support_agent.py --resume SESSION_ID

Needs a Temporal server: ``SESSIONFLOW_SERVER_ADDRESS`` (else Temporal's own configuration,
else 127.0.0.1:7233); ``sessionflow server start`` runs one locally. ``OPENAI_BASE_URL``
points the agent at any Responses server; ``OPENAI_MODEL`` picks the model.

Kill it (Ctrl-C, or kill -9) while it asks for your approval: the session waits in Temporal.
Run it again with ``--resume`` and the session ID it printed: the approval is asked again,
the refund runs once (with the same idempotency key on every attempt), and the answer comes.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import uuid

from agents import Agent, function_tool

from sessionflow import (
    AgentEventType,
    AgentSessionClient,
    AgentSessionOptions,
    AgentStatus,
    MessageRole,
    ToolEffect,
    ToolPolicy,
    connect,
    serve_agent_flows,
)
from sessionflow.kit import current_tool_invocation
from sessionflow_openai_agents import openai_agents_session_flow


@function_tool
async def order_status(order_id: int) -> str:
    """Look up an order."""
    return f"order {order_id}: delivered, damaged"


@function_tool
async def refund(order_id: int) -> str:
    """Refund an order."""
    invocation = current_tool_invocation()  # the same key on every attempt of this call
    key = invocation.idempotency_key if invocation else "none"
    return f"refunded order {order_id} (idempotency key {key})"


agent = Agent(
    name="support",
    instructions="You help customers with their orders.",
    model=os.environ.get("OPENAI_MODEL", "gpt-4.1-mini"),
    tools=[order_status, refund],
)
flow = openai_agents_session_flow(
    agent,
    flow_type="SupportAgent",
    options=AgentSessionOptions(
        tool_policies={
            "order_status": ToolPolicy(effect=ToolEffect.READ),  # retried, no approval
            "refund": ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE),  # once, approved
        }
    ),
)


async def ask(sessions: AgentSessionClient, session_id: str) -> None:
    """Ask the user about every call that waits for an approval."""
    snapshot = await sessions.get_agent_snapshot(session_id)
    for interrupt in snapshot.pending_interrupts:
        reply = await asyncio.to_thread(
            input, f"\napprove {interrupt.tool_name} {interrupt.arguments}? [y/n] "
        )
        approved = reply.strip().lower().startswith("y")
        await sessions.resolve_interrupt(session_id, interrupt.interrupt_id, approved=approved)


async def follow(sessions: AgentSessionClient, session_id: str, after: int) -> None:
    """Stream the turn: text as it comes, tool calls, approvals; until the turn ends."""
    async for event in sessions.events(session_id, after=after):
        if event.type is AgentEventType.TEXT_DELTA:
            print(event.data.get("text", ""), end="", flush=True)
        elif event.type is AgentEventType.TOOL_CALL_FINISHED:
            print(f"\n[{event.data.get('tool_name')} done]", flush=True)
        elif event.type is AgentEventType.INTERRUPT_RAISED:
            await ask(sessions, session_id)
        elif event.type in (AgentEventType.TURN_COMPLETED, AgentEventType.TURN_FAILED):
            break
    snapshot = await sessions.get_agent_snapshot(session_id)
    state = snapshot.state
    if state is not None and state.last_turn_error:
        raise SystemExit(f"\nthe turn failed: {state.last_turn_error}")
    for stored in await sessions.export_messages(session_id):
        if stored.message.role is MessageRole.TOOL:
            print(f"tool: {stored.message.text}")
    print(f"\nagent> {snapshot.messages[-1].message.text}")


async def main() -> None:
    parser = argparse.ArgumentParser(description="A durable support agent.")
    parser.add_argument("message", nargs="?", default="My order 7 arrived broken.")
    parser.add_argument("--resume", metavar="SESSION_ID", help="go on with a session after a crash")
    args = parser.parse_args()
    client = await connect()
    stop = asyncio.Event()
    worker = asyncio.create_task(serve_agent_flows(client, [flow], stop=stop))
    sessions = AgentSessionClient(client, flow)
    try:
        if args.resume:
            session_id = args.resume
            snapshot = await sessions.get_agent_snapshot(session_id)
            if snapshot.state is not None and snapshot.state.status is AgentStatus.WAITING_FOR_USER_MESSAGE:
                print(f"agent> {snapshot.messages[-1].message.text}")
                return
            after = await sessions.latest_event_offset(session_id)
            print(f"resuming session {session_id}")
            await ask(sessions, session_id)  # what waited while this program was down
        else:
            session_id = f"support-{uuid.uuid4().hex[:8]}"
            print(f"session {session_id} (resume it with --resume {session_id})")
            print(f"you> {args.message}")
            after = 0
            await sessions.start_session(session_id, args.message)
        await follow(sessions, session_id, after)
    finally:
        stop.set()
        await worker


if __name__ == "__main__":
    asyncio.run(main())
