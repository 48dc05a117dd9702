#!/bin/sh
# Bills the turns our harness builds with the shared reference model, billing.py.
# usage: bench/scripts/crosscheck-billing.sh DIR_WITH_BILLING_PY [CONCEPTS]
# Prints, for each session at CONCEPTS (default 500), the Rust bill and billing.py's bill of
# the same turns. (`langonrock-bench all` runs the same check over every size.)
set -eu
dir=${1:?usage: $0 DIR_WITH_BILLING_PY [CONCEPTS]}
concepts=${2:-500}
bin=target/release/langonrock-bench
cargo build --release -q -p langonrock-bench
"$bin" sessions --concepts "$concepts"
for session in okf manifest-bare manifest manifest-per-section search search-bare search-per-section; do
    "$bin" sessions --concepts "$concepts" --turns "$session" | python3 -c '
import json, sys
sys.path.insert(0, sys.argv[1])
import billing
turns = [[tuple(p) for p in t] for t in json.load(sys.stdin)]
print(sys.argv[2], "billing.py:", billing.bill(turns))
' "$dir" "$session"
done
