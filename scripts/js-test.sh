#!/usr/bin/env bash
# The JS package's tests, runnable on a fresh Debian machine with rustup and Node >= 20:
# tools (wasm-setup: wasm-pack, wasm-bindgen-cli, chromium, and `npm ci` in pkg/ when its
# lockfile changed), the wasm build into pkg/gen/, then the Node tests (Node entry, memory
# and files stores), the type check of the .d.ts files, and the browser tests (browser entry
# and the IndexedDB store in headless Chromium).
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n== %s\n' "$*"; }

step "wasm tools and npm dev dependencies"
bash scripts/wasm-setup.sh

step "wasm build (pkg/gen)"
bash scripts/wasm-build.sh

cd pkg
step "node tests"
node --test test/node/*.test.js

step "types"
./node_modules/.bin/tsc -p test/types/tsconfig.json

step "browser tests (headless chromium)"
node --test test/browser/*.test.js
