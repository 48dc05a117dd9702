#!/usr/bin/env bash
# The JS package's tests, runnable on a fresh Debian machine with rustup and Node >= 20:
# tools (wasm-setup: wasm-pack, wasm-bindgen-cli, chromium, and `npm ci` in pkg/ when its
# lockfile changed), the wasm build into pkg/gen/, the native binary (parity and interchange
# tests run it next to the package), the wasm-bindgen tests of the bindings under Node and in
# headless Chrome, then the Node tests (entry, stores, connections, parity, interchange, the
# tool surface, the packed tarball), the type check of the .d.ts files, and the browser tests
# (browser entry, IndexedDB stores and connections in headless Chromium).
set -euo pipefail
cd "$(dirname "$0")/.."

export PATH="$HOME/.cargo/bin:$PATH"

step() { printf '\n== %s\n' "$*"; }

step "wasm tools and npm dev dependencies"
bash scripts/wasm-setup.sh

step "wasm build (pkg/gen)"
bash scripts/wasm-build.sh

step "native binary (for parity and interchange)"
cargo build --locked -p langonrock-node-mcp

step "wasm-bindgen tests of the bindings: node"
wasm-pack test --mode no-install --node tests --test wasm_node

step "wasm-bindgen tests of the bindings: headless chrome"
wasm-pack test --mode no-install --headless --chrome --chromedriver /usr/bin/chromedriver tests --test wasm_browser

cd pkg
step "node tests"
node --test test/node/*.test.js

step "types"
./node_modules/.bin/tsc -p test/types/tsconfig.json

step "browser tests (headless chromium)"
node --test test/browser/*.test.js
