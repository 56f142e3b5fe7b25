"""ci/bump_version.py: VERSION is the one version; every pyproject and internal pin follows it."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).parents[2]
SCRIPT = REPO / "ci" / "bump_version.py"


def run(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    # The script works on the tree it sits in, so a copy gets its own copy of the script.
    return subprocess.run(
        [sys.executable, str(root / "ci" / "bump_version.py"), *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )


def copy_tree(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "ci").mkdir(parents=True)
    shutil.copy(SCRIPT, root / "ci")
    shutil.copy(REPO / "VERSION", root)
    shutil.copy(REPO / "pyproject.toml", root)
    for pyproject in REPO.glob("packages/*/pyproject.toml"):
        target = root / pyproject.relative_to(REPO)
        target.parent.mkdir(parents=True)
        shutil.copy(pyproject, target)
    return root


def test_the_repository_agrees_with_its_version_file() -> None:
    checked = run(REPO, "--check")
    assert checked.returncode == 0, checked.stderr
    version = (REPO / "VERSION").read_text().strip()
    for pyproject in REPO.glob("packages/*/pyproject.toml"):
        assert tomllib.loads(pyproject.read_text())["project"]["version"] == version, pyproject


def test_a_bump_moves_every_package_and_pin_at_once(tmp_path: Path) -> None:
    root = copy_tree(tmp_path)
    bumped = run(root, "0.2.0")
    assert bumped.returncode == 0, bumped.stderr
    assert (root / "VERSION").read_text() == "0.2.0\n"
    pins: list[str] = []
    for pyproject in root.glob("packages/*/pyproject.toml"):
        project = tomllib.loads(pyproject.read_text())["project"]
        assert project["version"] == "0.2.0", pyproject
        requirements = list(project.get("dependencies", []))
        for extra in project.get("optional-dependencies", {}).values():
            requirements += extra
        pins += [r for r in requirements if r.startswith("sessionflow") and ("=" in r)]
    assert pins and not any("0.1" in pin for pin in pins), pins
    assert "sessionflow[mcp,dev-server]>=0.2.0,<0.3" in pins
    assert "sessionflow-cli==0.2.0" in pins
    assert run(root, "--check").returncode == 0


def test_the_check_names_a_package_left_behind(tmp_path: Path) -> None:
    root = copy_tree(tmp_path)
    server = root / "packages" / "server" / "pyproject.toml"
    server.write_text(server.read_text().replace('"sessionflow>=', '"sessionflow>=0.0.9,<0.1", "x>=', 1))
    claude = root / "packages" / "adapter-claude" / "pyproject.toml"
    version = (root / "VERSION").read_text().strip()
    claude.write_text(claude.read_text().replace(f'version = "{version}"', 'version = "9.9.9"', 1))
    checked = run(root, "--check")
    assert checked.returncode == 1
    assert "packages/server/pyproject.toml: sessionflow>=0.0.9,<0.1" in checked.stderr, checked.stderr
    assert "packages/adapter-claude/pyproject.toml: version 9.9.9" in checked.stderr, checked.stderr


def test_a_version_that_is_not_a_release_is_refused(tmp_path: Path) -> None:
    root = copy_tree(tmp_path)
    refused = run(root, "next")
    assert refused.returncode == 1 and "not a release version" in refused.stderr
    assert (root / "VERSION").read_text() == (REPO / "VERSION").read_text()
