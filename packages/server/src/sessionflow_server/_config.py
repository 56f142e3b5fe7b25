"""What an API server is configured with (beyond its flows and token store)."""

from __future__ import annotations

import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from sessionflow_server._webhooks import WebhookConfig

__all__ = ["DEFAULT_MAX_BODY_BYTES", "ServerConfig", "default_session_id"]

DEFAULT_MAX_BODY_BYTES = 1024 * 1024


def default_session_id() -> str:
    return f"session-{secrets.token_hex(8)}"


@dataclass(frozen=True, kw_only=True)
class ServerConfig:
    """
    Attributes:
        max_body_bytes: The largest request body; a larger one gets 413.
        rate_per_second: Requests per second each user may make, on average (all the
            user's tokens together); also each client address's logins.
        rate_burst: Requests a user (or a client's logins) may make at once.
        failed_auth_per_second: Requests with a missing or invalid token each client
            address may make per second, on average; past them, 429 instead of 401.
        failed_auth_burst: Such requests a client address may make at once.
        trusted_proxies: Addresses of reverse proxies whose ``X-Forwarded-For`` and
            ``X-Forwarded-Proto`` name the client; none by default, so the peer's own
            address is the client (what the per-client limits are keyed on).
        allowed_origins: Origins besides the server's own that may send state-changing
            requests, and that CORS answers. None by default: CORS is closed.
        allowed_hosts: Host header values accepted (``host`` or ``host:port``); None accepts
            any. `sessionflow serve` on loopback accepts loopback names only (DNS rebinding).
        environment: The start environment of sessions created through the API; the
            caller's user is added as ``user``.
        new_session_id: Names a session created without a ``session_id``.
        webhooks: Where to POST interrupt and turn notifications; None for none.
        stream_ping_seconds: A comment line on idle event streams, so proxies keep them open.
        temporal_ui_url: The Temporal UI's base URL (``http://localhost:8233``), which
            ``GET /api/v1/me`` hands to the console so it links each session there; None
            for no link.
    """

    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    rate_per_second: float = 20.0
    rate_burst: int = 60
    failed_auth_per_second: float = 1.0
    failed_auth_burst: int = 20
    trusted_proxies: tuple[str, ...] = ()
    allowed_origins: tuple[str, ...] = ()
    allowed_hosts: tuple[str, ...] | None = None
    environment: Mapping[str, str] = field(default_factory=lambda: {})
    new_session_id: Callable[[], str] = default_session_id
    webhooks: WebhookConfig | None = None
    stream_ping_seconds: float = 15.0
    temporal_ui_url: str | None = None

    def __post_init__(self) -> None:
        url = self.temporal_ui_url
        if url is None:
            return
        # The console puts it in a link's href: only a web address, never `javascript:`.
        parsed = urlsplit(url)
        if parsed.scheme not in ("http", "https") or not parsed.netloc or parsed.query or parsed.fragment:
            raise ValueError(f"the Temporal UI URL must be an http:// or https:// address, got {url!r}")
        object.__setattr__(self, "temporal_ui_url", url.rstrip("/"))
