"""`connect` reads Temporal's own configuration (temporal.toml profiles, TEMPORAL_*) after
its arguments and the SESSIONFLOW_* variables, on the run's real dev server.

The run's conftest empties Temporal's configuration (no TEMPORAL_* variables, an empty
``$TEMPORAL_CONFIG_FILE``); each test sets what it needs with monkeypatch.
"""

from __future__ import annotations

import asyncio
import sys
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from temporalio.client import Client
from temporalio.service import RPCError, RPCStatusCode, TLSConfig

from sessionflow import connect
from sessionflow.temporal import TemporalConfigError, configured_address, free_port
from sessionflow.temporal.client._envconfig import (
    DEFAULT_SERVER_ADDRESS,
    default_config_file,
    load_temporal_profile,
    resolve_connect_settings,
)
from tests.namespaces import register_namespace

SESSIONFLOW_VARIABLES = ("SESSIONFLOW_SERVER_ADDRESS", "SESSIONFLOW_NAMESPACE")


@pytest.fixture(scope="module")
async def other_namespace(temporal_address: str) -> AsyncIterator[str]:
    """A second namespace on the dev server, so that using a namespace shows on the server."""
    yield await register_namespace(temporal_address, "envconfig")


@pytest.fixture(autouse=True)
def no_sessionflow_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in SESSIONFLOW_VARIABLES:
        monkeypatch.delenv(name, raising=False)


def dead_address() -> str:
    return f"127.0.0.1:{free_port()}"


