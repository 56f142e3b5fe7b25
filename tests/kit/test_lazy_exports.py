"""Lazy exports: `sessionflow.RedisDeltaTransport` loads redis only when used, and every package
that uses `sessionflow.kit.lazy_exports` serves exactly the names it declares."""

from __future__ import annotations

import importlib
import subprocess
import sys
import types
from pathlib import Path

import pytest

from sessionflow.kit import distribution_version, lazy_exports
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


def test_only_imports_under_type_checking_are_lazy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "lazy_blocks"
    package.mkdir()
    (package / "_heavy.py").write_text("value = 'heavy'\nother = 'other'\nflag = 'flag'\n")
    (package / "__init__.py").write_text(
        "import sys\n"
        "import typing\n"
        "from sessionflow.kit import lazy_exports\n"
        "DEBUG = False\n"
        "class config:\n"
        "    DEBUG = False\n"
        "if typing.TYPE_CHECKING:\n"
        "    from ._heavy import value\n"
        "if sys.version_info >= (3, 11):\n"
        "    pass\n"
        "if DEBUG:\n"
        "    from ._heavy import flag\n"
        "if config.DEBUG:\n"
        "    from ._heavy import other\n"
        "__getattr__, __dir__ = lazy_exports(__name__)\n"
    )
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    try:
        probe = importlib.import_module("lazy_blocks")
        assert probe.value == "heavy"  # `typing.TYPE_CHECKING`, as an attribute, counts
        for name in ("flag", "other"):
            with pytest.raises(AttributeError, match=f"has no attribute '{name}'"):
                getattr(probe, name)
    finally:
        for module in ("lazy_blocks", "lazy_blocks._heavy"):
            sys.modules.pop(module, None)


def test_a_module_without_source_fails_clearly_but_dunder_probes_never_read_it() -> None:
    name = "lazy_sourceless"
    module = types.ModuleType(name)  # no spec, no loader: its source cannot be read
    module.__getattr__, module.__dir__ = lazy_exports(name)  # pyright: ignore[reportAttributeAccessIssue]
    sys.modules[name] = module
    try:
        # pickle, copy and doctest probe dunders; they must see a plain missing attribute.
        assert getattr(module, "__wrapped__", None) is None
        assert not hasattr(module, "__path__")
        for lazy_looking in ("value", "__private", "trailing__"):
            with pytest.raises(ImportError, match="cannot read the source of 'lazy_sourceless'"):
                getattr(module, lazy_looking)
    finally:
        sys.modules.pop(name, None)


def test_a_computed_value_is_called_once_on_first_use() -> None:
    name = "lazy_computed"
    calls: list[int] = []

    def compute() -> str:
        calls.append(1)
        return "1.2.3"

    module = types.ModuleType(name)
    module.__getattr__, module.__dir__ = lazy_exports(  # pyright: ignore[reportAttributeAccessIssue]
        name, computed={"__version__": compute}
    )
    sys.modules[name] = module
    try:
        assert calls == []
        assert module.__version__ == "1.2.3"
        assert module.__version__ == "1.2.3"
        assert calls == [1]
    finally:
        sys.modules.pop(name, None)


def test_distribution_version_reads_the_metadata_or_says_0_0_0() -> None:
    version = (Path(__file__).parents[2] / "VERSION").read_text().strip()
    assert distribution_version("sessionflow")() == version
    assert distribution_version("sessionflow-no-such-distribution")() == "0.0.0"
