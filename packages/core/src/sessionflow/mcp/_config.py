"""Which MCP servers a tool source talks to, and the `_meta` keys it sends them."""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

__all__ = [
    "META_EXPECTED_TOOL",
    "META_IDEMPOTENCY_KEY",
    "McpServerConfig",
]

META_IDEMPOTENCY_KEY = "io.sessionflow/idempotencyKey"
"""`tools/call` `_meta` key: the call's idempotency key, equal on every attempt of one call."""

META_EXPECTED_TOOL = "io.sessionflow/expectedTool"
"""`tools/call` `_meta` key: ``{"name": ..., "inputSchemaHash": "sha256:..."}`` of the tool
the call was made for, for servers that refuse a call whose tool changed."""

_SERVER_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_KNOWN_KEYS = frozenset(
    {"command", "args", "env", "cwd", "url", "headers", "enabled", "required", "tool_prefix"}
)

ConnectionKey = tuple[Any, ...]


@dataclass(frozen=True, kw_only=True)
class McpServerConfig:
    """One MCP server: a command to run over stdio, or a streamable HTTP URL.

    Attributes:
        name: Names the server in events, errors and logs (letters, digits, ``_.-``).
        command: Executable of a stdio server. Exactly one of ``command`` and ``url``.
        args: Arguments of ``command``.
        env: Extra environment of ``command``, over a minimal inherited one (``PATH``,
            ``HOME``, ...). Kept out of the repr: it often holds tokens.
        cwd: Working directory of ``command``.
        url: Endpoint of a streamable HTTP server, such as ``http://host:3001/mcp``.
        headers: HTTP headers sent with every request, such as ``Authorization``. Kept
            out of the repr.
        enabled: Tool names (or ``fnmatch`` patterns) to offer; None offers every tool.
        required: When true, a server that cannot be listed is an error; otherwise its
            tools are left out and the source reports it unavailable.
        tool_prefix: Put before each tool name the model sees (``"git_"``); the server is
            still called with the tool's own name.
    """

    name: str
    command: str | None = None
    args: Sequence[str] = ()
    env: Mapping[str, str] | None = field(default=None, repr=False)
    cwd: str | Path | None = None
    url: str | None = None
    headers: Mapping[str, str] | None = field(default=None, repr=False)
    enabled: Sequence[str] | None = None
    required: bool = False
    tool_prefix: str = ""

    def __post_init__(self) -> None:
        if not _SERVER_NAME.match(self.name):
            raise ValueError(
                f"MCP server name {self.name!r} must match {_SERVER_NAME.pattern} "
                "(letters, digits, '_', '.' and '-')"
            )
        if (self.command is None) == (self.url is None):
            raise ValueError(f"MCP server {self.name!r}: give exactly one of command (stdio) and url (HTTP)")
        if self.command is not None:
            if not self.command.strip():
                raise ValueError(f"MCP server {self.name!r}: command must not be empty")
            if self.headers is not None:
                raise ValueError(f"MCP server {self.name!r}: headers only apply to a url server")
        if self.url is not None:
            if not self.url.startswith(("http://", "https://")):
                raise ValueError(f"MCP server {self.name!r}: url must start with http:// or https://")
            if self.args or self.env is not None or self.cwd is not None:
                raise ValueError(
                    f"MCP server {self.name!r}: args, env and cwd only apply to a command server"
                )
        if isinstance(self.args, str) or (self.enabled is not None and isinstance(self.enabled, str)):
            raise TypeError(
                f"MCP server {self.name!r}: args and enabled are lists of strings, not one string"
            )
        # Freeze the sequences and mappings so a config can be shared and compared safely.
        object.__setattr__(self, "args", tuple(self.args))
        if self.enabled is not None:
            object.__setattr__(self, "enabled", tuple(self.enabled))
        if self.env is not None:
            object.__setattr__(self, "env", dict(self.env))
        if self.headers is not None:
            object.__setattr__(self, "headers", dict(self.headers))

    @property
    def transport(self) -> str:
        """``"stdio"`` or ``"http"``."""
        return "stdio" if self.command is not None else "http"

    @property
    def connection_key(self) -> ConnectionKey:
        """Everything that decides what a connection talks to; pools share connections by it."""
        return (
            self.command,
            tuple(self.args),
            tuple(sorted((self.env or {}).items())),
            None if self.cwd is None else str(self.cwd),
            self.url,
            tuple(sorted((self.headers or {}).items())),
        )

    def offers(self, tool_name: str) -> bool:
        """Whether the ``enabled`` filter lets the tool through."""
        if self.enabled is None:
            return True
        return any(fnmatch.fnmatchcase(tool_name, pattern) for pattern in self.enabled)

    def describe(self) -> str:
        """A one-line description without secrets, for messages."""
        if self.url is not None:
            return f"{self.name} ({self.url})"
        return f"{self.name} ({' '.join([cast(str, self.command), *self.args])})"

    @classmethod
    def from_mapping(cls, name: str, data: Mapping[str, Any]) -> McpServerConfig:
        """Build a config from one parsed configuration-file entry.

        Keys are the attribute names (``command``, ``args``, ``env``, ``cwd``, ``url``,
        ``headers``, ``enabled``, ``required``, ``tool_prefix``); unknown keys are errors.

        Raises:
            ValueError: An unknown key, a value of the wrong type, or an invalid combination.
        """
        unknown = sorted(set(data) - _KNOWN_KEYS)
        if unknown:
            raise ValueError(
                f"MCP server {name!r}: unknown key(s) {', '.join(unknown)}; "
                f"known keys: {', '.join(sorted(_KNOWN_KEYS))}"
            )
        return cls(
            name=name,
            command=_optional_str(name, data, "command"),
            args=_str_list(name, data, "args") or (),
            env=_str_map(name, data, "env"),
            cwd=_optional_str(name, data, "cwd"),
            url=_optional_str(name, data, "url"),
            headers=_str_map(name, data, "headers"),
            enabled=_str_list(name, data, "enabled"),
            required=_bool(name, data, "required"),
            tool_prefix=_optional_str(name, data, "tool_prefix") or "",
        )


def _optional_str(server: str, data: Mapping[str, Any], key: str) -> str | None:
    value = data.get(key)
    if value is None or isinstance(value, str):
        return value
    raise ValueError(f"MCP server {server!r}: {key} must be a string")


def _str_list(server: str, data: Mapping[str, Any], key: str) -> tuple[str, ...] | None:
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, list | tuple):
        items = cast(Sequence[object], value)
        if all(isinstance(item, str) for item in items):
            return tuple(cast(Sequence[str], items))
    raise ValueError(f"MCP server {server!r}: {key} must be a list of strings")


def _str_map(server: str, data: Mapping[str, Any], key: str) -> dict[str, str] | None:
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, Mapping):
        entries = cast(Mapping[object, object], value)
        if all(isinstance(k, str) and isinstance(v, str) for k, v in entries.items()):
            return {str(k): str(v) for k, v in entries.items()}
    raise ValueError(f"MCP server {server!r}: {key} must be a table of strings")


def _bool(server: str, data: Mapping[str, Any], key: str) -> bool:
    value = data.get(key, False)
    if isinstance(value, bool):
        return value
    raise ValueError(f"MCP server {server!r}: {key} must be true or false")
