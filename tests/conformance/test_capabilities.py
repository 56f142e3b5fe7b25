"""Each framework declares exactly the capabilities it implements.

Every conformance case that needs a capability is played against every framework,
declared or not: a case whose capabilities the framework declares must pass (never
skip), and a case that needs a capability the framework does not declare must fail;
if it passes, the framework implements the capability and should declare it. What stays
undeclared, and why, is listed in docs/conformance.md.
"""

from __future__ import annotations

import pytest

from sessionflow.kit import FrameworkSpec
from sessionflow.testing.conformance import (
    CaseRun,
    ConformanceCase,
    ConformanceRuntime,
    bundled_cases_dir,
    discover_frameworks,
    load_cases,
    play_case,
)

CAPABILITY_CASES = [case for case in load_cases(bundled_cases_dir()) if case.requires]
FRAMEWORKS = discover_frameworks()


def undeclared(case: ConformanceCase, framework: FrameworkSpec) -> list[str]:
    return [c for c in case.requires if not getattr(framework.capabilities, c)]


RUNS = [
    pytest.param(CaseRun(case, framework), id=f"{framework.name}-{case.id}")
    for framework in FRAMEWORKS
    for case in CAPABILITY_CASES
]


def test_every_framework_and_capability_case_is_checked() -> None:
    names = {framework.name for framework in FRAMEWORKS}
    assert {"builtin", "pydantic-ai", "openai-agents", "langgraph", "claude-agent-sdk", "google-adk"} <= names
    needed = {capability for case in CAPABILITY_CASES for capability in case.requires}
    assert {
        "continue_steps",
        "carry_state",
        "tool_state",
        "framework_approvals",
        "questions",
        "steering",
    } <= needed


@pytest.mark.parametrize("run", RUNS)
def test_a_case_passes_exactly_where_its_capabilities_are_declared(
    run: CaseRun, sessionflow_conformance_runtime: ConformanceRuntime
) -> None:
    missing = undeclared(run.case, run.framework)
    try:
        play_case(sessionflow_conformance_runtime, run)
    except pytest.skip.Exception as skipped:
        pytest.fail(f"{run.id} skipped, though the framework declares {run.case.requires}: {skipped}")
    except Exception as error:
        if not missing:
            raise
        print(f"{run.id}: fails as expected without {missing}: {type(error).__name__}")
        return
    assert not missing, (
        f"{run.framework.name} passes {run.case.id} but declares no {missing}: it implements "
        "the capability, so its FrameworkSpec should declare it"
    )
