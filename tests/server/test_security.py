"""The security rules, one test each: tokens, login codes, isolation, origin, CORS, limits, binds."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from sessionflow_server import (
    ROUTES,
    BindRefusedError,
    LoginCodes,
    ServerConfig,
    TokenStore,
    check_bind,
    hash_token,
)
from tests.server.conftest import Api, ApiFactory
from tests.server.helpers import idle_after

_BODIES: dict[str, object] = {
    "create_session": {},
    "send_message": {"message_id": "m", "text": "hi"},
    "resolve_interrupt": {"approved": True},
}


def _path(template: str, session_id: str) -> str:
    return template.replace("{session_id}", session_id).replace("{interrupt_id}", "i-1")


async def test_every_route_needs_the_bearer_header_and_never_reads_a_cookie(api_factory: ApiFactory) -> None:
    # More refusals than a client may make at once by default (test_hardening tests that limit).
    api: Api = await api_factory(config=ServerConfig(failed_auth_burst=1_000))
    api.script("sec-auth", [[{"text": "ok"}]])
    await api.post("/api/v1/sessions", {"session_id": "sec-auth"})
    token = api.tokens["alice"]
    cookies = f"token={token}; Authorization=Bearer%20{token}; session={token}"
    for route in [r for r in ROUTES if r.authenticated] + []:
        path = _path(route.path, "sec-auth")
        body = json.dumps(_BODIES.get(route.name, {})) if route.method == "POST" else None
        for headers in (
            {},
            {"Cookie": cookies},
            {"Authorization": f"Basic {token}"},
            {"Authorization": "Bearer nope"},
        ):
            response = await api.http.request(
                route.method, path, content=body, headers={"Content-Type": "application/json", **headers}
            )
            assert response.status_code == 401, (route.name, headers)
            assert response.json()["error"] == "unauthorized"
            assert response.headers["www-authenticate"].startswith("Bearer")
            assert "set-cookie" not in response.headers
    assert (await api.http.get("/openapi.json")).status_code == 401
    assert (await api.http.get("/openapi.json", headers={"Cookie": cookies})).status_code == 401


async def test_tokens_are_stored_hashed(api: Api) -> None:
    path = api.server.tokens.path
    assert path is not None
    text = path.read_text()
    for user, token in api.tokens.items():
        assert token not in text
        assert hash_token(token) in text
        assert TokenStore(path).user_of(token) == user  # a restarted server knows them
    assert path.stat().st_mode & 0o077 == 0  # readable by its owner only
    assert len(re.findall(r'"sha256": "[0-9a-f]{64}"', text)) == 2


async def test_a_login_code_works_once_and_expires(api_factory: ApiFactory) -> None:
    now = [1000.0]
    codes = LoginCodes(lifetime=600.0, clock=lambda: now[0])
    api: Api = await api_factory(codes=codes)
    code = codes.issue("carol")
    login = await api.http.post("/api/v1/login", json={"code": code})
    assert login.status_code == 200
    token = login.json()["token"]
    assert login.json()["user"] == "carol"
    me = await api.http.get("/api/v1/me", headers={"Authorization": f"Bearer {token}"})
    assert me.json()["user"] == "carol"
    reused = await api.http.post("/api/v1/login", json={"code": code})
    assert (reused.status_code, reused.json()["error"]) == (401, "invalid_code")
    late = codes.issue("carol")
    now[0] += 601.0
    assert (await api.http.post("/api/v1/login", json={"code": late})).status_code == 401


async def test_another_users_session_is_a_404_like_a_missing_one(api: Api) -> None:
    api.script("sec-mine", [[{"text": "alice's secret answer"}]])
    await api.post("/api/v1/sessions", {"session_id": "sec-mine", "message": "hi"})
    await idle_after(api, "sec-mine", 1)
    for route in [r for r in ROUTES if "{session_id}" in r.path]:
        theirs = await api.http.request(
            route.method,
            _path(route.path, "sec-mine"),
            json=_BODIES.get(route.name, {}) if route.method == "POST" else None,
            headers=api.headers("bob"),
        )
        missing = await api.http.request(
            route.method,
            _path(route.path, "sec-no-such-session"),
            json=_BODIES.get(route.name, {}) if route.method == "POST" else None,
            headers=api.headers("bob"),
        )
        assert theirs.status_code == missing.status_code == 404, route.name
        assert "alice" not in theirs.text
    rows = (await api.get("/api/v1/sessions", user="bob")).json()["sessions"]
    assert "sec-mine" not in [r["session_id"] for r in rows]
    snapshot = (await api.get("/api/v1/sessions/sec-mine")).json()  # alice still reads it
    assert snapshot["messages"][-1]["message"]["text"] == "alice's secret answer"
    assert api.log.count("model", session="sec-mine") == 1  # bob's send queued nothing


async def test_state_changing_requests_from_another_origin_are_refused_and_cors_is_closed(api: Api) -> None:
    evil = {"Origin": "http://evil.example"}
    refused = await api.http.post(
        "/api/v1/sessions", json={"session_id": "sec-evil"}, headers=api.headers(**evil)
    )
    assert (refused.status_code, refused.json()["error"]) == (403, "origin_refused")
    assert (await api.get("/api/v1/sessions/sec-evil")).status_code == 404  # nothing was started
    api.script("sec-same", [[{"text": "ok"}]])
    same = await api.http.post(
        "/api/v1/sessions", json={"session_id": "sec-same"}, headers=api.headers(Origin=api.url)
    )
    assert same.status_code == 201
    read = await api.http.get("/api/v1/me", headers=api.headers(**evil))
    assert "access-control-allow-origin" not in read.headers
    preflight = await api.http.options(
        "/api/v1/sessions",
        headers={
            **evil,
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization",
        },
    )
    assert "access-control-allow-origin" not in preflight.headers
    assert preflight.status_code >= 400


async def test_body_size_malformed_json_unknown_fields_and_media_type(api_factory: ApiFactory) -> None:
    api: Api = await api_factory(config=ServerConfig(max_body_bytes=256))
    big = await api.http.post(
        "/api/v1/sessions",
        content=json.dumps({"message": "x" * 300}),
        headers=api.headers(**{"Content-Type": "application/json"}),
    )
    assert (big.status_code, big.json()["error"]) == (413, "body_too_large")

    async def chunks():  # no Content-Length: the limit holds while reading
        for _ in range(10):
            yield b" " * 64

    streamed = await api.http.post(
        "/api/v1/sessions", content=chunks(), headers=api.headers(**{"Content-Type": "application/json"})
    )
    assert streamed.status_code == 413
    malformed = await api.http.post(
        "/api/v1/sessions",
        content=b'{"message": ',
        headers=api.headers(**{"Content-Type": "application/json"}),
    )
    assert (malformed.status_code, malformed.json()["error"]) == (400, "malformed_json")
    unknown = await api.post("/api/v1/sessions", {"mesage": "typo"})
    assert (unknown.status_code, unknown.json()["error"]) == (422, "invalid_request")
    assert "mesage" in unknown.json()["detail"]
    wrong_type = await api.post("/api/v1/sessions", {"message": 5})
    assert wrong_type.status_code == 422
    form = await api.http.post(
        "/api/v1/sessions",
        content=b"message=hi",
        headers=api.headers(**{"Content-Type": "application/x-www-form-urlencoded"}),
    )
    assert (form.status_code, form.json()["error"]) == (415, "unsupported_media_type")


async def test_each_token_has_a_rate_limit(api_factory: ApiFactory) -> None:
    api: Api = await api_factory(config=ServerConfig(rate_burst=3, rate_per_second=0.001))
    statuses = [(await api.get("/api/v1/me")).status_code for _ in range(4)]
    assert statuses == [200, 200, 200, 429]
    limited = await api.get("/api/v1/me")
    assert limited.json()["error"] == "rate_limited"
    assert int(limited.headers["retry-after"]) >= 1
    assert (await api.get("/api/v1/me", user="bob")).status_code == 200  # bob has his own bucket


async def test_a_loopback_server_answers_only_loopback_host_names(api_factory: ApiFactory) -> None:
    api: Api = await api_factory(config=ServerConfig(allowed_hosts=("127.0.0.1", "localhost")))
    assert (await api.get("/api/v1/me")).status_code == 200
    rebound = await api.http.get("/api/v1/me", headers=api.headers(Host="evil.example"))
    assert (rebound.status_code, rebound.json()["error"]) == (421, "host_refused")


def test_a_non_loopback_bind_needs_the_flag_and_a_token_store() -> None:
    check_bind("127.0.0.1", allow_remote=False, token_store_configured=False)
    check_bind("::1", allow_remote=False, token_store_configured=False)
    check_bind("localhost", allow_remote=False, token_store_configured=False)
    with pytest.raises(BindRefusedError, match="--allow-remote"):
        check_bind("0.0.0.0", allow_remote=False, token_store_configured=True)
    with pytest.raises(BindRefusedError, match="token store"):
        check_bind("0.0.0.0", allow_remote=True, token_store_configured=False)
    with pytest.raises(BindRefusedError, match="--allow-remote"):
        check_bind("example.com", allow_remote=False, token_store_configured=True)
    check_bind("0.0.0.0", allow_remote=True, token_store_configured=True)


async def test_the_page_at_the_root_is_static_and_locked_down(api: Api) -> None:
    page = await api.http.get("/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    policy = page.headers["content-security-policy"]
    assert policy.startswith("default-src 'none'; script-src 'self';") and "unsafe" not in policy


_PEEK: dict[str, object] = {"id": "t1", "name": "peek", "arguments": {}}


async def test_markup_from_a_model_or_a_tool_comes_back_as_json_text(api: Api) -> None:
    script = "<script>alert(1)</script>"
    image = '<img src=x onerror="alert(2)">'
    api.script(
        "sec-xss",
        [[{"tool_calls": [_PEEK]}, {"text": script}]],
        {"peek": {"effect": "read", "output": image}},
    )
    await api.post("/api/v1/sessions", {"session_id": "sec-xss", "message": "hi"})
    await idle_after(api, "sec-xss", 1)
    for path in ("/api/v1/sessions/sec-xss", "/api/v1/sessions/sec-xss/messages"):
        response = await api.get(path)
        assert response.headers["content-type"] == "application/json"
        assert response.headers["x-content-type-options"] == "nosniff"
        assert script in json.dumps(response.json())  # the text, unchanged, inside a JSON string
    assert api.seen("sec-xss", 2)[-1] == image
    page: dict[str, Any] = (await api.get("/api/v1/sessions/sec-xss/messages")).json()
    texts: list[str] = [m["message"]["text"] for m in page["messages"]]
    assert image in texts
