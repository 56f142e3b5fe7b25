"""The tools of the fixture server (see `tests.mcp.fixture_server`)."""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path
from typing import Any

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import Tool, ToolAnnotations

from tests.mcp.fixture_server import SEND_META, record

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)
IDEMPOTENT = ToolAnnotations(read_only_hint=False, idempotent_hint=True, destructive_hint=False)
NO_PROMISE = ToolAnnotations(destructive_hint=False)


class FixtureServer(MCPServer):
    def __init__(self, state_dir: Path) -> None:
        super().__init__("sessionflow-fixture", version="1.0")
        self.state_dir = state_dir

    def record_call(self, tool: str, ctx: Context, **arguments: Any) -> None:
        meta = dict(ctx.request_context.meta or {})
        record(self.state_dir, "call", tool=tool, arguments=arguments, meta=meta)

    async def list_tools(self) -> list[Tool]:
        record(self.state_dir, "list")
        tools = [t for t in await super().list_tools() if not (self.state_dir / f"hidden-{t.name}").exists()]
        if (self.state_dir / "shifted").exists():
            for tool in tools:
                if tool.name == "shifty":
                    schema = dict(tool.input_schema)
                    schema["properties"] = {**schema.get("properties", {}), "y": {"type": "integer"}}
                    schema["required"] = [*schema.get("required", []), "y"]
                    tool.input_schema = schema
        return tools


def _ledger_entry(state_dir: Path, ctx: Context) -> Path:
    """The ledger file of the call's idempotency key (the one its verify asks about)."""
    key = str((ctx.request_context.meta or {}).get("io.sessionflow/idempotencyKey", ""))
    return state_dir / f"posted-{hashlib.sha256(key.encode()).hexdigest()[:16]}"


def build(state_dir: Path) -> FixtureServer:
    server = FixtureServer(state_dir)

    @server.tool(annotations=READ_ONLY)
    def lookup(key: str, ctx: Context) -> str:
        """Read a value."""
        server.record_call("lookup", ctx, key=key)
        return f"value of {key}"

    @server.tool(annotations=IDEMPOTENT)
    def upsert(key: str, value: str, ctx: Context) -> str:
        """Store a value under a key."""
        server.record_call("upsert", ctx, key=key, value=value)
        return f"stored {key}"

    @server.tool(annotations=NO_PROMISE, meta=SEND_META)
    def send(to: str, text: str, ctx: Context) -> str:
        """Send a message (not idempotent)."""
        server.record_call("send", ctx, to=to, text=text)
        return f"sent to {to}"

    @server.tool()
    async def slow_send(to: str, ctx: Context) -> str:
        """Send slowly: records the call, then blocks until the test releases the gate."""
        server.record_call("slow_send", ctx, to=to)
        await _wait_at_gate(state_dir, "slow")
        return f"slowly sent to {to}"

    @server.tool(meta={"io.sessionflow/verifyTool": "post_status"})
    async def slow_post(to: str, ctx: Context) -> str:
        """Post a status to someone, slowly (blocks at the gate "post"); verified by post_status.

        With ``post-first`` in the state folder the post lands in the ledger before the
        call blocks (a write that took effect); without it, only after the gate opens.
        """
        server.record_call("slow_post", ctx, to=to)
        entry = _ledger_entry(state_dir, ctx)
        if (state_dir / "post-first").exists():
            entry.write_text(to)
        await _wait_at_gate(state_dir, "post")
        entry.write_text(to)
        return f"posted to {to}"

    @server.tool(annotations=READ_ONLY)
    def post_status(to: str, ctx: Context) -> dict[str, str]:
        """Whether the slow_post with this call's idempotency key landed (the verify tool of slow_post)."""
        server.record_call("post_status", ctx, to=to)
        if (state_dir / "ledger-offline").exists():
            return {"outcome": "unknown", "message": "the ledger is offline"}
        entry = _ledger_entry(state_dir, ctx)
        if entry.exists():
            return {"outcome": "succeeded", "output": f"posted to {entry.read_text()} (found in the ledger)"}
        return {"outcome": "failed", "message": "no post with this key in the ledger"}

    @server.tool(annotations=READ_ONLY)
    def shifty(x: int, ctx: Context) -> str:
        """A tool whose schema changes when the test says so."""
        server.record_call("shifty", ctx, x=x)
        return f"x={x}"

    @server.tool()
    def fail(reason: str, ctx: Context) -> str:
        """Always fails with the given reason."""
        server.record_call("fail", ctx, reason=reason)
        raise ToolError(f"failed on purpose: {reason}")

    @server.tool()
    def crash(ctx: Context) -> str:
        """Kills the server in the middle of the call."""
        server.record_call("crash", ctx)
        os._exit(7)

    @server.tool(annotations=READ_ONLY)
    def whoami(ctx: Context) -> str:
        """The Authorization header the request came with (HTTP only)."""
        authorization = (ctx.headers or {}).get("authorization", "")
        server.record_call("whoami", ctx, authorization=authorization)
        return authorization or "anonymous"

    return server


async def _wait_at_gate(state_dir: Path, name: str) -> None:
    """Mark the gate reached and block until the test releases it (at most 120 s).

    The file protocol of `sessionflow.testing.FileGate(state_dir, name)`: another process
    releases it through a file, so there is no event to wait on.
    """
    (state_dir / f"gate-{name}.reached").write_text(str(os.getpid()))
    deadline = time.monotonic() + 120
    while not (state_dir / f"gate-{name}.released").exists() and time.monotonic() < deadline:  # noqa: ASYNC110
        await anyio.sleep(0.05)
