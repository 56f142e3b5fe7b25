#!/usr/bin/env bash
# The docs site (mkdocs.yml), built as a check: --strict fails on a broken link, a missing
# anchor or snippet, or a docstring mkdocstrings cannot read. It needs no network (no
# remote fonts, no plugin that fetches). The site lands in site/, which .gitignore ignores.
set -euo pipefail
cd "$(dirname "$0")/.."
export NO_MKDOCS_2_WARNING=1  # mkdocs-material's notice about its successor, not a problem here
exec uv run --locked mkdocs build --strict "$@"
