#!/usr/bin/env bash
# Lint, types, then the README's test command. Run from the repository root.
# Every step runs even when an earlier one fails, so one run shows every problem.
set -uo pipefail
status=0
uv run --locked ruff check . || status=1
uv run --locked pyright || status=1
uv run --locked pytest || status=1
exit $status
