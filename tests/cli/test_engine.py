"""``server: auto``: start the embedded dev server, reuse it, refuse a stranger on the port."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator

import pytest

from sessionflow.demo import ModelReply
from sessionflow.temporal import free_port, stop_dev_server
from tests.cli.conftest import Cli


@pytest.fixture
def impostor() -> Iterator[int]:
    """A plain HTTP server: something answers, but it is not Temporal."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), http.server.SimpleHTTPRequestHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def test_a_stranger_on_the_port_is_refused(cli: Cli, impostor: int) -> None:
    port = {"SESSIONFLOW_SERVER_PORT": str(impostor)}
    chat = cli.run("-p", "hi", "--model", "demo", extra_env=port)
    assert chat.returncode == 1
    assert f"a service that is not a Temporal server answers on 127.0.0.1:{impostor}" in chat.stderr
    start = cli.run("server", "start", extra_env=port)
    assert start.returncode == 1 and "not a Temporal frontend" in start.stderr
    assert not (cli.home / ".sessionflow" / "server" / "dev-server.json").exists()


def test_auto_starts_the_dev_server_and_later_runs_reuse_it(cli: Cli, private_port: int) -> None:
    data_dir = cli.home / ".sessionflow" / "server"
    cli.write_config(
        "model: scripted\nserver: {address: auto, ui: true}\n" + _tools_off(), framework="scripted"
    )
    cli.script([ModelReply.say("first"), ModelReply.say("second")])
    try:
        first = cli.run("-f", "scripted", "-p", "hello")
        assert first.returncode == 0, first.stderr
        assert f"Started the Temporal dev server at 127.0.0.1:{private_port}" in first.stderr
        assert "stop it with `sessionflow server stop`" in first.stderr
        assert "/namespaces/default/workflows/scripted-" in first.stderr  # the session's UI link
        assert first.stdout.strip() == "first"
        assert (data_dir / "temporal.log").is_file() and (data_dir / "temporal.sqlite").is_file()
        assert f"127.0.0.1:{private_port}" in (data_dir / "dev-server.json").read_text()

        second = cli.run("-f", "scripted", "-p", "hello again")
        assert second.returncode == 0, second.stderr
        assert f"Using the Temporal dev server at 127.0.0.1:{private_port}" in second.stderr
        assert second.stdout.strip() == "second"

        status = cli.run("server", "status")
        assert status.returncode == 0 and f"127.0.0.1:{private_port}" in status.stdout
        assert "web UI    http://127.0.0.1:" in status.stdout
        assert f"data      {data_dir}" in status.stdout
    finally:
        stopped = cli.run("server", "stop")
        stop_dev_server(data_dir)
    assert stopped.returncode == 0 and "Stopped the embedded Temporal dev server." in stopped.stdout
    after = cli.run("server", "status")
    assert "is not running" in after.stdout


def _tools_off() -> str:
    return "local_tools: {files: false, shell: {enabled: false}, web_fetch: false, browser: false}\n"


def test_a_server_that_does_not_start_exits_with_1(cli: Cli, private_port: int) -> None:
    broken = {"SESSIONFLOW_TEMPORAL_BINARY": "/bin/false"}  # exits at once, never answers
    result = cli.run("-p", "hi", "--model", "demo", extra_env=broken)
    assert result.returncode == 1
    assert "the Temporal dev server did not start" in result.stderr
    assert f"127.0.0.1:{private_port}" not in result.stderr or "exited with code 1" in result.stderr
