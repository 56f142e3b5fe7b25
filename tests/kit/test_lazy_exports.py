"""Lazy exports: `sessionflow.RedisDeltaTransport` loads redis only when used, and every package
that uses `sessionflow.kit.lazy_exports` serves exactly the names it declares."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

from sessionflow.kit._lazy import _type_checking_imports  # pyright: ignore[reportPrivateUsage]

PROBE = """
import sys
import sessionflow
assert "redis" not in sys.modules, "importing sessionflow imported redis"
from sessionflow import RedisDeltaTransport
from sessionflow.kit._redis_deltas import RedisDeltaTransport as Direct
assert RedisDeltaTransport is Direct and "redis" in sys.modules
assert "RedisDeltaTransport" in sessionflow.__all__
print("ok")
"""


def test_redis_delta_transport_loads_lazily_from_the_top_level() -> None:
    completed = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120, check=False
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == "ok"


LAZY_PACKAGES = [
    "sessionflow",
    "sessionflow.demo",
    "sessionflow.builtin",
    "sessionflow_openai_agents",
    "sessionflow_pydantic_ai",
    "sessionflow_langgraph",
    "sessionflow_claude_agent_sdk",
]


@pytest.mark.parametrize("name", LAZY_PACKAGES)
def test_every_exported_name_resolves_and_every_lazy_name_is_exported(name: str) -> None:
    package = importlib.import_module(name)
    lazy = _type_checking_imports(name)
    assert lazy, f"{name} declares no lazily loaded names"
    exported = set(package.__all__)
    assert set(lazy) <= exported, f"lazy but not in __all__: {sorted(set(lazy) - exported)}"
    for exported_name in package.__all__:
        assert getattr(package, exported_name) is not None
    assert exported <= set(dir(package))


def test_lazy_names_load_once_and_unknown_names_fail(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "lazy_probe"
    package.mkdir()
    (package / "_heavy.py").write_text("LOADS = []\nLOADS.append(1)\nvalue = 'heavy'\n")
    (package / "__init__.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "from sessionflow.kit import lazy_exports\n"
        "if TYPE_CHECKING:\n"
        "    from ._heavy import value as renamed\n"
        "    from lazy_probe._heavy import LOADS\n"
        "__getattr__, __dir__ = lazy_exports(__name__)\n"
        "__all__ = ['LOADS', 'renamed']\n"
    )
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    probe = importlib.import_module("lazy_probe")
    try:
        assert "lazy_probe._heavy" not in sys.modules
        assert probe.renamed == "heavy"
        assert probe.LOADS == [1]
        # Kept in the namespace: a second lookup does not go through __getattr__.
        assert vars(probe)["renamed"] == "heavy"
        assert {"LOADS", "renamed"} <= set(dir(probe))
        with pytest.raises(AttributeError, match="has no attribute 'missing'"):
            _ = probe.missing
    finally:
        for module in ("lazy_probe", "lazy_probe._heavy"):
            sys.modules.pop(module, None)
