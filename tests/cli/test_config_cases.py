"""Every case of conformance/cli_config.json: files and session settings, accepted or rejected."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

import pytest

from sessionflow_cli.config import (
    CliConfig,
    ConfigError,
    default_config,
    default_text,
    ignored_setting_keys,
    parse_config,
    resolve_turn,
)

CASES = cast(
    dict[str, Any], json.loads((Path(__file__).parents[2] / "conformance" / "cli_config.json").read_text())
)
FRAMEWORK = str(CASES["framework"])


def _load(tmp_path: Path, text: str, extra: dict[str, str] | None = None) -> CliConfig:
    folder = tmp_path / "config"
    folder.mkdir(exist_ok=True)
    for name, content in (extra or {}).items():
        (folder / name).write_text(content)
    if text == "@defaults":
        text = default_text(FRAMEWORK)
    return parse_config(FRAMEWORK, text, path=folder / f"{FRAMEWORK}.yaml", cwd=tmp_path)


def _facts(config: CliConfig) -> dict[str, Any]:
    tools = config.local_tools
    return {
        "model": config.model,
        "models": list(config.models),
        "instructions": config.instructions,
        "server": config.server.address,
        "namespace": config.server.namespace,
        "files": tools.files,
        "shell": tools.shell.enabled,
        "shell_allow": list(tools.shell.allow),
        "shell_timeout": tools.shell.timeout,
        "web_fetch": tools.web_fetch,
        "browser": tools.browser,
        "connectors": [c.name for c in config.connectors],
        "approval_always": sorted(config.approval_always),
        "framework_settings": dict(config.framework_settings),
        "sandbox_network": tools.shell.sandbox.network,
        "sandbox_writable": [p.name for p in tools.shell.sandbox.writable],
        "sandbox_hidden": [p.name for p in tools.shell.sandbox.hidden],
        "sandbox_hide_home": tools.shell.sandbox.hide_home,
        "sandbox_bwrap": tools.shell.sandbox.bwrap,
        "sandbox_backend": tools.shell.sandbox.backend,
    }


def _check_error(error: ConfigError, expected: dict[str, Any]) -> None:
    assert (error.code, error.pointer) == (expected["code"], expected["pointer"]), str(error)
    if "keyword" in expected:
        assert error.keyword == expected["keyword"], str(error)
        assert (
            error.summary
            == f'{expected["code"]} at "{expected["pointer"]}" (schema keyword {expected["keyword"]})'
        )
    else:
        assert error.summary.startswith(f'{expected["code"]} at "{expected["pointer"]}"')


@pytest.mark.parametrize("case", CASES["files"], ids=[c["name"] for c in CASES["files"]])
def test_file_case(case: dict[str, Any], tmp_path: Path) -> None:
    if "error" in case:
        with pytest.raises(ConfigError) as caught:
            _load(tmp_path, case["yaml"], case.get("extra_files"))
        _check_error(caught.value, case["error"])
        return
    facts = _facts(_load(tmp_path, case["yaml"], case.get("extra_files")))
    for key, value in case["expect"].items():
        assert facts[key] == value, key


@pytest.mark.parametrize("case", CASES["settings"], ids=[c["name"] for c in CASES["settings"]])
def test_settings_case(case: dict[str, Any], tmp_path: Path) -> None:
    file = _load(tmp_path, case["file"]) if "file" in case else default_config(FRAMEWORK, cwd=tmp_path)
    settings: dict[str, Any] = case["settings"]
    assert ignored_setting_keys(settings) == case.get("ignored", [])
    if "error" in case:
        with pytest.raises(ConfigError) as caught:
            resolve_turn(file, settings)
        _check_error(caught.value, case["error"])
        return
    turn = resolve_turn(file, settings)
    tools = turn.local_tools
    facts = {
        "model": turn.model,
        "files": tools.files,
        "shell": tools.shell.enabled,
        "shell_allow": list(tools.shell.allow),
        "shell_timeout": tools.shell.timeout,
        "web_fetch": tools.web_fetch,
        "browser": tools.browser,
        "connectors": [c.name for c in turn.connectors],
        "approval_always": sorted(turn.approval_always),
    }
    for key, value in case["expect"].items():
        assert facts[key] == value, key


def test_every_rejection_code_is_covered() -> None:
    codes = {c["error"]["code"] for c in CASES["files"] + CASES["settings"] if "error" in c}
    assert codes >= {"schema", "yaml", "conflict", "missing_file", "missing_directory", "duplicate", "widens"}
    assert "model_not_allowed" in codes
