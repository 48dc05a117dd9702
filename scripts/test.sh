#!/usr/bin/env bash
# The whole test suite: set-up, formatting, lints, the native tests, the wasm32 check of core.
# `.ci/run` runs exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh

step() { printf '\n== %s\n' "$*"; }

step "format"
cargo fmt --all -- --check

step "lint"
cargo clippy --workspace --all-targets --locked -- -D warnings

step "core builds for wasm32 (no host dependencies)"
cargo check -p langonrock-core --target wasm32-unknown-unknown --locked

step "native tests (with a throwaway PostgreSQL server, scripts/postgres.sh)"
bash scripts/postgres.sh run cargo test --workspace --locked

step "wasm32 build of core gives the native bytes (Node)"
CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner \
  cargo test --locked --target wasm32-unknown-unknown -p langonrock-tests --test wasm_node

step "JS package: Node, types and headless Chromium"
bash scripts/js-test.sh

step "notes page: end to end in headless Chromium"
bash scripts/www-test.sh
