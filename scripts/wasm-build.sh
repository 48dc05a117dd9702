#!/usr/bin/env bash
# Builds the wasm crate into pkg/gen/ (target web): cargo with the `wasm-release` profile of
# Cargo.toml (size-optimised, fat LTO), then wasm-bindgen (the CLI at Cargo.lock's version,
# installed by scripts/wasm-setup.sh) without the name and producers sections, which only
# debuggers and profilers read (the name section alone is ~300 KB raw). pkg/gen/ is generated
# output: it stays out of git and is never edited by hand.
# `--dev` builds the dev profile and keeps the name section (readable profiles and traces).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
profile=wasm-release
strip=(--remove-name-section --remove-producers-section)
if [ "${1:-}" = "--dev" ]; then
  profile=dev
  strip=()
fi
cargo build --quiet --locked -p langonrock-wasm --target wasm32-unknown-unknown --profile "$profile"
dir=$profile
[ "$profile" = dev ] && dir=debug
rm -rf pkg/gen
wasm-bindgen --target web --out-dir pkg/gen "${strip[@]}" "target/wasm32-unknown-unknown/$dir/langonrock_wasm.wasm"
printf '*\n' > pkg/gen/.gitignore
