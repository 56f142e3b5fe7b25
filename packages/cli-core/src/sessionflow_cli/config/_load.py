"""Read a configuration file: YAML, then the schema, then the rules a schema cannot say."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from sessionflow_cli.config._errors import ConfigError
from sessionflow_cli.config._model import (
    DEFAULT_MODEL,
    DEFAULT_PORT,
    DEFAULT_SHELL_TIMEOUT,
    CliConfig,
    ConnectorConfig,
    LocalToolsConfig,
    SandboxBackend,
    SandboxConfig,
    ServerConfig,
    ShellConfig,
    TlsConfig,
)
from sessionflow_cli.config._paths import default_media_folder
from sessionflow_cli.config._schema import validate
from sessionflow_cli.config._yaml import parse_document, plain

if TYPE_CHECKING:
    from sessionflow.temporal import PayloadStore

__all__ = ["default_config", "load_config", "parse_config"]

Json = dict[str, Any]


def load_config(framework: str, path: Path, *, cwd: Path) -> CliConfig:
    """Read and check the file at `path`.

    Raises:
        ConfigError: The file cannot be read, is not YAML, fails the schema, or breaks a rule.
    """
    source = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError("unreadable", "", str(error), source=source) from None
    return parse_config(framework, text, path=path, cwd=cwd)


def parse_config(framework: str, text: str, *, path: Path, cwd: Path) -> CliConfig:
    """Check the YAML `text` of the file at `path` (which need not exist)."""
    source = str(path)
    document = plain(parse_document(text, source=source))
    if document is None:
        document = {}
    validate("config", document, source=source)
    return _build(framework, cast(Json, document), path=path, cwd=cwd, source=source)


def default_config(framework: str, *, cwd: Path) -> CliConfig:
    """The configuration of a command that runs without a file."""
    return CliConfig(
        framework=framework, path=None, workspace=cwd.resolve(), media_folder=default_media_folder()
    )


def _build(framework: str, doc: Json, *, path: Path, cwd: Path, source: str) -> CliConfig:
    base = path.parent.resolve()
    system_prompt = _opt_str(doc.get("system_prompt"))
    prompt_file_text = _opt_str(doc.get("system_prompt_file"))
    prompt_file: Path | None = None
    if prompt_file_text is not None:
        if system_prompt is not None:
            raise ConfigError(
                "conflict",
                "/system_prompt_file",
                "set system_prompt or system_prompt_file, not both",
                source=source,
            )
        prompt_file = _path(prompt_file_text, base)
        if not prompt_file.is_file():
            raise ConfigError("missing_file", "/system_prompt_file", f"no file {prompt_file}", source=source)
    workspace = _path(str(doc.get("workspace", ".")), cwd)
    if not workspace.is_dir():
        raise ConfigError("missing_directory", "/workspace", f"no folder {workspace}", source=source)
    media: Json = doc.get("media") or {}
    media_folder = _path(str(media["folder"]), base) if "folder" in media else default_media_folder()
    approval: Json = doc.get("approval") or {}
    section = doc.get(framework)
    return CliConfig(
        framework=framework,
        path=path.resolve(),
        model=str(doc.get("model", DEFAULT_MODEL)),
        models=tuple(cast(list[str], doc.get("models", []))),
        system_prompt=system_prompt,
        system_prompt_file=prompt_file,
        workspace=workspace.resolve(),
        server=_server(doc.get("server", "auto"), base, source),
        local_tools=_local_tools(cast(Json, doc.get("local_tools") or {}), base, source),
        connectors=_connectors(cast(list[Json], doc.get("connectors") or []), source),
        approval_always=tuple(cast(list[str], approval.get("always", []))),
        media_folder=media_folder,
        payloads=_payloads(cast(Json, doc["payloads"]), base, source) if "payloads" in doc else None,
        framework_settings=cast(Mapping[str, Any], section) if isinstance(section, dict) else {},
    )


def with_model(config: CliConfig, model: str | None) -> CliConfig:
    """The configuration with ``--model`` applied; it bounds every turn like the file's model."""
    return config if model is None else replace(config, model=model)


def _server(value: object, base: Path, source: str) -> ServerConfig:
    if isinstance(value, str):
        return ServerConfig(address=value)
    doc = cast(Json, value)
    tls_value = doc.get("tls", False)
    tls: TlsConfig | None = None
    if tls_value is True:
        tls = TlsConfig()
    elif isinstance(tls_value, dict):
        tls_doc = cast(Json, tls_value)
        files: dict[str, Path | None] = {}
        for key in ("server_root_ca_cert", "client_cert", "client_private_key"):
            files[key] = None
            if key in tls_doc:
                file = _path(str(tls_doc[key]), base)
                if not file.is_file():
                    raise ConfigError("missing_file", f"/server/tls/{key}", f"no file {file}", source=source)
                files[key] = file
        tls = TlsConfig(
            server_root_ca_cert=files["server_root_ca_cert"],
            client_cert=files["client_cert"],
            client_private_key=files["client_private_key"],
            domain=_opt_str(tls_doc.get("domain")),
        )
    return ServerConfig(
        address=str(doc.get("address", "auto")),
        port=int(doc.get("port", DEFAULT_PORT)),
        namespace=str(doc.get("namespace", "default")),
        namespace_given="namespace" in doc,
        ui=bool(doc.get("ui", False)),
        ui_port=cast(int | None, doc.get("ui_port")),
        tls=tls,
        api_key_env=_opt_str(doc.get("api_key_env")),
    )


