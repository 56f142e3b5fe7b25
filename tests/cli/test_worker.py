"""`sessionflow worker`: the flow as a resident worker process, stopped by a real SIGTERM."""

from __future__ import annotations

import asyncio

from sessionflow import AgentSessionClient, AgentSessionFlow, AgentSnapshot, AgentStatus, connect
from sessionflow.demo import ModelReply
from sessionflow.testing import ScriptedRunner, wait_for_agent_snapshot
from tests.cli.background import WorkerCommand
from tests.cli.conftest import Cli


def sessions_of(cli: Cli, flow_type: str) -> AgentSessionFlow:
    # A client only starts and reads sessions: the runner is never called in this process.
    return AgentSessionFlow(ScriptedRunner(cli.home / "unused"), flow_type=flow_type)


async def idle(sessions: AgentSessionClient, session_id: str) -> AgentSnapshot:
    def done(snapshot: AgentSnapshot) -> AgentSnapshot | None:
        state = snapshot.state
        if state is None or state.turn_count < 1:
            return None
        return snapshot if state.status is AgentStatus.WAITING_FOR_USER_MESSAGE else None

    return await wait_for_agent_snapshot(sessions, session_id, done, description="the turn", timeout=120)


async def test_worker_serves_the_flow_and_finishes_a_model_call_within_the_grace(cli: Cli) -> None:
    cli.write_config(framework="scripted")
    flow_type = f"worker-test-{cli.key}"
    first = WorkerCommand(
        cli, cli.home / "worker-1.log", "-f", "scripted", "--flow-type", flow_type, "--grace", "60"
    )
    second: WorkerCommand | None = None
    try:
        line = await first.ready()
        assert f"flow type {flow_type} on {cli.server_address}" in line
        assert "shutdown grace 60 s" in line
        client = await connect(cli.server_address)
        sessions = AgentSessionClient(client, sessions_of(cli, flow_type))
        cli.script([ModelReply.say("slow answer", delay_seconds=3)])
        await sessions.start_session("worker-cmd-1", "hello")
        await asyncio.to_thread(cli.model_server.wait_for_requests, cli.key, 1, 60)
        # SIGTERM while the model call runs: the call finishes within the grace, and the
        # worker stops polling, so the turn ends on the worker started after it.
        first.sigterm()
        assert await first.exit_code() == 0
        assert "sessionflow worker shutting down: running steps get 60 s" in first.output()
        assert "sessionflow worker stopped" in first.output()
        second = WorkerCommand(cli, cli.home / "worker-2.log", "-f", "scripted", "--flow-type", flow_type)
        await second.ready()
        snapshot = await idle(sessions, "worker-cmd-1")
        assert snapshot.messages[-1].message.text == "slow answer"
        assert len(cli.requests()) == 1  # the model call ran once, in the worker that was stopping
        second.sigterm()
        assert await second.exit_code() == 0
    finally:
        first.kill()
        if second is not None:
            second.kill()


def test_worker_with_a_bad_grace_is_a_usage_error(cli: Cli) -> None:
    cli.write_config(framework="scripted")
    bad = cli.run("worker", "-f", "scripted", "--grace", "-1")
    assert bad.returncode == 2, bad.stderr
    assert "grace period must be 0 or more seconds" in bad.stderr
    bad_env = cli.run("worker", "-f", "scripted", extra_env={"SESSIONFLOW_SHUTDOWN_GRACE": "soon"})
    assert bad_env.returncode == 2, bad_env.stderr
    assert "SESSIONFLOW_SHUTDOWN_GRACE='soon' is not a number of seconds" in bad_env.stderr
