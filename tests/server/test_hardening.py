"""The HTTP API against hostile clients, one test per attack: rate-limit bypasses, forged
client addresses, session ID probing, inputs that used to end in a 500, a slash redirect
to a foreign Host, and request URLs in the log."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any

import httpx
import pytest

from sessionflow.temporal import describe_session, read_start_environment
from sessionflow_server import LoginCodes, ServerConfig
from sessionflow_server._limits import RateLimiter
from tests.server.conftest import Api, ApiFactory

_SLOW = 0.001  # a refill too slow to matter during a test


def _from(api: Api, address: str) -> httpx.AsyncClient:
    """A client whose connections come from `address` (any 127.x.y.z is this machine's loopback)."""
    return httpx.AsyncClient(
        base_url=api.url, timeout=30.0, transport=httpx.AsyncHTTPTransport(local_address=address)
    )


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


# -- 1. rate limits ------------------------------------------------------------------------


async def test_spellings_of_the_authorization_header_share_the_users_bucket(
    api_factory: ApiFactory,
) -> None:
    api: Api = await api_factory(config=ServerConfig(rate_burst=3, rate_per_second=_SLOW))
    token = api.tokens["alice"]
    assert [(await api.get("/api/v1/me")).status_code for _ in range(3)] == [200, 200, 200]
    spellings = [
        f"Bearer {token}",
        f"bearer {token}",
        f"Bearer  {token}",
        f"BEARER {token}",
        f"bEaReR {token}",
    ]
    statuses: list[int] = []
    for index in range(60):
        response = await api.http.get(
            "/api/v1/me", headers={"Authorization": spellings[index % len(spellings)]}
        )
        statuses.append(response.status_code)
    assert statuses == [429] * 60
    assert (await api.get("/api/v1/me", user="bob")).status_code == 200  # bob's bucket is his own


async def test_header_variants_keep_one_bucket_and_buckets_stay_bounded(api: Api) -> None:
    token = api.tokens["alice"]
    before = len(api.server.limiter)
    for index in range(300):
        spaces = " " * (1 + index % 7)
        scheme = "".join(c.upper() if (index >> i) & 1 else c for i, c in enumerate("bearer"))
        response = await api.http.get("/api/v1/me", headers={"Authorization": f"{scheme}{spaces}{token}"})
        assert response.status_code in (200, 429)
    assert len(api.server.limiter) <= before + 1  # alice's one bucket, whatever the spelling

    clock = _Clock()
    limiter = RateLimiter(per_second=20.0, burst=60, clock=clock, max_keys=1_000)
    for index in range(20_000):
        limiter.take(f"client:{index}")
        clock.now += 0.0001
    assert len(limiter) <= 1_000  # never more than max_keys
    clock.now += limiter.refill_seconds + 1.0  # all of them full again: same as fresh
    limiter.take("late")
    assert len(limiter) == 1


async def test_a_login_flood_from_one_client_leaves_another_clients_login_alone(
    api_factory: ApiFactory,
) -> None:
    codes = LoginCodes()
    api: Api = await api_factory(codes=codes, config=ServerConfig(rate_burst=3, rate_per_second=_SLOW))
    flood = [(await api.http.post("/api/v1/login", json={"code": "guess"})).status_code for _ in range(5)]
    assert flood == [401, 401, 401, 429, 429]
    async with _from(api, "127.0.0.2") as other:
        login = await other.post("/api/v1/login", json={"code": codes.issue("carol")})
    assert login.status_code == 200, login.text
    assert login.json()["user"] == "carol"


async def test_a_flood_of_invalid_tokens_gets_429_for_that_client_only(api_factory: ApiFactory) -> None:
    api: Api = await api_factory(config=ServerConfig(failed_auth_burst=5, failed_auth_per_second=_SLOW))
    statuses = [
        (await api.http.get("/api/v1/me", headers={"Authorization": f"Bearer guess-{n}"})).status_code
        for n in range(8)
    ]
    assert statuses == [401] * 5 + [429] * 3
    limited = await api.http.get("/api/v1/me", headers={"Authorization": "Bearer guess"})
    assert limited.json()["error"] == "rate_limited"
    assert int(limited.headers["retry-after"]) >= 1
    assert (await api.get("/api/v1/me")).status_code == 200  # a valid token is not held back
    async with _from(api, "127.0.0.3") as other:
        assert (await other.get("/api/v1/me", headers={"Authorization": "Bearer guess"})).status_code == 401


# -- 2. proxies ----------------------------------------------------------------------------


async def _rotating_forwarded_for(api: Api) -> list[int]:
    return [
        (
            await api.http.get(
                "/api/v1/me",
                headers={"Authorization": "Bearer guess", "X-Forwarded-For": f"203.0.113.{n}"},
            )
        ).status_code
        for n in range(1, 6)
    ]


async def test_x_forwarded_for_counts_only_from_a_trusted_proxy(api_factory: ApiFactory) -> None:
    limits: dict[str, Any] = {"failed_auth_burst": 2, "failed_auth_per_second": _SLOW}
    untrusted: Api = await api_factory(config=ServerConfig(**limits))
    # The peer (127.0.0.1) is not a named proxy: every request is its own, whatever it claims.
    assert await _rotating_forwarded_for(untrusted) == [401, 401, 429, 429, 429]
    elsewhere: Api = await api_factory(config=ServerConfig(trusted_proxies=("10.0.0.1",), **limits))
    assert await _rotating_forwarded_for(elsewhere) == [401, 401, 429, 429, 429]
    proxied: Api = await api_factory(config=ServerConfig(trusted_proxies=("127.0.0.1",), **limits))
    # Behind a named proxy each forwarded client has a bucket of its own.
    assert await _rotating_forwarded_for(proxied) == [401] * 5


# -- 3. session ID probing -----------------------------------------------------------------


async def test_another_users_id_and_a_missing_id_cost_the_same_calls_and_answer_alike(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    api.script("probe-mine", [[{"text": "ok"}]])
    assert (await api.post("/api/v1/sessions", {"session_id": "probe-mine"})).status_code == 201
    calls: list[str] = []

    async def counted_describe(client: Any, session_id: str) -> Any:
        calls.append("describe")
        return await describe_session(client, session_id)

    async def counted_read(client: Any, session_id: str) -> Mapping[str, str] | None:
        calls.append("read_start_environment")
        return await read_start_environment(client, session_id)

    monkeypatch.setattr("sessionflow_server._owners.describe_session", counted_describe)
    monkeypatch.setattr("sessionflow_server._owners.read_start_environment", counted_read)

    async def probe(session_id: str) -> tuple[int, str, list[str]]:
        calls.clear()
        response = await api.get(f"/api/v1/sessions/{session_id}", user="bob")
        return response.status_code, response.text.replace(session_id, "ID"), list(calls)

    foreign = await probe("probe-mine")  # cached as alice's since she created it
    missing = await probe("probe-none")
    assert foreign == missing
    assert foreign[0] == 404 and foreign[2] == ["describe", "read_start_environment"]
    assert await probe("probe-mine") == await probe("probe-none")  # again, after any caching
    calls.clear()
    assert (await api.get("/api/v1/sessions/probe-mine")).status_code == 200
    assert calls == []  # the owner's own reads still come from the cache

    # Creating with a taken ID answers the same whoever holds it (the IDs are one namespace).
    theirs = await api.post("/api/v1/sessions", {"session_id": "probe-mine"}, user="bob")
    own = await api.post("/api/v1/sessions", {"session_id": "probe-mine"})
    assert (theirs.status_code, theirs.json()) == (own.status_code, own.json())
    assert theirs.json()["error"] == "session_exists" and "alice" not in theirs.text


# -- 4. hostile inputs ---------------------------------------------------------------------


async def test_hostile_inputs_get_a_json_400_or_422_and_no_traceback(
    api: Api, caplog: pytest.LogCaptureFixture
) -> None:
    api.script("hostile", [[{"text": "ok"}]])
    assert (await api.post("/api/v1/sessions", {"session_id": "hostile"})).status_code == 201
    deep = '{"settings": {"a": ' + "[" * 2000 + "]" * 2000 + "}}"
    answer = '{"value": ' + "[" * 2000 + "]" * 2000 + "}"
    json_headers = api.headers(**{"Content-Type": "application/json"})
    caplog.set_level(logging.INFO)
    attacks: dict[str, httpx.Response] = {
        "nested body": await api.http.post("/api/v1/sessions", content=deep, headers=json_headers),
        "nested answer": await api.http.post(
            "/api/v1/sessions/hostile/interrupts/i-1", content=answer, headers=json_headers
        ),
        "superscript after": await api.get("/api/v1/sessions/hostile/messages?after=²"),
        "superscript limit": await api.get("/api/v1/sessions/hostile/messages?limit=²"),
        "arabic-indic limit": await api.get("/api/v1/sessions/hostile/messages?limit=٣"),
        "5000 digits": await api.get("/api/v1/sessions/hostile/messages?after=" + "1" * 5000),
        "superscript Last-Event-ID": await api.http.get(
            "/api/v1/sessions/hostile/events",
            headers=[
                (b"Authorization", f"Bearer {api.tokens['alice']}".encode()),
                (b"Last-Event-ID", "²".encode("latin-1")),  # as latin-1, how HTTP carries it
            ],
        ),
        "5000-digit Last-Event-ID": await api.http.get(
            "/api/v1/sessions/hostile/events", headers=api.headers(**{"Last-Event-ID": "9" * 5000})
        ),
        "overflowing since": await api.get("/api/v1/sessions?since=100000000d"),
        "5000-digit since": await api.get("/api/v1/sessions?since=" + "1" * 5000 + "d"),
    }
    for name, response in attacks.items():
        assert response.status_code in (400, 422), (name, response.status_code, response.text)
        body: dict[str, Any] = response.json()
        assert set(body) == {"error", "detail"}, name
        assert "Traceback" not in response.text and "internal_error" not in response.text, name
    assert attacks["nested body"].json()["error"] == "malformed_json"
    failures = [r for r in caplog.records if r.exc_info is not None or r.levelno >= logging.ERROR]
    assert failures == [], [r.getMessage() for r in failures]
    assert "Traceback" not in caplog.text and "RecursionError" not in caplog.text
    assert json.loads(attacks["overflowing since"].text)["error"] == "invalid_request"


# -- 5. Host before routing ----------------------------------------------------------------


async def test_a_foreign_host_with_a_trailing_slash_gets_421_not_a_redirect(api_factory: ApiFactory) -> None:
    api: Api = await api_factory(config=ServerConfig(allowed_hosts=("127.0.0.1", "localhost")))
    for path in ("/api/v1/me/", "/api/v1/sessions/", "/nowhere"):
        response = await api.http.get(path, headers=api.headers(Host="evil.example"))
        assert (response.status_code, response.json()["error"]) == (421, "host_refused"), path
        assert "location" not in response.headers
    own = await api.http.get("/api/v1/me/", headers=api.headers())
    assert own.status_code == 404 and "location" not in own.headers  # no slash redirect at all


# -- 6. logs -------------------------------------------------------------------------------


async def test_serve_sets_the_http_client_loggers_to_warning(
    api_factory: ApiFactory, caplog: pytest.LogCaptureFixture
) -> None:
    loggers = [logging.getLogger(name) for name in ("httpx", "httpcore")]
    saved = [logger.level for logger in loggers]
    try:
        for logger in loggers:
            logger.setLevel(logging.INFO)
        api: Api = await api_factory()
        assert [logger.level for logger in loggers] == [logging.WARNING, logging.WARNING]
        caplog.set_level(logging.INFO)  # the root at INFO, as the CLI sets it
        await api.http.get("/api/v1/me?secret-in-url=1", headers=api.headers())
        assert "secret-in-url" not in caplog.text
    finally:
        for logger, level in zip(loggers, saved, strict=True):
            logger.setLevel(level)
