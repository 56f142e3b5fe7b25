"""The one test function of the suite; the plugin parametrizes it with every (case, framework)."""

from __future__ import annotations

from sessionflow.testing.conformance._driver import CaseRun, play_case
from sessionflow.testing.conformance._runtime import ConformanceRuntime

__all__ = ["RUN_ARGUMENT", "test_conformance"]

RUN_ARGUMENT = "sessionflow_conformance_run"


def test_conformance(
    sessionflow_conformance_run: CaseRun, sessionflow_conformance_runtime: ConformanceRuntime
) -> None:
    """Play one conformance case against one framework."""
    play_case(sessionflow_conformance_runtime, sessionflow_conformance_run)
