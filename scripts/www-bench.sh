#!/usr/bin/env bash
# The notes page at scale: builds the page like scripts/www-test.sh, then runs bench/www/run.mjs,
# which imports the generated reference corpus (20,000 notes by default: 40 bundles of 500)
# through the page in headless Chromium and prints open-to-interactive, keystroke-to-results,
# the first save after opening, the longest main-thread task of each, and the import time.
# It asserts nothing. Arguments go to run.mjs (--bundles, --per-bundle, --corpus, --keystrokes).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/wasm-setup.sh >/dev/null
bash scripts/wasm-build.sh
cd www
want=$(sha256sum package-lock.json | cut -d' ' -f1)
have=$(cat node_modules/.langonrock-lock 2>/dev/null || true)
if [ "$want" != "$have" ]; then
  npm ci --no-audit --no-fund
  echo "$want" > node_modules/.langonrock-lock
fi
./node_modules/.bin/vite build --logLevel warn
cd ..
uptime
exec node bench/www/run.mjs "$@"
