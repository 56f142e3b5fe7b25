"""Prints the installed version of every direct dependency of the workspace members.

ci/lowest.sh runs it in the lowest-direct environment, so a CI log shows which floors
the conformance suite was played on.
"""

from __future__ import annotations

import re
import tomllib
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path


def direct_names(root: Path) -> list[str]:
    names: set[str] = set()
    for pyproject in [root / "pyproject.toml", *sorted(root.glob("packages/*/pyproject.toml"))]:
        data = tomllib.loads(pyproject.read_text())
        project = data.get("project", {})
        requirements = list(project.get("dependencies", []))
        for extra in project.get("optional-dependencies", {}).values():
            requirements += extra
        for group in data.get("dependency-groups", {}).values():
            requirements += [r for r in group if isinstance(r, str)]
        names |= {re.split(r"[\[<>=!~; ]", r, maxsplit=1)[0].lower() for r in requirements}
    return sorted(n for n in names if not n.startswith("sessionflow"))


def main() -> None:
    for name in direct_names(Path(__file__).parents[1]):
        try:
            print(f"  {name}=={version(name)}")
        except PackageNotFoundError:
            print(f"  {name}: not installed")


if __name__ == "__main__":
    main()
