"""The parsed configuration: what a file says, and what one turn may use."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    # The engine binding loads temporalio: `init` and `frameworks` read no payload store.
    from sessionflow.temporal import PayloadStore

__all__ = [
    "ADDRESS_PATTERN",
    "DEFAULT_MODEL",
    "DEFAULT_PORT",
    "DEFAULT_SHELL_TIMEOUT",
    "URL_PATTERN",
    "CliConfig",
    "ConnectorConfig",
    "LocalToolGroup",
    "LocalToolsConfig",
    "SandboxBackend",
    "SandboxConfig",
    "ServerConfig",
    "ShellConfig",
    "TlsConfig",
    "TurnConfig",
]

DEFAULT_MODEL = "demo"
"""The model of a file that names none: the offline demo, so a fresh machine works without keys."""
DEFAULT_PORT = 7233
DEFAULT_SHELL_TIMEOUT = 120.0
ADDRESS_PATTERN = r"^(auto|[A-Za-z0-9_.-]+:[0-9]{1,5}|\[[0-9A-Fa-f:.]+\]:[0-9]{1,5})$"
"""A Temporal server in the file: ``auto``, ``host:port`` or ``[v6 address]:port``."""
URL_PATTERN = r"^https?://[^\s]+$"
"""An http or https URL (connectors, an S3 endpoint)."""

LocalToolGroup = Literal["files", "shell", "web_fetch", "browser"]
SandboxBackend = Literal["auto", "bubblewrap", "landlock", "none"]
"""`sessionflow_local_tools.SandboxBackend`, spelled here so the configuration needs no local tools."""


@dataclass(frozen=True, kw_only=True)
class SandboxConfig:
    """How shell commands are confined (``local_tools.shell.sandbox``); paths are absolute.

    The defaults are the narrowest: only the workspace writable, the home hidden, no
    network (`sessionflow_local_tools.ShellSandbox` has the details), bubblewrap where it
    works, else Landlock (``backend``).
    """

    network: bool = False
    writable: tuple[Path, ...] = ()
    read_only: tuple[Path, ...] = ()
    hidden: tuple[Path, ...] = ()
    hide_home: bool = True
    bwrap: str = "bwrap"
    backend: SandboxBackend = "auto"


@dataclass(frozen=True, kw_only=True)
class ShellConfig:
    """The shell tool: switched on or off, the commands that run without approval, the
    timeout, the sandbox."""

    enabled: bool = True
    allow: tuple[str, ...] = ()
    timeout: float = DEFAULT_SHELL_TIMEOUT
    sandbox: SandboxConfig = field(default_factory=SandboxConfig)

    def is_allowed(self, command: str) -> bool:
        """Whether the whole command text is on the allow list (no approval needed)."""
        return command in self.allow


@dataclass(frozen=True, kw_only=True)
class LocalToolsConfig:
    """Switches of the local tool groups."""

    files: bool = True
    shell: ShellConfig = field(default_factory=ShellConfig)
    web_fetch: bool = True
    browser: bool = False

    def is_enabled(self, group: LocalToolGroup) -> bool:
        if group == "shell":
            return self.shell.enabled
        enabled: bool = getattr(self, group)
        return enabled

    @property
    def any_enabled(self) -> bool:
        return self.files or self.shell.enabled or self.web_fetch or self.browser


@dataclass(frozen=True, kw_only=True)
class TlsConfig:
    """TLS towards a Temporal server; file paths are absolute once loaded."""

    server_root_ca_cert: Path | None = None
    client_cert: Path | None = None
    client_private_key: Path | None = None
    domain: str | None = None


@dataclass(frozen=True, kw_only=True)
class ServerConfig:
    """Where the Temporal server is.

    Attributes:
        address: ``"auto"`` for the embedded dev server, else ``host:port``.
        port: The embedded server's port (``auto`` only).
        namespace: The Temporal namespace of the sessions.
        namespace_given: The file names the namespace; when it does not, a server the
            environment names (``server: auto``, or an address without a namespace) takes
            ``$SESSIONFLOW_NAMESPACE``, else Temporal's configuration, else ``default``.
        ui: Serve the Temporal Web UI from the embedded server.
        ui_port: Its port; a free one when None.
        tls: TLS settings, or None for plain connections.
        api_key_env: The environment variable holding the API key, if any.
    """

    address: str = "auto"
    port: int = DEFAULT_PORT
    namespace: str = "default"
    namespace_given: bool = False
    ui: bool = False
    ui_port: int | None = None
    tls: TlsConfig | None = None
    api_key_env: str | None = None

    @property
    def is_auto(self) -> bool:
        return self.address == "auto"


@dataclass(frozen=True, kw_only=True)
class ConnectorConfig:
    """One MCP server from ``connectors:``; exactly one of `command` and `url` is set.

    Attributes:
        name: Unique within the file.
        command: The program of a stdio server.
        args: Its arguments.
        env: Extra environment for it.
        url: The address of a streamable-HTTP server.
        headers: HTTP headers sent to it.
        enabled: Only these tools (by MCP name, or by the connector, connection or operation
            in their ``_meta``), or None for all of them.
        required: Stop the command when the server cannot be reached.
    """

    name: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=lambda: {})
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=lambda: {})
    enabled: tuple[str, ...] | None = None
    required: bool = False


@dataclass(frozen=True, kw_only=True)
class CliConfig:
    """A validated configuration file with relative paths resolved (or the defaults).

    Attributes:
        framework: The framework whose file this is.
        path: The file's path, or None when running on the defaults.
        model: The model (``--model`` applied).
        models: Other models a turn's settings may choose.
        system_prompt: Inline instructions.
        system_prompt_file: The file of the instructions, absolute.
        workspace: The absolute workspace folder.
        server: The Temporal server.
        local_tools: The local tool switches.
        connectors: The MCP connectors (`sessionflow_cli._connectors`).
        approval_always: Tools that always wait for approval.
        media_folder: Where attached images are kept.
        payloads: The payload store of ``payloads:``, or None for the default
            (``$SESSIONFLOW_PAYLOADS``, else ``~/.sessionflow/payloads``).
        framework_settings: The framework's own section.
        worker_idle_timeout: ``worker.idle_timeout``: seconds the resident worker waits idle
            before it stops, or None for the default (`sessionflow_cli._resident`).
    """

    framework: str
    path: Path | None
    model: str = DEFAULT_MODEL
    models: tuple[str, ...] = ()
    system_prompt: str | None = None
    system_prompt_file: Path | None = None
    workspace: Path
    server: ServerConfig = field(default_factory=ServerConfig)
    local_tools: LocalToolsConfig = field(default_factory=LocalToolsConfig)
    connectors: tuple[ConnectorConfig, ...] = ()
    approval_always: tuple[str, ...] = ()
    media_folder: Path
    payloads: PayloadStore | None = None
    framework_settings: Mapping[str, Any] = field(default_factory=lambda: {})
    worker_idle_timeout: float | None = None

    @property
    def identity(self) -> str:
        """The config identity of flow types: the file's real path, or ``defaults``."""
        return str(self.path.resolve()) if self.path is not None else "defaults"

    @property
    def instructions(self) -> str | None:
        """`system_prompt`, else the text of `system_prompt_file`, else None."""
        if self.system_prompt is not None:
            return self.system_prompt
        if self.system_prompt_file is not None:
            return self.system_prompt_file.read_text(encoding="utf-8")
        return None

    @property
    def allowed_models(self) -> tuple[str, ...]:
        return (self.model, *(m for m in self.models if m != self.model))


@dataclass(frozen=True, kw_only=True)
class TurnConfig:
    """What one turn may use: the file narrowed by the turn's session settings.

    Local tools read it through the ``resolve_settings`` callable they are built with, so
    a call is authorized again, on the worker that runs it, against its own turn.
    """

    model: str
    instructions: str | None
    workspace: Path
    local_tools: LocalToolsConfig
    connectors: tuple[ConnectorConfig, ...]
    approval_always: frozenset[str]

    def requires_approval(self, tool_name: str) -> bool:
        """Whether ``approval.always`` names the tool."""
        return tool_name in self.approval_always
