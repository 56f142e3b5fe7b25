#!/usr/bin/env bash
# The tests that CI plays at a smaller size, at their full size: a session with 200 turns
# of 500 KB of tool output (100 MB), and 300 turns across continue-as-new. CI's sizes
# prove the same properties (see tests/scale.py); these show them at the size the README
# claims. They take minutes, so the suite's 60 s rule is lifted here. Run from the
# repository root after ci/setup.sh, under ci/heavy:
#
#   bash ci/heavy bash bench/full_sizes.sh
set -euo pipefail
cd "$(dirname "$0")/.."
export SESSIONFLOW_TEST_SCALE=full SESSIONFLOW_TEST_TIME_LIMIT=3600
exec uv run --locked pytest -n 2 -s -p no:cacheprovider --durations=0 \
  tests/temporal/workflow/test_big_session.py tests/temporal/workflow/test_long_session.py "$@"
