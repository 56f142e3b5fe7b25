"""`sessionflow serve --webhook-url`: a delivery pending when the server is killed is sent after it starts again."""

from __future__ import annotations

import asyncio
import base64
import json
import stat
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from sessionflow.testing import wait_until
from sessionflow_cli.commands._serve import WEBHOOK_SECRET_ENV, webhook_state_path
from tests.cli.background import ServeCommand
from tests.cli.conftest import Cli

SECRET = "a-webhook-secret-of-some-length"


@dataclass
class Receiver:
    """Records every POST; answers 500 while `failing`, else 200 when the Standard Webhooks signature verifies."""

    failing: bool = True
    received: list[tuple[dict[str, str], bytes, int]] = field(default_factory=lambda: [])
    lock: threading.Lock = field(default_factory=threading.Lock)
    url: str = ""

    def statuses(self, webhook_id: str) -> list[int]:
        with self.lock:
            return [status for headers, _, status in self.received if headers["webhook-id"] == webhook_id]


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    state = Receiver()
    verifier = Webhook("whsec_" + base64.b64encode(SECRET.encode()).decode())

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            headers = {k.lower(): v for k, v in self.headers.items()}
            try:
                verifier.verify(body, headers)
                status = 500 if state.failing else 200
            except WebhookVerificationError:
                status = 401
            with state.lock:
                state.received.append((headers, body, status))
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.url = f"http://127.0.0.1:{server.server_address[1]}/hook"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()


async def test_a_pending_delivery_survives_a_sigkill_and_is_sent_by_the_next_server(
    cli: Cli, receiver: Receiver
) -> None:
    cli.write_config(f"model: demo\nserver: {cli.server_address}\n", framework="builtin")
    cli.env[WEBHOOK_SECRET_ENV] = SECRET
    store = cli.home / "tokens.json"
    state_file = webhook_state_path(store)
    args = ("--token-store", str(store), "--webhook-url", receiver.url)
    first = ServeCommand(cli, cli.home / "serve-1.log", *args)
    try:
        base, code = await first.login_url()
        async with httpx.AsyncClient(base_url=base, timeout=60) as http:
            token = (await http.post("/api/v1/login", json={"code": code})).json()["token"]
            headers = {"Authorization": f"Bearer {token}"}
            created = await http.post("/api/v1/sessions", json={"message": "show me around"}, headers=headers)
            assert created.status_code == 201, created.text
            session_id = created.json()["session_id"]

        def failing_and_pending() -> str | None:
            with receiver.lock:
                ids = [h["webhook-id"] for h, _, status in receiver.received if status == 500]
            if not ids or not state_file.exists():
                return None
            pending = [p["id"] for p in json.loads(state_file.read_text())["pending"]]
            return ids[0] if ids[0] in pending else None

        webhook_id = await wait_until("a failing delivery kept as pending", failing_and_pending, timeout=120)
        assert webhook_id.startswith(f"{session_id}:")
        assert stat.S_IMODE(state_file.stat().st_mode) == 0o600
    finally:
        first.kill()  # SIGKILL: nothing is flushed at exit
    assert receiver.statuses(webhook_id) and set(receiver.statuses(webhook_id)) == {500}

    receiver.failing = False
    second = ServeCommand(cli, cli.home / "serve-2.log", *args)
    try:
        await second.login_url()

        def delivered() -> bool | None:
            return 200 in receiver.statuses(webhook_id) or None

        await wait_until("the pending delivery, after the restart", delivered, timeout=120)
        with receiver.lock:
            [(sent, body, _)] = [
                r for r in receiver.received if r[0]["webhook-id"] == webhook_id and r[2] == 200
            ]
        payload = json.loads(body)
        assert (payload["delivery_id"], payload["type"], payload["session_id"]) == (
            webhook_id,
            "interrupt_raised",
            session_id,
        )
        assert sent["webhook-signature"].startswith("v1,")

        def no_longer_pending() -> bool | None:
            pending = [p["id"] for p in json.loads(state_file.read_text())["pending"]]
            return webhook_id not in pending or None

        await wait_until("the delivery to leave the state file", no_longer_pending, timeout=30)
        assert await asyncio.wait_for(second.stop(), 60) == 0, second.output()
    finally:
        second.kill()
