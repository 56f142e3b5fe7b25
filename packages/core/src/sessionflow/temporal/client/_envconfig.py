"""Where `connect` goes: its arguments, ``SESSIONFLOW_*``, then Temporal's own configuration.

Temporal's configuration is what every Temporal client reads (`temporalio.envconfig`): a
profile of a ``temporal.toml`` file (``$TEMPORAL_CONFIG_FILE``, else the platform's one,
such as ``~/.config/temporalio/temporal.toml``; the profile ``$TEMPORAL_PROFILE``, else
``default``) with the ``TEMPORAL_*`` variables over it (``TEMPORAL_ADDRESS``,
``TEMPORAL_NAMESPACE``, ``TEMPORAL_API_KEY``, ``TEMPORAL_TLS*``, ``TEMPORAL_GRPC_META_*``).

Each setting comes from the first that gives it (`resolve_connect_settings`):

- address: the argument, ``$SESSIONFLOW_SERVER_ADDRESS``, Temporal's ``address``, ``127.0.0.1:7233``;
- namespace: the argument, ``$SESSIONFLOW_NAMESPACE``, Temporal's ``namespace``, ``default``;
- TLS: the argument, Temporal's ``tls`` (on with Temporal's API key), off;
- API key: the argument, Temporal's ``api_key``, none;
- gRPC metadata: Temporal's ``grpc_meta``, none.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from temporalio.envconfig import ClientConfig, ClientConfigProfile, ClientConfigTLS
from temporalio.service import TLSConfig

from sessionflow._environment import read_env
from sessionflow.session.errors import UserError

__all__ = [
    "ADDRESS_ENV",
    "CONFIG_FILE_ENV",
    "DEFAULT_NAMESPACE",
    "DEFAULT_SERVER_ADDRESS",
    "NAMESPACE_ENV",
    "PROFILE_ENV",
    "ConnectSettings",
    "TemporalConfigError",
    "TemporalProfile",
    "configured_address",
    "default_config_file",
    "load_temporal_profile",
    "resolve_connect_settings",
]

DEFAULT_SERVER_ADDRESS = "127.0.0.1:7233"
DEFAULT_NAMESPACE = "default"
ADDRESS_ENV = "SESSIONFLOW_SERVER_ADDRESS"
"""Environment variable with the default server address of `connect`."""
NAMESPACE_ENV = "SESSIONFLOW_NAMESPACE"
"""Environment variable with the default namespace of `connect`."""
CONFIG_FILE_ENV = "TEMPORAL_CONFIG_FILE"
"""Temporal's variable naming its ``temporal.toml``."""
PROFILE_ENV = "TEMPORAL_PROFILE"
"""Temporal's variable naming the profile of that file."""


class TemporalConfigError(UserError, ValueError):
    """Temporal's client configuration cannot be used: a bad file, profile or TLS setting.

    Attributes:
        file: The ``temporal.toml`` it concerns.
        profile: The profile it concerns.
    """

    def __init__(self, message: str, *, file: Path, profile: str) -> None:
        super().__init__(message)
        self.file = file
        self.profile = profile


@dataclass(frozen=True, kw_only=True)
class TemporalProfile:
    """What Temporal's configuration says; None (or empty) where it says nothing.

    Attributes:
        address: ``host:port``.
        namespace: The namespace.
        api_key: The API key.
        tls: Temporal's TLS option, the files read (an API key without a ``tls`` section
            turns TLS on, as Temporal's own clients do).
        rpc_metadata: gRPC metadata sent with every call (``grpc_meta``).
        file: The ``temporal.toml`` consulted (it need not exist).
        profile: The profile read.
    """

    address: str | None = None
    namespace: str | None = None
    api_key: str | None = None
    tls: bool | TLSConfig | None = None
    rpc_metadata: Mapping[str, str] = field(default_factory=lambda: dict[str, str]())
    file: Path | None = None
    profile: str | None = None


@dataclass(frozen=True, kw_only=True)
class ConnectSettings:
    """The settings `connect` gives `temporalio.client.Client.connect`, each resolved.

    Attributes:
        address: ``host:port``.
        namespace: The namespace.
        tls: Temporal's TLS option.
        api_key: The API key, if any.
        rpc_metadata: gRPC metadata of every call.
    """

    address: str
    namespace: str
    tls: bool | TLSConfig
    api_key: str | None
    rpc_metadata: Mapping[str, str]


