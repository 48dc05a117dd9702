#!/usr/bin/env bash
# Runs the README's "## In Rust" lines as written, as a new user would: in a fresh
# directory holding the clone as `langonrock` (a link to this checkout), the sh block makes
# a new cargo project depending on the crate by path, the rust block becomes its
# src/main.rs, and `cargo run` must print the search rows and the runbook. Offline, with the
# checkout's target directory, so the dependencies are built once for the whole suite.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

say() { printf 'readme-rust-test: %s\n' "$*"; }
fail() {
  printf 'readme-rust-test: FAILED: %s\n' "$*" >&2
  exit 1
}

# block <heading> <lang> <n>: the README's fenced blocks.
source scripts/readme-blocks.sh

setup=$(block '## In Rust' sh 1)
main=$(block '## In Rust' rust 1)
[[ $setup == *"cargo new"* && $setup == *"cargo add langonrock --path"* ]] || fail "no cargo lines under ## In Rust"
[[ $main == *"fn main"* ]] || fail "no Rust example under ## In Rust"

mkdir -p "$tmp/work"
ln -s "$repo" "$tmp/work/langonrock"
export CARGO_TARGET_DIR="$repo/target" CARGO_NET_OFFLINE=true CARGO_TERM_QUIET=true
say "in a fresh directory beside the clone:"
printf '%s\n' "$setup"
(cd "$tmp/work" && bash -euo pipefail -c "$setup")
project=$(find "$tmp/work" -mindepth 2 -maxdepth 2 -name Cargo.toml -not -path '*/langonrock/*' | head -1)
[ -n "$project" ] || fail "the lines made no cargo project"
project=$(dirname "$project")
grep -q '^langonrock = .*path = "../langonrock/langonrock"' "$project/Cargo.toml" ||
  fail "cargo add wrote no path dependency: $(cat "$project/Cargo.toml")"
printf '%s\n' "$main" > "$project/src/main.rs"
say "cargo run, with the README's src/main.rs"
out=$(cd "$project" && cargo run 2>"$tmp/stderr") || { cat "$tmp/stderr" >&2; fail "cargo run failed"; }
printf '%s\n' "$out"
[[ $out == *"# query: replay export"* ]] || fail "no search rows"
[[ $out == *$'runbook\tops\trunbook\t'* ]] || fail "the runbook is not a hit"
[[ $out == *"Replay a failed order export."* ]] || fail "the runbook's text is not printed"
say "the README's Rust lines work as written"
