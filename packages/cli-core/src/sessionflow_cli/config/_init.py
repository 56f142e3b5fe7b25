"""`init`: the questions at a terminal, and writing the file with comments kept."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

from sessionflow_cli.config._document import default_document, default_text
from sessionflow_cli.config._errors import ConfigError
from sessionflow_cli.config._load import parse_config
from sessionflow_cli.config._model import CliConfig
from sessionflow_cli.config._yaml import dump_document, parse_document, plain, write_document, write_text

__all__ = ["Ask", "ask_and_write", "write_defaults"]

Ask = Callable[[str], str]
"""Asks one question and returns the typed line."""


def write_defaults(framework: str, path: Path, *, cwd: Path) -> CliConfig:
    """Write the defaults to `path` (replacing the file) and return them as loaded."""
    text = default_text(framework)
    config = parse_config(framework, text, path=path, cwd=cwd)
    write_text(path, text)
    return config


def _base_document(framework: str, path: Path) -> Any:
    """The existing file's document (its comments survive), or the defaults when there is none.

    Raises `ConfigError` for a file that is not a YAML mapping: `init --yes` replaces it.
    """
    if not path.exists():
        return default_document(framework)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError("unreadable", "", str(error), source=str(path)) from None
    document = parse_document(text, source=str(path))
    if document is None:
        return default_document(framework)
    if not isinstance(document, dict):
        raise ConfigError("schema", "", "schema keyword type", keyword="type", source=str(path))
    return cast(Any, document)


def _yes(answer: str, default: bool) -> bool:
    text = answer.strip().lower()
    if not text:
        return default
    return text in ("y", "yes", "true", "on", "1")


def ask_and_write(framework: str, path: Path, ask: Ask, *, cwd: Path) -> CliConfig:
    """Ask the `init` questions, then write the answers into the file.

    The answers go into the existing file's document when there is one, so its comments
    and other keys stay. Raises `ConfigError` (and writes nothing) when the answers make
    a file the rules reject.
    """
    document = _base_document(framework, path)
    current: dict[str, Any] = plain(document) or {}
    tools: dict[str, Any] = current.get("local_tools") or {}
    shell: dict[str, Any] = tools.get("shell") or {}
    server = current.get("server", "auto")

    def question(text: str, default: str) -> str:
        return ask(f"{text} [{default}]: ").strip() or default

    def yes_no(text: str, default: bool) -> bool:
        return _yes(ask(f"{text} [{'Y/n' if default else 'y/N'}]: "), default)

    model = question("Model (demo is the offline demo model)", str(current.get("model", "demo")))
    workspace = question(
        "Workspace folder, relative to the current folder", str(current.get("workspace", "."))
    )
    server_text = question(
        "Temporal server: auto, or host:port",
        server if isinstance(server, str) else str(server.get("address", "auto")),
    )
    shell_on = yes_no(
        "Let the agent run shell commands (each waits for approval)?", bool(shell.get("enabled", True))
    )
    allow_default = ", ".join(str(item) for item in shell.get("allow", []))
    allow_text = ask(f"Shell commands that run without approval, comma-separated [{allow_default}]: ").strip()
    allow = [item.strip() for item in (allow_text or allow_default).split(",") if item.strip()]
    web = yes_no("Let the agent fetch web pages?", bool(tools.get("web_fetch", True)))
    browser = yes_no("Let the agent use a headless browser?", bool(tools.get("browser", False)))

    document["model"] = model
    document["workspace"] = workspace
    if isinstance(document.get("server"), dict):
        document["server"]["address"] = server_text
    else:
        document["server"] = server_text
    local = document.setdefault("local_tools", {})
    local_shell = local.setdefault("shell", {})
    local_shell["enabled"] = shell_on
    local_shell["allow"] = allow
    local["web_fetch"] = web
    local["browser"] = browser
    document.setdefault(framework, {})
    config = parse_config(framework, dump_document(document), path=path, cwd=cwd)
    write_document(path, document)
    return config
