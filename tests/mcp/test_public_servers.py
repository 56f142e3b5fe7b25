"""`McpToolSource` against public MCP servers nobody here wrote.

* ``mcp-server-time`` and ``mcp-server-git`` (PyPI, dev group) over stdio;
* ``@modelcontextprotocol/server-everything`` (npm, installed by ``ci/test``) over stdio
  and over streamable HTTP: annotations, images, long-running tools.
"""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import TextIO

import pytest

from sessionflow import ToolEffect
from sessionflow.kit import ToolExecutionError, ToolSpec
from sessionflow.mcp import McpConnectionPool, McpServerConfig, McpToolSource
from tests.mcp.helpers import HttpServer, everything_entry, free_port, invocation

BIN = Path(sys.executable).parent
IMAGE_REFERENCE = re.compile(r"\[image: (?P<path>\S+) \((?P<mime>[^)]+)\)\]")


def by_name(specs: list[ToolSpec]) -> dict[str, ToolSpec]:
    return {spec.name: spec for spec in specs}


def source(config: McpServerConfig, pool: McpConnectionPool, tmp_path: Path) -> McpToolSource:
    return McpToolSource([config], pool=pool, media_dir=tmp_path / "media")


# --------------------------------------------------------------------------- mcp-server-time


async def test_time_server(pool: McpConnectionPool, tmp_path: Path) -> None:
    config = McpServerConfig(name="time", command=str(BIN / "mcp-server-time"))
    specs = by_name(await source(config, pool, tmp_path).list_tools())
    assert {"get_current_time", "convert_time"} <= set(specs)
    assert all(spec.framework_effect is ToolEffect.READ for spec in specs.values())
    output = await specs["get_current_time"].call({"timezone": "Etc/UTC"}, invocation())
    assert json.loads(output)["timezone"] == "Etc/UTC"
    with pytest.raises(ToolExecutionError):
        await specs["get_current_time"].call({"timezone": "Not/AZone"}, invocation("c2"))


# --------------------------------------------------------------------------- mcp-server-git


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    folder = tmp_path / "repo"
    folder.mkdir()
    git = ["git", "-C", str(folder)]
    subprocess.run([*git, "init", "-q", "-b", "main"], check=True)
    subprocess.run([*git, "config", "user.email", "t@example.com"], check=True)
    subprocess.run([*git, "config", "user.name", "T"], check=True)
    (folder / "notes.txt").write_text("hello\n")
    return folder


async def test_git_server(repo: Path, pool: McpConnectionPool, tmp_path: Path) -> None:
    config = McpServerConfig(
        name="git", command=str(BIN / "mcp-server-git"), args=("--repository", str(repo))
    )
    specs = by_name(await source(config, pool, tmp_path).list_tools())
    assert specs["git_status"].framework_effect is ToolEffect.READ
    assert specs["git_add"].framework_effect is ToolEffect.IDEMPOTENT_WRITE
    assert specs["git_reset"].framework_effect is ToolEffect.IDEMPOTENT_WRITE  # destructive, but idempotent
    # git_commit promises neither: no annotations on the spec, so the session default decides.
    assert specs["git_commit"].framework_effect is None and specs["git_commit"].mcp_annotations is None

    status = await specs["git_status"].call({"repo_path": str(repo)}, invocation())
    assert "notes.txt" in status
    await specs["git_add"].call({"repo_path": str(repo), "files": ["notes.txt"]}, invocation("c2"))
    await specs["git_commit"].call({"repo_path": str(repo), "message": "first"}, invocation("c3"))
    assert git_log(repo) == ["first"]


def git_log(repo: Path) -> list[str]:
    log = subprocess.run(
        ["git", "-C", str(repo), "log", "--format=%s"], capture_output=True, text=True, check=True
    )
    return log.stdout.split()


# --------------------------------------------------------------------------- server-everything


