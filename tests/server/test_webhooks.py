"""Webhooks against a real local receiver: signed bodies, one delivery per event, retries with backoff."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import json
import stat
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import httpx
import pytest
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from sessionflow import AgentSessionClient
from sessionflow_server import ServerConfig, SessionWatcher, WebhookConfig, WebhookSender, signing_key
from tests.server.conftest import Api, ApiFactory
from tests.server.helpers import eventually, idle_after, pending

SECRET = "a-webhook-secret-of-some-length"
REFUND: dict[str, object] = {"id": "c1", "name": "refund", "arguments": {"order": 7}}


@dataclass
class Receiver:
    """An HTTP server that records every POST and answers 500 to the first `failures` of them.

    With a `verifier`, a POST whose signature it refuses gets 401.
    """

    failures: int = 0
    verifier: Callable[[dict[str, str], bytes], bool] | None = None
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
            headers = {k.lower(): v for k, v in self.headers.items()}
            with state.lock:
                status = 500 if len(state.received) < state.failures else 200
                if state.verifier is not None and not state.verifier(headers, body):
                    status = 401
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


def verified(secret: str, headers: dict[str, str], body: bytes, now: float, tolerance: int = 300) -> bool:
    """The docs' reference verifier (Standard Webhooks), with the clock as a parameter."""
    if secret.startswith("whsec_"):
        key = base64.b64decode(secret.removeprefix("whsec_"))
    else:
        key = secret.encode()
    webhook_id, timestamp = headers["webhook-id"], headers["webhook-timestamp"]
    if abs(now - int(timestamp)) > tolerance:
        return False  # too old (a replay) or too far ahead
    signed = f"{webhook_id}.{timestamp}.".encode() + body
    expected = "v1," + base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    return any(hmac.compare_digest(expected, s) for s in headers["webhook-signature"].split())


def _library_verifies(secret: str, headers: dict[str, str], body: bytes) -> bool:
    try:
        Webhook(secret).verify(body, headers)
    except WebhookVerificationError:
        return False
    return True


def _config(url: str, **overrides: Any) -> WebhookConfig:
    settings: dict[str, Any] = {"first_delay": 0.05, "poll_interval": 0.1, "list_every": 2, **overrides}
    settings.setdefault("secret", SECRET)
    return WebhookConfig(url=url, **settings)


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
        # The deprecated header still verifies for old receivers...
        expected = "sha256=" + hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
        assert headers["x-sessionflow-signature"] == expected
        assert headers["content-type"] == "application/json"
        # ...and the Standard Webhooks headers verify with the library, given the raw secret as base64.
        assert headers["webhook-id"] == headers["x-sessionflow-delivery"] == json.loads(body)["delivery_id"]
        assert _library_verifies("whsec_" + base64.b64encode(SECRET.encode()).decode(), headers, body)
        assert verified(SECRET, headers, body, now=time.time())
    # The first delivery failed twice and went through on its third try, the same body each time.
    assert [status for _, _, status in received[:3]] == [500, 500, 200]
    assert len({body for _, body, _ in received[:3]}) == 1
    assert len({h["x-sessionflow-delivery"] for h, _, _ in received[:3]}) == 1
    assert len({h["webhook-id"] for h, _, _ in received[:3]}) == 1
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


WHSEC = "whsec_" + base64.b64encode(b"0123456789abcdef0123456789abcdef").decode()