def default_config_file() -> Path:
    """The ``temporal.toml`` Temporal reads when ``$TEMPORAL_CONFIG_FILE`` is unset."""
    home = Path.home()
    if sys.platform == "darwin":
        base = home / "Library" / "Application Support"
    elif sys.platform == "win32":
        base = Path(os.environ.get("APPDATA") or home / "AppData" / "Roaming")
    else:
        base = Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config")
    return base / "temporalio" / "temporal.toml"


def load_temporal_profile() -> TemporalProfile:
    """Temporal's configuration of this process: the file's profile with ``TEMPORAL_*`` over it.

    Raises:
        TemporalConfigError: ``$TEMPORAL_CONFIG_FILE`` names no file, the file is not valid
            TOML, the profile is not in it, a TLS file cannot be read, or the settings
            contradict each other (a certificate given as both a path and data).
    """
    named = os.environ.get(CONFIG_FILE_ENV) or None
    file = Path(named).expanduser() if named else default_config_file()
    profile = os.environ.get(PROFILE_ENV) or "default"
    where = f"the Temporal profile {profile!r} of {file}"
    if named and not file.is_file():
        raise TemporalConfigError(
            f"${CONFIG_FILE_ENV} names {file}, which is not a file", file=file, profile=profile
        )
    try:
        # The named file goes in as a path, so that ``~`` means what it means here.
        loaded = ClientConfigProfile.load(
            profile=os.environ.get(PROFILE_ENV) or None, config_source=file if named else None
        )
    except Exception as error:  # temporalio's bridge raises its own ConfigError (a RuntimeError)
        reason = " ".join(str(error).split())  # the TOML parser's report spans lines
        if reason.startswith("Profile") and reason.endswith("not found"):
            raise TemporalConfigError(
                f"{where}: the file has no such profile ({_profiles_of(file)})", file=file, profile=profile
            ) from None
        raise TemporalConfigError(f"{where}: {reason}", file=file, profile=profile) from None
    return TemporalProfile(
        address=loaded.address or None,
        namespace=loaded.namespace or None,
        api_key=loaded.api_key or None,
        tls=_tls(loaded, where, file=file, profile=profile),
        rpc_metadata=dict(loaded.grpc_meta),
        file=file,
        profile=profile,
    )


def _profiles_of(file: Path) -> str:
    if not file.is_file():
        return "the file does not exist"
    try:
        names = sorted(ClientConfig.load(config_source=file).profiles)
    except Exception:  # the bridge's ConfigError; the caller's message stands without the list
        return f"set ${PROFILE_ENV} to one of its profiles"
    return f"its profiles: {', '.join(names)}" if names else "it has no profiles"


def _tls(loaded: ClientConfigProfile, where: str, *, file: Path, profile: str) -> bool | TLSConfig | None:
    tls: ClientConfigTLS | None = loaded.tls
    if tls is None:
        return True if loaded.api_key else None
    try:
        return tls.to_connect_tls_config()
    except OSError as error:
        missing = error.filename if error.filename is not None else error
        raise TemporalConfigError(
            f"{where}: cannot read the TLS file {missing} ({error.strerror or error})",
            file=file,
            profile=profile,
        ) from None


def configured_address(*, temporal_config: bool = True) -> str | None:
    """The server address the environment names (``SESSIONFLOW_SERVER_ADDRESS``, else
    Temporal's configuration when `temporal_config`), or None when it names none.

    Raises:
        TemporalConfigError: Temporal's configuration is consulted and cannot be used.
    """
    address = read_env(ADDRESS_ENV)
    if address:
        return address
    if not temporal_config:
        return None
    return load_temporal_profile().address


def resolve_connect_settings(
    server_address: str | None = None,
    namespace: str | None = None,
    *,
    tls: bool | TLSConfig | None = None,
    api_key: str | None = None,
    temporal_config: bool = True,
) -> ConnectSettings:
    """Each setting from the first that gives it: the argument, the ``SESSIONFLOW_*``
    variable, Temporal's configuration (when `temporal_config`), sessionflow's default.

    Raises:
        TemporalConfigError: Temporal's configuration is consulted and cannot be used.
    """
    temporal = load_temporal_profile() if temporal_config else TemporalProfile()
    return ConnectSettings(
        address=server_address or read_env(ADDRESS_ENV) or temporal.address or DEFAULT_SERVER_ADDRESS,
        namespace=namespace or read_env(NAMESPACE_ENV) or temporal.namespace or DEFAULT_NAMESPACE,
        tls=tls if tls is not None else (temporal.tls if temporal.tls is not None else False),
        api_key=api_key if api_key is not None else temporal.api_key,
        rpc_metadata=temporal.rpc_metadata,
    )
