"""Where the command keeps its files: ``$SESSIONFLOW_HOME`` holds everything; without it the
XDG variables are honoured, unless ``~/.sessionflow`` already exists (nothing moves)."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from sessionflow.home import home_layout
from sessionflow.temporal.storage._payload_store import PAYLOAD_THRESHOLD_ENV
from sessionflow_cli._local_tools import shell_sandbox
from sessionflow_cli.config import (
    SandboxConfig,
    default_config_path,
    default_media_folder,
    default_text,
    history_file,
    server_data_dir,
)
from tests.cli.conftest import Cli


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def _files(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()}


def test_init_yes_with_sessionflow_home_writes_everything_under_it(cli: Cli) -> None:
    home = cli.home / "elsewhere" / "sf"
    env = {"SESSIONFLOW_HOME": str(home)}
    written = cli.run("init", "--yes", extra_env=env)
    assert written.returncode == 0, written.stderr
    config = home / "builtin.yaml"
    assert f"Wrote the default configuration to {config}" in written.stderr
    assert config.read_text() == default_text("builtin")
    assert not (cli.home / ".sessionflow").exists()
    assert _mode(config) == 0o600 and _mode(home) == 0o700

    # A run reads that file and keeps its log and payloads there too.
    run = {**env, PAYLOAD_THRESHOLD_ENV: "0", "SESSIONFLOW_SERVER_PORT": str(cli.server_port)}
    result = cli.run("-p", "show me around", extra_env=run)
    assert result.returncode == 0, result.stderr
    assert "That was the offline demo" in result.stdout
    files = _files(home)
    assert {"builtin.yaml", "sessionflow.log"} <= files
    assert any(name.startswith("payloads/") for name in files)
    assert not (cli.home / ".sessionflow").exists()
    assert not (cli.home / ".config" / "sessionflow").exists()


def test_xdg_folders_are_used_without_an_existing_sessionflow_folder(cli: Cli) -> None:
    xdg = {
        "XDG_CONFIG_HOME": str(cli.home / "xdg-config"),
        "XDG_DATA_HOME": str(cli.home / "xdg-data"),
        "XDG_STATE_HOME": str(cli.home / "xdg-state"),
    }
    written = cli.run("init", "--yes", extra_env=xdg)
    assert written.returncode == 0, written.stderr
    config = cli.home / "xdg-config" / "sessionflow" / "builtin.yaml"
    assert config.read_text() == default_text("builtin")

    run = {**xdg, PAYLOAD_THRESHOLD_ENV: "0", "SESSIONFLOW_SERVER_PORT": str(cli.server_port)}
    result = cli.run("-p", "show me around", extra_env=run)
    assert result.returncode == 0, result.stderr
    assert "sessionflow.log" in _files(cli.home / "xdg-state" / "sessionflow")
    assert any(name.startswith("payloads/") for name in _files(cli.home / "xdg-data" / "sessionflow"))
    assert _files(cli.home / "xdg-config" / "sessionflow") == {"builtin.yaml"}
    assert not (cli.home / ".sessionflow").exists()
    for folder in ("xdg-config", "xdg-data", "xdg-state"):
        assert _mode(cli.home / folder / "sessionflow") == 0o700


def test_an_existing_sessionflow_folder_stays_whatever_xdg_says(cli: Cli) -> None:
    config = cli.write_config()  # ~/.sessionflow/scripted.yaml, from before XDG was set
    xdg = {"XDG_CONFIG_HOME": str(cli.home / "xdg-config"), "XDG_STATE_HOME": str(cli.home / "xdg-state")}
    shown = cli.run("init", "--yes", "-f", "scripted", extra_env=xdg)
    assert shown.returncode == 0, shown.stderr
    assert f"Wrote the default configuration to {config}." in shown.stderr
    assert not (cli.home / "xdg-config").exists() and not (cli.home / "xdg-state").exists()


def test_the_layout_rules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    for name in ("SESSIONFLOW_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME"):
        monkeypatch.delenv(name, raising=False)
    legacy = tmp_path / ".sessionflow"

    layout = home_layout()  # nothing set: the default ~/.sessionflow, for everything
    assert (layout.source, layout.folders) == ("default", (legacy,))
    assert default_config_path("builtin") == legacy / "builtin.yaml"

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_STATE_HOME", "relative/is/ignored")
    layout = home_layout()
    assert layout.source == "xdg"
    assert layout.config == tmp_path / ".config" / "sessionflow"  # unset: the XDG default
    assert layout.data == tmp_path / "data" / "sessionflow"
    assert layout.state == tmp_path / ".local" / "state" / "sessionflow"
    assert server_data_dir() == tmp_path / "data" / "sessionflow" / "server"
    assert default_media_folder() == tmp_path / "data" / "sessionflow" / "media"
    assert history_file() == tmp_path / ".local" / "state" / "sessionflow" / "history"

    legacy.mkdir()  # an existing install never moves
    assert home_layout().folders == (legacy,)

    monkeypatch.setenv("SESSIONFLOW_HOME", str(tmp_path / "sf"))  # and SESSIONFLOW_HOME wins over all
    layout = home_layout()
    assert (layout.source, layout.folders) == ("SESSIONFLOW_HOME", (tmp_path / "sf",))
    assert default_config_path("x") == tmp_path / "sf" / "x.yaml"


def test_the_shell_sandbox_hides_sessionflows_own_folders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    for name in ("SESSIONFLOW_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME"):
        monkeypatch.delenv(name, raising=False)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    monkeypatch.chdir(workspace)
    # ~/.sessionflow: the local tools hide it themselves (HIDDEN_IN_HOME).
    assert shell_sandbox(SandboxConfig()).hidden == ()
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert set(shell_sandbox(SandboxConfig()).hidden) == {
        tmp_path / ".config" / "sessionflow",
        tmp_path / "data" / "sessionflow",
        tmp_path / ".local" / "state" / "sessionflow",
    }
    monkeypatch.setenv("SESSIONFLOW_HOME", str(tmp_path / "sf"))
    assert shell_sandbox(SandboxConfig(hidden=(tmp_path / "x",))).hidden == (tmp_path / "x", tmp_path / "sf")
    # A home that holds the current folder is not hidden: it would hide the workspace too.
    monkeypatch.setenv("SESSIONFLOW_HOME", str(tmp_path))
    assert shell_sandbox(SandboxConfig()).hidden == ()


def test_a_file_left_in_the_old_place_is_named_when_sessionflow_home_is_set(cli: Cli) -> None:
    old = cli.write_config()  # ~/.sessionflow/scripted.yaml
    home = cli.home / "sf"
    env = {"SESSIONFLOW_HOME": str(home), "SESSIONFLOW_SERVER_PORT": str(cli.server_port)}
    result = cli.run("-f", "scripted", "-p", "hello", "--model", "demo", extra_env=env)
    assert result.returncode == 0, result.stderr
    assert f"{old} is not read: the configuration is looked for in {home}" in result.stderr
