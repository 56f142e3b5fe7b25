"""mkdocs hook: pages generated at build time from the code, so they cannot go stale.

- ``reference/cli.md``: every ``sessionflow`` command's help, from the parser the
  command itself runs (``sessionflow_cli._main.build_parser``).
- ``reference/capabilities.md``: each installed framework's declared capabilities, from
  the ``FrameworkSpec`` its plugin registers (what ``sessionflow frameworks`` lists).

The pages are added to the build's files only; nothing is written under ``docs/``.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
from typing import Any, cast

from mkdocs.structure.files import File, Files

CLI_PAGE = "reference/cli.md"
CAPABILITIES_PAGE = "reference/capabilities.md"


def on_files(files: Files, config: Any) -> Files:
    files.append(File.generated(config, CLI_PAGE, content=cli_reference()))
    files.append(File.generated(config, CAPABILITIES_PAGE, content=capabilities_reference()))
    return files


def cli_reference() -> str:
    # Help is wrapped to the terminal's width; a fixed width keeps the page the same on every machine.
    os.environ["COLUMNS"] = "100"
    from sessionflow_cli._main import build_parser

    parser = build_parser()
    lines = [
        "# CLI reference",
        "",
        "Generated from the `sessionflow` command's own parser when the site is built, so it",
        "says what the installed command accepts. `sessionflow <command> --help` prints the same.",
        "",
        "## sessionflow",
        "",
        "```text",
        parser.format_help().rstrip(),
        "```",
        "",
    ]
    for name, sub in _subcommands(parser).items():
        lines += [f"## sessionflow {name}", "", "```text", sub.format_help().rstrip(), "```", ""]
    return "\n".join(lines)


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    found: dict[str, argparse.ArgumentParser] = {}
    # argparse has no public accessor for a parser's subcommands.
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):  # pyright: ignore[reportPrivateUsage]
            choices = cast("dict[str, argparse.ArgumentParser]", action.choices)  # pyright: ignore[reportUnknownMemberType]
            for name, sub in choices.items():
                found[name] = sub
                for nested_name, nested in _subcommands(sub).items():
                    found[f"{name} {nested_name}"] = nested
    return found


def capabilities_reference() -> str:
    from sessionflow.kit import FrameworkCapabilities
    from sessionflow.plugins import get_plugins

    frameworks = get_plugins().frameworks()
    names = sorted(frameworks)
    fields = [field.name for field in dataclasses.fields(FrameworkCapabilities)]
    lines = [
        "# Capabilities by framework",
        "",
        "Generated when the site is built from the `FrameworkCapabilities` each installed",
        "framework's plugin registers (what `sessionflow frameworks` prints). The conformance",
        "suite runs a case only for the frameworks that declare what the case `requires`; the",
        "meaning of each capability is in the [runner contract](../runner-contract.md#capabilities).",
        "",
        "| capability | " + " | ".join(f"`{name}`" for name in names) + " |",
        "| --- | " + " | ".join("---" for _ in names) + " |",
    ]
    for field in fields:
        cells = ["yes" if getattr(frameworks[name].capabilities, field) else "no" for name in names]
        lines.append(f"| `{field}` | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
