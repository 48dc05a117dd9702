#!/usr/bin/env bash
# A throwaway PostgreSQL server for the tests (docs/postgres.md, "Tests"): a cluster in a
# temporary directory, listening on a free loopback port only, run as an unprivileged user
# (a system user `langonrock-pg` is created when this runs as root, since PostgreSQL refuses
# to run as root), with a random password for the superuser `langonrock`.
#
#   bash scripts/postgres.sh run <command…>   starts a server, runs the command with
#                                             LANGONROCK_TEST_POSTGRES set, stops the server
#   bash scripts/postgres.sh start <dir> [--tls] [--watch <pid>]
#                                             starts one in <dir> (new or empty); prints the
#                                             DSN and writes it to <dir>/dsn. With --watch it
#                                             stops by itself once process <pid> has exited.
#                                             With --tls it also offers TLS, with a server
#                                             certificate for 127.0.0.1 signed by a test CA
#                                             (<dir>/ca.crt).
#   bash scripts/postgres.sh stop <dir>       stops it and removes <dir>
#   bash scripts/postgres.sh down|up <dir>    stops or starts it again, keeping its data (the
#                                             tests that restart the server)
#
# The DSN names no tenant: tests add `?tenant=` (or `&tenant=`) themselves.
set -euo pipefail

PG_USER=langonrock-pg

bindir() {
  local d
  d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
  if [ -z "$d" ] || [ ! -x "$d/initdb" ]; then
    echo "error: PostgreSQL is not installed: run bash scripts/setup.sh (apt-get install postgresql)" >&2
    exit 1
  fi
  echo "$d"
}

# Runs a command as the unprivileged user when we are root, else as ourselves.
as_user() {
  if [ "$(id -u)" = 0 ]; then
    runuser -u "$PG_USER" -- "$@"
  else
    "$@"
  fi
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# A test CA and a server certificate for 127.0.0.1 and localhost, signed by it.
make_certs() {
  local dir=$1
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
    -subj /CN=langonrock-test-ca -keyout "$dir/ca.key" -out "$dir/ca.crt" 2>/dev/null
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj /CN=127.0.0.1 \
    -keyout "$dir/server.key" -out "$dir/server.csr" 2>/dev/null
  printf '%s\n' 'subjectAltName=IP:127.0.0.1,DNS:localhost' 'basicConstraints=CA:FALSE' \
    'keyUsage=digitalSignature' 'extendedKeyUsage=serverAuth' >"$dir/server.ext"
  openssl x509 -req -in "$dir/server.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" -CAcreateserial \
    -days 2 -extfile "$dir/server.ext" -out "$dir/server.crt" 2>/dev/null
  # A CA that signed nothing here: the tests' untrusted root.
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
    -subj /CN=langonrock-other-ca -keyout "$dir/other-ca.key" -out "$dir/other-ca.crt" 2>/dev/null
  chmod 600 "$dir/server.key"
  [ "$(id -u)" = 0 ] && chown "$PG_USER" "$dir/server.key" "$dir/server.crt"
  return 0
}

start() {
  local dir=$1 tls=$2 watch=${3:-}
  local bin
  bin=$(bindir)
  mkdir -p "$dir"
  if [ "$(id -u)" = 0 ]; then
    id -u "$PG_USER" >/dev/null 2>&1 ||
      useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin "$PG_USER"
    chown "$PG_USER" "$dir"
  fi
  chmod 700 "$dir"
  local password port
  password=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
  printf '%s\n' "$password" >"$dir/pwfile"
  [ "$(id -u)" = 0 ] && chown "$PG_USER" "$dir/pwfile"
  as_user "$bin/initdb" --pgdata="$dir/data" --username=langonrock --pwfile="$dir/pwfile" \
    --auth=scram-sha-256 --encoding=UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 ||
    { cat "$dir/initdb.log" >&2; exit 1; }
  rm -f "$dir/pwfile"
  port=$(free_port)
  printf '%s\n' "$bin" >"$dir/bindir"
  local opts="-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories=$dir -c max_connections=300 -c log_min_messages=warning"
  if [ "$tls" = yes ]; then
    make_certs "$dir"
    opts="$opts -c ssl=on -c ssl_cert_file=$dir/server.crt -c ssl_key_file=$dir/server.key"
  fi
  printf '%s\n' "$opts" >"$dir/opts"
  up "$dir"
  local dsn="postgres://langonrock:$password@127.0.0.1:$port/postgres?sslmode=disable"
  printf '%s\n' "$dsn" >"$dir/dsn"
  if [ -n "$watch" ]; then
    # Stops the server once the watched process is gone (a test binary that started it).
    nohup bash -c "while kill -0 $watch 2>/dev/null; do sleep 1; done; bash '$0' stop '$dir'" \
      >/dev/null 2>&1 &
  fi
  printf '%s\n' "$dsn"
}

# Starts (again) the cluster of a directory made by start.
up() {
  local dir=$1
  as_user "$(cat "$dir/bindir")/pg_ctl" --pgdata="$dir/data" --log="$dir/server.log" --wait --silent \
    -o "$(cat "$dir/opts")" start || { cat "$dir/server.log" >&2; exit 1; }
}

# Stops the cluster and keeps its directory (a test restarting the server).
down() {
  as_user "$(cat "$1/bindir")/pg_ctl" --pgdata="$1/data" --mode=fast --wait --silent stop
}

stop() {
  local dir=$1
  if [ -f "$dir/bindir" ] && [ -d "$dir/data" ]; then
    as_user "$(cat "$dir/bindir")/pg_ctl" --pgdata="$dir/data" --mode=fast --wait --silent stop || true
  fi
  rm -rf "$dir"
}

case "${1:-}" in
  start)
    [ $# -ge 2 ] || { echo "usage: $0 start <dir> [--tls] [--watch <pid>]" >&2; exit 2; }
    dir=$2 tls=no watch=
    shift 2
    while [ $# -gt 0 ]; do
      case $1 in
        --tls) tls=yes; shift ;;
        --watch) watch=${2:?--watch needs a pid}; shift 2 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
      esac
    done
    start "$dir" "$tls" "$watch"
    ;;
  up | down)
    [ $# -ge 2 ] || { echo "usage: $0 $1 <dir>" >&2; exit 2; }
    "$1" "$2"
    ;;
  stop)
    [ $# -ge 2 ] || { echo "usage: $0 stop <dir>" >&2; exit 2; }
    stop "$2"
    ;;
  run)
    shift
    [ $# -ge 1 ] || { echo "usage: $0 run <command…>" >&2; exit 2; }
    dir=$(mktemp -d /tmp/langonrock-pg.XXXXXX)
    trap 'stop "$dir"' EXIT
    LANGONROCK_TEST_POSTGRES=$(start "$dir" no)
    LANGONROCK_TEST_POSTGRES_DIR=$dir
    export LANGONROCK_TEST_POSTGRES LANGONROCK_TEST_POSTGRES_DIR
    "$@"
    ;;
  *)
    echo "usage: $0 run <command…> | start <dir> [--tls] [--watch <pid>] | stop|down|up <dir>" >&2
    exit 2
    ;;
esac
