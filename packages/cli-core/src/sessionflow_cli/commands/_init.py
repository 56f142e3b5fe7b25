"""`sessionflow init`: create or replace the configuration file, or print its schema."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from sessionflow_cli._errors import EXIT_OK, UsageError
from sessionflow_cli._setup import ask_line, config_path, has_terminal
from sessionflow_cli.config import config_schema_text
from sessionflow_cli.config._init import ask_and_write, write_defaults

__all__ = ["run_init"]


def run_init(
    framework: str, given: str | None, *, yes: bool, print_schema: bool, out: Console, info: Console
) -> int:
    if print_schema:
        out.file.write(config_schema_text())
        out.file.flush()
        return EXIT_OK
    path = config_path(framework, given)
    if yes:
        write_defaults(framework, path, cwd=Path.cwd())
        info.print(f"Wrote the default configuration to {path}.", highlight=False)
        return EXIT_OK
    if not has_terminal():
        raise UsageError("init asks its questions at a terminal; pass --yes to write the defaults")
    if path.exists():
        info.print(f"Updating {path}; press Enter to keep a value.", highlight=False)
    ask_and_write(framework, path, ask_line, cwd=Path.cwd())
    info.print(f"Wrote {path}.", highlight=False)
    return EXIT_OK
