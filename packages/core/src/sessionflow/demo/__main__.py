"""An offline demo session on the embedded engine: `python -m sessionflow.demo`.

It starts (or reuses) the Temporal dev server under `~/.sessionflow/server`, serves the
built-in runner in this process against the scripted model server on loopback, and plays
one turn that reads a file, asks to write one (an approval), and answers. No model API
is called.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import uuid
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

from sessionflow.builtin._runner import ChatCompletionsRunner
from sessionflow.builtin._tools import tool
from sessionflow.demo._model_script import ModelReply, ScriptedToolCall
from sessionflow.demo._model_server import ScriptedModelServer
from sessionflow.home import sessionflow_home
from sessionflow.kit._flow import AgentSessionFlow
from sessionflow.session.options import AgentSessionOptions, SessionTimings
from sessionflow.session.state import AgentStatus
from sessionflow.session.tools import ToolEffect, ToolPolicy
from sessionflow.temporal.client._client import AgentSessionClient
from sessionflow.temporal.devserver._config import DevServerConfig
from sessionflow.temporal.devserver._server import DevServer
from sessionflow.temporal.worker._worker import serve_agent_flows

__all__ = ["main"]

DEFAULT_DATA_DIR = sessionflow_home() / "server"


def _replies(notes: Path) -> list[ModelReply]:
    """What the scripted model answers: read the notes, ask to write them, then reply."""
    return [
        ModelReply(
            tool_calls=[ScriptedToolCall(id="call-1", name="read_file", arguments={"path": str(notes)})]
        ),
        ModelReply(
            tool_calls=[
                ScriptedToolCall(
                    id="call-2", name="write_file", arguments={"path": str(notes), "text": "done"}
                )
            ]
        ),
        ModelReply(text_chunks=["I read ", "your notes and, with your approval, marked them done."]),
    ]


def _tools(workspace: Path) -> tuple[Callable[[str], str], Callable[[str, str], str]]:
    def inside(path: str) -> Path:
        resolved = Path(path).resolve()
        if not resolved.is_relative_to(workspace.resolve()):
            raise ValueError(f"{path} is outside the demo's workspace")
        return resolved

    def read_file(path: str) -> str:
        """Read a text file of the demo's workspace."""
        return inside(path).read_text()

    def write_file(path: str, text: str) -> str:
        """Write a text file of the demo's workspace."""
        inside(path).write_text(text)
        return f"wrote {len(text)} bytes"

    return read_file, write_file


async def run_demo(data_dir: Path, *, approve: bool | None) -> int:
    server = await DevServer.ensure_running(DevServerConfig(data_dir=data_dir))
    print(f"engine: Temporal dev server at {server.address} ({'reused' if server.reused else 'started'})")
    print(
        f'        stop it with: python -c "from sessionflow.temporal import stop_dev_server; '
        f"stop_dev_server('{data_dir}')\""
    )
    client = await server.connect()
    with tempfile.TemporaryDirectory(prefix="sessionflow-demo-") as folder, ScriptedModelServer() as model:
        workspace = Path(folder)
        notes = workspace / "notes.txt"
        notes.write_text("buy milk\n")
        session_id = f"demo-{uuid.uuid4().hex[:8]}"
        model.script(session_id, _replies(notes))
        read_file, write_file = _tools(workspace)
        runner = ChatCompletionsRunner(
            model="demo",
            base_url=model.base_url(session_id),
            api_key="demo",
            tools=[tool(read_file, effect=ToolEffect.READ), tool(write_file)],
        )
        flow = AgentSessionFlow(
            runner,
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
