"""Where the command keeps its files: everything under ``~/.sessionflow`` (HOME decides)."""

from __future__ import annotations

from pathlib import Path

__all__ = ["data_home", "default_config_path", "default_media_folder", "server_data_dir"]


def data_home() -> Path:
    """``~/.sessionflow``, read from HOME each time so tests can point it elsewhere."""
    return Path.home() / ".sessionflow"


def default_config_path(framework: str) -> Path:
    return data_home() / f"{framework}.yaml"


def default_media_folder() -> Path:
    return data_home() / "media"


def server_data_dir() -> Path:
    """The embedded Temporal dev server's folder: database, log, and state file."""
    return data_home() / "server"
