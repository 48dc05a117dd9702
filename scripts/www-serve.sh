#!/usr/bin/env bash
# Builds the notes page and serves it on http://127.0.0.1:${PORT:-5173}/ until stopped.
# Needs the wasm package built once (scripts/wasm-setup.sh, then scripts/wasm-build.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -f pkg/gen/langonrock_wasm_bg.wasm ]; then
  bash scripts/wasm-build.sh
fi
cd www
if [ ! -d node_modules ]; then
  npm ci --no-audit --no-fund
fi
./node_modules/.bin/vite build --logLevel warn
exec node test/server.js "${PORT:-5173}"
