"""Per-turn session settings: they may narrow the configuration file, never widen it.

The settings a message carries look like this (every key optional)::

    {
      "model": "gpt-4.1",                      # the file's model, or one in its `models`
      "local_tools": {
        "files": false,                        # a group can be switched off, not on
        "shell": {"enabled": true, "allow": ["git status"], "timeout": 30},
        "web_fetch": false,
        "browser": false
      },
      "connectors": {"enabled": ["github"]},   # a subset of the file's connectors
      "approval": {"always": ["fetch_web_page"]}  # added to the file's list
    }

A switched-off group stays off; the shell allow list only shrinks (each entry must be on
the file's list) and the shell timeout only drops; `approval.always` only grows. Other
top-level keys are ignored: `ignored_setting_keys` names them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from sessionflow_cli.config._errors import ConfigError
from sessionflow_cli.config._model import CliConfig, LocalToolsConfig, ShellConfig, TurnConfig
from sessionflow_cli.config._schema import settings_schema, validate

__all__ = ["KNOWN_SETTING_KEYS", "ignored_setting_keys", "resolve_turn"]

Json = dict[str, Any]
_SOURCE = "session settings"


def _known_keys() -> frozenset[str]:
    return frozenset(cast(Json, settings_schema()["properties"]))


KNOWN_SETTING_KEYS = _known_keys()


def ignored_setting_keys(settings: Mapping[str, Any]) -> list[str]:
    """JSON Pointers of the top-level keys that mean nothing here, sorted."""
    return sorted(f"/{key}" for key in settings if key not in KNOWN_SETTING_KEYS)


def resolve_turn(config: CliConfig, settings: Mapping[str, Any] | None = None) -> TurnConfig:
    """The turn's configuration: `config` narrowed by `settings`.

    Raises:
        ConfigError: ``schema`` when the settings fail their schema, ``model_not_allowed``
            for a model the file does not list, ``widens`` for anything that would give
            the turn more than the file.
    """
    doc: Json = {k: v for k, v in (settings or {}).items() if k in KNOWN_SETTING_KEYS}
    validate("settings", doc, source=_SOURCE)
    model = config.model
    if "model" in doc:
        model = str(doc["model"])
        if model not in config.allowed_models:
            listed = ", ".join(config.allowed_models)
            raise ConfigError("model_not_allowed", "/model", f"allowed: {listed}", source=_SOURCE)
    connectors = config.connectors
    connector_doc = cast(Json, doc.get("connectors") or {})
    if "enabled" in connector_doc:
        names = [str(n) for n in cast(list[Any], connector_doc["enabled"])]
        known = {c.name for c in config.connectors}
        for index, name in enumerate(names):
            if name not in known:
                raise ConfigError(
                    "widens",
                    f"/connectors/enabled/{index}",
                    f"no connector {name!r} in the file",
                    source=_SOURCE,
                )
        connectors = tuple(c for c in config.connectors if c.name in names)
    approval_doc = cast(Json, doc.get("approval") or {})
    extra_approval = [str(n) for n in cast(list[Any], approval_doc.get("always", []))]
    return TurnConfig(
        model=model,
        instructions=config.instructions,
        workspace=config.workspace,
        local_tools=_narrow_local_tools(config.local_tools, cast(Json, doc.get("local_tools") or {})),
        connectors=connectors,
        approval_always=frozenset((*config.approval_always, *extra_approval)),
    )


def _narrow_local_tools(file: LocalToolsConfig, doc: Json) -> LocalToolsConfig:
    def switch(name: str, allowed: bool) -> bool:
        if name not in doc:
            return allowed
        wanted = bool(doc[name])
        if wanted and not allowed:
            raise ConfigError(
                "widens", f"/local_tools/{name}", "the file switches this group off", source=_SOURCE
            )
        return wanted

    return LocalToolsConfig(
        files=switch("files", file.files),
        shell=_narrow_shell(file.shell, cast(Json, doc.get("shell") or {})),
        web_fetch=switch("web_fetch", file.web_fetch),
        browser=switch("browser", file.browser),
    )


def _narrow_shell(file: ShellConfig, doc: Json) -> ShellConfig:
    enabled = file.enabled
    if "enabled" in doc:
        if doc["enabled"] and not file.enabled:
            raise ConfigError(
                "widens", "/local_tools/shell/enabled", "the file switches the shell off", source=_SOURCE
            )
        enabled = bool(doc["enabled"])
    allow = file.allow
    if "allow" in doc:
        entries = [str(e) for e in cast(list[Any], doc["allow"])]
        for index, entry in enumerate(entries):
            if entry not in file.allow:
                raise ConfigError(
                    "widens",
                    f"/local_tools/shell/allow/{index}",
                    "the file's allow list does not have this command",
                    source=_SOURCE,
                )
        allow = tuple(dict.fromkeys(entries))
    timeout = file.timeout
    if "timeout" in doc:
        timeout = float(doc["timeout"])
        if timeout > file.timeout:
            raise ConfigError(
                "widens",
                "/local_tools/shell/timeout",
                f"the file allows at most {file.timeout:g} s",
                source=_SOURCE,
            )
    return ShellConfig(enabled=enabled, allow=allow, timeout=timeout, sandbox=file.sandbox)
