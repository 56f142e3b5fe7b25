"""The suite fails an adapter that misbehaves, and skips only what an adapter declares it lacks."""

from __future__ import annotations

from pathlib import Path

import pytest

from sessionflow.plugins import LOAD_PLUGINS_ENV
from sessionflow.testing.conformance import (
    CaseRun,
    ConformanceFailure,
    ConformanceRuntime,
    bundled_cases_dir,
    discover_frameworks,
    load_case,
    load_cases,
    play_case,
)
from sessionflow.testing.conformance._plugin import Matrix, missing_capability, skip_reason
from tests.conformance.mutant_plugin import NAME

REPO_ROOT = Path(__file__).parents[2]


@pytest.fixture
def mutant(monkeypatch: pytest.MonkeyPatch) -> CaseRun:
    # Worker children inherit the environment: they load the same fixture plugin.
    monkeypatch.setenv(LOAD_PLUGINS_ENV, "tests.conformance.mutant_plugin")
    monkeypatch.setenv("PYTHONPATH", str(REPO_ROOT))
    [framework] = discover_frameworks([NAME])
    return CaseRun(load_case(bundled_cases_dir() / "read_tool.json"), framework)


def test_an_adapter_that_runs_tools_twice_fails_the_read_tool_case(
    mutant: CaseRun, sessionflow_conformance_runtime: ConformanceRuntime
) -> None:
    with pytest.raises(ConformanceFailure) as caught:
        play_case(sessionflow_conformance_runtime, mutant)
    message = str(caught.value)
    assert "tool 'lookup': expected 1 real run(s), got 2" in message
    assert "expected runs with attempts [1], got [1, 1]" in message
    assert "read_tool.json" in message and "worker 1" in message


def test_capabilities_decide_the_skips(mutant: CaseRun) -> None:
    cases = {case.id: case for case in load_cases(bundled_cases_dir())}
    [builtin] = discover_frameworks(["builtin"])
    assert missing_capability(cases["parallel_reads"], mutant.framework) == "parallel_tool_calls"
    assert missing_capability(cases["image_message"], mutant.framework) == "images"
    assert missing_capability(cases["read_tool"], mutant.framework) is None
    assert all(missing_capability(case, builtin) is None for case in cases.values())
    assert (
        skip_reason(mutant.framework, "images") == "framework 'mutant-twice' declares no 'images' capability"
    )


def test_the_matrix_keeps_failures_and_shows_skip_reasons() -> None:
    matrix = Matrix()
    matrix.announce("a_case", "x")
    matrix.announce("b_case", "y")
    matrix.record("a_case", "x", "fail")
    matrix.record("a_case", "x", "pass")  # a later phase never hides a failure
    matrix.record("b_case", "x", "skip", "no images")
    matrix.record("b_case", "y", "pass")
    assert matrix.lines() == [
        "case    x                y",
        "------  ---------------  ----",
        "a_case  fail             -",
        "b_case  skip(no images)  pass",
        "1 passed, 1 failed, 1 skipped",
    ]