async def test_a_receiver_verifies_the_standard_signature_and_refuses_replays_and_tampering(
    receiver: Receiver,
) -> None:
    receiver.verifier = lambda headers, body: _library_verifies(WHSEC, headers, body)
    payload = {"type": "turn_ended", "delivery_id": "s:7"}
    sender = WebhookSender(_config(receiver.url, secret=WHSEC, max_attempts=1))
    # A delivery captured ten minutes ago and sent again now: its timestamp is too old.
    replayer = WebhookSender(
        _config(receiver.url, secret=WHSEC, max_attempts=1), clock=lambda: time.time() - 600
    )
    try:
        assert await sender.deliver("turn_ended", "s:7", payload)
        assert not await replayer.deliver("turn_ended", "s:7", payload)
    finally:
        await sender.aclose()
        await replayer.aclose()
    with receiver.lock:
        [(good, body, ok), (stale, _, refused)] = receiver.received
    assert (ok, refused) == (200, 401)
    assert json.loads(body) == payload
    assert good["webhook-id"] == "s:7"
    assert abs(int(good["webhook-timestamp"]) - time.time()) < 60
    assert good["webhook-signature"].startswith("v1,")
    assert int(good["webhook-timestamp"]) - int(stale["webhook-timestamp"]) >= 590
    # The key is the base64-decoded secret, as the library derives it.
    assert signing_key(WHSEC) == b"0123456789abcdef0123456789abcdef"
    assert verified(WHSEC, good, body, now=time.time())

    sent = {k: v for k, v in good.items() if k.startswith(("webhook-", "x-sessionflow-", "content-type"))}
    async with httpx.AsyncClient() as http:
        tampered = body.replace(b"turn_ended", b"turn_ENDED")
        assert (await http.post(receiver.url, content=tampered, headers=sent)).status_code == 401
        other_id = {**sent, "webhook-id": "s:8"}
        assert (await http.post(receiver.url, content=body, headers=other_id)).status_code == 401
        assert (await http.post(receiver.url, content=body, headers=sent)).status_code == 200
    # The same capture, judged five minutes and a bit later, is a replay.
    timestamp = int(good["webhook-timestamp"])
    assert verified(WHSEC, good, body, now=timestamp + 299)
    assert not verified(WHSEC, good, body, now=timestamp + 301)
    assert not verified(WHSEC, good, tampered, now=timestamp)


def test_a_whsec_secret_must_be_base64_of_enough_bytes() -> None:
    with pytest.raises(ValueError, match="base64"):
        WebhookConfig(url="http://127.0.0.1/hook", secret="whsec_not*base64*at*all!!")
    with pytest.raises(ValueError, match="16 bytes"):
        WebhookConfig(
            url="http://127.0.0.1/hook", secret="whsec_" + base64.b64encode(b"too-short-key").decode()
        )
    assert signing_key(SECRET) == SECRET.encode()


async def test_the_state_file_keeps_a_delivery_pending_until_it_succeeds(
    api_factory: ApiFactory, receiver: Receiver, tmp_path: Path
) -> None:
    receiver.failures = 3
    state = tmp_path / "hooks" / "state.json"
    api: Api = await api_factory(
        config=ServerConfig(webhooks=_config(receiver.url, first_delay=0.5, state_path=state))
    )
    api.script("hook-3", [[{"text": "hello"}]])
    assert (await api.post("/api/v1/sessions", {"session_id": "hook-3", "message": "hi"})).status_code == 201

    def kept() -> dict[str, Any]:
        return json.loads(state.read_text()) if state.exists() else {"cursors": {}, "pending": []}

    async def failing_and_kept() -> str | None:
        with receiver.lock:
            failed = [h["webhook-id"] for h, _, status in receiver.received if status == 500]
        pending = [p["id"] for p in kept()["pending"]]
        return failed[0] if failed and failed[0] in pending else None

    webhook_id = await eventually("a failing delivery kept in the state file", failing_and_kept)
    assert webhook_id.startswith("hook-3:")
    assert stat.S_IMODE(state.stat().st_mode) == 0o600
    assert kept()["cursors"]["hook-3"]["offset"] >= int(webhook_id.split(":")[1])

    async def delivered_and_dropped() -> bool | None:
        done = any(p["delivery_id"] == webhook_id for p in receiver.ok())
        return (done and webhook_id not in [p["id"] for p in kept()["pending"]]) or None

    await eventually("the delivery to succeed and leave the state file", delivered_and_dropped)
    assert [p.name for p in state.parent.iterdir()] == ["state.json"]  # no temporary file left


async def test_an_unreadable_state_file_is_set_aside_not_fatal(receiver: Receiver, tmp_path: Path) -> None:
    state = tmp_path / "state.json"
    state.write_text("{not json")
    sender = WebhookSender(_config(receiver.url, state_path=state))

    async def nobody(session_id: str) -> str | None:
        return None

    try:
        watcher = SessionWatcher([], sender, nobody)  # logs the error, starts empty
        stop = asyncio.Event()
        stop.set()
        await watcher.run(stop)
        watcher.track("s-1", cast(AgentSessionClient, SimpleNamespace(flow_type="flow-a")))
    finally:
        await sender.aclose()
    assert receiver.received == []
    assert json.loads(state.read_text()) == {
        "version": 1,
        "cursors": {"s-1": {"flow_type": "flow-a", "offset": 0}},
        "pending": [],
    }
