"""An offline demo session on the embedded engine: `python -m sessionflow.demo`.

It starts (or reuses) the Temporal dev server under `~/.sessionflow/server`, serves a
scripted agent in this process, and plays one turn that reads a file, asks to write one
(an approval), and answers. No model API is called.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import uuid
from datetime import timedelta
from pathlib import Path

from sessionflow.kit._flow import AgentSessionFlow
from sessionflow.session.options import AgentSessionOptions, SessionTimings
from sessionflow.session.state import AgentStatus
from sessionflow.session.tools import ToolEffect, ToolPolicy
from sessionflow.temporal.client._client import AgentSessionClient
from sessionflow.temporal.devserver._config import DevServerConfig
from sessionflow.temporal.devserver._server import DevServer
from sessionflow.temporal.worker._worker import serve_agent_flows
from sessionflow.testing._scripted_runner import ScriptedRunner, write_script

__all__ = ["main"]

DEFAULT_DATA_DIR = Path.home() / ".sessionflow" / "server"


def _script(workspace: Path) -> list[list[dict[str, object]]]:
    notes = str(workspace / "notes.txt")
    return [
        [
            {"tool_calls": [{"id": "call-1", "name": "read_file", "arguments": {"path": notes}}]},
            {
                "tool_calls": [
                    {"id": "call-2", "name": "write_file", "arguments": {"path": notes, "text": "done"}}
                ]
            },
            {
                "text": "I read your notes and, with your approval, marked them done.",
                "deltas": ["I read ", "your notes"],
            },
        ]
    ]


async def run_demo(data_dir: Path, *, approve: bool | None) -> int:
    server = await DevServer.ensure_running(DevServerConfig(data_dir=data_dir))
    print(f"engine: Temporal dev server at {server.address} ({'reused' if server.reused else 'started'})")
    print(
        f'        stop it with: python -c "from sessionflow.temporal import stop_dev_server; '
        f"stop_dev_server('{data_dir}')\""
    )
    client = await server.connect()
    with tempfile.TemporaryDirectory(prefix="sessionflow-demo-") as folder:
        state_dir = Path(folder)
        workspace = state_dir / "workspace"
        workspace.mkdir()
        (workspace / "notes.txt").write_text("buy milk\n")
        session_id = f"demo-{uuid.uuid4().hex[:8]}"
        write_script(
            state_dir,
            session_id,
            _script(workspace),
            {
                "read_file": {"effect": "read", "output": "buy milk"},
                "write_file": {"output": "wrote 4 bytes"},
            },
        )
        flow = AgentSessionFlow(
            ScriptedRunner(state_dir),
            flow_type=f"sessionflow-demo-{uuid.uuid4().hex[:6]}",
            options=AgentSessionOptions(
                tool_policies={"read_file": ToolPolicy(effect=ToolEffect.READ)},
                timings=SessionTimings(heartbeat_interval=timedelta(seconds=5)),
            ),
        )
        stop = asyncio.Event()
        worker = asyncio.create_task(serve_agent_flows(client, [flow], stop=stop))
        sessions = AgentSessionClient(client, flow)
        try:
            print(f"session: {session_id}")
            print("you> please tidy my notes")
            await sessions.start_session(session_id, "please tidy my notes")
            return await _follow(sessions, session_id, approve)
        finally:
            stop.set()
            await worker


async def _follow(sessions: AgentSessionClient, session_id: str, approve: bool | None) -> int:
    printed: set[str] = set()
    while True:
        snapshot = await sessions.get_agent_snapshot(session_id)
        for record in snapshot.tool_calls:
            key = f"{record.tool_call_id}:{record.status.value}"
            if key not in printed:
                printed.add(key)
                print(f"[tool] {record.tool_name} {record.arguments} -> {record.status.value}")
        for interrupt in snapshot.pending_interrupts:
            answer = approve
            if answer is None:
                reply = await asyncio.to_thread(
                    input, f"[approval] {interrupt.tool_name} {interrupt.arguments} [y/n] "
                )
                answer = reply.strip().lower().startswith("y")
            else:
                print(
                    f"[approval] {interrupt.tool_name} {interrupt.arguments} -> {'yes' if answer else 'no'}"
                )
            await sessions.resolve_interrupt(session_id, interrupt.interrupt_id, approved=answer)
        state = snapshot.state
        if state is not None and state.turn_count and state.status is AgentStatus.WAITING_FOR_USER_MESSAGE:
            if state.last_turn_error:
                print(f"turn failed: {state.last_turn_error}")
                return 1
            print(f"agent> {snapshot.messages[-1].message.text}")
            print(
                f"usage: {json.dumps({'requests': snapshot.usage.requests, 'tokens': snapshot.usage.total_tokens})}"
            )
            return 0
        await asyncio.sleep(0.05)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sessionflow.demo", description=__doc__)
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR, help="dev server data folder")
    parser.add_argument("--ask", action="store_true", help="ask before approving the write")
    args = parser.parse_args(argv)
    return asyncio.run(run_demo(args.data_dir, approve=None if args.ask else True))


if __name__ == "__main__":
    raise SystemExit(main())
