#!/usr/bin/env bash
# The Strands adapter in its own environment: its tests, the conformance suite on it, and
# ruff and pyright on its files.
#
# Why apart: strands-agents 1.62 allows mcp<2.2 only, while the public MCP servers tests/mcp
# runs (mcp-server-time, mcp-server-git) need mcp>=2.3 in their current releases (older ones
# import names mcp 2.1 does not have). One lock holds both resolutions: the root pyproject
# declares the group `strands` (and the member itself) in conflict with the group
# `mcp-servers`, and this environment syncs the first without the second (mcp 2.1.1).
# Everything else (openai 3.x, anthropic 2.x, temporalio) is the workspace's.
#
#   bash ci/strands.sh                       # all of it
#   bash ci/strands.sh tests/adapter_strands/test_differential.py   # one file
set -euo pipefail
cd "$(dirname "$0")/.."
export UV_PROJECT_ENVIRONMENT=${SESSIONFLOW_STRANDS_VENV:-"$PWD/.sessionflow-test/strands-venv"}
groups=(--group strands --no-group mcp-servers)
uv sync --locked --quiet "${groups[@]}"
run=(uv run --locked --no-sync "${groups[@]}")
if (($#)); then
  exec "${run[@]}" pytest -n0 "$@"
fi
"${run[@]}" ruff check packages/adapter-strands tests/adapter_strands
# The root's pyright settings on this environment: the root excludes these folders, as its
# environment has no Strands.
config=$(dirname "$UV_PROJECT_ENVIRONMENT")/pyright-strands.json
cat >"$config" <<JSON
{"extends": "$PWD/pyproject.toml", "venvPath": "$(dirname "$UV_PROJECT_ENVIRONMENT")",
 "venv": "$(basename "$UV_PROJECT_ENVIRONMENT")", "extraPaths": ["$PWD"],
 "exclude": ["**/.venv", "**/__pycache__"]}
JSON
"${run[@]}" pyright -p "$config" packages/adapter-strands tests/adapter_strands
"${run[@]}" pytest tests/adapter_strands
"${run[@]}" pytest tests/conformance/test_conformance.py tests/conformance/test_capabilities.py \
  --sessionflow-frameworks=strands-agents -k strands-agents