def write_toml(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


async def start_marker(client: Client) -> str:
    """Start a workflow (no worker needed) in the client's namespace; its id."""
    workflow_id = f"envconfig-marker-{uuid.uuid4().hex[:8]}"
    await client.start_workflow("NoSuchWorkflow", id=workflow_id, task_queue=f"nowhere-{workflow_id}")
    return workflow_id


async def only_in(namespace: str, workflow_id: str, address: str) -> None:
    """The workflow exists in `namespace` and not in ``default``: the client used `namespace`."""
    mine = await Client.connect(address, namespace=namespace)
    description = await mine.get_workflow_handle(workflow_id).describe()
    assert description.id == workflow_id
    default = await Client.connect(address, namespace="default")
    with pytest.raises(RPCError) as missing:
        await default.get_workflow_handle(workflow_id).describe()
    assert missing.value.status is RPCStatusCode.NOT_FOUND
    await mine.get_workflow_handle(workflow_id).terminate("test over")


# ----------------------------------------------------------------- TEMPORAL_* variables


async def test_temporal_address_and_namespace_reach_the_server(
    temporal_address: str, other_namespace: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TEMPORAL_ADDRESS", temporal_address)
    monkeypatch.setenv("TEMPORAL_NAMESPACE", other_namespace)
    assert configured_address() == temporal_address
    client = await connect()
    assert client.service_client.config.target_host == temporal_address
    assert client.namespace == other_namespace
    await only_in(other_namespace, await start_marker(client), temporal_address)


# -------------------------------------------------------------------- temporal.toml files


async def test_a_profile_chosen_by_temporal_profile(
    temporal_address: str, other_namespace: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    unused = dead_address()
    file = write_toml(
        tmp_path / "temporal.toml",
        f'[profile.default]\naddress = "{unused}"\n\n'
        f'[profile.staging]\naddress = "{temporal_address}"\nnamespace = "{other_namespace}"\n',
    )
    monkeypatch.setenv("TEMPORAL_CONFIG_FILE", str(file))
    assert resolve_connect_settings().address == unused  # without TEMPORAL_PROFILE: default
    monkeypatch.setenv("TEMPORAL_PROFILE", "staging")
    client = await connect()
    assert client.service_client.config.target_host == temporal_address
    assert client.namespace == other_namespace
    await only_in(other_namespace, await start_marker(client), temporal_address)


async def test_temporal_config_file_names_the_file(
    temporal_address: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    file = write_toml(
        tmp_path / "elsewhere.toml",
        f'[profile.default]\naddress = "{temporal_address}"\nnamespace = "default"\n',
    )
    monkeypatch.setenv("TEMPORAL_CONFIG_FILE", str(file))
    client = await connect()
    assert client.service_client.config.target_host == temporal_address
    assert await client.count_workflows() is not None  # the server answers in that namespace
    assert load_temporal_profile().file == file


def test_a_named_file_under_the_home_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    address = dead_address()
    write_toml(tmp_path / "mine.toml", f'[profile.default]\naddress = "{address}"\n')
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("TEMPORAL_CONFIG_FILE", "~/mine.toml")
    assert resolve_connect_settings().address == address


@pytest.mark.skipif(sys.platform != "linux", reason="the platform's config folder is XDG's on Linux")
def test_the_platform_file_when_no_file_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TEMPORAL_CONFIG_FILE")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    address = dead_address()
    (tmp_path / "temporalio").mkdir()
    write_toml(tmp_path / "temporalio" / "temporal.toml", f'[profile.default]\naddress = "{address}"\n')
    assert default_config_file() == tmp_path / "temporalio" / "temporal.toml"
    assert resolve_connect_settings().address == address  # temporalio read the same file


# -------------------------------------------------------------------------- precedence


async def test_sessionflow_variables_win_over_temporal_ones(
    temporal_address: str, other_namespace: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TEMPORAL_ADDRESS", dead_address())
    monkeypatch.setenv("TEMPORAL_NAMESPACE", other_namespace)
    monkeypatch.setenv("SESSIONFLOW_SERVER_ADDRESS", temporal_address)
    monkeypatch.setenv("SESSIONFLOW_NAMESPACE", "default")
    assert configured_address() == temporal_address
    client = await connect()
    assert client.service_client.config.target_host == temporal_address
    assert client.namespace == "default"
    # Per setting: with SESSIONFLOW_NAMESPACE gone, TEMPORAL_NAMESPACE is next.
    monkeypatch.delenv("SESSIONFLOW_NAMESPACE")
    mixed = await connect()
    assert mixed.service_client.config.target_host == temporal_address
    assert mixed.namespace == other_namespace
    await only_in(other_namespace, await start_marker(mixed), temporal_address)


async def test_arguments_win_over_both(
    temporal_address: str, other_namespace: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SESSIONFLOW_SERVER_ADDRESS", dead_address())
    monkeypatch.setenv("SESSIONFLOW_NAMESPACE", "default")
    monkeypatch.setenv("TEMPORAL_ADDRESS", dead_address())
    monkeypatch.setenv("TEMPORAL_NAMESPACE", "default")
    monkeypatch.setenv("TEMPORAL_API_KEY", "from-the-environment")  # would turn TLS on
    client = await connect(temporal_address, other_namespace, tls=False, api_key="explicit")
    assert client.service_client.config.target_host == temporal_address
    assert client.namespace == other_namespace
    assert client.service_client.config.api_key == "explicit"
    assert client.service_client.config.tls is False
    await only_in(other_namespace, await start_marker(client), temporal_address)


# ------------------------------------------------------------------ API key, TLS, metadata


def test_api_key_tls_and_metadata_go_into_the_connect_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ca = tmp_path / "ca.pem"
    ca.write_bytes(b"-----BEGIN CERTIFICATE-----\nca\n")
    cert = tmp_path / "client.pem"
    cert.write_bytes(b"-----BEGIN CERTIFICATE-----\nclient\n")
    monkeypatch.setenv("TEMPORAL_ADDRESS", "my-ns.a1b2c.tmprl.cloud:7233")
    monkeypatch.setenv("TEMPORAL_NAMESPACE", "my-ns.a1b2c")
    monkeypatch.setenv("TEMPORAL_API_KEY", "secret-key")
    monkeypatch.setenv("TEMPORAL_TLS_SERVER_NAME", "tmprl.example")
    monkeypatch.setenv("TEMPORAL_TLS_SERVER_CA_CERT_PATH", str(ca))
    monkeypatch.setenv("TEMPORAL_TLS_CLIENT_CERT_PATH", str(cert))
    monkeypatch.setenv("TEMPORAL_TLS_CLIENT_KEY_DATA", "the-key")
    monkeypatch.setenv("TEMPORAL_GRPC_META_X_TENANT", "acme")
    settings = resolve_connect_settings()
    assert settings.address == "my-ns.a1b2c.tmprl.cloud:7233"
    assert settings.namespace == "my-ns.a1b2c"
    assert settings.api_key == "secret-key"
    assert isinstance(settings.tls, TLSConfig)
    assert settings.tls.domain == "tmprl.example"
    assert settings.tls.server_root_ca_cert == ca.read_bytes()
    assert settings.tls.client_cert == cert.read_bytes()
    assert settings.tls.client_private_key == b"the-key"
    assert dict(settings.rpc_metadata) == {"x-tenant": "acme"}
    # An explicit argument replaces each one alone.
    explicit = resolve_connect_settings(tls=True, api_key="other")
    assert explicit.tls is True and explicit.api_key == "other"
    assert explicit.address == "my-ns.a1b2c.tmprl.cloud:7233"


def test_an_api_key_alone_turns_tls_on_and_tls_false_turns_it_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEMPORAL_API_KEY", "secret-key")
    assert resolve_connect_settings().tls is True  # as Temporal's own clients do
    monkeypatch.setenv("TEMPORAL_TLS", "false")
    off = resolve_connect_settings()
    assert off.tls is False and off.api_key == "secret-key"
    monkeypatch.delenv("TEMPORAL_API_KEY")
    monkeypatch.delenv("TEMPORAL_TLS")
    assert resolve_connect_settings().tls is False  # nothing says TLS: sessionflow's default


def test_a_profile_tls_section(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    file = write_toml(
        tmp_path / "temporal.toml",
        '[profile.cloud]\naddress = "a.tmprl.cloud:7233"\napi_key = "k"\n\n'
        '[profile.cloud.tls]\nserver_name = "sni.example"\nserver_ca_cert_data = "PEM"\n\n'
        '[profile.cloud.grpc_meta]\nx-team = "agents"\n',
    )
    monkeypatch.setenv("TEMPORAL_CONFIG_FILE", str(file))
    monkeypatch.setenv("TEMPORAL_PROFILE", "cloud")
    settings = resolve_connect_settings()
    assert settings.api_key == "k"
    assert isinstance(settings.tls, TLSConfig)
    assert settings.tls.domain == "sni.example" and settings.tls.server_root_ca_cert == b"PEM"
    assert dict(settings.rpc_metadata) == {"x-team": "agents"}


async def test_tls_from_the_environment_reaches_the_connection(
    temporal_address: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TEMPORAL_ADDRESS", temporal_address)
    monkeypatch.setenv("TEMPORAL_TLS", "true")
    with pytest.raises(RuntimeError):  # a TLS handshake with a plain server fails
        await asyncio.wait_for(connect(), 30)
    plain = await connect(tls=False)  # the argument wins
    assert await plain.count_workflows() is not None


# ----------------------------------------------------------------------------- errors


async def test_a_missing_profile_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    file = write_toml(tmp_path / "temporal.toml", '[profile.default]\naddress = "x:1"\n[profile.prod]\n')
    monkeypatch.setenv("TEMPORAL_CONFIG_FILE", str(file))
    monkeypatch.setenv("TEMPORAL_PROFILE", "staging")
    with pytest.raises(TemporalConfigError) as caught:
        await connect()
    error = caught.value
    assert isinstance(error, ValueError)
    assert error.file == file and error.profile == "staging"
    assert str(error) == (
        f"the Temporal profile 'staging' of {file}: the file has no such profile (its profiles: default, prod)"
    )


async def test_a_bad_file_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    file = write_toml(tmp_path / "temporal.toml", "[profile.default\naddress = ")
    monkeypatch.setenv("TEMPORAL_CONFIG_FILE", str(file))
    with pytest.raises(TemporalConfigError, match="TOML parse error") as caught:
        await connect()
    assert str(caught.value).startswith(f"the Temporal profile 'default' of {file}: ")
    assert "\n" not in str(caught.value)


def test_a_missing_named_file_and_a_missing_tls_file_are_clear_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    missing = tmp_path / "nowhere.toml"
    monkeypatch.setenv("TEMPORAL_CONFIG_FILE", str(missing))
    with pytest.raises(TemporalConfigError, match="which is not a file") as named:
        configured_address()
    assert named.value.file == missing
    monkeypatch.delenv("TEMPORAL_CONFIG_FILE")
    monkeypatch.setenv("TEMPORAL_TLS_SERVER_CA_CERT_PATH", str(tmp_path / "ca.pem"))
    with pytest.raises(TemporalConfigError, match=f"cannot read the TLS file {tmp_path / 'ca.pem'}"):
        resolve_connect_settings()


# ------------------------------------------------------------------ temporal_config=False


async def test_temporal_config_false_ignores_it(
    temporal_address: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TEMPORAL_ADDRESS", dead_address())
    monkeypatch.setenv("TEMPORAL_NAMESPACE", "elsewhere")
    monkeypatch.setenv("TEMPORAL_API_KEY", "would-turn-tls-on")
    monkeypatch.setenv("TEMPORAL_PROFILE", "no-such-profile")  # would be an error if read
    assert resolve_connect_settings(temporal_config=False).address == DEFAULT_SERVER_ADDRESS
    assert configured_address(temporal_config=False) is None
    monkeypatch.setenv("SESSIONFLOW_SERVER_ADDRESS", temporal_address)
    client = await connect(temporal_config=False)
    assert client.service_client.config.target_host == temporal_address
    assert client.namespace == "default" and client.service_client.config.api_key is None
    assert await client.count_workflows() is not None
    with pytest.raises(TemporalConfigError):
        await connect()  # and read, the bad profile stops it
