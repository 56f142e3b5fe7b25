"""A notes agent (Claude Agent SDK) as a durable session: Claude Code's Read (a read, no
approval) and Write (asks first), the answer streamed, and a session that outlives this program.

    ANTHROPIC_API_KEY=... python examples/claude-agent-sdk/notes_agent.py "Add 'eggs' to notes.txt"
    python examples/claude-agent-sdk/notes_agent.py --resume SESSION_ID

Run it in the folder it may read and write (Claude Code's tools work there). Needs a
Temporal server: ``SESSIONFLOW_SERVER_ADDRESS`` (else Temporal's own configuration, else
127.0.0.1:7233); ``sessionflow server start`` runs one locally. The Claude Code CLI reads
``ANTHROPIC_API_KEY`` and ``ANTHROPIC_BASE_URL``; ``ANTHROPIC_MODEL`` picks the model.

Kill it (Ctrl-C, or kill -9) while it asks for your approval: the session waits in Temporal.
Run it again with ``--resume`` and the session ID it printed: the approval is asked again,
the write runs once, and the answer comes.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import uuid

from claude_agent_sdk import ClaudeAgentOptions

from sessionflow import (
    AgentEventType,
    AgentSessionClient,
    AgentStatus,
    connect,
    serve_agent_flows,
)
from sessionflow_claude_agent_sdk import claude_agent_session_flow

# Claude Code's own tools, run by sessionflow as steps of their own: Read is a read (retried,
# no approval); Write and Edit ask on every call and run once.
flow = claude_agent_session_flow(
    ClaudeAgentOptions(
        cwd=os.getcwd(),
        model=os.environ.get("ANTHROPIC_MODEL"),
        system_prompt="You keep the user's notes in notes.txt. Read it before you change it.",
    ),
    flow_type="ClaudeNotesAgent",
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
