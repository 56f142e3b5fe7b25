"""The workspace's one version: `VERSION` at the root, written into every pyproject.

    python ci/bump_version.py 0.2.0     # VERSION, every package's version, every internal pin
    python ci/bump_version.py --check   # exit 1, listing each place that disagrees with VERSION

Every sessionflow distribution shares one version line (CONTRIBUTING.md, "Releasing").
An internal dependency accepts the same minor line (``sessionflow>=0.2.0,<0.3``), so a
patch release of one distribution installs beside the others; the core's alias extras
pin the siblings exactly (``sessionflow-cli==0.2.0``), so ``pip install -U
"sessionflow[cli]"`` moves them in step. pyproject metadata is static (uv reads it without
a build), so the version is written into each file rather than read at build time, and
``--check`` (run by the test suite, tests/packaging) keeps the copies honest.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VERSION_FILE = "VERSION"
_VERSION = re.compile(r"^\d+\.\d+\.\d+(?:(?:a|b|rc)\d+|\.dev\d+|\.post\d+)?$")
# `version = "…"` in a [project] table: the first such line of the file.
_PROJECT_VERSION = re.compile(r'(?m)^version = "([^"]*)"$')
# An internal requirement in a dependency list: `"sessionflow[…]>=A,<B"` or `"sessionflow-x==A"`.
_PIN = re.compile(r'"(sessionflow(?:-[a-z-]+)?(?:\[[^\]]*\])?)((?:>=|==)[^"]*)"')


def pyprojects(root: Path) -> list[Path]:
    return [root / "pyproject.toml", *sorted(root.glob("packages/*/pyproject.toml"))]


def read_version(root: Path) -> str:
    version = (root / VERSION_FILE).read_text().strip()
    if not _VERSION.match(version):
        raise SystemExit(f"{VERSION_FILE}: {version!r} is not a release version like 0.2.0")
    return version


def pin_for(version: str, current: str) -> str:
    """The specifier an internal requirement gets: exact stays exact, a range spans the minor line."""
    if current.startswith("=="):
        return f"=={version}"
    major, minor = (int(part) for part in version.split(".")[:2])
    return f">={version},<{major}.{minor + 1}"


def rewrite(text: str, version: str) -> str:
    text = _PROJECT_VERSION.sub(f'version = "{version}"', text, count=1)
    return _PIN.sub(lambda m: f'"{m.group(1)}{pin_for(version, m.group(2))}"', text)


def disagreements(root: Path) -> list[str]:
    """Every version or internal pin of the pyprojects that is not what VERSION says."""
    version = read_version(root)
    found: list[str] = []
    for path in pyprojects(root):
        text = path.read_text()
        name = path.relative_to(root)
        declared = _PROJECT_VERSION.search(text)
        if declared is None or declared.group(1) != version:
            found.append(f"{name}: version {declared.group(1) if declared else '(none)'}, not {version}")
        for match in _PIN.finditer(text):
            if match.group(2) != pin_for(version, match.group(2)):
                found.append(
                    f"{name}: {match.group(1)}{match.group(2)}, not {pin_for(version, match.group(2))}"
                )
    return found


def bump(root: Path, version: str) -> list[Path]:
    if not _VERSION.match(version):
        raise SystemExit(f"{version!r} is not a release version like 0.2.0")
    (root / VERSION_FILE).write_text(version + "\n")
    changed: list[Path] = []
    for path in pyprojects(root):
        text = path.read_text()
        new = rewrite(text, version)
        if new != text:
            path.write_text(new)
            changed.append(path)
    return changed


def main(argv: list[str]) -> int:
    if argv == ["--check"]:
        found = disagreements(ROOT)
        for line in found:
            print(line, file=sys.stderr)
        if found:
            print("run: python ci/bump_version.py $(cat VERSION)  (then uv lock)", file=sys.stderr)
            return 1
        print(f"every package and internal pin is at {read_version(ROOT)}")
        return 0
    if len(argv) == 1 and not argv[0].startswith("-"):
        for path in bump(ROOT, argv[0]):
            print(f"wrote {path.relative_to(ROOT)}")
        print("now: uv lock, then commit VERSION, the pyprojects and uv.lock together")
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
