"""Library logs (Temporal worker warnings, retried activities) go to a file, not the chat."""

from __future__ import annotations

import logging
import os
from pathlib import Path

from sessionflow.home import open_private, tighten_home
from sessionflow_cli.config import state_home

__all__ = ["log_file", "log_to_file"]


def log_file() -> Path:
    return state_home() / "sessionflow.log"


def log_to_file() -> Path:
    """Send every log record of this process to ``~/.sessionflow/sessionflow.log``."""
    path = log_file()
    tighten_home(path.parent)
    os.close(open_private(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND))  # 0600 before the handler opens it
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(process)d %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    for existing in list(root.handlers):
        root.removeHandler(existing)
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    return path
