"""The tool groups and the settings one call of a local tool runs under."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

__all__ = ["BROWSER_IDLE_SECONDS", "LocalToolGroup", "LocalToolSettings"]


BROWSER_IDLE_SECONDS = 15 * 60.0
"""Seconds a session's browser page stays open on a worker without being used."""


class LocalToolGroup(StrEnum):
    """A group of local tools that configuration switches on or off as a whole."""

    FILES = "files"
    SHELL = "shell"
    WEB_FETCH = "web_fetch"
    BROWSER = "browser"


@dataclass(frozen=True)
class LocalToolSettings:
    """What the worker's configuration, narrowed by one turn's session settings, allows.

    Attributes:
        groups: The groups that are switched on; a tool of any other group refuses to run.
        shell_timeout: Default seconds before a shell command's process group is killed
            (at most `MAX_SHELL_TIMEOUT`).

    Approval is not here: a handler cannot see whether a person approved its call, so the
    shell allow list and ``approval.always`` belong to the session's call policy.
    """

    groups: frozenset[LocalToolGroup]
    shell_timeout: float = 120.0
