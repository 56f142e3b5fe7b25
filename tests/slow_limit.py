"""A test that passes in over 60 s fails, unless it is marked ``slow`` (CONTRIBUTING.md).

The whole suite has to fit CI's budget on a 2-core machine, so a test that quietly grows
past a minute is reported where it grew, not found later in the run's total. A test that
needs the time is marked ``@pytest.mark.slow`` and listed, with its reason, in
CONTRIBUTING.md. The limit is generous on purpose: a loaded machine stretches timings, and
this check is about tests that are slow by design, not about the machine's load.
"""

from __future__ import annotations

import os
from collections.abc import Generator

import pytest

__all__ = ["LIMIT_SECONDS", "pytest_configure", "pytest_runtest_makereport"]

LIMIT_SECONDS = float(os.environ.get("SESSIONFLOW_TEST_TIME_LIMIT", "60"))
"""Seconds a test may pass in; the environment variable lets the rule's own test use less."""


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", f"slow: may pass in over {LIMIT_SECONDS:.0f} s; listed with its reason in CONTRIBUTING.md"
    )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    if (
        report.when == "call"
        and report.passed
        and report.duration > LIMIT_SECONDS
        and item.get_closest_marker("slow") is None
    ):
        report.outcome = "failed"
        report.longrepr = (
            f"passed, but in {report.duration:.0f} s: over the {LIMIT_SECONDS:.0f} s a test may take. "
            "Make it faster, or mark it @pytest.mark.slow and list it in CONTRIBUTING.md with its reason."
        )
    return report
