"""The documented route for a third-party adapter, played as a third party would.

A project outside the workspace (a temporary folder) holds an adapter module and the
two files the conformance docs tell it to write: a conftest whose only line is
``pytest_plugins = ["sessionflow.testing.conformance"]`` (or no conftest and
``-p sessionflow.testing.conformance``) and a test module that imports
``test_conformance``. A real pytest subprocess runs it, so nothing of this repository's
conftest (which imports the hooks by name) is involved. With pluggy >= 1.7 a lazily
exported wrapper hook crashed this route with ``'generator' object has no attribute
'skipped'``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from sessionflow.plugins import LOAD_PLUGINS_ENV

_ADAPTER = '''
"""A third-party adapter: the built-in runner under the framework name "acme"."""

from collections.abc import Callable

from sessionflow.builtin import ChatCompletionsRunner
from sessionflow.kit import FrameworkCapabilities, FrameworkSpec, HarnessContext, hookimpl


def _runner(ctx: HarnessContext) -> ChatCompletionsRunner:
    return ChatCompletionsRunner(
        model=ctx.model, tools=ctx.tools, system_prompt=ctx.system_prompt,
        base_url=ctx.model_base_url, api_key=ctx.api_key,
    )


@hookimpl
def sessionflow_register_frameworks(register: Callable[[FrameworkSpec], None]) -> None:
    register(FrameworkSpec(
        name="acme",
        description="a third-party adapter",
        capabilities=FrameworkCapabilities(
            parallel_tool_calls=False, reasoning_deltas=False, images=False, mcp_annotations=False
        ),
        build_runner=_runner,
        model_api="chat_completions",
    ))
'''

_TEST_MODULE = "from sessionflow.testing.conformance import test_conformance\n"
_DOCUMENTED_LINE = 'pytest_plugins = ["sessionflow.testing.conformance"]\n'
# A text answer, a read, an approval, and one case the adapter's capabilities skip.
_CASES = "text_answer,read_tool,approved_write_runs_once,parallel_reads"


def third_party_project(root: Path, *, with_conftest: bool) -> Path:
    project = root / "acme-adapter"
    (project / "tests").mkdir(parents=True)
    (project / "acme_sessionflow.py").write_text(_ADAPTER)
    (project / "tests" / "test_sessionflow_conformance.py").write_text(_TEST_MODULE)
    if with_conftest:
        (project / "tests" / "conftest.py").write_text(_DOCUMENTED_LINE)
    return project


def run_pytest(project: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("PYTEST_")}
    # The adapter module is found like any module on the path; its worker children inherit this.
    env["PYTHONPATH"] = str(project)
    env[LOAD_PLUGINS_ENV] = "acme_sessionflow"
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:xdist",
            *extra,
            "--sessionflow-frameworks=acme",
            f"--sessionflow-cases={_CASES}",
            "tests",
        ],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


@pytest.mark.parametrize("route", ["pytest_plugins", "-p"])
def test_a_third_party_adapter_runs_the_suite_by_the_documented_route(
    route: str, tmp_path: Path, temporal_address: str
) -> None:
    # temporal_address: the subprocess's plugin reuses this run's dev server through the
    # environment variable the fixture sets, instead of starting one of its own.
    project = third_party_project(tmp_path, with_conftest=route == "pytest_plugins")
    extra = ("-p", "sessionflow.testing.conformance") if route == "-p" else ()

    completed = run_pytest(project, *extra)

    output = completed.stdout + completed.stderr
    assert completed.returncode == 0, output
    assert "3 passed, 0 failed, 1 skipped" in output, output
    assert "parallel_reads            skip(no parallel_tool_calls)" in output, output
    assert "builtin" not in output, output