def _payloads(doc: Json, base: Path, source: str) -> PayloadStore:
    # Only a file with a `payloads:` section loads the engine binding (temporalio) here.
    from sessionflow.temporal import DEFAULT_PAYLOAD_THRESHOLD, PayloadStore

    location = str(doc["store"])
    is_s3 = location.startswith("s3://")
    for key in ("endpoint", "region"):
        if key in doc and not is_s3:
            raise ConfigError("conflict", f"/payloads/{key}", f"{key} is for an s3:// store", source=source)
    try:
        store = PayloadStore(
            location=location,
            endpoint=_opt_str(doc.get("endpoint")),
            region=_opt_str(doc.get("region")),
            threshold=int(doc.get("threshold", DEFAULT_PAYLOAD_THRESHOLD)),
        )
    except ValueError as error:
        raise ConfigError("invalid", "/payloads/store", str(error), source=source) from None
    # A folder is relative to this file, like every path in it.
    return store if is_s3 else replace(store, location=str(_path(str(store.folder), base)))


def _local_tools(doc: Json, base: Path, source: str) -> LocalToolsConfig:
    defaults = LocalToolsConfig()
    shell_doc = cast(Json, doc.get("shell") or {})
    return LocalToolsConfig(
        files=bool(doc.get("files", defaults.files)),
        shell=ShellConfig(
            enabled=bool(shell_doc.get("enabled", True)),
            allow=tuple(cast(list[str], shell_doc.get("allow", []))),
            timeout=float(shell_doc.get("timeout", DEFAULT_SHELL_TIMEOUT)),
            sandbox=_sandbox(cast(Json, shell_doc.get("sandbox") or {}), base, source),
        ),
        web_fetch=bool(doc.get("web_fetch", defaults.web_fetch)),
        browser=bool(doc.get("browser", defaults.browser)),
    )


def _sandbox(doc: Json, base: Path, source: str) -> SandboxConfig:
    """The shell sandbox; a path that would undo it is an error naming its JSON Pointer."""
    lists: dict[str, tuple[Path, ...]] = {}
    for key in ("writable", "read_only", "hidden"):
        paths: list[Path] = []
        for index, text in enumerate(cast(list[str], doc.get(key, []))):
            pointer = f"/local_tools/shell/sandbox/{key}/{index}"
            if "\0" in text:
                raise ConfigError("invalid", pointer, "a path cannot hold a NUL character", source=source)
            path = _path(text, base)
            if key == "writable" and path == Path(path.anchor):
                raise ConfigError(
                    "invalid",
                    pointer,
                    "the file system root cannot be writable: it would undo the sandbox",
                    source=source,
                )
            if key == "hidden" and path == Path(path.anchor):
                raise ConfigError("invalid", pointer, "the file system root cannot be hidden", source=source)
            paths.append(Path(os.path.normpath(path)))
        lists[key] = tuple(paths)
    return SandboxConfig(
        network=bool(doc.get("network", False)),
        writable=lists["writable"],
        read_only=lists["read_only"],
        hidden=lists["hidden"],
        hide_home=bool(doc.get("hide_home", True)),
        bwrap=str(doc.get("bwrap", "bwrap")),
        backend=cast(SandboxBackend, doc.get("backend", "auto")),
    )


def _connectors(items: Sequence[Json], source: str) -> tuple[ConnectorConfig, ...]:
    seen: set[str] = set()
    connectors: list[ConnectorConfig] = []
    for index, item in enumerate(items):
        name = str(item["name"])
        if name in seen:
            raise ConfigError(
                "duplicate", f"/connectors/{index}/name", f"connector {name!r} is named twice", source=source
            )
        seen.add(name)
        enabled = item.get("enabled")
        connectors.append(
            ConnectorConfig(
                name=name,
                command=_opt_str(item.get("command")),
                args=tuple(cast(list[str], item.get("args", []))),
                env=dict(cast(dict[str, str], item.get("env", {}))),
                url=_opt_str(item.get("url")),
                headers=dict(cast(dict[str, str], item.get("headers", {}))),
                enabled=None if enabled is None else tuple(cast(list[str], enabled)),
                required=bool(item.get("required", False)),
            )
        )
    return tuple(connectors)


def _path(text: str, base: Path) -> Path:
    path = Path(text).expanduser()
    return path if path.is_absolute() else base / path


def _opt_str(value: object) -> str | None:
    return value if isinstance(value, str) else None
