"""The command keeps ``~/.sessionflow`` to its owner: 0700 folders, 0600 files, looser ones tightened."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from sessionflow.demo import ModelReply
from sessionflow.temporal.storage._payload_store import PAYLOAD_THRESHOLD_ENV
from tests.cli.conftest import Cli


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


@pytest.fixture(autouse=True)
def loose_umask() -> Iterator[None]:
    """The command inherits the usual 022: without its own modes, 0755 folders and 0644 files."""
    previous = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(previous)


def test_a_fresh_home_gets_a_private_sessionflow_folder(cli: Cli) -> None:
    home = cli.home / ".sessionflow"
    assert not home.exists()
    # No configuration file: the defaults, on the test server's port. Every payload goes to the
    # store (threshold 0), so there are objects to check.
    env = {PAYLOAD_THRESHOLD_ENV: "0", "SESSIONFLOW_SERVER_PORT": str(cli.server_port)}
    result = cli.run("-p", "show me around", "--model", "demo", extra_env=env)
    assert result.returncode == 0, result.stderr
    files = [p for p in home.rglob("*") if p.is_file()]
    folders = [home, *(p for p in home.rglob("*") if p.is_dir())]
    assert home / "sessionflow.log" in files
    assert any(p.is_relative_to(home / "payloads") for p in files)
    assert {p: _mode(p) for p in files} == dict.fromkeys(files, 0o600)
    assert {p: _mode(p) for p in folders} == dict.fromkeys(folders, 0o700)


def test_an_older_loose_sessionflow_folder_is_tightened_at_start(cli: Cli) -> None:
    config = cli.write_config()
    home = config.parent
    (home / "payloads").mkdir()
    log = home / "sessionflow.log"
    token = home / "codec-token"
    for path, text in ((log, "old line\n"), (token, "codec-token-0123456789abcdef\n")):
        path.write_text(text)
    for folder in (home, home / "payloads"):
        folder.chmod(0o755)
    for file in (config, log, token):
        file.chmod(0o644)
    cli.script([ModelReply.say("fine")])
    result = cli.run("-p", "hello")
    assert result.returncode == 0, result.stderr
    assert _mode(home) == 0o700
    assert _mode(home / "payloads") == 0o700
    assert {f.name: _mode(f) for f in (config, log, token)} == dict.fromkeys(
        (config.name, log.name, token.name), 0o600
    )
    assert log.read_text().startswith("old line\n")  # tightened, not replaced
