"""Which configuration a command runs with: the file, the `init` answers, or the defaults."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from sessionflow_cli.config import CliConfig, default_config, default_config_path, load_config

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["ask_line", "config_path", "has_terminal", "resolve_config"]


def has_terminal() -> bool:
    return sys.stdin.isatty() and sys.stdout.isatty()


def ask_line(message: str) -> str:
    # prompt_toolkit (~0.2 s to import) only when a question is asked at a terminal.
    from prompt_toolkit import prompt

    return prompt(message)


def config_path(framework: str, given: str | None) -> Path:
    return Path(given).expanduser() if given else default_config_path(framework)


def _hint_moved(framework: str, path: Path, info: Console) -> None:
    """Say so when the file is in ``~/.sessionflow`` but `SESSIONFLOW_HOME` (or XDG) looks elsewhere."""
    earlier = Path.home() / ".sessionflow" / f"{framework}.yaml"
    if earlier != path and earlier.is_file():
        info.print(
            f"{earlier} is not read: the configuration is looked for in {path.parent} "
            "(SESSIONFLOW_HOME holds the configuration too). Move the file there, or pass -c.",
            style="yellow",
            highlight=False,
        )


def resolve_config(
    framework: str, given: str | None, *, yes: bool, ask: bool, cwd: Path, info: Console
) -> CliConfig:
    """Load the file; without one, write the defaults (`--yes`), ask `init`'s questions at a
    terminal, or run on the defaults and write nothing.

    Raises:
        ConfigError: The file (or the answers) fail the rules.
    """
    path = config_path(framework, given)
    if path.exists():
        return load_config(framework, path, cwd=cwd)
    if given is None:
        _hint_moved(framework, path, info)
    # Writing a file (`--yes`, or `init`'s questions) is the rare case: its module loads then.
    if yes:
        from sessionflow_cli.config._init import write_defaults

        config = write_defaults(framework, path, cwd=cwd)
        info.print(f"Wrote the default configuration to {path}.", highlight=False)
        return config
    if ask and has_terminal():
        from sessionflow_cli.config._init import ask_and_write

        info.print(f"No configuration file at {path} yet; a few questions create it.", highlight=False)
        config = ask_and_write(framework, path, ask_line, cwd=cwd)
        info.print(f"Wrote {path}.", highlight=False)
        return config
    info.print(
        f"No configuration file at {path}: running on the defaults and writing nothing. "
        f"Run `sessionflow init{'' if framework == 'builtin' else ' -f ' + framework}` to create one.",
        highlight=False,
    )
    return default_config(framework, cwd=cwd)
