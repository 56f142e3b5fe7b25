"""Real entry-point discovery: install tests/plugins/fixture_adapter and load it in a fresh process.

The fixture is built with its own build backend and installed with ``uv pip install
--target`` into a temporary directory. A child process of the workspace interpreter gets
that directory on ``PYTHONPATH``; ``importlib.metadata`` finds the installed dist-info
there exactly as it would in site-packages. This avoids building a whole virtualenv (and
resolving the core's dependencies again) while still exercising the real entry point.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, cast

import pytest

from sessionflow.plugins import DISABLE_AUTOLOAD_ENV, DISABLED_PLUGINS_ENV, LOAD_PLUGINS_ENV

FIXTURE_PROJECT = Path(__file__).parent / "fixture_adapter"
REPO_ROOT = Path(__file__).parents[2]

# Runs in the child: load with autoload on, report frameworks, plugins, and a built flow.
PROBE = """
import json
from dataclasses import asdict
from pathlib import Path

from sessionflow import AgentSessionOptions
from sessionflow.kit import HarnessContext
from sessionflow.plugins import SessionflowPlugins, build_runner

plugins = SessionflowPlugins()
plugins.load(autoload=True)
frameworks = plugins.frameworks()
report = {
    "frameworks": {name: spec.plugin_name for name, spec in frameworks.items()},
    "plugins": [asdict(info) for info in plugins.list_plugins()],
}
if "fixture" in frameworks:
    ctx = HarnessContext(
        flow_type="fixture-flow", model="m", system_prompt=None, workspace=Path("."),
        options=AgentSessionOptions(), tools=(), settings={},
    )
    runner = build_runner(frameworks["fixture"], ctx)
    report["flow"] = [ctx.flow_type, type(runner).__name__]
print(json.dumps(report))
"""


@pytest.fixture(scope="module")
def installed_fixture(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Build and install the fixture adapter (without dependencies) into a fresh directory."""
    uv = shutil.which("uv")
    if uv is None:
        pytest.fail("uv is not on PATH; it builds the fixture adapter (`bash ci/test` installs it)")
    target = tmp_path_factory.mktemp("fixture-site")
    subprocess.run(
        [
            uv,
            "pip",
            "install",
            "--quiet",
            "--python",
            sys.executable,
            "--target",
            str(target),
            "--no-deps",
            # uv caches wheels built from local paths; rebuild so fixture edits are picked up.
            "--refresh-package",
            "sessionflow-fixture-adapter",
            str(FIXTURE_PROJECT),
        ],
        check=True,
        timeout=120,
    )
    assert list(target.glob("sessionflow_fixture_adapter-*.dist-info/entry_points.txt"))
    return target


def probe(site: Path, **env_vars: str) -> dict[str, Any]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("SESSIONFLOW_")}
    # The repo root makes the `tests.plugins` sample modules importable by module path.
    env["PYTHONPATH"] = os.pathsep.join(
        filter(None, [str(site), str(REPO_ROOT), os.environ.get("PYTHONPATH")])
    )
    env.update(env_vars)
    completed = subprocess.run(
        [sys.executable, "-c", PROBE],
        env=env,
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    return cast(dict[str, Any], json.loads(completed.stdout.strip().splitlines()[-1]))


def test_fixture_is_discovered_through_its_entry_point(installed_fixture: Path) -> None:
    report = probe(installed_fixture)

    assert report["frameworks"]["fixture"] == "fixture"
    fixture_plugin = next(info for info in report["plugins"] if info["name"] == "fixture")
    assert fixture_plugin == {
        "name": "fixture",
        "source": "entry_point",
        "distribution": "sessionflow-fixture-adapter",
        "version": "0.1.0",
    }
    assert report["flow"] == ["fixture-flow", "FixtureRunner"]


def test_disabled_plugins_hides_the_fixture(installed_fixture: Path) -> None:
    report = probe(installed_fixture, **{DISABLED_PLUGINS_ENV: "fixture"})

    assert "fixture" not in report["frameworks"]
    assert "fixture" not in [info["name"] for info in report["plugins"]]


def test_disabling_autoload_hides_the_fixture(installed_fixture: Path) -> None:
    report = probe(installed_fixture, **{DISABLE_AUTOLOAD_ENV: "1"})

    assert "fixture" not in report["frameworks"]


def test_explicit_load_list_loads_the_entry_point_even_without_autoload(installed_fixture: Path) -> None:
    report = probe(installed_fixture, **{DISABLE_AUTOLOAD_ENV: "1", LOAD_PLUGINS_ENV: "fixture"})

    assert report["frameworks"]["fixture"] == "fixture"


def test_explicit_load_list_without_the_fixture_skips_it(installed_fixture: Path) -> None:
    report = probe(installed_fixture, **{LOAD_PLUGINS_ENV: "tests.plugins.sample_plugin_alpha"})

    assert "fixture" not in report["frameworks"]
    assert report["frameworks"]["alpha"] == "tests.plugins.sample_plugin_alpha"
