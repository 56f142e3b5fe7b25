"""Flow types namespaced per machine, user, configuration file and workspace.

Two commands that differ in any of these never take each other's tool steps: a flow type
is a task queue, so an approved write runs only with the workspace and tools it was
approved under.
"""

from __future__ import annotations

import hashlib
import os
import pwd
import socket
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "SUFFIX_LENGTH",
    "StartEnvironment",
    "flow_type_prefix",
    "namespace_session_flow_type",
    "session_flow_type",
    "start_environment",
]

SUFFIX_LENGTH = 6
_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz"


@dataclass(frozen=True, kw_only=True)
class StartEnvironment:
    """The values a flow type is derived from, as recorded in a session's start input.

    Attributes:
        host_name: This machine's host name.
        user_id: The numeric user ID as text (the user name where there is none).
        config_identity: The configuration file's real path, or ``defaults``.
        workspace: The workspace's real path.
        user_name: The user's name, when the system can tell it; not hashed.
    """

    host_name: str
    user_id: str
    config_identity: str
    workspace: str
    user_name: str | None = None

    def as_record(self) -> dict[str, str]:
        record = {
            "host_name": self.host_name,
            "user_id": self.user_id,
            "config_identity": self.config_identity,
            "workspace": self.workspace,
        }
        if self.user_name:
            record["user_name"] = self.user_name
        return record


def flow_type_prefix(framework: str) -> str:
    return f"sessionflow-{framework}"


def namespace_session_flow_type(
    base: str, *, host_name: str, user_id: str, config_identity: str, workspace: str
) -> str:
    """``<base>-<suffix>``: the suffix is SHA-256 of the four values, reduced to 6 base36 digits.

    The digest is of the UTF-8 text ``"<host>\\n<user>\\n<config identity>\\n<workspace>"``;
    its first 8 bytes, read as an unsigned big-endian integer modulo 36**6, written in
    base36 and left-padded with ``0``, make the suffix.
    """
    text = f"{host_name}\n{user_id}\n{config_identity}\n{workspace}"
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    number = int.from_bytes(digest[:8], "big") % 36**SUFFIX_LENGTH
    digits = ""
    while number:
        number, remainder = divmod(number, 36)
        digits = _ALPHABET[remainder] + digits
    return f"{base}-{digits.rjust(SUFFIX_LENGTH, '0')}"


def start_environment(config_identity: str, workspace: Path) -> StartEnvironment:
    """The values of this process."""
    return StartEnvironment(
        host_name=socket.gethostname(),
        user_id=_user_id(),
        config_identity=config_identity,
        workspace=str(workspace.resolve()),
        user_name=_user_name(),
    )


def session_flow_type(framework: str, environment: StartEnvironment) -> str:
    """The flow type of this command's sessions: ``sessionflow-<framework>-<suffix>``."""
    return namespace_session_flow_type(
        flow_type_prefix(framework),
        host_name=environment.host_name,
        user_id=environment.user_id,
        config_identity=environment.config_identity,
        workspace=environment.workspace,
    )


def _user_id() -> str:
    getuid = getattr(os, "getuid", None)
    if getuid is not None:
        return str(getuid())
    return _user_name() or "unknown"


def _user_name() -> str | None:
    try:
        return pwd.getpwuid(os.getuid()).pw_name
    except (KeyError, OSError, AttributeError):
        return os.environ.get("USER") or os.environ.get("USERNAME") or None
