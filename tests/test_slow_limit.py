"""The suite's time rule: a test that passes over the limit fails unless it is marked slow."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

_MODULE = """
import time

import pytest


def test_quick() -> None:
    pass


def test_over_the_limit() -> None:
    time.sleep(0.6)


@pytest.mark.slow
def test_marked_slow() -> None:
    time.sleep(0.6)
"""


def test_a_test_over_the_limit_fails_unless_marked_slow(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SESSIONFLOW_TEST_TIME_LIMIT", "0.3")
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).resolve().parents[1]))  # finds `tests`
    pytester.makepyfile(_MODULE)
    result = pytester.runpytest_subprocess("-p", "tests.slow_limit", "-p", "no:cacheprovider", "-n", "0")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["*test_over_the_limit*", "*over the 0 s a test may take*"])
