"""The SESSIONFLOW_* table: the code reads every variable through it, and lists nothing stale.

Read statically (the AST of every module of packages/*/src): a full ``SESSIONFLOW_*``
string anywhere must be a listed name, and a read of one (``os.environ[...]``,
``.get(...)``, ``os.getenv(...)``, ``... in os.environ``) must go through `read_env`.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

from sessionflow.kit import ENVIRONMENT_VARIABLES, UnknownEnvironmentVariable, read_env

REPO = Path(__file__).parents[2]
NAME = re.compile(r"^SESSIONFLOW_[A-Z0-9_]+$")
LISTED = {variable.name for variable in ENVIRONMENT_VARIABLES}
TABLE_MODULE = REPO / "packages/core/src/sessionflow/_environment.py"


def source_modules() -> list[Path]:
    return sorted(p for p in REPO.glob("packages/*/src/**/*.py") if p != TABLE_MODULE)


def names_of_constants(trees: dict[Path, ast.Module]) -> set[str]:
    """Identifiers bound to a SESSIONFLOW_* string (``PORT_ENV = "SESSIONFLOW_SERVER_PORT"``)."""
    found: set[str] = set()
    for tree in trees.values():
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign):
                value, targets = node.value, node.targets
            elif isinstance(node, ast.AnnAssign):
                value, targets = node.value, [node.target]
            else:
                continue
            if isinstance(value, ast.Constant) and isinstance(value.value, str) and NAME.match(value.value):
                found |= {t.id for t in targets if isinstance(t, ast.Name)}
    return found


def is_variable(node: ast.expr, constants: set[str]) -> bool:
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str) and bool(NAME.match(node.value))
    if isinstance(node, ast.Name):
        return node.id in constants
    return isinstance(node, ast.Attribute) and node.attr in constants


def direct_reads(path: Path, tree: ast.Module, constants: set[str]) -> list[str]:
    reads: list[str] = []
    for node in ast.walk(tree):
        where = f"{path.relative_to(REPO)}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.Call) and node.args and is_variable(node.args[0], constants):
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if called in ("get", "getenv", "pop", "setdefault"):
                reads.append(f"{where}: {ast.unparse(node)}")
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
            if is_variable(node.slice, constants):
                reads.append(f"{where}: {ast.unparse(node)}")
        elif isinstance(node, ast.Compare) and is_variable(node.left, constants):
            if any(isinstance(op, ast.In | ast.NotIn) for op in node.ops):
                reads.append(f"{where}: {ast.unparse(node)}")
    return reads


@pytest.fixture(scope="module")
def trees() -> dict[Path, ast.Module]:
    return {path: ast.parse(path.read_text(), str(path)) for path in source_modules()}


def test_every_sessionflow_name_in_the_code_is_listed(trees: dict[Path, ast.Module]) -> None:
    unlisted = {
        f"{path.relative_to(REPO)}:{node.lineno}: {node.value}"
        for path, tree in trees.items()
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and NAME.match(node.value)
        and node.value not in LISTED
    }
    assert not unlisted, "add these to sessionflow/_environment.py:\n" + "\n".join(sorted(unlisted))


def test_the_code_reads_the_variables_through_read_env(trees: dict[Path, ast.Module]) -> None:
    constants = names_of_constants(trees)
    assert {"PORT_ENV", "PAYLOADS_ENV", "BINARY_ENV_VAR"} <= constants  # the scan sees the constants
    reads = [read for path, tree in trees.items() for read in direct_reads(path, tree, constants)]
    assert not reads, "read these through sessionflow.kit.read_env:\n" + "\n".join(reads)


def test_the_table_lists_nothing_the_code_does_not_use(trees: dict[Path, ast.Module]) -> None:
    used = {
        node.value
        for tree in trees.values()
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and NAME.match(node.value)
    }
    assert LISTED - used == set()
    assert len(LISTED) == len(ENVIRONMENT_VARIABLES)  # no name listed twice


def test_the_scan_finds_a_direct_read() -> None:
    # The check itself can fail: a module that reads a variable around the table is caught.
    tree = ast.parse(
        'import os\nPORT_ENV = "SESSIONFLOW_SERVER_PORT"\na = os.environ.get(PORT_ENV, "")\n'
        'b = os.environ["SESSIONFLOW_HOME"]\nc = "SESSIONFLOW_TRACING" in os.environ\nd = read_env(PORT_ENV)\n'
    )
    reads = direct_reads(REPO / "x.py", tree, names_of_constants({REPO / "x.py": tree}))
    assert [read.split(": ", 1)[0] for read in reads] == ["x.py:3", "x.py:4", "x.py:5"]


def test_read_env_refuses_an_unlisted_name_and_reads_a_mapping() -> None:
    with pytest.raises(UnknownEnvironmentVariable, match="SESSIONFLOW_NOT_A_VARIABLE"):
        read_env("SESSIONFLOW_NOT_A_VARIABLE")
    assert read_env("SESSIONFLOW_HOME", environ={"SESSIONFLOW_HOME": "/x"}) == "/x"
    assert read_env("SESSIONFLOW_HOME", "none", environ={}) == "none"
    assert read_env("SESSIONFLOW_HOME", environ={}) is None


def test_every_variable_has_a_default_and_a_meaning() -> None:
    for variable in ENVIRONMENT_VARIABLES:
        assert variable.default.strip() and variable.meaning.strip() and variable.group, variable


def test_the_reference_page_is_generated_from_the_table() -> None:
    checked = subprocess.run(
        [sys.executable, str(REPO / "ci" / "environment_page.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert checked.returncode == 0, checked.stderr
    page = (REPO / "docs" / "reference" / "environment.md").read_text()
    assert all(f"`{name}`" in page for name in LISTED)
