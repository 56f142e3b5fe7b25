"""The public engine helpers of `sessionflow.temporal`: connect, probe a frontend, find sessions.

Against the test run's real dev server, with a worker of a scripted flow in this process.
"""

from __future__ import annotations

import asyncio
import http.server
import threading
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import pytest

from sessionflow import (
    AgentSessionClient,
    AgentSessionFlow,
    AgentSnapshot,
    AgentStatus,
    UserError,
    connect,
    serve_agent_flows,
)
from sessionflow.temporal import (
    FrontendState,
    SessionStatus,
    SessionSummary,
    TemporalClient,
    TlsSettings,
    describe_session,
    free_port,
    list_sessions,
    probe_frontend,
    read_start_environment,
    reset_sticky_task_queue,
)
from sessionflow.testing import ScriptedRunner, wait_for_agent_snapshot, wait_until, write_script

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def impostor() -> Iterator[str]:
    """A plain HTTP server: something answers, but it is not Temporal."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), http.server.SimpleHTTPRequestHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


# ------------------------------------------------------------------------------- probe


async def test_probe_a_ready_frontend(temporal_address: str) -> None:
    probe = await probe_frontend(temporal_address, "default")
    assert probe.state is FrontendState.READY and probe.ready
    assert probe.reachable and probe.is_temporal and probe.has_namespace is True
    assert probe.error is None and probe.address == temporal_address


async def test_probe_a_missing_namespace(temporal_address: str) -> None:
    probe = await probe_frontend(temporal_address, f"nowhere-{uuid.uuid4().hex[:8]}")
    assert probe.state is FrontendState.NAMESPACE_MISSING and not probe.ready
    assert probe.is_temporal and probe.has_namespace is False
    assert probe.error is not None and "NOT_FOUND" in probe.error


async def test_probe_nothing_and_a_stranger(impostor: str) -> None:
    nothing = await probe_frontend(f"127.0.0.1:{free_port()}")
    assert nothing.state is FrontendState.UNREACHABLE and not nothing.reachable
    assert nothing.error  # the connection error, in one line
    stranger = await probe_frontend(impostor, timeout=2.0)
    assert stranger.state is FrontendState.NOT_TEMPORAL
    assert stranger.reachable and not stranger.is_temporal and stranger.has_namespace is None
    assert stranger.error
    assert stranger.state.description == "a service answers that is not a Temporal frontend"


async def test_probe_refuses_an_address_without_a_port() -> None:
    with pytest.raises(ValueError, match="host:port"):
        await probe_frontend("localhost")


# ------------------------------------------------------------------------------- connect


async def test_connect_uses_the_environment_defaults(
    temporal_address: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SESSIONFLOW_SERVER_ADDRESS", temporal_address)
    monkeypatch.setenv("SESSIONFLOW_NAMESPACE", "default")
    client = await connect()
    assert client.namespace == "default"
    explicit = await connect(temporal_address, "default", tls=False, api_key=None)
    assert explicit.service_client.config.target_host == temporal_address


async def test_connect_reads_the_tls_files(tmp_path: Path, temporal_address: str) -> None:
    with pytest.raises(FileNotFoundError):
        await connect(temporal_address, tls=TlsSettings(server_root_ca_cert=tmp_path / "missing-ca.pem"))


async def test_tls_to_a_plain_server_fails(temporal_address: str) -> None:
    with pytest.raises(RuntimeError):
        await asyncio.wait_for(connect(temporal_address, tls=True), 30)


def test_tls_client_certificate_and_key_go_together(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="client_cert and client_key"):
        TlsSettings(client_cert=tmp_path / "cert.pem")
    settings = TlsSettings(
        client_cert=tmp_path / "c.pem", client_key=tmp_path / "k.pem", server_name="tmprl.example"
    )
    assert settings.server_name == "tmprl.example"


# ------------------------------------------------------------------------------- sessions


@dataclass
class Served:
    client: TemporalClient
    flow: AgentSessionFlow
    sessions: AgentSessionClient
    state_dir: Path


@pytest.fixture
async def served(temporal_address: str, tmp_path: Path) -> AsyncIterator[Served]:
    """A scripted flow of its own flow type, served by a worker in this process."""
    client = await connect(temporal_address, "default")
    flow = AgentSessionFlow(ScriptedRunner(tmp_path), flow_type=f"PublicApi-{uuid.uuid4().hex[:10]}")
    stop = asyncio.Event()
    worker = asyncio.create_task(serve_agent_flows(client, [flow], stop=stop))
    try:
        yield Served(client=client, flow=flow, sessions=AgentSessionClient(client, flow), state_dir=tmp_path)
    finally:
        stop.set()
        await asyncio.wait_for(worker, 30)


async def _idle_after(sessions: AgentSessionClient, session_id: str, turns: int) -> AgentSnapshot:
    def done(snapshot: AgentSnapshot) -> AgentSnapshot | None:
        state = snapshot.state
        if state and state.turn_count >= turns and state.status is AgentStatus.WAITING_FOR_USER_MESSAGE:
            return snapshot
        return None

    return await wait_for_agent_snapshot(sessions, session_id, done, description=f"{session_id} idle")


async def test_list_describe_and_resume_helpers(served: Served) -> None:
    talked, stopped = f"talked-{uuid.uuid4().hex[:8]}", f"stopped-{uuid.uuid4().hex[:8]}"
    write_script(served.state_dir, talked, [[{"text": "hello"}], [{"text": "again"}]])
    environment = {"host_name": "box", "user_id": "1000", "workspace": "/w"}
    await served.sessions.start_session(talked, "hi", environment=environment)
    await _idle_after(served.sessions, talked, 1)
    await served.sessions.send_user_message(talked, "and again")
    await _idle_after(served.sessions, talked, 2)
    await served.sessions.start_session(stopped)
    assert await served.sessions.stop_session(stopped)

    flow_type = served.flow.flow_type

    async def both_listed() -> list[SessionSummary] | None:
        found = await list_sessions(served.client, flow_type)
        closed = {s.session_id for s in found if s.status is SessionStatus.COMPLETED}
        return found if {s.session_id for s in found} == {talked, stopped} and stopped in closed else None

    # Visibility is eventually consistent: wait until it shows both, with the stop.
    bare = await wait_until("both sessions in visibility", both_listed, timeout=30)
    by_id = {s.session_id: s for s in bare}
    assert by_id[talked].status is SessionStatus.RUNNING and by_id[talked].status.is_open
    assert by_id[talked].flow_type == flow_type and by_id[talked].run_id
    started, last = by_id[talked].start_time, by_id[talked].last_activity
    assert started is not None and last is not None and last >= started
    assert by_id[talked].close_time is None
    assert by_id[talked].turns is None and by_id[talked].agent_status is None  # no query without the flow
    assert by_id[stopped].stopped and by_id[stopped].close_time is not None

    # Given the flow's client, each session's snapshot adds turns and state.
    rich = {s.session_id: s for s in await list_sessions(served.sessions)}
    assert rich[talked].turns == 2 and rich[talked].agent_status is AgentStatus.WAITING_FOR_USER_MESSAGE
    assert rich[talked].pending_approvals == 0 and not rich[talked].stopped
    assert rich[stopped].stopped

    assert len(await list_sessions(served.client, flow_type, limit=1)) == 1
    with pytest.raises(ValueError, match="flow_type"):
        await list_sessions(served.client)
    with pytest.raises(ValueError, match="limit"):
        await list_sessions(served.sessions, limit=0)

    described = await describe_session(served.client, talked)
    assert (
        described is not None
        and described.flow_type == flow_type
        and described.status is SessionStatus.RUNNING
    )
    gone = await describe_session(served.client, stopped)
    assert gone is not None and gone.status is SessionStatus.COMPLETED and gone.stopped
    assert await describe_session(served.client, f"never-{uuid.uuid4().hex[:8]}") is None

    assert await read_start_environment(served.client, talked) == environment
    assert await read_start_environment(served.client, stopped) is None  # started without one
    assert await read_start_environment(served.client, f"never-{uuid.uuid4().hex[:8]}") is None

    assert await reset_sticky_task_queue(served.client, talked) is True
    assert await reset_sticky_task_queue(served.client, f"never-{uuid.uuid4().hex[:8]}") is False
    # The session still works after its sticky queue was reset.
    write_script(served.state_dir, talked, [[{"text": "hello"}], [{"text": "again"}], [{"text": "yes"}]])
    await served.sessions.send_user_message(talked, "still there?")
    await _idle_after(served.sessions, talked, 3)


def test_session_status_values() -> None:
    assert SessionStatus("running") is SessionStatus.RUNNING
    assert not SessionStatus.COMPLETED.is_open
    assert {s.value for s in SessionStatus} >= {"running", "completed", "failed", "terminated", "timed_out"}


class _StructuralRunner:
    """Has the three required methods but does not subclass the contract."""

    def build_user_message(self, text: str) -> Any:
        raise NotImplementedError

    async def run_model_step(self, turn: Any) -> Any:
        raise NotImplementedError

    async def execute_deferred_tool_call(self, call: Any) -> Any:
        raise NotImplementedError


def test_a_runner_that_does_not_subclass_the_contract_is_refused_when_the_flow_is_built() -> None:
    with pytest.raises(
        UserError, match="_StructuralRunner does not implement AgentFrameworkRunner; subclass"
    ):
        AgentSessionFlow(cast(Any, _StructuralRunner()), flow_type="structural")
