"""The command uses sessionflow's public API only: `sessionflow.temporal` is what imports temporalio."""

from __future__ import annotations

import ast
from pathlib import Path

import sessionflow_cli

SOURCE = Path(sessionflow_cli.__file__).parent


def _imported_modules(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module is not None and node.level == 0:
            names.append(node.module)
    return names


def test_the_command_does_not_import_temporalio() -> None:
    files = sorted(SOURCE.rglob("*.py"))
    assert files
    offenders = [
        f"{path.relative_to(SOURCE)}: {name}"
        for path in files
        for name in _imported_modules(path)
        if name == "temporalio" or name.startswith("temporalio.")
    ]
    assert offenders == []


def test_the_command_uses_no_private_sessionflow_module() -> None:
    offenders = [
        f"{path.relative_to(SOURCE)}: {name}"
        for path in sorted(SOURCE.rglob("*.py"))
        for name in _imported_modules(path)
        if name.startswith("sessionflow.") and any(part.startswith("_") for part in name.split("."))
    ]
    assert offenders == []
