"""Read a configuration file: YAML, then the schema, then the rules a schema cannot say."""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from sessionflow_cli.config._errors import ConfigError, Problem
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
from sessionflow_cli.config._schema import framework_sections, validate
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
    """Check the YAML `text` of the file at `path` (which need not exist).

    Every problem is found before the error is raised: all the schema's, or, when the
    schema holds, all the rules'; each with its JSON Pointer and line and column.
    """
    source = str(path)
    parsed = parse_document(text, source=source)
    document = _without_nulls(plain(parsed))
    if document is None:
        document = {}
    validate(
        "config",
        document,
        source=source,
        frameworks=framework_sections(framework),
        locate=_locator(parsed),
    )
    found: list[ConfigError] = []
    config = _build(framework, cast(Json, document), path=path, cwd=cwd, source=source, found=found)
    if found:
        first = found[0]
        locate = _locator(parsed)
        problems: list[Problem] = []
        for error in found:
            where = locate(_parts(error.pointer), False)
            problems.append(
                Problem(
                    code=error.code,
                    pointer=error.pointer,
                    message=f"{error.code} ({error.detail})" if error.detail else error.code,
                    line=where[0] if where else None,
                    column=where[1] if where else None,
                )
            )
        raise ConfigError(
            first.code, first.pointer, first.detail, hint=first.hint, source=source, problems=tuple(problems)
        )
    return config


def _without_nulls(value: Any) -> Any:
    """`value` without the mapping keys set to null: in the file, ``key:`` alone means unset."""
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in cast(Json, value).items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(v) for v in cast(list[Any], value)]
    return value


Locate = Callable[[Sequence[str | int], bool], "tuple[int, int] | None"]


def _locator(document: Any) -> Locate:
    """Where a JSON Pointer's value (or, with `key`, its key) is in the YAML file: 1-based
    line and column, from ruamel.yaml's round-trip marks; the nearest enclosing value for
    a place the file does not have."""

    def locate(path: Sequence[str | int], key: bool) -> tuple[int, int] | None:
        node: Any = document
        here = _start(node)
        for index, part in enumerate(path):
            last = index == len(path) - 1
            marks: Any = getattr(node, "lc", None)
            try:
                if isinstance(node, Mapping) and part in node:
                    mark = marks.key(part) if (last and key) else marks.value(part)
                    node = cast(Mapping[Any, Any], node)[part]
                elif (
                    isinstance(node, list)
                    and isinstance(part, int)
                    and 0 <= part < len(cast(list[Any], node))
                ):
                    mark = marks.item(part)
                    node = cast(list[Any], node)[part]
                else:
                    return here
            except (AttributeError, KeyError, TypeError):
                return here
            here = (int(mark[0]) + 1, int(mark[1]) + 1)
        return here

    return locate


def _start(node: Any) -> tuple[int, int] | None:
    marks: Any = getattr(node, "lc", None)
    if marks is None or marks.line is None:
        return None
    return (int(marks.line) + 1, int(marks.col) + 1)


def _parts(pointer: str) -> list[str | int]:
    parts: list[str | int] = []
    for raw in pointer.split("/")[1:]:
        text = raw.replace("~1", "/").replace("~0", "~")
        parts.append(int(text) if text.isdigit() else text)
    return parts


def default_config(framework: str, *, cwd: Path) -> CliConfig:
    """The configuration of a command that runs without a file."""
    return CliConfig(
        framework=framework, path=None, workspace=cwd.resolve(), media_folder=default_media_folder()
    )


def _build(
    framework: str, doc: Json, *, path: Path, cwd: Path, source: str, found: list[ConfigError]
) -> CliConfig:
    """The configuration of a document the schema accepts; each rule it breaks goes to `found`."""
    base = path.parent.resolve()
    T = TypeVar("T")

    def checked(make: Callable[[], T], fallback: T) -> T:
        try:
            return make()
        except ConfigError as error:
            found.append(error)
            return fallback

    system_prompt = _opt_str(doc.get("system_prompt"))
    prompt_file = checked(lambda: _prompt_file(doc, system_prompt, base, source), None)
    workspace = _path(str(doc.get("workspace", ".")), cwd)
    if not workspace.is_dir():
        found.append(ConfigError("missing_directory", "/workspace", f"no folder {workspace}", source=source))
    media: Json = doc.get("media") or {}
    media_folder = _path(str(media["folder"]), base) if "folder" in media else default_media_folder()
    approval: Json = doc.get("approval") or {}
    worker: Json = doc.get("worker") or {}
    section = doc.get(framework)
    return CliConfig(
        framework=framework,
        path=path.resolve(),
        model=str(doc.get("model", DEFAULT_MODEL)),
        models=tuple(cast(list[str], doc.get("models", []))),
        system_prompt=system_prompt,
        system_prompt_file=prompt_file,
        workspace=workspace.resolve(),
        server=checked(lambda: _server(doc.get("server", "auto"), base, source), ServerConfig()),
        local_tools=checked(
            lambda: _local_tools(cast(Json, doc.get("local_tools") or {}), base, source), LocalToolsConfig()
        ),
        connectors=checked(lambda: _connectors(cast(list[Json], doc.get("connectors") or []), source), ()),
        approval_always=tuple(cast(list[str], approval.get("always", []))),
        media_folder=media_folder,
        payloads=checked(lambda: _payloads(cast(Json, doc["payloads"]), base, source), None)
        if "payloads" in doc
        else None,
        framework_settings=cast(Mapping[str, Any], section) if isinstance(section, dict) else {},
        worker_idle_timeout=checked(lambda: _idle_timeout(worker, source), None),
    )


def _idle_timeout(worker: Json, source: str) -> float | None:
    if "idle_timeout" not in worker:
        return None
    seconds = float(worker["idle_timeout"])
    if not math.isfinite(seconds):
        # YAML's .nan and .inf pass JSON Schema's number checks.
        raise ConfigError(
            "invalid", "/worker/idle_timeout", "must be a finite number of seconds", source=source
        )
    return seconds


def _prompt_file(doc: Json, system_prompt: str | None, base: Path, source: str) -> Path | None:
    prompt_file_text = _opt_str(doc.get("system_prompt_file"))
    if prompt_file_text is None:
        return None
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
    return prompt_file


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
