"""`McpToolSource` against the project's fixture server: annotations, `_meta`, identity, failures."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from sessionflow import AgentSessionOptions, ToolEffect, ToolPolicy
from sessionflow.kit import ToolExecutionError, ToolSpec
from sessionflow.mcp import (
    META_EXPECTED_TOOL,
    META_IDEMPOTENCY_KEY,
    McpConnectionPool,
    McpServerConfig,
    McpToolSource,
    McpTransportError,
    McpUnavailableError,
    input_schema_hash,
)
from sessionflow.testing import wait_until
from tests.mcp.fixture_server import SEND_META, calls, read_log
from tests.mcp.helpers import (
    REPO_ROOT,
    HttpServer,
    fixture_command,
    fixture_config,
    fixture_pids,
    free_port,
    invocation,
    is_alive,
)

Events = list[tuple[str, bool, str | None]]


# Tests that change nothing on the server share one server process (each start costs seconds).
@pytest.fixture(scope="module")
def shared_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("shared-server")


@pytest.fixture(scope="module")
async def shared_pool() -> AsyncIterator[McpConnectionPool]:
    pool = McpConnectionPool()
    try:
        yield pool
    finally:
        await pool.close()


def by_name(specs: list[ToolSpec]) -> dict[str, ToolSpec]:
    return {spec.name: spec for spec in specs}


def source_for(
    configs: list[McpServerConfig], pool: McpConnectionPool, tmp_path: Path, events: Events | None = None
) -> McpToolSource:
    def record(server: str, available: bool, reason: str | None) -> None:
        if events is not None:
            events.append((server, available, reason))

    return McpToolSource(configs, pool=pool, media_dir=tmp_path / "media", on_availability=record)


# --------------------------------------------------------------------------- annotations and _meta


async def test_annotations_map_to_effects_and_neither_leaves_the_default(
    shared_dir: Path, shared_pool: McpConnectionPool, tmp_path: Path
) -> None:
    source = source_for([fixture_config(shared_dir)], shared_pool, tmp_path)
    specs = by_name(await source.list_tools())
    assert specs["lookup"].framework_effect is ToolEffect.READ
    assert specs["upsert"].framework_effect is ToolEffect.IDEMPOTENT_WRITE
    # Neither hint: no effect and no annotations, so the session's default applies.
    assert specs["send"].framework_effect is None and specs["send"].mcp_annotations is None
    assert specs["slow_send"].framework_effect is None
    assert all(spec.effect is None and spec.policy is None for spec in specs.values())
    # Annotations keep their wire (camelCase) names.
    assert specs["lookup"].mcp_annotations == {
        "readOnlyHint": True,
        "destructiveHint": False,
        "openWorldHint": False,
    }
    assert specs["upsert"].mcp_annotations is not None
    assert specs["upsert"].mcp_annotations["idempotentHint"] is True

    options = AgentSessionOptions(
        default_tool_effect=ToolEffect.NON_IDEMPOTENT_WRITE,
        tool_policies={"upsert": ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE, requires_approval=True)},
    )
    assert options.resolve_tool_policy("send", specs["send"].framework_effect).effect is (
        ToolEffect.NON_IDEMPOTENT_WRITE
    )
    assert options.resolve_tool_policy("lookup", specs["lookup"].framework_effect).effect is ToolEffect.READ
    # An explicit policy wins over the annotations.
    upsert = options.resolve_tool_policy("upsert", specs["upsert"].framework_effect)
    assert upsert == ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE, requires_approval=True)


async def test_listing_keeps_schema_annotations_and_meta(
    shared_dir: Path, shared_pool: McpConnectionPool, tmp_path: Path
) -> None:
    source = source_for([fixture_config(shared_dir)], shared_pool, tmp_path)
    tools = {tool.name: tool for tool in await source.list_server_tools("fx")}
    send = tools["send"]
    assert send.meta == SEND_META
    assert send.annotations == {"destructiveHint": False}
    assert send.effect is None
    assert send.input_schema["required"] == ["to", "text"]
    assert send.schema_hash == input_schema_hash(send.input_schema)
    assert tools["lookup"].meta is None
    spec = by_name(await source.list_tools())["send"]
    assert spec.parameters == send.input_schema and spec.description == "Send a message (not idempotent)."


async def test_call_carries_idempotency_key_and_expected_identity(
    shared_dir: Path, shared_pool: McpConnectionPool, tmp_path: Path
) -> None:
    source = source_for([fixture_config(shared_dir)], shared_pool, tmp_path)
    send = by_name(await source.list_tools())["send"]
    output = await send.call({"to": "ana", "text": "hi"}, invocation("c7", key="sess-9/turn-2/c7"))
    assert output == "sent to ana"
    (call,) = [c for c in calls(shared_dir, "send") if c["arguments"]["to"] == "ana"]
    assert call["arguments"] == {"to": "ana", "text": "hi"}
    assert call["meta"][META_IDEMPOTENCY_KEY] == "sess-9/turn-2/c7"
    listed = {t.name: t for t in await source.list_server_tools("fx")}["send"]
    assert call["meta"][META_EXPECTED_TOOL] == {"name": "send", "inputSchemaHash": listed.schema_hash}
    # A retry of the same call sends the same key.
    await send.call({"to": "ana", "text": "hi"}, invocation("c7", key="sess-9/turn-2/c7", attempt=2))
    sent = [c for c in calls(shared_dir, "send") if c["arguments"]["to"] == "ana"]
    assert [c["meta"][META_IDEMPOTENCY_KEY] for c in sent] == ["sess-9/turn-2/c7"] * 2


# --------------------------------------------------------------------------- identity check


async def test_changed_input_schema_is_refused_and_nothing_is_sent(
    state_dir: Path, pool: McpConnectionPool, tmp_path: Path
) -> None:
    source = source_for([fixture_config(state_dir)], pool, tmp_path)
    shifty = by_name(await source.list_tools())["shifty"]
    assert await shifty.call({"x": 1}, invocation()) == "x=1"
    (state_dir / "shifted").touch()
    with pytest.raises(ToolExecutionError, match=r"changed its input schema.*not sent"):
        await shifty.call({"x": 2}, invocation("c2"))
    assert [c["arguments"] for c in calls(state_dir, "shifty")] == [{"x": 1}]
    # The server was listed again right before the refusal.
    assert read_log(state_dir)[-1]["event"] == "list"
    # Listing afresh gives a spec for the new identity, which may be called.
    fresh = by_name(await source.list_tools())["shifty"]
    assert fresh.parameters["required"] == ["x", "y"]
    assert await fresh.call({"x": 3, "y": 4}, invocation("c3")) == "x=3"


async def test_a_tool_the_server_no_longer_lists_is_refused(
    state_dir: Path, pool: McpConnectionPool, tmp_path: Path
) -> None:
    source = source_for([fixture_config(state_dir)], pool, tmp_path)
    lookup = by_name(await source.list_tools())["lookup"]
    (state_dir / "hidden-lookup").touch()
    with pytest.raises(ToolExecutionError, match=r"no longer offers tool 'lookup'.*not sent"):
        await lookup.call({"key": "k"}, invocation())
    assert calls(state_dir) == []


# --------------------------------------------------------------------------- filters and names


async def test_enabled_filter_and_prefix(
    shared_dir: Path, shared_pool: McpConnectionPool, tmp_path: Path
) -> None:
    config = fixture_config(shared_dir, enabled=("look*", "send"), tool_prefix="fx_")
    source = source_for([config], shared_pool, tmp_path)
    specs = by_name(await source.list_tools())
    assert sorted(specs) == ["fx_lookup", "fx_send"]
    assert await specs["fx_lookup"].call({"key": "prefixed"}, invocation()) == "value of prefixed"
    assert [c["tool"] for c in calls(shared_dir) if c["arguments"] == {"key": "prefixed"}] == ["lookup"]
    every = await source.list_server_tools("fx", include_disabled=True)
    assert len(every) > 2


async def test_the_first_server_keeps_a_shared_tool_name(
    shared_dir: Path, shared_pool: McpConnectionPool, state_dir: Path, tmp_path: Path
) -> None:
    configs = [
        fixture_config(shared_dir, enabled=("lookup",)),
        fixture_config(state_dir, name="fx2", enabled=("lookup", "send")),
    ]
    source = source_for(configs, shared_pool, tmp_path)
    specs = by_name(await source.list_tools())
    assert sorted(specs) == ["lookup", "send"]
    await specs["lookup"].call({"key": "first"}, invocation())
    assert len([c for c in calls(shared_dir, "lookup") if c["arguments"] == {"key": "first"}]) == 1
    assert calls(state_dir, "lookup") == []
    await shared_pool.close([configs[1]])


# --------------------------------------------------------------------------- failures


async def test_tool_error_becomes_tool_execution_error(
    shared_dir: Path, shared_pool: McpConnectionPool, tmp_path: Path
) -> None:
    source = source_for([fixture_config(shared_dir)], shared_pool, tmp_path)
    fail = by_name(await source.list_tools())["fail"]
    with pytest.raises(ToolExecutionError, match="failed on purpose: disk full"):
        await fail.call({"reason": "disk full"}, invocation())


async def test_transport_failure_is_a_plain_error_and_the_next_call_reconnects(
    state_dir: Path, pool: McpConnectionPool, tmp_path: Path
) -> None:
    source = source_for([fixture_config(state_dir)], pool, tmp_path)
    specs = by_name(await source.list_tools())
    with pytest.raises(McpTransportError, match="crash") as raised:
        await specs["crash"].call({}, invocation())
    assert not isinstance(raised.value, ToolExecutionError)
    assert await specs["lookup"].call({"key": "k"}, invocation("c2")) == "value of k"
    assert len(fixture_pids(state_dir)) == 2


async def test_unavailable_server_is_reported_and_listed_again_later(
    state_dir: Path, pool: McpConnectionPool, tmp_path: Path
) -> None:
    other_dir = tmp_path / "other"
    other_dir.mkdir()
    events: Events = []
    configs = [fixture_config(state_dir), fixture_config(other_dir, name="fx2", tool_prefix="b_")]
    source = source_for(configs, pool, tmp_path, events)
    specs = by_name(await source.list_tools())
    assert "lookup" in specs and "b_lookup" in specs
    assert events == [] and source.availability() == {"fx": True, "fx2": True}

    # The server stops answering: its process dies and a new one does not come up.
    (state_dir / "down").touch()
    os.kill(fixture_pids(state_dir)[-1], signal.SIGKILL)
    specs_while_down = by_name(await source.list_tools())
    assert "lookup" not in specs_while_down and "b_lookup" in specs_while_down
    assert [(server, available) for server, available, _ in events] == [("fx", False)]
    assert events[0][2]
    # A call made from the earlier listing is not sent and says why.
    with pytest.raises(ToolExecutionError, match=r"unavailable.*not sent"):
        await specs["lookup"].call({"key": "k"}, invocation())
    assert len(events) == 1  # still unavailable: no new event

    (state_dir / "down").unlink()
    specs_again = by_name(await source.list_tools())
    assert "lookup" in specs_again
    assert events[1] == ("fx", True, None)
    assert await specs["lookup"].call({"key": "k"}, invocation("c2")) == "value of k"


async def test_required_server_that_does_not_answer_is_an_error(
    state_dir: Path, pool: McpConnectionPool, tmp_path: Path
) -> None:
    (state_dir / "down").touch()
    events: Events = []
    source = source_for([fixture_config(state_dir, required=True)], pool, tmp_path, events)
    with pytest.raises(McpUnavailableError) as raised:
        await source.list_tools()
    assert raised.value.server == "fx"
    assert [(s, a) for s, a, _ in events] == [("fx", False)]


async def test_command_that_does_not_exist(pool: McpConnectionPool, tmp_path: Path) -> None:
    events: Events = []
    config = McpServerConfig(name="ghost", command=str(tmp_path / "no-such-server"))
    source = source_for([config], pool, tmp_path, events)
    assert await source.list_tools() == []
    assert events and events[0][:2] == ("ghost", False)
    assert "No such file" in (events[0][2] or "") or "not found" in (events[0][2] or "").lower()


# --------------------------------------------------------------------------- pool


async def test_pool_shares_one_connection_and_closes_it_when_idle(state_dir: Path, tmp_path: Path) -> None:
    pool = McpConnectionPool(idle_timeout=0.5)
    config = fixture_config(state_dir)
    source = source_for([config], pool, tmp_path)
    try:
        specs = by_name(await source.list_tools())
        await asyncio.gather(*(specs["lookup"].call({"key": str(i)}, invocation(f"c{i}")) for i in range(5)))
        assert len(fixture_pids(state_dir)) == 1 and pool.is_connected(config)
        await wait_until("the idle connection to close", lambda: not pool.is_connected(config), timeout=10)
        pid = fixture_pids(state_dir)[0]
        await wait_until("the idle server to exit", lambda: not is_alive(pid), timeout=10)
        assert await specs["lookup"].call({"key": "again"}, invocation("c9")) == "value of again"
        assert len(fixture_pids(state_dir)) == 2
    finally:
        await pool.close()


def test_list_tools_sync_from_sync_code(state_dir: Path, tmp_path: Path) -> None:
    source = McpToolSource(
        [fixture_config(state_dir)], media_dir=tmp_path / "media", pool=McpConnectionPool()
    )
    specs = by_name(source.list_tools_sync())
    assert specs["lookup"].framework_effect is ToolEffect.READ
    pid = fixture_pids(state_dir)[0]
    assert not is_alive(pid) or _wait_dead(pid)


def _wait_dead(pid: int, timeout: float = 10.0) -> bool:
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not is_alive(pid):
            return True
        time.sleep(0.05)
    return False


# --------------------------------------------------------------------------- HTTP with headers


async def test_streamable_http_sends_the_configured_headers(
    state_dir: Path, pool: McpConnectionPool, tmp_path: Path
) -> None:
    port = free_port()
    server = HttpServer(fixture_command(state_dir, http_port=port), port, tmp_path / "http.log")
    await server.start()
    try:
        config = McpServerConfig(
            name="fxhttp", url=server.url, headers={"Authorization": "Bearer s3cret"}, tool_prefix="h_"
        )
        assert "s3cret" not in repr(config)
        source = source_for([config], pool, tmp_path)
        specs = by_name(await source.list_tools())
        assert specs["h_lookup"].framework_effect is ToolEffect.READ
        assert await specs["h_whoami"].call({}, invocation()) == "Bearer s3cret"
        (call,) = calls(state_dir, "whoami")
        assert call["meta"][META_IDEMPOTENCY_KEY] == "s1/turn-1/c1"
    finally:
        server.stop()


# --------------------------------------------------------------------------- config and packaging


def test_config_validation() -> None:
    with pytest.raises(ValueError, match="exactly one of command"):
        McpServerConfig(name="x")
    with pytest.raises(ValueError, match="exactly one of command"):
        McpServerConfig(name="x", command="a", url="http://h/mcp")
    with pytest.raises(ValueError, match="headers only apply"):
        McpServerConfig(name="x", command="a", headers={"A": "b"})
    with pytest.raises(ValueError, match="only apply to a command"):
        McpServerConfig(name="x", url="http://h/mcp", args=["-v"])
    with pytest.raises(ValueError, match="must match"):
        McpServerConfig(name="bad name", command="a")
    with pytest.raises(ValueError, match="unique"):
        McpToolSource([McpServerConfig(name="x", command="a"), McpServerConfig(name="x", command="b")])


def test_config_from_mapping() -> None:
    config = McpServerConfig.from_mapping(
        "git",
        {
            "command": "mcp-server-git",
            "args": ["--repository", "/r"],
            "enabled": ["git_status"],
            "required": True,
        },
    )
    assert config.args == ("--repository", "/r") and config.enabled == ("git_status",) and config.required
    assert config.offers("git_status") and not config.offers("git_commit")
    with pytest.raises(ValueError, match="unknown key"):
        McpServerConfig.from_mapping("git", {"command": "x", "comand": "y"})
    with pytest.raises(ValueError, match="list of strings"):
        McpServerConfig.from_mapping("git", {"command": "x", "args": "--verbose"})
    # Configs with the same target share a connection key, whatever their filters.
    same = McpServerConfig(name="other", command="mcp-server-git", args=("--repository", "/r"))
    assert same.connection_key == config.connection_key


def test_missing_mcp_names_the_extra() -> None:
    code = "import sys; sys.modules['mcp'] = None; import sessionflow.mcp"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO_ROOT)
    assert result.returncode != 0
    assert 'pip install "sessionflow[mcp]"' in result.stderr
