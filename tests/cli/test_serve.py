"""`sessionflow serve`: the demo's sessions over HTTP, with the worker in the same process."""

from __future__ import annotations

import asyncio
import re
import stat
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, cast

import httpx
import pytest
from rich.console import Console

from sessionflow.testing import wait_until
from sessionflow_cli._errors import UsageError
from sessionflow_cli.commands._serve import INSTALL_HINT, ServeRequest, run_serve
from tests.cli.background import ServeCommand
from tests.cli.conftest import Cli
from tests.server.helpers import read_sse

T = TypeVar("T")


async def eventually(what: str, probe: Callable[[], Awaitable[T | None]], timeout: float = 120) -> T:
    return await wait_until(what, probe, timeout=timeout)


async def test_serve_lists_the_demos_sessions_and_an_approval_runs_the_write(cli: Cli) -> None:
    cli.write_config(f"model: demo\nserver: {cli.server_address}\n", framework="builtin")
    chat = await asyncio.to_thread(cli.run, "chat", "-p", "show me around")
    assert chat.returncode == 0, chat.stdout + chat.stderr
    serve = ServeCommand(cli, cli.home / "serve.log")
    try:
        base, code = await serve.login_url()
        async with httpx.AsyncClient(base_url=base, timeout=60) as http:
            login = await http.post("/api/v1/login", json={"code": code})
            assert login.status_code == 200, login.text
            headers = {"Authorization": f"Bearer {login.json()['token']}"}
            assert (await http.post("/api/v1/login", json={"code": code})).status_code == 401

            async def listed() -> list[dict[str, Any]] | None:
                rows: list[dict[str, Any]] = (await http.get("/api/v1/sessions", headers=headers)).json()[
                    "sessions"
                ]
                return rows or None

            rows = await eventually("the demo's session in the list", listed)
            assert [r["session_id"].startswith("builtin-") for r in rows] == [True]

            created = await http.post("/api/v1/sessions", json={"message": "show me around"}, headers=headers)
            assert created.status_code == 201, created.text
            session_id = created.json()["session_id"]

            async def inbox() -> list[dict[str, Any]] | None:
                items: list[dict[str, Any]] = (await http.get("/api/v1/interrupts", headers=headers)).json()[
                    "interrupts"
                ]
                return [i for i in items if i["session_id"] == session_id] or None

            async def approve() -> None:
                [item] = await eventually("the demo's write to wait for approval", inbox)
                assert not (cli.workspace / "sessionflow-demo.md").exists()
                interrupt_id = item["interrupt"]["interrupt_id"]
                approved = await http.post(
                    f"/api/v1/sessions/{session_id}/interrupts/{interrupt_id}",
                    json={"approved": True},
                    headers=headers,
                )
                assert approved.status_code == 200, approved.text

            # Follow the turn live while the approval is given: the worker shares the
            # process, so deltas come live (no id) between durable events (ids in order).
            approving = asyncio.create_task(approve())
            async with http.stream("GET", f"/api/v1/sessions/{session_id}/events", headers=headers) as stream:
                events = await read_sse(stream, until=lambda e: e["event"] == "turn_completed")
            await approving
            ids = [int(e["id"]) for e in events if "id" in e]
            assert ids == sorted(set(ids)) and ids[0] == 1
            kinds = [e["event"] for e in events]
            assert "interrupt_raised" in kinds and "text_delta" in kinds
            assert all("id" not in e for e in events if e["event"] == "text_delta")

            async def ended() -> dict[str, Any] | None:
                snapshot: dict[str, Any] = (
                    await http.get(f"/api/v1/sessions/{session_id}", headers=headers)
                ).json()
                state = cast(dict[str, Any], snapshot.get("state") or {})
                done = state.get("turn_count") == 1 and state.get("status") == "waiting_for_user_message"
                return snapshot if done else None

            await eventually("the demo's turn to end", ended)
            assert (cli.workspace / "sessionflow-demo.md").exists()
        assert await serve.stop() == 0, serve.output()
        assert "sessionflow serve stopped" in serve.output()
    finally:
        serve.kill()


def test_a_public_bind_without_the_flag_and_a_token_store_is_refused(cli: Cli) -> None:
    cli.write_config(f"model: demo\nserver: {cli.server_address}\n", framework="builtin")
    refused = cli.run("serve", "--host", "0.0.0.0")
    assert refused.returncode == 2
    assert "--allow-remote" in refused.stderr
    no_store = cli.run("serve", "--host", "0.0.0.0", "--allow-remote")
    assert no_store.returncode == 2
    assert "--token-store" in no_store.stderr


