"""`sessionflow serve` stopped by Ctrl-C (SIGINT) or SIGTERM while a browser follows a session's events."""

from __future__ import annotations

import asyncio
import os
import signal
import time

import httpx
import pytest

from sessionflow.testing import wait_until
from tests.cli.background import ServeCommand
from tests.cli.conftest import Cli
from tests.server.helpers import read_sse

GRACE_SECONDS = 5.0
"""uvicorn's graceful-shutdown timeout in `running_server`: open requests get this long."""


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
async def test_serve_stops_at_once_with_an_open_event_stream_and_no_traceback(
    cli: Cli, sig: signal.Signals
) -> None:
    cli.write_config(f"model: demo\nserver: {cli.server_address}\n", framework="builtin")
    serve = ServeCommand(cli, cli.home / "serve.log", "--temporal-ui", "http://localhost:8233/")
    try:
        base, code = await serve.login_url()
        async with httpx.AsyncClient(base_url=base, timeout=60) as http:
            token = (await http.post("/api/v1/login", json={"code": code})).json()["token"]
            headers = {"Authorization": f"Bearer {token}"}
            me = (await http.get("/api/v1/me", headers=headers)).json()
            assert me["temporal_ui_url"] == "http://localhost:8233"
            # The demo's turn writes a file, which waits for approval: the session is mid-turn
            # when the server stops, with its worker in the same process.
            created = await http.post("/api/v1/sessions", json={"message": "show me around"}, headers=headers)
            assert created.status_code == 201, created.text
            session_id = created.json()["session_id"]
            async with http.stream("GET", f"/api/v1/sessions/{session_id}/events", headers=headers) as stream:
                assert stream.status_code == 200
                reading = asyncio.create_task(read_sse(stream, until=lambda _: False))

                async def waiting() -> bool:
                    items = (await http.get("/api/v1/interrupts", headers=headers)).json()["interrupts"]
                    return any(i["session_id"] == session_id for i in items)

                await wait_until("the demo's write to wait for approval", waiting, timeout=120)
                assert not reading.done()
                started = time.monotonic()
                os.killpg(serve.process.pid, sig)
                # The server ends the stream itself (it does not wait for the client to leave).
                events = await asyncio.wait_for(reading, GRACE_SECONDS)
            code_ = await serve.exit_code()
            took = time.monotonic() - started
    finally:
        serve.kill()
    output = serve.output()
    assert code_ == 0, output
    assert took < GRACE_SECONDS, f"took {took:.1f} s:\n{output}"
    assert "Traceback" not in output, output
    assert "sessionflow serve stopped" in output
    kinds = [e["event"] for e in events]
    assert "turn_started" in kinds  # the stream was live
    # A server going away is not the session's end: a browser reconnects with Last-Event-ID.
    assert "end" not in kinds
