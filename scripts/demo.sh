#!/usr/bin/env bash
# The main job, on a fresh machine with rustup: build `langonrock` (the release build, which
# is all this installs: no wasm toolchain, no test tools), import the bundled OKF samples into
# a fresh data root, then answer what an agent would ask — the manifest of one bundle, a
# search, and one `get` of the passage the search pointed at — and print the line that
# serves the same tenant to an MCP client. Every command is printed quoted, as it can be
# pasted. LANGONROCK_DEMO_DATA=<dir> keeps the data root.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$HOME/.cargo/bin:$PATH"

echo "building langonrock (cargo build --release; a few minutes the first time)" >&2
cargo build --release --locked --quiet -p langonrock-node-mcp
bin=${CARGO_TARGET_DIR:-target}/release/langonrock
data=${LANGONROCK_DEMO_DATA:-$(mktemp -d)}

# A word as it can be pasted into a shell: as it is when plain, else in single quotes.
quote() {
  if [[ $1 =~ ^[A-Za-z0-9_./:=@%+-]+$ ]]; then
    printf '%s' "$1"
  else
    printf "'%s'" "${1//\'/\'\\\'\'}"
  fi
}

# Prints the command as it can be pasted, then runs it on the demo tenant.
run() {
  local shown="" a
  for a in "$@" --data "$data" --tenant samples; do shown+=" $(quote "$a")"; done
  printf '\n$ langonrock%s\n' "$shown" >&2
  "$bin" "$@" --data "$data" --tenant samples
}

run import tests/data/okf-samples
run manifest --bundle acme_retail
run search "gross margin cogs"
run get gross-margin --find "full COGS" --limit 400

printf '\nServe it to an MCP client (Claude Code):\n  claude mcp add langonrock -- %s mcp %s\n' \
  "$(quote "$(realpath "$bin")")" "$(quote "okf://$data?tenant=samples")" >&2
