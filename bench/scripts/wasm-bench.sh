#!/usr/bin/env bash
# Benchmark of the WebAssembly package (prints numbers; asserts nothing about time):
#   - wasm in Node against native, in-process, on a generated 5,000-concept corpus: the
#     engine import (compile, link, snapshot tree, records; the memory store, not verifying
#     in JS; wall and CPU time), the first search (builds the index) and a search afterwards; both halves print
#     a digest of their search answers, which must be equal;
#   - the .wasm size, raw and gzipped (-9);
#   - IndexedDB commit latency through a connection in headless Chromium, on a small tenant
#     and on the corpus tenant, plus the corpus import and a cold open.
# Usage: bash bench/scripts/wasm-bench.sh [corpus dir]   (default /tmp/corp5k, generated if absent)
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH="$HOME/.cargo/bin:$PATH"
CORPUS=${1:-/tmp/corp5k}
if [ ! -d "$CORPUS" ]; then
  python3 ../shared/bench/reference-corpus/gen.py "$CORPUS" --bundles 10 --per-bundle 500 >/dev/null 2>&1 \
    || python3 /work/shared/bench/reference-corpus/gen.py "$CORPUS" --bundles 10 --per-bundle 500 >/dev/null
fi
[ -f pkg/gen/langonrock_wasm_bg.wasm ] || bash scripts/wasm-build.sh

echo "== native (cargo --release, in-process)"
native=$(cargo run --quiet --release -p langonrock-bench --example native_bench -- "$CORPUS" pkg/bench/queries.json)
echo "$native"
echo "== wasm in Node (the package, memory store)"
wasm=$(cd pkg && node bench/node.mjs "$CORPUS" bench/queries.json)
echo "$wasm"
echo "== IndexedDB in headless Chromium (the package)"
(cd pkg && node bench/idb.mjs "$CORPUS")
echo "== ratios (wasm / native)"
node -e '
const n = JSON.parse(process.argv[1]), w = JSON.parse(process.argv[2]);
const r = (k) => (w[k] / n[k]).toFixed(2);
console.log(`import ${r("importMs")}x wall, ${r("importCpuMs")}x CPU (native parses on every core, wasm on one), first search ${r("firstSearchMs")}x, search ${r("searchMs")}x; same answers: ${n.searchDigest === w.searchDigest}`);
console.log(`wasm ${w.wasmBytes} bytes, ${w.wasmGzipBytes} gzipped`);
' "$native" "$wasm"
