#!/usr/bin/env bash
# The notes page's tests: builds the wasm package (pkg/gen), installs www's npm dependencies
# from its lockfile, type-checks and builds the page (www/dist), then runs the end-to-end tests
# in headless Chromium (Debian's, through playwright-core; no browser download). Screenshots
# go to www/artifacts/screenshots/ (not tracked), or to $SCREENSHOTS_DIR when set:
# scripts/www-screenshots.sh refreshes the committed docs/screenshots/ that way. A run leaves
# the checkout as it was. Figures at scale come from scripts/www-bench.sh, not from here.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n== %s\n' "$*"; }

step "wasm tools, chromium and pkg's npm dependencies"
bash scripts/wasm-setup.sh

step "wasm build (pkg/gen)"
bash scripts/wasm-build.sh

cd www
want=$(sha256sum package-lock.json | cut -d' ' -f1)
have=$(cat node_modules/.langonrock-lock 2>/dev/null || true)
if [ "$want" != "$have" ]; then
  step "npm ci in www/"
  npm ci --no-audit --no-fund
  echo "$want" > node_modules/.langonrock-lock
fi

step "types"
./node_modules/.bin/tsc --noEmit -p tsconfig.json

step "build (www/dist)"
./node_modules/.bin/vite build --logLevel warn

step "end-to-end tests (headless chromium)"
node --test --test-concurrency=1 test/*.test.js
