#!/usr/bin/env bash
# Builds the wasm crate into pkg/gen/ (the `wasm-release` profile of Cargo.toml: size-optimised,
# fat LTO; target web; no generated package.json).
# pkg/gen/ is generated output: it stays out of git and is never edited by hand.
# `--mode no-install` turns a missing or mismatched wasm-bindgen into an immediate error
# instead of a download; run scripts/wasm-setup.sh first on a fresh machine.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
wasm-pack --quiet build wasm --mode no-install --profile wasm-release --target web --out-dir ../pkg/gen --no-pack "$@"
