"""Webhooks against a real local receiver: signed bodies, one delivery per event, retries with backoff."""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from sessionflow_server import ServerConfig, WebhookConfig, WebhookSender
from tests.server.conftest import Api, ApiFactory
from tests.server.helpers import eventually, idle_after, pending

SECRET = "a-webhook-secret-of-some-length"
REFUND: dict[str, object] = {"id": "c1", "name": "refund", "arguments": {"order": 7}}


@dataclass
class Receiver:
    """An HTTP server that records every POST and answers 500 to the first `failures` of them."""

    failures: int = 0
    received: list[tuple[dict[str, str], bytes, int]] = field(default_factory=lambda: [])
    lock: threading.Lock = field(default_factory=threading.Lock)
    url: str = ""

    def ok(self) -> list[dict[str, Any]]:
        with self.lock:
            return [json.loads(body) for _, body, status in self.received if status == 200]


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    state = Receiver()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            with state.lock:
                status = 500 if len(state.received) < state.failures else 200
                state.received.append(({k.lower(): v for k, v in self.headers.items()}, body, status))
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


def _config(url: str, **overrides: Any) -> WebhookConfig:
    settings: dict[str, Any] = {"first_delay": 0.05, "poll_interval": 0.1, "list_every": 2, **overrides}
    return WebhookConfig(url=url, secret=SECRET, **settings)


async def test_interrupts_and_ended_turns_are_posted_signed_and_retried(
    api_factory: ApiFactory, receiver: Receiver
) -> None:
    receiver.failures = 2
    api: Api = await api_factory(config=ServerConfig(webhooks=_config(receiver.url)))
    api.script(
        "hook-1",
        [[{"tool_calls": [REFUND]}, {"text": "refunded"}]],
        {"refund": {"effect": "non_idempotent_write"}},
    )
    assert (
        await api.post("/api/v1/sessions", {"session_id": "hook-1", "message": "refund"})
    ).status_code == 201
    interrupt = await pending(api, "hook-1")

    async def raised() -> list[dict[str, Any]] | None:
        return [p for p in receiver.ok() if p["type"] == "interrupt_raised"] or None

    [first] = await eventually("the interrupt's webhook", raised)
    assert (first["session_id"], first["user"]) == ("hook-1", "alice")
    assert first["event"]["data"]["interrupt_id"] == interrupt["interrupt_id"]
    path = f"/api/v1/sessions/hook-1/interrupts/{interrupt['interrupt_id']}"
    assert (await api.post(path, {"approved": True})).status_code == 200
    await idle_after(api, "hook-1", 1)

    async def ended() -> list[dict[str, Any]] | None:
        return [p for p in receiver.ok() if p["type"] == "turn_ended"] or None

    [turn] = await eventually("the ended turn's webhook", ended)
    assert turn["event"]["type"] == "turn_completed"

    with receiver.lock:
        received = list(receiver.received)
    for headers, body, _ in received:
        expected = "sha256=" + hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
        assert headers["x-sessionflow-signature"] == expected
        assert headers["content-type"] == "application/json"
    # The first delivery failed twice and went through on its third try, the same body each time.
    assert [status for _, _, status in received[:3]] == [500, 500, 200]
    assert len({body for _, body, _ in received[:3]}) == 1
    assert len({h["x-sessionflow-delivery"] for h, _, _ in received[:3]}) == 1
    delivered = [json.loads(body)["delivery_id"] for _, body, status in received if status == 200]
    assert len(delivered) == len(set(delivered)) == 2  # one per event, none repeated


async def test_a_session_started_elsewhere_is_found_and_followed(
    api_factory: ApiFactory, receiver: Receiver
) -> None:
    api: Api = await api_factory(config=ServerConfig(webhooks=_config(receiver.url)))
    api.script("hook-2", [[{"text": "hello"}]])
    await api.sessions.start_session("hook-2", "hi", environment={"user": "alice"})

    async def ended() -> list[dict[str, Any]] | None:
        return [p for p in receiver.ok() if p["session_id"] == "hook-2" and p["type"] == "turn_ended"] or None

    [turn] = await eventually("the webhook of a session the API did not start", ended)
    assert turn["user"] == "alice"


async def test_a_delivery_gives_up_after_its_attempts_with_growing_delays(receiver: Receiver) -> None:
    receiver.failures = 100
    delays: list[float] = []

    async def record(seconds: float) -> None:
        delays.append(seconds)

    sender = WebhookSender(
        _config(receiver.url, max_attempts=4, first_delay=1.0, max_delay=3.0), sleep=record
    )
    try:
        assert not await sender.deliver("turn_ended", "s:1", {"type": "turn_ended"})
    finally:
        await sender.aclose()
    assert len(receiver.received) == 4
    assert delays == [1.0, 2.0, 3.0]


def test_a_webhook_needs_a_real_secret_and_an_http_url() -> None:
    with pytest.raises(ValueError, match="secret"):
        WebhookConfig(url="http://127.0.0.1/hook", secret="short")
    with pytest.raises(ValueError, match="http"):
        WebhookConfig(url="file:///etc/passwd", secret=SECRET)
