"""Module plugin for the tests with a misspelled hook name, caught by ``check_pending``."""

from __future__ import annotations

from collections.abc import Callable

from sessionflow.kit import FrameworkSpec, hookimpl
from tests.plugins.helpers import make_spec


@hookimpl
def sessionflow_register_framworks(register: Callable[[FrameworkSpec], None]) -> None:
    register(make_spec("typo"))
