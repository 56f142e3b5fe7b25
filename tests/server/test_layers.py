"""The API uses sessionflow's public API only: no temporalio, no private sessionflow module."""

from __future__ import annotations

import ast
from pathlib import Path

import sessionflow_server

SOURCE = Path(sessionflow_server.__file__).parent


def _imported(path: Path) -> list[str]:
    names: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module is not None and node.level == 0:
            names.append(node.module)
    return names


def test_the_server_imports_neither_temporalio_nor_private_sessionflow_modules() -> None:
    files = sorted(SOURCE.rglob("*.py"))
    assert len(files) > 5
    offenders = [
        f"{path.name}: {name}"
        for path in files
        for name in _imported(path)
        if name.split(".")[0] == "temporalio"
        or (name.startswith("sessionflow.") and any(part.startswith("_") for part in name.split(".")))
    ]
    assert offenders == []
