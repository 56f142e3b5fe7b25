"""The leaf modules of the plugin system import no plugin manager: the hookspecs-plugins cycle stays broken.

`sessionflow.plugins` imports `sessionflow.hookspecs`, which imports `sessionflow.kit._frameworks`;
neither of these two may reach `sessionflow.plugins` back, directly or through the
sessionflow modules they import. Read from the source, since at run time the package's
``__init__`` imports everything anyway.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import sessionflow

ROOT = Path(sessionflow.__file__).parent


def _source(module: str) -> Path | None:
    relative = Path(*module.split(".")[1:])
    for candidate in (ROOT / relative / "__init__.py", ROOT / f"{relative}.py"):
        if candidate.is_file():
            return candidate
    return None


def _sessionflow_imports(module: str) -> set[str]:
    """The sessionflow modules ``module`` imports (type-only imports included: pyright follows them too)."""
    path = _source(module)
    assert path is not None, module
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module is not None and node.level == 0:
            # `from sessionflow import plugins` names a module as well as a package.
            names = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
        found |= {name for name in names if name.split(".")[0] == "sessionflow" and _source(name) is not None}
    return found - {"sessionflow"}


def _reachable(start: str) -> dict[str, str]:
    """Every sessionflow module reachable from ``start``, each with the module that imports it."""
    seen: dict[str, str] = {}
    pending = [start]
    while pending:
        module = pending.pop()
        for imported in _sessionflow_imports(module):
            if imported not in seen and imported != start:
                seen[imported] = module
                pending.append(imported)
    return seen


@pytest.mark.parametrize("leaf", ["sessionflow.hookspecs", "sessionflow.kit._frameworks"])
def test_the_leaf_does_not_import_the_plugin_manager(leaf: str) -> None:
    reached = _reachable(leaf)
    assert "sessionflow.kit._frameworks" in reached or leaf == "sessionflow.kit._frameworks"
    chain = ["sessionflow.plugins"]
    while chain[-1] in reached:
        chain.append(reached[chain[-1]])
    assert "sessionflow.plugins" not in reached, " <- ".join(chain)
