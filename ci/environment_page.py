"""docs/reference/environment.md, generated from the table the code reads (`sessionflow._environment`).

    uv run python ci/environment_page.py           # writes the page
    uv run python ci/environment_page.py --check   # exit 1 when the page is not what the table says

tests/kit/test_environment.py runs ``--check``, so a variable added to the table without
regenerating the page fails the suite.
"""

from __future__ import annotations

import sys
from pathlib import Path

from sessionflow._environment import ENVIRONMENT_VARIABLES

PAGE = Path(__file__).resolve().parents[1] / "docs" / "reference" / "environment.md"
HEADER = """\
# Environment variables

Every `SESSIONFLOW_*` variable sessionflow reads, with what happens when it is unset.
The code reads them through one table (`sessionflow._environment`, public as
`sessionflow.kit.ENVIRONMENT_VARIABLES` and `sessionflow.kit.read_env`), and this page
is generated from it by `ci/environment_page.py`: do not edit it by hand.

Variables of other projects (`OPENAI_API_KEY`, `OPENAI_BASE_URL`, `ANTHROPIC_API_KEY`,
`TEMPORAL_ADDRESS`, `XDG_*`) keep their own meaning and are not listed here.
"""


def cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render() -> str:
    parts = [HEADER]
    groups: dict[str, list[str]] = {}
    for variable in ENVIRONMENT_VARIABLES:
        row = f"| `{variable.name}` | {cell(variable.default)} | {cell(variable.meaning)} |"
        groups.setdefault(variable.group, []).append(row)
    for group, rows in groups.items():
        parts.append(f"\n## {group}\n\n| Variable | When unset | Meaning |\n| --- | --- | --- |\n")
        parts.append("\n".join(rows) + "\n")
    return "".join(parts)


def main(argv: list[str]) -> int:
    page = render()
    if argv == ["--check"]:
        if not PAGE.exists() or PAGE.read_text() != page:
            print(f"{PAGE} is not what the table says: run python ci/environment_page.py", file=sys.stderr)
            return 1
        return 0
    PAGE.parent.mkdir(parents=True, exist_ok=True)
    PAGE.write_text(page)
    print(f"wrote {PAGE}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
