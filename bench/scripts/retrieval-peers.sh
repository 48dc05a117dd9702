#!/usr/bin/env bash
# The retrieval benchmark's sets (docs/benchmarks.md) ranked by a peer search library,
# MiniSearch 7.2.0 (npm), beside ours.
#
#   bench/scripts/retrieval-peers.sh [retrieval options, e.g. --django DIR]
#
# Writes every set's documents and questions as JSON (`langonrock-bench retrieval
# --export`), prints our table, then MiniSearch's over the same documents and questions.
# Fetch the Django set first with bench/scripts/fetch-django-docs.sh to include it.
# MiniSearch is installed into target/bench-data/peers (or $PEERS_DIR), once.
set -euo pipefail
cd "$(dirname "$0")/../.."
work=${PEERS_DIR:-target/bench-data/peers}
mkdir -p "$work"
if [ ! -f "$work/node_modules/minisearch/package.json" ]; then
  npm install --prefix "$work" --no-audit --no-fund --loglevel=error minisearch@7.2.0
fi
rm -rf "$work/sets"
cargo run --release --quiet -p langonrock-bench -- retrieval --export "$work/sets" "$@"
echo
node bench/scripts/retrieval-peers.mjs "$work"
