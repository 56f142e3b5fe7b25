"""The API under test: a real dev server, a scripted worker child, uvicorn on a free port, httpx."""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import httpx
import pytest

from sessionflow import AgentSessionClient, SessionTimings, ToolEffect, ToolPolicy
from sessionflow.temporal import PayloadStore
from sessionflow.testing import CRASH_TIMINGS, AgentTestStack, InvocationLog, save_scripted_flow, write_script
from sessionflow_server import ApiServer, LoginCodes, RunningServer, ServerConfig, TokenStore, running_server

FAST = CRASH_TIMINGS


@dataclass
class Api:
    """One test's API server over one scripted flow, with tokens for alice and bob."""

    server: ApiServer
    running: RunningServer
    http: httpx.AsyncClient
    sessions: AgentSessionClient
    stack: AgentTestStack
    log: InvocationLog
    state_dir: Path
    tokens: dict[str, str] = field(default_factory=lambda: {})

    @property
    def url(self) -> str:
        return self.running.url

    def headers(self, user: str = "alice", **extra: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[user]}", **extra}

    def script(
        self,
        session_id: str,
        turns: Sequence[Sequence[Mapping[str, object]]],
        tools: Mapping[str, Mapping[str, object]] | None = None,
    ) -> None:
        write_script(self.state_dir, session_id, turns, tools)

    def seen(self, session_id: str, call: int) -> list[str]:
        """What the model was sent on its `call`-th request in this session (1-based)."""
        return self.log.entries("model", session=session_id)[call - 1]["seen"]

    async def get(self, path: str, user: str = "alice", **kwargs: Any) -> httpx.Response:
        return await self.http.get(path, headers=self.headers(user), **kwargs)

    async def post(self, path: str, body: Any = None, user: str = "alice", **kwargs: Any) -> httpx.Response:
        return await self.http.post(
            path, json=body if body is not None else {}, headers=self.headers(user), **kwargs
        )


ApiFactory = Callable[..., Any]


@pytest.fixture
async def api_factory(
    temporal_address: str, tmp_path: Path, request: pytest.FixtureRequest
) -> AsyncIterator[ApiFactory]:
    opened: list[tuple[AgentTestStack, Any, httpx.AsyncClient]] = []

    async def make(
        *,
        config: ServerConfig | None = None,
        timings: SessionTimings = FAST,
        tool_policies: dict[str, ToolPolicy] | None = None,
        codes: LoginCodes | None = None,
        payloads: PayloadStore | None = None,
    ) -> Api:
        digest = hashlib.sha256(f"{request.node.nodeid}/{len(opened)}".encode()).hexdigest()[:12]
        state_dir = tmp_path / f"state-{len(opened)}"
        flow = save_scripted_flow(
            state_dir,
            f"api-{digest}",
            timings=timings,
            tool_policies=tool_policies,
            default_tool_effect=ToolEffect.UNCLASSIFIED,
        )
        stack = AgentTestStack(state_dir, [flow], server_address=temporal_address, payloads=payloads)
        await stack.__aenter__()
        await stack.start_worker()
        sessions = stack.sessions(flow)
        tokens = TokenStore(tmp_path / f"tokens-{len(opened)}.json")
        server = ApiServer([sessions], tokens, codes=codes, config=config or ServerConfig())
        serving = running_server(server)
        running = await serving.__aenter__()
        http = httpx.AsyncClient(base_url=running.url, timeout=30.0)
        opened.append((stack, serving, http))
        api = Api(
            server, running, http, sessions, stack, InvocationLog(state_dir / "invocations.jsonl"), state_dir
        )
        api.tokens = {"alice": tokens.issue("alice"), "bob": tokens.issue("bob")}
        return api

    yield make
    for stack, serving, http in reversed(opened):
        await http.aclose()
        await serving.__aexit__(None, None, None)
        await stack.__aexit__(None, None, None)


@pytest.fixture
async def api(api_factory: ApiFactory) -> Api:
    return await api_factory()


def approval_policy() -> dict[str, ToolPolicy]:
    return {"refund": ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE)}


def with_deadline(seconds: float) -> SessionTimings:
    from datetime import timedelta

    return replace(FAST, interrupt_deadline=timedelta(seconds=seconds))
