"""Each package's PyPI "Documentation" link points at a page of the published docs site.

The site is built from docs/ (mkdocs.yml) and published at its `site_url` by
.github/workflows/docs.yml; a link is good when its path names a page that the build makes.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).parents[2]
PYPROJECTS = sorted(REPO.glob("packages/*/pyproject.toml"))


def site_url() -> str:
    # mkdocs.yml holds python tags for its hooks' options elsewhere; only site_url is read.
    for line in (REPO / "mkdocs.yml").read_text().splitlines():
        if line.startswith("site_url:"):
            url = yaml.safe_load(line)["site_url"]
            assert isinstance(url, str)
            return url
    raise AssertionError("mkdocs.yml has no site_url")


def generated_pages() -> set[str]:
    """The pages docs/hooks/generated_pages.py adds at build time (no file under docs/)."""
    hook = (REPO / "docs" / "hooks" / "generated_pages.py").read_text()
    return set(re.findall(r'^[A-Z_]+_PAGE = "([^"]+)"$', hook, flags=re.M))


def page_exists(path: str) -> bool:
    """Whether mkdocs builds a page at ``path`` (directory URLs: ``a/b/`` is ``a/b.md``)."""
    path = path.strip("/")
    name = f"{path}.md" if path else "index.md"
    return (REPO / "docs" / name).is_file() or name in generated_pages()


def test_generated_pages_are_known() -> None:
    assert generated_pages() == {"reference/cli.md", "reference/capabilities.md"}


def test_the_site_is_published_where_mkdocs_says() -> None:
    workflow = (REPO / ".github" / "workflows" / "docs.yml").read_text()
    assert "bash ci/docs.sh" in workflow
    assert "actions/deploy-pages" in workflow
    assert site_url().startswith("https://") and site_url().endswith("/")


@pytest.mark.parametrize("pyproject", PYPROJECTS, ids=lambda p: p.parent.name)
def test_documentation_link_is_a_page_of_the_site(pyproject: Path) -> None:
    urls = tomllib.loads(pyproject.read_text())["project"]["urls"]
    link = urls["Documentation"]
    assert link.startswith(site_url()), f"{pyproject.parent.name}: {link} is not on the site"
    assert page_exists(link.removeprefix(site_url())), f"{pyproject.parent.name}: {link} names no page"
