"""`lazy_exports`: a package's names that load on first use, declared once as typed imports.

A package whose names pull in a heavy SDK (every adapter: plugin discovery imports the
package of each plugin module) writes those imports in an ``if TYPE_CHECKING:`` block,
which type checkers read, and lets this helper serve them at run time::

    if TYPE_CHECKING:
        from sessionflow_langgraph._flow import langgraph_session_flow

    __getattr__, __dir__ = lazy_exports(__name__)

    __all__ = ["langgraph_session_flow"]

The first access of ``langgraph_session_flow`` imports ``sessionflow_langgraph._flow``
and keeps the value in the package's namespace, so later accesses are plain lookups.

A value that costs something to compute but needs no import (a ``__version__`` read from
the installed metadata) can be lazy too: pass ``computed={"__version__": distribution_version("sessionflow")}``
and declare its type in the ``if TYPE_CHECKING:`` block (``__version__: str``).
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import sys
from collections.abc import Callable, Mapping

__all__ = ["distribution_version", "lazy_exports"]


def lazy_exports(
    module_name: str, computed: Mapping[str, Callable[[], object]] | None = None
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``module_name`` for the names it imports under TYPE_CHECKING.

    Every ``from ... import ...`` inside the module's top-level ``if TYPE_CHECKING:``
    block becomes a lazy name. The block is read from the module's source on the first
    lookup of a name the module does not have, so importing the package costs nothing.
    Each name in ``computed`` (dunder names too) is the value its function returns, called
    on the first lookup.

    Raises:
        AttributeError: (from ``__getattr__``) the name is neither defined nor lazy.
        ImportError: (from ``__getattr__``) the module's source cannot be read, or the
            module that defines the name fails to import.
    """
    sources: dict[str, tuple[str, str]] | None = None

    def lazy_names() -> dict[str, tuple[str, str]]:
        nonlocal sources
        if sources is None:
            sources = _type_checking_imports(module_name)
        return sources

    values = dict(computed or {})

    def __getattr__(name: str) -> object:
        compute = values.get(name)
        if compute is not None:
            value = compute()
            setattr(sys.modules[module_name], name, value)
            return value
        # Dunder lookups (pickle, copy, doctest probing `__wrapped__`...) never read the source.
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(f"module {module_name!r} has no attribute {name!r}")
        source = lazy_names().get(name)
        if source is None:
            raise AttributeError(f"module {module_name!r} has no attribute {name!r}")
        defining_module, attribute = source
        value = getattr(importlib.import_module(defining_module), attribute)
        setattr(sys.modules[module_name], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[module_name]), *lazy_names(), *values})

    return __getattr__, __dir__


def distribution_version(distribution: str) -> Callable[[], str]:
    """A ``computed`` value for ``__version__``: the installed distribution's version, read
    from its metadata on first use ("0.0.0" from a source tree without metadata)."""

    def read() -> str:
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version(distribution)
        except PackageNotFoundError:
            return "0.0.0"

    return read


def _type_checking_imports(module_name: str) -> dict[str, tuple[str, str]]:
    """Each name imported in the module's ``if TYPE_CHECKING:`` block: (defining module, attribute)."""
    module = sys.modules[module_name]
    spec = module.__spec__
    loader = spec.loader if spec is not None else None
    get_source = getattr(loader, "get_source", None)
    source: object = get_source(module_name) if callable(get_source) else None
    if not isinstance(source, str):
        raise ImportError(f"cannot read the source of {module_name!r} to find its lazily loaded names")
    package = module.__package__ or ""
    names: dict[str, tuple[str, str]] = {}
    for statement in ast.parse(source).body:
        if isinstance(statement, ast.If) and _is_type_checking(statement.test):
            for node in statement.body:
                if isinstance(node, ast.ImportFrom) and node.module is not None:
                    target = importlib.util.resolve_name("." * node.level + node.module, package)
                    for alias in node.names:
                        names[alias.asname or alias.name] = (target, alias.name)
    return names


def _is_type_checking(test: ast.expr) -> bool:
    if isinstance(test, ast.Name):
        return test.id == "TYPE_CHECKING"
    return isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
