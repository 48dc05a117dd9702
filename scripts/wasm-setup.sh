#!/usr/bin/env bash
# Installs what building and testing the WebAssembly package needs, from the registries only
# (crates.io, Debian, npm): wasm-pack, wasm-bindgen-cli at Cargo.lock's wasm-bindgen version,
# Debian's chromium and chromium-driver, and the npm dev dependencies of pkg/.
# Each step is skipped when what it installs is already there at the pinned version, so
# running it again is cheap. Nothing here downloads a prebuilt binary or a browser.
set -euo pipefail
cd "$(dirname "$0")/.."

WASM_PACK_VERSION=0.15.1
export PATH="$HOME/.cargo/bin:$PATH"

say() { printf 'wasm-setup: %s\n' "$*"; }

# The wasm target (scripts/setup.sh adds it too; cheap to check).
if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  rustup target add wasm32-unknown-unknown
fi

# wasm-pack, exactly the pinned version.
if [ "$(wasm-pack --version 2>/dev/null || true)" != "wasm-pack $WASM_PACK_VERSION" ]; then
  say "installing wasm-pack $WASM_PACK_VERSION"
  cargo install wasm-pack --version "$WASM_PACK_VERSION"
fi

# wasm-bindgen-cli must equal the wasm-bindgen of Cargo.lock exactly, or wasm-pack
# --mode no-install refuses to build. Not --locked: its lockfile names a crate version that
# the index no longer has.
BINDGEN_VERSION=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/version = |"/, ""); print; exit }' Cargo.lock)
if [ -z "$BINDGEN_VERSION" ]; then
  echo "wasm-setup: no wasm-bindgen in Cargo.lock" >&2
  exit 1
fi
if [ "$(wasm-bindgen --version 2>/dev/null || true)" != "wasm-bindgen $BINDGEN_VERSION" ]; then
  say "installing wasm-bindgen-cli $BINDGEN_VERSION"
  cargo install wasm-bindgen-cli --version "$BINDGEN_VERSION"
fi

# Debian's chromium and chromium-driver, for the headless browser tests. Never Debian's
# binaryen: its wasm-opt breaks wasm-bindgen 0.2.130 output.
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }
if ! installed chromium || ! installed chromium-driver; then
  SUDO=""
  if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  say "installing chromium and chromium-driver (apt)"
  if ! $SUDO apt-get install -y --no-install-recommends chromium chromium-driver; then
    $SUDO apt-get update
    $SUDO apt-get install -y --no-install-recommends chromium chromium-driver
  fi
fi

# The npm dev dependencies of pkg/ (playwright-core, typescript), from its lockfile. A stamp
# of the lockfile's digest in node_modules skips the reinstall when nothing changed.
if [ -f pkg/package-lock.json ]; then
  want=$(sha256sum pkg/package-lock.json | cut -d' ' -f1)
  have=$(cat pkg/node_modules/.langonrock-lock 2>/dev/null || true)
  if [ "$want" != "$have" ]; then
    say "npm ci in pkg/"
    (cd pkg && npm ci --no-audit --no-fund)
    echo "$want" > pkg/node_modules/.langonrock-lock
  fi
else
  say "npm install in pkg/ (no lockfile yet)"
  (cd pkg && npm install --no-audit --no-fund)
fi
