"""The command reads Temporal's own configuration (TEMPORAL_*, temporal.toml) like `connect`:
``server: auto`` gives way to a server the environment names, the file's settings win.

The command runs as a process against the run's dev server, in a namespace of the
module's own, so that where its sessions went shows on the server. Its embedded-server
port (``SESSIONFLOW_SERVER_PORT``) is a free one: were the environment ignored, ``auto``
would start a dev server there.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest
from temporalio.client import Client

from sessionflow.demo import ModelReply
from sessionflow.temporal import free_port, stop_dev_server
from sessionflow.testing import wait_until
from tests.cli.background import ServeCommand
from tests.cli.conftest import LOCAL_TOOLS_OFF, Cli
from tests.namespaces import register_namespace

AUTO_CONFIG = f"model: scripted\n{LOCAL_TOOLS_OFF}"  # no server key: `server: auto`


@pytest.fixture(scope="module")
async def namespace(temporal_address: str) -> AsyncIterator[str]:
    yield await register_namespace(temporal_address, "cli-envconfig")


@pytest.fixture(autouse=True)
def no_embedded_server(cli: Cli) -> Iterator[None]:
    """Stops an embedded server that a failing run may have started."""
    yield
    stop_dev_server(cli.home / ".sessionflow" / "server")


def embedded_started(cli: Cli) -> bool:
    return (cli.home / ".sessionflow" / "server" / "dev-server.json").exists()


async def workflows_in(address: str, namespace: str) -> list[str]:
    """The ids of the workflows in `namespace`, once visibility lists any."""
    client = await Client.connect(address, namespace=namespace)

    async def listed() -> list[str] | None:
        return [execution.id async for execution in client.list_workflows()] or None

    return await wait_until(f"a workflow listed in {namespace}", listed, timeout=60)


async def test_temporal_address_and_namespace_replace_the_embedded_server(
    cli: Cli, namespace: str, temporal_address: str
) -> None:
    cli.write_config(AUTO_CONFIG)
    cli.script([ModelReply.say("hello from the environment's server")])
    env = {"TEMPORAL_ADDRESS": temporal_address, "TEMPORAL_NAMESPACE": namespace}
    result = await asyncio.to_thread(cli.run, "-f", "scripted", "-p", "hello", extra_env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "hello from the environment's server"
    assert f"Using the Temporal server at {temporal_address} (namespace {namespace})." in result.stderr
    assert not embedded_started(cli)
    ids = await workflows_in(temporal_address, namespace)
    assert any(workflow_id.startswith("scripted-") for workflow_id in ids), ids


async def test_a_temporal_toml_profile(
    cli: Cli, namespace: str, temporal_address: str, tmp_path: Path
) -> None:
    toml = tmp_path / "temporal.toml"
    toml.write_text(
        f'[profile.default]\naddress = "127.0.0.1:{free_port()}"\n\n'
        f'[profile.sessions]\naddress = "{temporal_address}"\nnamespace = "{namespace}"\n',
        encoding="utf-8",
    )
    cli.write_config(AUTO_CONFIG)
    cli.script([ModelReply.say("from the profile")])
    env = {"TEMPORAL_CONFIG_FILE": str(toml), "TEMPORAL_PROFILE": "sessions"}
    result = await asyncio.to_thread(cli.run, "-f", "scripted", "-p", "hello", extra_env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "from the profile"
    assert f"Using the Temporal server at {temporal_address} (namespace {namespace})." in result.stderr
    assert not embedded_started(cli)


def test_sessionflow_variables_and_the_file_win(cli: Cli, namespace: str, temporal_address: str) -> None:
    dead = f"127.0.0.1:{free_port()}"
    cli.script([ModelReply.say("one"), ModelReply.say("two"), ModelReply.say("three")])
    cli.write_config(AUTO_CONFIG)
    by_variable = cli.run(
        "-f",
        "scripted",
        "-p",
        "hello",
        extra_env={"TEMPORAL_ADDRESS": dead, "SESSIONFLOW_SERVER_ADDRESS": temporal_address},
    )
    assert by_variable.returncode == 0, by_variable.stderr
    assert f"Using the Temporal server at {temporal_address} (namespace default)." in by_variable.stderr

    # The file's address wins; the namespace it leaves open comes from the environment.
    cli.write_config(f"model: scripted\nserver: {temporal_address}\n{LOCAL_TOOLS_OFF}")
    by_file = cli.run(
        "-f", "scripted", "-p", "hello", extra_env={"TEMPORAL_ADDRESS": dead, "TEMPORAL_NAMESPACE": namespace}
    )
    assert by_file.returncode == 0, by_file.stderr
    assert f"Using the Temporal server at {temporal_address} (namespace {namespace})." in by_file.stderr

    cli.write_config(
        f"model: scripted\nserver: {{address: {temporal_address}, namespace: default}}\n{LOCAL_TOOLS_OFF}"
    )
    named = cli.run("-f", "scripted", "-p", "hello", extra_env={"TEMPORAL_NAMESPACE": namespace})
    assert named.returncode == 0, named.stderr
    assert f"Using the Temporal server at {temporal_address} (namespace default)." in named.stderr
    assert [r.stdout.strip() for r in (by_variable, by_file, named)] == ["one", "two", "three"]
    assert not embedded_started(cli)


def test_a_bad_profile_is_a_usage_error_without_a_traceback(cli: Cli, tmp_path: Path) -> None:
    toml = tmp_path / "temporal.toml"
    toml.write_text('[profile.default]\naddress = "127.0.0.1:7233"\n', encoding="utf-8")
    cli.write_config(AUTO_CONFIG)
    result = cli.run(
        "-f",
        "scripted",
        "-p",
        "hello",
        extra_env={"TEMPORAL_CONFIG_FILE": str(toml), "TEMPORAL_PROFILE": "prod"},
    )
    assert result.returncode == 2, result.stderr
    assert f"the Temporal profile 'prod' of {toml}: the file has no such profile (its profiles: default)" in (
        result.stderr
    )
    assert "Traceback" not in result.stderr
    assert not embedded_started(cli)


async def test_serve_uses_the_environments_server(cli: Cli, namespace: str, temporal_address: str) -> None:
    cli.write_config(f"model: demo\n{LOCAL_TOOLS_OFF}", framework="builtin")
    cli.env.update(TEMPORAL_ADDRESS=temporal_address, TEMPORAL_NAMESPACE=namespace)
    serve = ServeCommand(cli, cli.home / "serve.log")
    try:
        base, code = await serve.login_url()
        assert f"Using the Temporal server at {temporal_address} (namespace {namespace})." in serve.output()
        async with httpx.AsyncClient(base_url=base, timeout=60) as http:
            login = await http.post("/api/v1/login", json={"code": code})
            assert login.status_code == 200, login.text
            headers = {"Authorization": f"Bearer {login.json()['token']}"}
            created = await http.post("/api/v1/sessions", json={"message": "show me around"}, headers=headers)
            assert created.status_code == 201, created.text
            session_id = created.json()["session_id"]
        client = await Client.connect(temporal_address, namespace=namespace)
        description = await client.get_workflow_handle(session_id).describe()
        assert description.id == session_id and description.namespace == namespace
        assert await serve.stop() == 0
    finally:
        serve.kill()
    assert not embedded_started(cli)
