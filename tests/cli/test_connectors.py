"""Connectors: MCP servers of ``connectors:`` in the chat and in `sessionflow connectors`.

Servers: the project's fixture server (tests/mcp, stdio), `mcp-server-time` from the
environment, a server whose tools carry connector keys in ``_meta``
(tests/cli/connector_server.py), and addresses where nothing answers.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from sessionflow.demo import ModelReply, ScriptedToolCall
from sessionflow.kit import ToolExecutionError, ToolInvocation
from sessionflow.mcp import McpTool
from sessionflow.temporal import free_port
from sessionflow_cli._connectors import (
    Connectors,
    connector_labels,
    connector_server,
    open_connectors,
    tool_is_enabled,
)
from sessionflow_cli._errors import RuntimeFailure
from sessionflow_cli.config import ConnectorConfig, TurnConfig, parse_config, resolve_turn
from tests.cli.conftest import LOCAL_TOOLS_OFF, REPO, Cli
from tests.mcp.fixture_server import calls

pytestmark = pytest.mark.timeout(180)

TIME_SERVER = Path(sys.executable).parent / "mcp-server-time"


def _time(name: str = "time", extra: str = "") -> str:
    return f"  - name: {name}\n    command: {TIME_SERVER}\n    args: [--local-timezone, UTC]\n{extra}"


def _python_module(name: str, module: str, args: list[str] | None = None, extra: str = "") -> str:
    arguments = json.dumps(["-m", module, *(args or [])])
    return (
        f"  - name: {name}\n    command: {sys.executable}\n    args: {arguments}\n"
        f"    env: {{PYTHONPATH: {json.dumps(str(REPO))}}}\n{extra}"
    )


def _fixture(state_dir: Path, extra: str = "") -> str:
    return _python_module("fx", "tests.mcp.fixture_server", ["--state-dir", str(state_dir)], extra)


def _down(name: str = "down", extra: str = "") -> str:
    return f"  - name: {name}\n    url: http://127.0.0.1:{free_port()}/mcp\n{extra}"


def _config(cli: Cli, connectors: str, *, model: str = "gpt-test", more: str = "") -> str:
    return f"model: {model}\nserver: {cli.server_address}\n{LOCAL_TOOLS_OFF}{more}connectors:\n{connectors}"


def _row(output: str, *cells: str) -> bool:
    """Whether a line of the output holds these cells in order, separated by spaces."""
    pattern = r"\s+".join(re.escape(cell) for cell in cells)
    return any(re.search(rf"(^|\s){pattern}(\s|$)", line) for line in output.splitlines())


# ------------------------------------------------------------------------------- the command


def test_connectors_lists_tools_effects_and_approvals(cli: Cli, tmp_path: Path) -> None:
    state_dir = tmp_path / "fx"
    cli.write_config(
        _config(
            cli,
            _time()
            + _fixture(state_dir, "    enabled: [lookup, upsert, send]\n")
            + _python_module("gh", "tests.cli.connector_server", extra="    enabled: [work, ping]\n")
            + _down(),
            more="approval: {always: [convert_time]}\n",
        ),
        framework="builtin",
    )
    result = cli.run("connectors")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert f"Connectors of {cli.config_path('builtin')}:" in out
    # mcp-server-time: read-only tools; approval.always adds approval to one of them.
    assert "time (" in out and "mcp-server-time --local-timezone UTC): 2 tools" in out
    assert _row(out, "get_current_time", "read", "no")
    assert _row(out, "convert_time", "read", "every call (approval.always)")
    # The fixture server: the effect follows the annotations; no promise is unclassified.
    assert "3 tools of 10, enabled: lookup, upsert, send" in out
    assert _row(out, "lookup", "read", "no", "Read a value.")
    assert _row(out, "upsert", "idempotent write", "no")
    assert _row(out, "send", "unclassified", "every call")
    assert not _row(out, "fail") and not _row(out, "crash")
    # `enabled` matches the connection in `_meta`, and a plain name.
    assert "3 tools of 5, enabled: work, ping" in out
    assert _row(out, "list_work_issues", "read", "no", "[github / work / list_issues]")
    assert _row(out, "create_work_issue", "unclassified", "every call")
    assert _row(out, "ping", "read", "no")
    assert "list_personal_issues" not in out and "read_channel" not in out
    # The server that does not answer, and why.
    assert re.search(r"down \(http://127\.0\.0\.1:\d+/mcp\): did not answer: ConnectError", out)
    assert "3 of 4 connectors answered." in out


def test_connectors_without_any_and_with_a_required_one_down(cli: Cli) -> None:
    cli.write_config(f"model: demo\nserver: {cli.server_address}\n", framework="builtin")
    none = cli.run("connectors")
    assert none.returncode == 0 and "No connectors in" in none.stdout
    cli.write_config(_config(cli, _down(extra="    required: true\n")), framework="builtin")
    down = cli.run("connectors")
    assert down.returncode == 1
    assert "(required): did not answer" in down.stdout
    assert "Required connectors that did not answer: 'down'" in down.stdout


# ------------------------------------------------------------------------------- the chat


def test_one_shot_chat_calls_mcp_tools(cli: Cli, tmp_path: Path) -> None:
    state_dir = tmp_path / "fx"
    cli.write_config(
        _config(cli, _time() + _fixture(state_dir, "    enabled: [lookup]\n")), framework="builtin"
    )
    cli.script(
        [
            ModelReply.call(ScriptedToolCall("c1", "get_current_time", {"timezone": "UTC"})),
            ModelReply.call(ScriptedToolCall("c2", "lookup", {"key": "colour"})),
            ModelReply.say("It is time, and the colour is known."),
        ]
    )
    result = cli.run("-p", "what time is it, and what is the colour?")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "It is time, and the colour is known."
    assert "warning" not in result.stderr
    first, second, third = cli.requests()
    assert {"ask_user", "get_current_time", "convert_time", "lookup"} == set(first.tool_names())
    # The MCP tools ran as tool steps and their results reached the model.
    time_result = json.loads(second.tool_results()["c1"])
    assert time_result["timezone"] == "UTC" and "datetime" in time_result
    assert third.tool_results()["c2"] == "value of colour"
    [call] = calls(state_dir, "lookup")
    assert call["arguments"] == {"key": "colour"}
    session_id = re.search(r"session (builtin-\S+)", result.stderr)
    assert session_id is not None
    assert call["meta"]["io.sessionflow/idempotencyKey"].startswith(session_id.group(1) + "/")


def test_a_connector_that_does_not_answer_is_a_warning(cli: Cli) -> None:
    broken = (
        f"  - name: broken\n    command: {sys.executable}\n"
        "    args: ['-c', 'import sys; sys.stderr.write(\"broken server here\\n\"); sys.exit(3)']\n"
    )
    cli.write_config(_config(cli, _down() + broken + _time()), framework="builtin")
    cli.script([ModelReply.say("Fine without them.")])
    result = cli.run("-p", "hello")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "Fine without them."
    assert re.search(
        r"warning: connector 'down' does not answer \(ConnectError: [^)]*\); this run goes on", result.stderr
    )
    [broken_line] = [line for line in result.stderr.splitlines() if "connector 'broken'" in line]
    assert broken_line.startswith("warning: connector 'broken' does not answer")
    assert broken_line.endswith(f"(server output: {cli.home / '.sessionflow' / 'connectors.log'})")
    assert "server output" not in next(line for line in result.stderr.splitlines() if "'down'" in line)
    log = cli.home / ".sessionflow" / "connectors.log"
    assert "broken server here" in log.read_text()  # stdio servers' standard error goes to the log
    assert set(cli.requests()[0].tool_names()) == {"ask_user", "get_current_time", "convert_time"}


def test_a_required_connector_that_does_not_answer_stops_the_command(cli: Cli) -> None:
    cli.write_config(_config(cli, _time() + _down(extra="    required: true\n")), framework="builtin")
    result = cli.run("-p", "hello")
    assert result.returncode == 1
    assert "error: connector 'down' is required but does not answer (ConnectError" in result.stderr
    assert cli.requests() == []  # no model call


# ------------------------------------------------------------------------------- in process


def _tool(name: str, meta: Mapping[str, Any] | None = None) -> McpTool:
    return McpTool(
        server="s",
        name=name,
        title=None,
        description=None,
        input_schema={"type": "object"},
        annotations=None,
        meta=meta,
        schema_hash="sha256:0",
    )


def test_enabled_matches_names_and_connector_keys() -> None:
    keys = {
        "io.sessionflow/connector": "github",
        "io.sessionflow/connection": "work",
        "io.sessionflow/operation": "create_issue",
        "io.example/other": "ignored",
    }
    labelled = _tool("create_issue_work", keys)
    plain = _tool("ping")
    assert connector_labels(labelled) == ("github", "work", "create_issue")
    assert tool_is_enabled(None, labelled) and tool_is_enabled(None, plain)
    for entry in ("github", "work", "create_issue", "create_issue_work", "git*"):
        assert tool_is_enabled([entry], labelled), entry
    assert not tool_is_enabled(["ignored"], labelled)
    assert not tool_is_enabled(["personal"], labelled)
    assert tool_is_enabled(["p?ng"], plain) and not tool_is_enabled(["github"], plain)
    assert not tool_is_enabled([], plain)


def test_each_entry_becomes_a_server_config() -> None:
    stdio = connector_server(
        ConnectorConfig(name="git", command="mcp-server-git", args=("--repository", "."))
    )
    assert stdio.transport == "stdio" and stdio.args == ("--repository", ".") and stdio.headers is None
    web = connector_server(
        ConnectorConfig(
            name="docs",
            url="https://docs.example/mcp",
            headers={"Authorization": "Bearer x"},
            enabled=("search",),
            required=True,
        )
    )
    assert web.transport == "http" and web.headers == {"Authorization": "Bearer x"}
    assert web.required and web.enabled == ("search",)


@pytest.fixture
async def time_connectors(tmp_path: Path) -> AsyncIterator[tuple[Connectors, list[str]]]:
    text = f"model: demo\nconnectors:\n{_time()}"
    config = parse_config("builtin", text, path=tmp_path / "builtin.yaml", cwd=tmp_path)
    notes: list[str] = []

    def resolve(settings: Mapping[str, Any]) -> TurnConfig:
        return resolve_turn(config, settings)

    connectors = Connectors(
        config, notice=notes.append, resolve_settings=resolve, log_path=tmp_path / "c.log"
    )
    try:
        yield connectors, notes
    finally:
        await connectors.aclose()


async def test_a_call_of_a_switched_off_connector_is_refused(
    time_connectors: tuple[Connectors, list[str]],
) -> None:
    connectors, notes = time_connectors
    [listing] = await connectors.list_all()
    assert listing.answered and [t.name for t in listing.tools] == ["get_current_time", "convert_time"]
    specs = {spec.name: spec for spec in connectors.tool_specs(taken={"convert_time"})}
    assert set(specs) == {"get_current_time"}
    assert notes == [
        "warning: tool 'convert_time' of connector 'time' is left out: a built-in tool has that name"
    ]
    spec = specs["get_current_time"]
    assert spec.framework_effect is not None and spec.framework_effect.value == "read"

    def invocation(settings: Mapping[str, Any]) -> ToolInvocation:
        return ToolInvocation(
            tool_call_id="c", idempotency_key="s/turn-1/c", attempt=1, session_settings=settings
        )

    with pytest.raises(ToolExecutionError, match="tool get_current_time is switched off for this session"):
        await spec.call({"timezone": "UTC"}, invocation({"connectors": {"enabled": []}}))
    answer = await spec.call({"timezone": "UTC"}, invocation({"connectors": {"enabled": ["time"]}}))
    assert json.loads(answer)["timezone"] == "UTC"


async def test_open_connectors_refuses_a_required_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))  # the connectors' log goes under ~/.sessionflow
    text = f"model: demo\nconnectors:\n{_down(extra='    required: true' + chr(10))}"
    config = parse_config("builtin", text, path=tmp_path / "builtin.yaml", cwd=tmp_path)

    def resolve(settings: Mapping[str, Any]) -> TurnConfig:
        return resolve_turn(config, settings)

    with pytest.raises(RuntimeFailure, match="connector 'down' is required but does not answer"):
        await open_connectors(config, notice=print, resolve_settings=resolve)
