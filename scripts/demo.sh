#!/usr/bin/env bash
# The main job on the embedded default: build the binary, compile the bundled OKF samples,
# and print their manifest (stdout) with diagnostics and statistics (stderr).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cargo build --release --locked -p langonrock-node-mcp
./target/release/langonrock compile tests/data/okf-samples --tenant samples
