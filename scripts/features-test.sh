#!/usr/bin/env bash
# The `langonrock` crate's feature flags (langonrock/Cargo.toml) keep what an embedded user
# does not need out of the build: with no features, and with the default features (the
# files store) only, the crate builds without warnings and its normal dependency tree holds
# no HTTP client, TLS stack, PostgreSQL driver or async runtime. Each optional feature is
# then checked to bring in what it is for, so the check itself can fail.
set -euo pipefail
cd "$(dirname "$0")/.."

fail() {
  printf 'features-test: FAILED: %s\n' "$*" >&2
  exit 1
}

# What an embedded build must not compile.
heavy=(hyper hyper-util http http-body-util rustls tokio-rustls rustls-native-certs ring
  tokio tokio-postgres postgres postgres-protocol r2d2 langonrock-postgres)

# The crate names of langonrock's normal dependency tree with the given cargo flags.
deps() {
  cargo tree -e normal -p langonrock --locked --prefix none --format '{p}' "$@" |
    awk '{print $1}' | sort -u
}

# Whether langonrock/Cargo.toml declares feature $1.
declared() {
  grep -q "^$1 = \[" langonrock/Cargo.toml
}

for flags in "--no-default-features" ""; do
  printf 'features-test: langonrock %s\n' "${flags:-(default features)}"
  # shellcheck disable=SC2086 # $flags is one flag or none
  cargo clippy -p langonrock --locked $flags -- -D warnings
  # shellcheck disable=SC2086
  tree=$(deps $flags)
  for crate in "${heavy[@]}"; do
    if grep -qx "$crate" <<<"$tree"; then
      fail "langonrock ${flags:-with default features} depends on $crate (cargo tree -e normal -p langonrock $flags -i $crate)"
    fi
  done
done

# Without features the front door refuses files and remote DSNs, naming the feature.
cargo test -p langonrock --locked --no-default-features --lib -- tests::

# Each feature brings what it is for.
expect() {
  local feature=$1
  shift
  declared "$feature" || fail "langonrock has no feature $feature"
  local tree
  tree=$(deps --no-default-features --features "$feature")
  for crate in "$@"; do
    grep -qx "$crate" <<<"$tree" || fail "feature $feature does not bring $crate"
  done
  printf 'features-test: feature %s brings %s\n' "$feature" "$*"
}
expect async tokio
if declared remote; then expect remote hyper rustls tokio; fi
if declared postgres; then expect postgres postgres langonrock-postgres; fi
echo "features-test: an embedded build compiles no HTTP, TLS, PostgreSQL or async runtime"

# The binary opens every tenant through the library's front door: it drives no engine and
# implements no store or connection policy of its own.
if grep -rnE 'Engine::|impl[^{]* Store for|ConnOp|connection::local' node-mcp/src; then
  fail "node-mcp drives the engine itself (above); open tenants through langonrock::Connection"
fi
echo "features-test: the binary has no connection of its own"
