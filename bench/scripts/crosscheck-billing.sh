#!/bin/sh
# Bills the turns our harness builds with the shared reference model, billing.py.
# usage: bench/scripts/crosscheck-billing.sh DIR_WITH_BILLING_PY
# Prints the Rust bill and billing.py's bill of the same turns, for each strategy.
set -eu
dir=${1:?usage: $0 DIR_WITH_BILLING_PY}
bin=target/release/langonrock-bench
cargo build --release -q -p langonrock-bench
for strategy in okf manifest; do
    "$bin" sessions --turns "$strategy" | python3 -c '
import json, sys
sys.path.insert(0, sys.argv[1])
import billing
turns = [[tuple(p) for p in t] for t in json.load(sys.stdin)]
print(sys.argv[2], "billing.py:", billing.bill(turns))
' "$dir" "$strategy"
done
"$bin" sessions | sed -n '1,4p'