def check_everything(specs: dict[str, ToolSpec]) -> None:
    assert specs["echo"].framework_effect is ToolEffect.READ
    assert specs["get-tiny-image"].mcp_annotations == {
        "readOnlyHint": True,
        "destructiveHint": False,
        "idempotentHint": True,
        "openWorldHint": False,
    }
    assert specs["gzip-file-as-resource"].framework_effect is ToolEffect.IDEMPOTENT_WRITE
    assert specs["toggle-simulated-logging"].framework_effect is None


async def check_image(spec: ToolSpec, media_dir: Path) -> None:
    output = await spec.call({}, invocation("img"))
    match = IMAGE_REFERENCE.search(output)
    assert match is not None, output
    assert match["mime"] == "image/png"
    assert is_png_in(Path(match["path"]), media_dir)
    assert output.startswith("Here's the image you requested:")


def is_png_in(image: Path, media_dir: Path) -> bool:
    return image.parent == media_dir.absolute() and image.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")


@pytest.fixture
def stderr_log(tmp_path: Path) -> Iterator[TextIO]:
    with (tmp_path / "servers.log").open("w") as log:
        yield log


async def test_everything_over_stdio(stderr_log: TextIO, tmp_path: Path) -> None:
    entry = everything_entry()
    config = McpServerConfig(name="everything", command="node", args=(str(entry), "stdio"))
    pool = McpConnectionPool(server_stderr=stderr_log)
    try:
        await run_everything_over_stdio(config, pool, tmp_path)
    finally:
        await pool.close()
    # The server's stderr went to the pool's log, not to ours.
    assert "Starting default (STDIO) server" in read_text(stderr_log.name)


def read_text(path: str) -> str:
    return Path(path).read_text()


async def run_everything_over_stdio(config: McpServerConfig, pool: McpConnectionPool, tmp_path: Path) -> None:
    specs = by_name(await source(config, pool, tmp_path).list_tools())
    check_everything(specs)
    assert await specs["echo"].call({"message": "hi"}, invocation()) == "Echo: hi"
    await check_image(specs["get-tiny-image"], tmp_path / "media")

    # A long-running tool shares the connection with quicker calls.
    started = time.monotonic()
    long_call = asyncio.ensure_future(
        specs["trigger-long-running-operation"].call({"duration": 2, "steps": 2}, invocation("long"))
    )
    quick = await specs["get-sum"].call({"a": 2, "b": 3}, invocation("sum"))
    assert "5" in quick and not long_call.done()
    assert "Long running operation completed" in await long_call
    assert time.monotonic() - started >= 2


@pytest.fixture
async def everything_http(tmp_path: Path) -> AsyncIterator[HttpServer]:
    entry = everything_entry()
    port = free_port()
    server = HttpServer(
        ["node", str(entry), "streamableHttp"], port, tmp_path / "everything.log", {"PORT": str(port)}
    )
    await server.start()
    try:
        yield server
    finally:
        server.stop()


async def test_everything_over_streamable_http(
    everything_http: HttpServer, pool: McpConnectionPool, tmp_path: Path
) -> None:
    config = McpServerConfig(name="everything", url=everything_http.url, headers={"X-Test": "1"})
    events: list[tuple[str, bool, str | None]] = []

    def on_availability(server: str, available: bool, reason: str | None) -> None:
        events.append((server, available, reason))

    mcp = McpToolSource([config], pool=pool, media_dir=tmp_path / "media", on_availability=on_availability)
    specs = by_name(await mcp.list_tools())
    check_everything(specs)
    assert await specs["echo"].call({"message": "over http"}, invocation()) == "Echo: over http"
    await check_image(specs["get-tiny-image"], tmp_path / "media")
    output = await specs["trigger-long-running-operation"].call({"duration": 1, "steps": 2}, invocation("l"))
    assert "Long running operation completed" in output

    # The server goes away: its tools are reported unavailable, then come back with it.
    everything_http.stop()
    assert await mcp.list_tools() == []
    assert [(s, a) for s, a, _ in events] == [("everything", False)]
    await everything_http.start()
    assert "echo" in by_name(await mcp.list_tools())
    assert events[-1] == ("everything", True, None)
    assert await specs["echo"].call({"message": "again"}, invocation("c2")) == "Echo: again"
