#!/usr/bin/env bash
# Lint, types, then the README's test command. Run from the repository root.
set -euo pipefail
uv run --locked ruff check .
uv run --locked pyright
uv run --locked pytest
