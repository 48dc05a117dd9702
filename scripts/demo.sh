#!/usr/bin/env bash
# The main job on the embedded default: build `langonrock`, import the bundled OKF samples
# into a fresh data root, then answer what an agent would ask: the manifest of one bundle, a
# search, and one batched `get` of the passage the search pointed at. Finally it shows the
# line that serves the same tenant to an MCP client.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cargo build --release --locked -p langonrock-node-mcp
bin=./target/release/langonrock
data=${LANGONROCK_DEMO_DATA:-$(mktemp -d)}
run() { printf '\n$ langonrock %s\n' "$*" >&2; "$bin" "$@" --data "$data" --tenant samples; }

run import tests/data/okf-samples
run manifest --bundle acme_retail
run search "gross margin cogs"
run get gross-margin --find "full COGS" --limit 400
printf '\nServe it to an MCP client (Claude Code):\n  claude mcp add langonrock -- %s mcp "okf://%s?tenant=samples"\n' \
  "$(realpath "$bin")" "$data" >&2
