"""Where the command keeps its files (`sessionflow.home.home_layout` decides).

By default everything is under ``~/.sessionflow``: ``<framework>.yaml``, ``server/``,
``payloads/``, ``media/``, the logs and the input history. ``$SESSIONFLOW_HOME`` moves all
of it there; without it and without an existing ``~/.sessionflow``, the XDG variables put
the configuration, the data and the state each in their folder.
"""

from __future__ import annotations

from pathlib import Path

from sessionflow.home import sessionflow_config_home, sessionflow_home, sessionflow_state_home

__all__ = [
    "config_home",
    "data_home",
    "default_config_path",
    "default_media_folder",
    "history_file",
    "server_data_dir",
    "state_home",
]


def data_home() -> Path:
    """The data folder (``~/.sessionflow``), read from the environment each time."""
    return sessionflow_home()


def config_home() -> Path:
    """The folder of the configuration files (``~/.sessionflow``)."""
    return sessionflow_config_home()


def state_home() -> Path:
    """The folder of the logs and the input history (``~/.sessionflow``)."""
    return sessionflow_state_home()


def default_config_path(framework: str) -> Path:
    return config_home() / f"{framework}.yaml"


def default_media_folder() -> Path:
    return data_home() / "media"


def server_data_dir() -> Path:
    """The embedded Temporal dev server's folder: database, log, and state file."""
    return data_home() / "server"


def history_file() -> Path:
    """The chat's input history, one file for every framework (``~/.sessionflow/history``)."""
    return state_home() / "history"
