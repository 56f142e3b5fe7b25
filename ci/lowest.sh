#!/usr/bin/env bash
# The conformance suite on the lowest versions the packages allow: every direct
# dependency (of every workspace member and of the dev group) at its floor.
# Resolved in a copy of the work tree so the repository's uv.lock stays as it is.
# Run from the repository root; needs what ci/test installs (uv, redis-server, ...).
set -euo pipefail
copy=${SESSIONFLOW_LOWEST_DIR:-"$PWD/.sessionflow-test/lowest"}
rm -rf "$copy" && mkdir -p "$copy"
# Tracked and new files, without what .gitignore leaves out (virtualenvs, caches).
git ls-files -z --cached --others --exclude-standard | tar --null -T - -cf - | tar -xf - -C "$copy"
cd "$copy"
# uv records the mode in the lock, so every command below must name it too.
export UV_RESOLUTION=lowest-direct
uv lock --quiet
uv sync --locked --quiet --compile-bytecode  # as ci/setup.sh: compiled once, not per process
uv run --locked --no-sync python -m compileall -q -j 0 packages tests >/dev/null
echo "ci/lowest.sh: the direct dependencies as installed:"
uv run --locked --no-sync python ci/direct_versions.py
# What the floors change is the frameworks' code, so the cases played here are the
# representative ones: one per capability an adapter translates (text and its deltas, a
# read, parallel reads, an approved write, a rejection, a question, a carry, the model
# asked again, an image, MCP annotations, a tool error). The SIGKILL cases and the rest
# play in ci/test on the same Temporal SDK and server.
cases=text_answer,text_deltas_identity,read_tool,parallel_reads,approved_write_runs_once
cases+=,rejection_with_message,question_answered,carry_between_turns,continue_retry_prompt
cases+=,image_message,mcp_annotations,tool_error_not_retried
uv run --locked pytest tests/conformance/test_conformance.py --sessionflow-cases="$cases"
