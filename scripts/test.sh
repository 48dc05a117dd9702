#!/usr/bin/env bash
# The whole test suite: set-up, formatting, the docs' citations, lints, the native tests, the wasm32 check of core,
# the JS package, the notes page, the README's lines, and last a check that the suite left
# the checkout as it found it (no tracked file rewritten, nothing new outside .gitignore).
# `.ci/run` runs exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."
before=$(git status --porcelain)
bash scripts/setup.sh

step() { printf '\n== %s\n' "$*"; }

step "format"
cargo fmt --all -- --check

step "doc citations: every \`X.md §N\` in code and docs names a heading of docs/X.md"
python3 scripts/doc-refs.py

step "lint"
cargo clippy --workspace --all-targets --locked -- -D warnings

step "the langonrock crate's features (an embedded build compiles no HTTP, TLS or PostgreSQL)"
bash scripts/features-test.sh

step "docs: the library and the core, without warnings"
RUSTDOCFLAGS="-D warnings" cargo doc -p langonrock -p langonrock-core --no-deps --all-features --locked

step "core builds for wasm32 (no host dependencies)"
cargo check -p langonrock-core --target wasm32-unknown-unknown --locked

step "native tests (with a throwaway PostgreSQL server, scripts/postgres.sh)"
bash scripts/postgres.sh run cargo test --workspace --locked

step "the library's example program runs"
cargo run -q -p langonrock --example agent_session --locked >/dev/null

step "wasm32 build of core gives the native bytes (Node)"
CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner \
  cargo test --locked --target wasm32-unknown-unknown -p langonrock-tests --test wasm_node

step "JS package: Node, types and headless Chromium"
bash scripts/js-test.sh

step "notes page: end to end in headless Chromium"
bash scripts/www-test.sh

step "the README's install and agent lines, as written"
bash scripts/readme-test.sh

step "the checkout is as the suite found it"
after=$(git status --porcelain)
# CI runs on a clean clone: there the checkout must be clean at the end, whatever it was.
if [ "$after" != "$before" ] || { [ "${CI:-}" = true ] && [ -n "$after" ]; }; then
  echo "the test suite changed the checkout (git status --porcelain, before and after):" >&2
  diff <(printf '%s\n' "$before") <(printf '%s\n' "$after") >&2 || true
  exit 1
fi
echo "git status --porcelain: unchanged${before:+ (it was not clean before the suite)}"
