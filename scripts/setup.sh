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

# The PostgreSQL store's tests run a throwaway server (scripts/postgres.sh): Debian's
# PostgreSQL server binaries, installed when missing.
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql >/dev/null
  else
    echo "error: PostgreSQL is missing: run sudo apt-get install postgresql" >&2
    exit 1
  fi
fi

# The `serve` end-to-end tests talk HTTP with curl and make a self-signed certificate with
# openssl (Debian packages).
missing=()
command -v curl >/dev/null || missing+=(curl)
command -v openssl >/dev/null || missing+=(openssl)
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ]; then apt=(apt-get); else apt=(sudo apt-get); fi
  "${apt[@]}" update -qq && DEBIAN_FRONTEND=noninteractive "${apt[@]}" install -y -qq --no-install-recommends "${missing[@]}"
fi
