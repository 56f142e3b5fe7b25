#!/usr/bin/env bash
# Installs what the test suite needs and is missing, then syncs the workspace. Idempotent:
# on a machine that has everything it only runs `uv sync --locked` and a no-op npm install.
# Run from the repository root (ci/test does). Debian packages need root (or sudo).
set -euo pipefail

apt_packages=()
# redis-server for the Redis delta transport's tests.
command -v redis-server >/dev/null 2>&1 || apt_packages+=(redis-server)
# chromium for the browser tools' tests (used when Playwright's own browser is absent,
# and Playwright's download host is not one this project may rely on).
command -v chromium >/dev/null 2>&1 || apt_packages+=(chromium)
# node and npm run the public MCP "everything" server of tests/mcp.
command -v npm >/dev/null 2>&1 || apt_packages+=(nodejs npm)
# bubblewrap (bwrap) for the shell tool's sandbox and its tests (tests/local_tools).
command -v bwrap >/dev/null 2>&1 || apt_packages+=(bubblewrap)
if ((${#apt_packages[@]})) && ! command -v apt-get >/dev/null 2>&1; then
  echo "ci/setup.sh: no apt-get on this machine; install these yourself: ${apt_packages[*]}" >&2
  echo "ci/setup.sh: (without bubblewrap the shell sandbox tests are skipped)" >&2
  apt_packages=()
fi
if ((${#apt_packages[@]})); then
  sudo=()
  if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null 2>&1 || {
      echo "ci/setup.sh: needs root (or sudo) to install ${apt_packages[*]}" >&2
      exit 1
    }
    sudo=(sudo)
  fi
  echo "ci/setup.sh: apt-get install ${apt_packages[*]}"
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update -q >/dev/null
  "${sudo[@]}" apt-get install -y -q --no-install-recommends "${apt_packages[@]}" >/dev/null
fi

if ! command -v uv >/dev/null 2>&1; then
  echo "ci/setup.sh: pip install uv"
  python3 -m pip install --quiet uv
fi
export UV_PYTHON=${UV_PYTHON:-python3}
# Bytecode written once here: the suite starts hundreds of Python processes (workers, CLI
# runs), and where PYTHONDONTWRITEBYTECODE is set (or the tree is fresh) each of them would
# compile every module it imports again, ~5 s of CPU for an agent SDK with Temporal.
uv sync --locked --quiet --compile-bytecode
uv run --locked --no-sync python -m compileall -q -j 0 packages tests >/dev/null

# The public MCP test server (tests/mcp), pinned, into a folder .gitignore ignores.
npm install --prefix .sessionflow-test/node --no-audit --no-fund --save-exact --loglevel=error \
  @modelcontextprotocol/server-everything@2026.8.31 >/dev/null
