"""Module plugin for the tests: registers framework ``alpha``. Loaded by module path."""

from __future__ import annotations

from collections.abc import Callable

from sessionflow.kit import FrameworkSpec, hookimpl
from tests.plugins.helpers import make_spec


@hookimpl
def sessionflow_register_frameworks(register: Callable[[FrameworkSpec], None]) -> None:
    register(make_spec("alpha"))
