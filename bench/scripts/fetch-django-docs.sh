#!/usr/bin/env bash
# Fetches the documentation set of the retrieval benchmark: docs/ of Django 5.2.8's source
# distribution from PyPI (BSD-3-Clause; the licence file is kept beside the pages).
#
#   bench/scripts/fetch-django-docs.sh [DEST]     (default: target/bench-data)
#
# leaves DEST/django-5.2.8/docs and DEST/django-5.2.8/LICENSE; then
#   cargo run --release -p langonrock-bench -- retrieval
# finds them there (or pass --django DEST/django-5.2.8/docs). Skips when already present.
set -euo pipefail
cd "$(dirname "$0")/../.."
version=5.2.8
sha256=23254866a5bb9a2cfa6004e8b809ec6246eba4b58a7589bc2772f1bcc8456c7f
dest=${1:-target/bench-data}
out="$dest/django-$version"
if [ -f "$out/docs/index.txt" ] && [ -f "$out/LICENSE" ]; then
  echo "already there: $out/docs"
  exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 -m pip download --quiet --no-deps --no-binary :all: "Django==$version" -d "$tmp"
tarball="$tmp/django-$version.tar.gz"
echo "$sha256  $tarball" | sha256sum --check --quiet
mkdir -p "$out"
tar -xzf "$tarball" -C "$tmp" "django-$version/docs" "django-$version/LICENSE"
rm -rf "$out/docs"
mv "$tmp/django-$version/docs" "$tmp/django-$version/LICENSE" "$out/"
echo "fetched $(find "$out/docs" -name '*.txt' | wc -l) pages into $out/docs"
