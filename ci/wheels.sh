#!/usr/bin/env bash
# The wheel-install check: every wheel built, each adapter installed with plain pip into a
# fresh virtual environment (with its framework's meta package where one exists), then
# `sessionflow frameworks`, a demo one-shot, and the third-party conformance route in
# that environment. Run from the repository root after ci/setup.sh.
set -euo pipefail
# -n 0: the checks share one embedded Temporal server; no repository conftest applies.
exec uv run --locked pytest -n 0 -p no:cacheprovider ci/wheels "$@"
