"""Webhooks: a signed POST when an interrupt is raised and when a turn ends, retried with backoff.

A watcher reads the durable events of the sessions it follows (a Query per session and
poll: nothing is added to a session's history), and hands the two kinds of event that
matter to a person away from the screen to the sender. The body is JSON, signed as
Standard Webhooks (https://www.standardwebhooks.com) sign it: ``webhook-id`` (the delivery
ID, ``<session>:<offset>``), ``webhook-timestamp`` (Unix seconds, at each attempt) and
``webhook-signature: v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">``, so a receiver
that checks the timestamp refuses a replayed capture. The key is the base64-decoded part of
a ``whsec_<base64>`` secret, else the secret's UTF-8 bytes. The older
``X-Sessionflow-Signature: sha256=<hex HMAC of the body>`` (no timestamp) is sent too, for
one release, deprecated. A delivery that fails (a connection error or a status other than
2xx) is tried again after 1, 2, 4, ... seconds (`first_delay`, doubled, at most
`max_delay`) up to `max_attempts` times; each carries the same ``webhook-id`` (and
``X-Sessionflow-Delivery``) so a receiver can drop a repeat. Deliveries are at least once. Without a `state_path`, they start from the
moment the server starts: events that happened while no server ran are not sent, and
deliveries still pending when it stops are lost.

With a `state_path` the per-session cursors and the pending deliveries are kept in that
file (JSON, mode 0600, rewritten whole through a temporary name and a rename): a delivery
is written there, with the cursor past its event, before its first attempt, and removed
when it succeeds or gives up. A server started again on the same file retries what was
pending (from its first attempt, with the same ``webhook-id``) and reads on from each
session's cursor, so events raised while no server ran are sent too.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import hashlib
import hmac
import json
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import httpx
import msgspec

from sessionflow import AgentEvent, AgentEventType, AgentSessionClient
from sessionflow.home import tighten, write_private
from sessionflow.temporal import SessionStatus, list_sessions

__all__ = [
    "SIGNATURE_HEADER",
    "TIMESTAMP_TOLERANCE",
    "SessionWatcher",
    "WebhookConfig",
    "WebhookSender",
    "sign",
    "signing_key",
    "standard_signature",
]

SIGNATURE_HEADER = "X-Sessionflow-Signature"
"""Deprecated: ``sha256=<hex HMAC of the body>``, no timestamp; sent for one more release."""
DELIVERY_HEADER = "X-Sessionflow-Delivery"
EVENT_HEADER = "X-Sessionflow-Event"
ID_HEADER = "webhook-id"
TIMESTAMP_HEADER = "webhook-timestamp"
STANDARD_SIGNATURE_HEADER = "webhook-signature"
TIMESTAMP_TOLERANCE = 300
"""Seconds a receiver should accept a ``webhook-timestamp`` away from its clock (Standard Webhooks' 5 minutes)."""
_SECRET_PREFIX = "whsec_"

_log = logging.getLogger("sessionflow_server.webhooks")
_KINDS = {
    AgentEventType.INTERRUPT_RAISED: "interrupt_raised",
    AgentEventType.TURN_COMPLETED: "turn_ended",
    AgentEventType.TURN_FAILED: "turn_ended",
}
"""The events a webhook is sent for, and the kind each is sent as."""


@dataclass(frozen=True, kw_only=True)
class WebhookConfig:
    url: str
    secret: str
    max_attempts: int = 6
    first_delay: float = 1.0
    max_delay: float = 60.0
    timeout: float = 10.0
    poll_interval: float = 1.0
    """Seconds between reads of the followed sessions' events."""
    list_every: int = 10
    """Polls between listings of the flows' running sessions (to find sessions started elsewhere)."""
    state_path: Path | None = None
    """Where cursors and pending deliveries are kept across restarts; None keeps them in memory."""

    def __post_init__(self) -> None:
        if not self.url.startswith(("http://", "https://")):
            raise ValueError(f"webhook URL {self.url!r} must be http:// or https://")
        if len(self.secret) < 16:
            raise ValueError("a webhook secret needs at least 16 characters")
        if len(signing_key(self.secret)) < 16:
            raise ValueError("a whsec_ webhook secret needs at least 16 bytes after base64 decoding")
        if self.max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")


def signing_key(secret: str) -> bytes:
    """The HMAC key: the base64-decoded rest of ``whsec_<base64>``, else the secret's UTF-8 bytes.

    A Standard Webhooks library given a raw secret expects base64: hand it
    ``"whsec_" + base64(secret.encode())``.
    """
    if secret.startswith(_SECRET_PREFIX):
        encoded = secret[len(_SECRET_PREFIX) :]
        try:
            return base64.b64decode(encoded + "=" * (-len(encoded) % 4), validate=True)
        except (binascii.Error, ValueError):
            raise ValueError("a whsec_ webhook secret must be base64 after the prefix") from None
    return secret.encode("utf-8")


def sign(secret: str, body: bytes) -> str:
    """The deprecated ``X-Sessionflow-Signature`` value: HMAC of the body only, under the secret's UTF-8 bytes."""
    return "sha256=" + hmac.new(secret.encode("utf-8"), body, hashlib.sha256).hexdigest()


def standard_signature(secret: str, delivery_id: str, timestamp: int, body: bytes) -> str:
    """The ``webhook-signature`` value: ``v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">``."""
    signed = f"{delivery_id}.{timestamp}.".encode() + body
    digest = hmac.new(signing_key(secret), signed, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode("ascii")


class WebhookSender:
    def __init__(
        self,
        config: WebhookConfig,
        *,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.config = config
        self._sleep = sleep
        self._clock = clock
        self._client = httpx.AsyncClient(timeout=config.timeout, follow_redirects=False)

    async def deliver(self, event_kind: str, delivery_id: str, payload: dict[str, Any]) -> bool:
        """POST once per attempt until a 2xx; False when every attempt failed."""
        body = msgspec.json.encode(payload)
        legacy = sign(self.config.secret, body)
        delay = self.config.first_delay
        for attempt in range(1, self.config.max_attempts + 1):
            timestamp = int(self._clock())  # signed afresh per attempt, so a late retry is not stale
            headers = {
                "Content-Type": "application/json",
                ID_HEADER: delivery_id,
                TIMESTAMP_HEADER: str(timestamp),
                STANDARD_SIGNATURE_HEADER: standard_signature(
                    self.config.secret, delivery_id, timestamp, body
                ),
                SIGNATURE_HEADER: legacy,
                DELIVERY_HEADER: delivery_id,
                EVENT_HEADER: event_kind,
            }
            try:
                response = await self._client.post(self.config.url, content=body, headers=headers)
                if 200 <= response.status_code < 300:
                    return True
                _log.warning("webhook %s attempt %d: status %d", delivery_id, attempt, response.status_code)
            except httpx.HTTPError as error:
                _log.warning("webhook %s attempt %d: %s", delivery_id, attempt, error)
            if attempt < self.config.max_attempts:
                await self._sleep(delay)
                delay = min(delay * 2, self.config.max_delay)
        _log.error("webhook %s: gave up after %d attempts", delivery_id, self.config.max_attempts)
        return False

    async def aclose(self) -> None:
        await self._client.aclose()


OwnerOf = Callable[[str], Awaitable[str | None]]


_STATE_VERSION = 1


@dataclass(frozen=True)
class _Pending:
    kind: str
    delivery_id: str
    payload: dict[str, Any]


class _State:
    """Cursors and pending deliveries, in a JSON file when given a path."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.cursors: dict[str, tuple[str, int]] = {}
        self.pending: dict[str, _Pending] = {}
        if path is not None and path.exists():
            tighten(path)
            self._load(path)

    def _load(self, path: Path) -> None:
        try:
            data: Any = json.loads(path.read_text(encoding="utf-8"))
            record = cast(dict[str, Any], data)
            for session_id, cursor in cast(dict[str, Any], record["cursors"]).items():
                entry = cast(dict[str, Any], cursor)
                self.cursors[str(session_id)] = (str(entry["flow_type"]), int(entry["offset"]))
            for item in cast(list[Any], record["pending"]):
                entry = cast(dict[str, Any], item)
                pending = _Pending(
                    str(entry["kind"]), str(entry["id"]), cast(dict[str, Any], entry["payload"])
                )
                self.pending[pending.delivery_id] = pending
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as error:
            _log.error("webhooks: %s cannot be read (%s); starting without it", path, error)
            self.cursors, self.pending = {}, {}

    def save(self) -> None:
        path = self.path
        if path is None:
            return
        text = json.dumps(
            {
                "version": _STATE_VERSION,
                "cursors": {s: {"flow_type": f, "offset": o} for s, (f, o) in self.cursors.items()},
                "pending": [
                    {"kind": p.kind, "id": p.delivery_id, "payload": p.payload} for p in self.pending.values()
                ],
            }
        )
        write_private(path, text)


class SessionWatcher:
    """Follows the running sessions of the flows and sends a webhook for each raised interrupt and ended turn."""

    def __init__(self, flows: Sequence[AgentSessionClient], sender: WebhookSender, owner_of: OwnerOf) -> None:
        self._flows = list(flows)
        self._sender = sender
        self._owner_of = owner_of
        self._cursors: dict[str, tuple[AgentSessionClient, int]] = {}
        self._deliveries: set[asyncio.Task[None]] = set()
        self._state = _State(sender.config.state_path)
        by_type = {flow.flow_type: flow for flow in self._flows}
        for session_id, (flow_type, offset) in self._state.cursors.items():
            flow = by_type.get(flow_type)
            if flow is not None:  # a flow this server no longer serves: left alone in the file
                self._cursors[session_id] = (flow, offset)

    def track(self, session_id: str, flow: AgentSessionClient) -> None:
        """Follow a session from its first event (one this server just started)."""
        if session_id not in self._cursors:
            self._cursors[session_id] = (flow, 0)
            self._persist()

    def _persist(self) -> None:
        for session_id, (flow, offset) in self._cursors.items():
            self._state.cursors[session_id] = (flow.flow_type, offset)
        try:
            self._state.save()
        except OSError as error:
            _log.error("webhooks: cannot write %s: %s", self._state.path, error)

    async def run(self, stop: asyncio.Event) -> None:
        config = self._sender.config
        for pending in list(self._state.pending.values()):  # left by a server that stopped
            self._start(pending)
        first = True
        polls = 0
        while not stop.is_set():
            if polls % config.list_every == 0:
                await self._discover(skip_existing=first)
                first = False
            polls += 1
            for session_id, (flow, offset) in list(self._cursors.items()):
                await self._read(session_id, flow, offset)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), config.poll_interval)
        for task in list(self._deliveries):
            task.cancel()
        await asyncio.gather(*self._deliveries, return_exceptions=True)

    async def _discover(self, *, skip_existing: bool) -> None:
        found = False
        for flow in self._flows:
            try:
                summaries = await list_sessions(flow.client, flow.flow_type, limit=1000)
            except Exception as error:
                _log.warning("webhooks: cannot list sessions of %s: %s", flow.flow_type, error)
                continue
            for summary in summaries:
                if summary.status is not SessionStatus.RUNNING or summary.session_id in self._cursors:
                    continue
                # Sessions running when the server starts are followed from now on, not replayed
                # (unless a cursor was kept for them: then from that cursor).
                start = await self._last_offset(flow, summary.session_id) if skip_existing else 0
                if start is not None:
                    self._cursors[summary.session_id] = (flow, start)
                    found = True
        if found:
            self._persist()

    async def _last_offset(self, flow: AgentSessionClient, session_id: str) -> int | None:
        try:
            return await flow.latest_event_offset(session_id)
        except Exception:
            return None  # no worker answers right now: the next listing asks again

    async def _read(self, session_id: str, flow: AgentSessionClient, offset: int) -> None:
        try:
            page = await flow.list_agent_events(session_id, after=offset)
        except Exception:
            return  # no worker answers right now: the next poll asks again
        found: list[_Pending] = []
        for event in page.events:
            kind = _KINDS.get(event.type)
            if kind is not None:
                found.append(await self._pending(kind, session_id, flow, event))
        if page.closed and not page.events:
            self._cursors.pop(session_id, None)
            self._state.cursors.pop(session_id, None)
        elif page.next_offset != offset:
            self._cursors[session_id] = (flow, page.next_offset)
        else:
            return
        # The deliveries are kept, with the cursor past their events, before the first attempt.
        for pending in found:
            self._state.pending[pending.delivery_id] = pending
        self._persist()
        for pending in found:
            self._start(pending)

    async def _pending(
        self, kind: str, session_id: str, flow: AgentSessionClient, event: AgentEvent
    ) -> _Pending:
        delivery_id = f"{session_id}:{event.offset}"
        payload: dict[str, Any] = {
            "type": kind,
            "delivery_id": delivery_id,
            "session_id": session_id,
            "flow_type": flow.flow_type,
            "user": await self._owner_of(session_id),
            "event": msgspec.to_builtins(event),
        }
        return _Pending(kind, delivery_id, payload)

    def _start(self, pending: _Pending) -> None:
        task = asyncio.create_task(self._deliver(pending))
        self._deliveries.add(task)
        task.add_done_callback(self._deliveries.discard)

    async def _deliver(self, pending: _Pending) -> None:
        await self._sender.deliver(pending.kind, pending.delivery_id, pending.payload)
        # Delivered, or given up after every attempt: no longer pending (a cancelled one stays).
        self._state.pending.pop(pending.delivery_id, None)
        self._persist()