def test_a_temporal_ui_that_is_not_a_web_address_is_refused(cli: Cli) -> None:
    cli.write_config(f"model: demo\nserver: {cli.server_address}\n", framework="builtin")
    refused = cli.run("serve", "--temporal-ui", "javascript:alert(1)")
    assert refused.returncode == 2
    assert "--temporal-ui" in refused.stderr and "http://" in refused.stderr
    assert "Traceback" not in refused.stderr


def test_issue_token_keeps_only_its_hash(cli: Cli) -> None:
    cli.write_config(f"model: demo\nserver: {cli.server_address}\n", framework="builtin")
    store = cli.home / "tokens.json"
    issued = cli.run("serve", "--token-store", str(store), "--issue-token", "dana")
    assert issued.returncode == 0, issued.stderr
    token = issued.stdout.strip()
    assert len(token) >= 40 and token not in store.read_text()


async def test_a_revoked_token_is_refused_by_the_running_server_without_a_restart(cli: Cli) -> None:
    cli.write_config(f"model: demo\nserver: {cli.server_address}\n", framework="builtin")
    store = cli.home / "tokens.json"
    dana = await asyncio.to_thread(cli.run, "serve", "--token-store", str(store), "--issue-token", "dana")
    erin = await asyncio.to_thread(cli.run, "serve", "--token-store", str(store), "--issue-token", "erin")
    assert dana.returncode == 0 and erin.returncode == 0, dana.stderr + erin.stderr
    serve = ServeCommand(cli, cli.home / "serve.log", "--token-store", str(store))
    try:
        base, _ = await serve.login_url()
        async with httpx.AsyncClient(base_url=base, timeout=60) as http:

            async def status(token: str) -> int:
                headers = {"Authorization": f"Bearer {token.strip()}"}
                return (await http.get("/api/v1/sessions", headers=headers)).status_code

            assert (await status(dana.stdout), await status(erin.stdout)) == (200, 200)
            revoked = await asyncio.to_thread(
                cli.run, "serve", "--token-store", str(store), "--revoke-token", "dana"
            )
            assert revoked.returncode == 0, revoked.stderr
            assert revoked.stdout.strip() == "revoked 1 token of dana"
            assert stat.S_IMODE(store.stat().st_mode) == 0o600
            assert (await status(dana.stdout), await status(erin.stdout)) == (401, 200)
            again = await asyncio.to_thread(
                cli.run, "serve", "--token-store", str(store), "--revoke-token", "dana"
            )
            assert again.stdout.strip() == "revoked 0 tokens of dana"
        assert await serve.stop() == 0, serve.output()
    finally:
        serve.kill()


def test_revoke_token_needs_a_token_store(cli: Cli) -> None:
    cli.write_config(f"model: demo\nserver: {cli.server_address}\n", framework="builtin")
    refused = cli.run("serve", "--revoke-token", "dana")
    assert refused.returncode == 2
    assert "--revoke-token needs --token-store" in refused.stderr


async def test_without_the_server_package_it_says_what_to_install(
    cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "sessionflow_server", None)  # as if not installed
    request = ServeRequest(
        host="127.0.0.1", port=0, allow_remote=False, token_store=None, issue_token=None, webhook_url=None
    )
    quiet = Console(quiet=True)
    with pytest.raises(UsageError, match=re.escape(INSTALL_HINT)):
        await run_serve(None, None, None, request, out=quiet, info=quiet)  # pyright: ignore[reportArgumentType]


def test_trusted_proxies_are_none_unless_named() -> None:
    from sessionflow_cli._main import build_parser

    parser = build_parser()
    assert parser.parse_args(["serve"]).trusted_proxy == []
    named = parser.parse_args(["serve", "--trusted-proxy", "10.0.0.1", "--trusted-proxy", "10.1.0.0/16"])
    assert named.trusted_proxy == ["10.0.0.1", "10.1.0.0/16"]
    assert (
        ServeRequest(
            host="127.0.0.1", port=0, allow_remote=False, token_store=None, issue_token=None, webhook_url=None
        ).trusted_proxies
        == ()
    )
