"""Registers the Google ADK adapter as the framework `google-adk`."""

from __future__ import annotations

from collections.abc import Callable

from sessionflow.kit import FrameworkSpec, hookimpl

__all__ = ["sessionflow_register_frameworks"]


@hookimpl
def sessionflow_register_frameworks(register: Callable[[FrameworkSpec], None]) -> None:
    del register  # the runner comes next
