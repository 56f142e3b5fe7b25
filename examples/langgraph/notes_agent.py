"""A notes agent (LangGraph) as a durable session: a read tool, a write tool that asks first,
the answer streamed, and a session that outlives this program.

    OPENAI_API_KEY=... python examples/langgraph/notes_agent.py "Add 'eggs' to my notes"
    python examples/langgraph/notes_agent.py --resume SESSION_ID

Needs a Temporal server: ``SESSIONFLOW_SERVER_ADDRESS`` (else Temporal's own configuration,
else 127.0.0.1:7233); ``sessionflow server start`` runs one locally. The model is
``ChatOpenAI($OPENAI_MODEL)`` (default gpt-4.1-mini), at ``OPENAI_BASE_URL`` when it is set.
The flow builds LangGraph's ready-made tool-calling agent; pass ``graph=`` for your own.

Kill it (Ctrl-C, or kill -9) while it asks for your approval: the session waits in Temporal.
Run it again with ``--resume`` and the session ID it printed: the approval is asked again,
the write runs once, and the answer comes.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import uuid
from pathlib import Path

from langchain_core.tools import tool
from langchain_openai import ChatOpenAI

from sessionflow import (
    AgentEventType,
    AgentSessionClient,
    AgentSessionOptions,
    AgentStatus,
    ToolEffect,
    ToolPolicy,
    connect,
    serve_agent_flows,
)
from sessionflow_langgraph import langgraph_session_flow

NOTES = Path(os.environ.get("NOTES_FILE", "notes.txt")).resolve()


@tool
def read_notes() -> str:
    """Read the user's notes."""
    return NOTES.read_text() if NOTES.exists() else "(no notes yet)"


@tool
def write_notes(text: str) -> str:
    """Replace the user's notes with `text`."""
    NOTES.write_text(text)
    return f"wrote {len(text)} characters to {NOTES.name}"


flow = langgraph_session_flow(
    flow_type="LangGraphNotesAgent",
    model=ChatOpenAI(model=os.environ.get("OPENAI_MODEL", "gpt-4.1-mini")),
    tools=[read_notes, write_notes],
    system_prompt="You keep the user's notes. Read them before you change them.",
    options=AgentSessionOptions(
        tool_policies={
            "read_notes": ToolPolicy(effect=ToolEffect.READ),  # retried freely, no approval
            "write_notes": ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE),  # once, approved
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
    print(f"\nagent> {snapshot.messages[-1].message.text}")


async def main() -> None:
    parser = argparse.ArgumentParser(description="A durable notes agent.")
    parser.add_argument("message", nargs="?", default="Add 'eggs' to my notes.")
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
            session_id = f"notes-{uuid.uuid4().hex[:8]}"
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
