"""The configuration file as a typed model: the one source of its JSON Schema.

Each class is one mapping of the YAML file, each field one key, with its type, bounds and
description. `config_schema` (``sessionflow init --print-schema``, and what every file is
checked against) is generated from these classes with pydantic's `TypeAdapter`; the few
rules JSON Schema says but pydantic's types cannot (a connector has a command or a URL,
a client certificate needs its key, list items are unique) are in ``json_schema_extra``
beside the field or class they are about, and are enforced by `__post_init__` as well, so
validating with the model and with the schema agree (``tests/cli/test_config_schema.py``).

Every key is optional. The framework sections (``builtin: {}``, ``langgraph: {...}``) are
the frameworks the installed plugins register: `config_schema` adds one mapping per name.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, Strict, with_config

from sessionflow_cli.config._model import ADDRESS_PATTERN, URL_PATTERN

__all__ = [
    "ApprovalFile",
    "ConfigFile",
    "ConnectorFile",
    "LocalToolsFile",
    "MediaFile",
    "PayloadsFile",
    "SandboxFile",
    "ServerFile",
    "ShellFile",
    "TlsFile",
    "WorkerFile",
]


_CLOSED = ConfigDict(extra="forbid")
_UNIQUE: dict[str, Any] = {"uniqueItems": True}

# Strict leaves: YAML's `yes` is no string and `"3"` no number (what JSON Schema says too).
Str = Annotated[str, Strict()]
Bool = Annotated[bool, Strict()]
Int = Annotated[int, Strict()]
Name = Annotated[str, Strict(), Field(min_length=1)]
Names = Annotated[list[Name], Field(json_schema_extra=_UNIQUE)]
Port = Annotated[int, Strict(), Field(ge=1, le=65535)]


def _unique(pointer: str, items: list[str] | None) -> None:
    if items is not None and len(set(items)) != len(items):
        raise ValueError(f"{pointer} has repeated items")


@dataclass(frozen=True, kw_only=True)
class TlsFile:
    """``server.tls`` as a mapping: the files of a client certificate, a CA, a server name."""

    server_root_ca_cert: Name | None = None
    client_cert: Name | None = None
    client_private_key: Name | None = None
    domain: Name | None = None

    __pydantic_config__ = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "dependentRequired": {
                "client_cert": ["client_private_key"],
                "client_private_key": ["client_cert"],
            }
        },
    )

    def __post_init__(self) -> None:
        if (self.client_cert is None) != (self.client_private_key is None):
            raise ValueError("client_cert and client_private_key go together")


@with_config(_CLOSED)
@dataclass(frozen=True, kw_only=True)
class ServerFile:
    """``server`` as a mapping."""

    address: Annotated[str, Strict(), Field(pattern=ADDRESS_PATTERN)] | None = None
    port: Annotated[
        Port | None,
        Field(
            description="The port of the embedded server (auto only); SESSIONFLOW_SERVER_PORT overrides it."
        ),
    ] = None
    namespace: Annotated[str, Strict(), Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,254}$")] | None = None
    ui: Annotated[Bool | None, Field(description="Serve the Temporal Web UI (auto only).")] = None
    ui_port: Port | None = None
    tls: Bool | TlsFile | None = None
    api_key_env: Annotated[
        Annotated[str, Strict()] | None,
        Field(
            pattern=r"^[A-Za-z_][A-Za-z0-9_]*$",
            description="The environment variable that holds the API key (Temporal Cloud).",
        ),
    ] = None


@with_config(_CLOSED)
@dataclass(frozen=True, kw_only=True)
class SandboxFile:
    """``local_tools.shell.sandbox``: how commands are confined (bubblewrap, else Landlock)."""

    network: Annotated[Bool | None, Field(description="Let commands use the network.")] = None
    writable: Annotated[
        Names | None,
        Field(description="Folders writable besides the workspace (relative to this file; ~ is the home)."),
    ] = None
    read_only: Annotated[
        Names | None,
        Field(description="Paths readable again inside a hidden one, such as a folder of the home."),
    ] = None
    hidden: Annotated[
        Names | None, Field(description="Paths hidden besides the home's .ssh, .gnupg and .sessionflow.")
    ] = None
    hide_home: Annotated[
        Bool | None, Field(description="Hide the home outside the workspace (default true).")
    ] = None
    bwrap: Annotated[
        Name | None,
        Field(description="The bubblewrap executable (default: bwrap on PATH)."),
    ] = None
    backend: Annotated[
        Literal["auto", "bubblewrap", "landlock", "none"] | None,
        Field(
            description="auto (default): bubblewrap where it works, else Landlock where the kernel has it, "
            "else unconfined; bubblewrap or landlock: that one or unconfined; none: unconfined. "
            "Unconfined, every command asks approval."
        ),
    ] = None

    def __post_init__(self) -> None:
        for key in ("writable", "read_only", "hidden"):
            _unique(key, getattr(self, key))


@with_config(_CLOSED)
@dataclass(frozen=True, kw_only=True)
class ShellFile:
    """``local_tools.shell``."""

    enabled: Bool | None = None
    allow: Annotated[Names | None, Field(description="Whole command texts that run without approval.")] = None
    timeout: Annotated[
        Annotated[float, Strict()] | None, Field(gt=0, le=600, description="Seconds, at most 600.")
    ] = None
    sandbox: Annotated[
        SandboxFile | None,
        Field(
            description="How commands are confined (bubblewrap): the workspace writable, the rest read-only, "
            "the home hidden, no network. These keys widen it."
        ),
    ] = None

    def __post_init__(self) -> None:
        _unique("allow", self.allow)


@with_config(_CLOSED)
@dataclass(frozen=True, kw_only=True)
class LocalToolsFile:
    """``local_tools``: the switches of the local tool groups."""

    files: Bool | None = None
    shell: ShellFile | None = None
    web_fetch: Bool | None = None
    browser: Bool | None = None


@dataclass(frozen=True, kw_only=True)
class ConnectorFile:
    """One entry of ``connectors``: an MCP server run as a command (stdio) or reached by URL."""

    name: Annotated[str, Strict(), Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")]
    command: Name | None = None
    args: list[Str] | None = None
    env: dict[str, Str] | None = None
    url: Annotated[str, Strict(), Field(pattern=URL_PATTERN)] | None = None
    headers: dict[str, Str] | None = None
    enabled: Annotated[
        Names | None,
        Field(
            description="Only these tools of the server: by MCP name, or by the connector, connection or "
            "operation the tool's _meta names (io.sessionflow/connector, /connection, /operation); shell "
            "patterns allowed; all when absent."
        ),
    ] = None
    required: Annotated[
        Bool | None, Field(description="Stop the command when the server cannot be reached.")
    ] = None

    __pydantic_config__ = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "oneOf": [{"required": ["command"]}, {"required": ["url"]}],
            "dependentRequired": {"args": ["command"], "env": ["command"], "headers": ["url"]},
        },
    )

    def __post_init__(self) -> None:
        if (self.command is None) == (self.url is None):
            raise ValueError("a connector has a command or a url, not both")
        if (self.args is not None or self.env is not None) and self.command is None:
            raise ValueError("args and env are for a command")
        if self.headers is not None and self.url is None:
            raise ValueError("headers are for a url")
        _unique("enabled", self.enabled)


@with_config(_CLOSED)
@dataclass(frozen=True, kw_only=True)
class ApprovalFile:
    """``approval``."""

    always: Annotated[
        Names | None, Field(description="Tools that wait for approval on every call, by name.")
    ] = None

    def __post_init__(self) -> None:
        _unique("always", self.always)


@with_config(_CLOSED)
@dataclass(frozen=True, kw_only=True)
class MediaFile:
    """``media``."""

    folder: Annotated[
        Name | None,
        Field(
            description="Where attached images are kept (default: media in the data folder, ~/.sessionflow/media)."
        ),
    ] = None


@with_config(_CLOSED)
@dataclass(frozen=True, kw_only=True)
class WorkerFile:
    """``worker``: the resident worker that chat and -p start in the background and reuse."""

    idle_timeout: Annotated[
        Annotated[float, Strict(False)] | None,
        Field(
            gt=0,
            allow_inf_nan=False,
            description="Seconds without a running step or a connected command before the resident worker "
            "stops (default 900; $SESSIONFLOW_WORKER_IDLE_TIMEOUT wins).",
        ),
    ] = None

    def __post_init__(self) -> None:
        if self.idle_timeout is not None and not math.isfinite(self.idle_timeout):
            raise ValueError("idle_timeout must be a finite number of seconds")


@with_config(_CLOSED)
@dataclass(frozen=True, kw_only=True)
class PayloadsFile:
    """``payloads``: the payload store."""

    store: Annotated[
        Name,
        Field(
            description="A folder (relative to this file), or s3://bucket/prefix (needs the sessionflow[s3] extra)."
        ),
    ]
    endpoint: Annotated[
        Annotated[str, Strict()] | None,
        Field(
            pattern=URL_PATTERN, description="For s3://: an S3-compatible endpoint URL, addressed path-style."
        ),
    ] = None
    region: Annotated[
        Name | None, Field(description="For s3://: the region (else the AWS configuration's).")
    ] = None
    threshold: Annotated[
        Int | None,
        Field(ge=0, description="Payloads of this many bytes or more go by reference (default 131072)."),
    ] = None


@with_config(_CLOSED)
@dataclass(frozen=True, kw_only=True)
class ConfigFile:
    """sessionflow CLI configuration.

    One file per framework, by default ~/.sessionflow/<framework>.yaml. Every key is
    optional. Besides these keys, a section named after an installed framework holds that
    framework's own settings and must be a mapping.
    """

    model: Annotated[
        Name | None,
        Field(
            description="The model, as the framework names it. 'demo' runs the offline scripted demo model."
        ),
    ] = None
    models: Annotated[
        Names | None, Field(description="Other models that a turn's session settings may choose.")
    ] = None
    system_prompt: Annotated[
        Str | None,
        Field(description="Instructions for the agent. Do not set it together with system_prompt_file."),
    ] = None
    system_prompt_file: Annotated[
        Name | None, Field(description="A file holding the instructions, relative to this file's folder.")
    ] = None
    workspace: Annotated[
        Name | None,
        Field(description="The folder the local tools work in, relative to the current directory."),
    ] = None
    server: Annotated[
        Annotated[str, Strict(), Field(pattern=ADDRESS_PATTERN)] | ServerFile | None,
        Field(
            description="'auto' (reuse or start the embedded Temporal dev server), an address host:port, "
            "or a mapping."
        ),
    ] = None
    local_tools: LocalToolsFile | None = None
    connectors: Annotated[
        list[ConnectorFile] | None,
        Field(
            description="MCP servers whose tools the agent gets: a command to run (stdio) or a URL "
            "(streamable HTTP)."
        ),
    ] = None
    approval: ApprovalFile | None = None
    media: MediaFile | None = None
    worker: WorkerFile | None = None
    payloads: Annotated[
        PayloadsFile | None,
        Field(
            description="The payload store: where large payloads, message bodies and tool outputs live by "
            "reference (default $SESSIONFLOW_PAYLOADS, else ~/.sessionflow/payloads)."
        ),
    ] = None

    def __post_init__(self) -> None:
        _unique("models", self.models)
