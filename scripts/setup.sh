#!/usr/bin/env bash
# Installs what building and testing langonrock needs on a fresh Debian machine with rustup.
# Every step is skipped when its tool is already there, so running it again is cheap.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  rustup target add wasm32-unknown-unknown
fi
rustup component list --installed | grep -q '^rustfmt' || rustup component add rustfmt
rustup component list --installed | grep -q '^clippy' || rustup component add clippy

# wasm-bindgen-test-runner runs the wasm32 tests in Node; its version must equal the
# wasm-bindgen in Cargo.lock. (No --locked: its own lockfile pins a crate the index lost.)
if ! wasm-bindgen --version 2>/dev/null | grep -qx 'wasm-bindgen 0.2.130'; then
  cargo install wasm-bindgen-cli --version 0.2.130
fi

# The end-to-end MCP tests drive the binary with the official MCP Python SDK.
python3 -c 'import mcp' 2>/dev/null || python3 -m pip install --quiet 'mcp>=2.3,<3'

# The `serve` end-to-end tests talk HTTP with curl and make a self-signed certificate with
# openssl (Debian packages).
missing=()
command -v curl >/dev/null || missing+=(curl)
command -v openssl >/dev/null || missing+=(openssl)
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ]; then apt=(apt-get); else apt=(sudo apt-get); fi
  "${apt[@]}" update -qq && "${apt[@]}" install -y -qq "${missing[@]}"
fi
