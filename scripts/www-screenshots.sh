#!/usr/bin/env bash
# Refreshes the committed screenshots of the notes page (docs/screenshots/): runs the page's
# end-to-end tests with their screenshots written to a temporary folder (every view, both
# themes, the phone), then copies the chosen ones below into docs/screenshots/, replacing what
# was there. Review the images before committing them.
set -euo pipefail
cd "$(dirname "$0")/.."
# The views a reader of the README looks for: desktop light, a few dark, a few phone.
CHOSEN=(
  start note sample-note document editor editor-completion conflict search search-hit switcher palette
  shortcuts note-history history revision import-plan agent notification quota
  note-dark editor-dark search-dark
  phone-note phone-menu phone-editor
)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
SCREENSHOTS_DIR="$tmp" bash scripts/www-test.sh
for name in "${CHOSEN[@]}"; do
  [ -f "$tmp/$name.png" ] || { echo "www-screenshots: the tests wrote no $name.png" >&2; exit 1; }
done
rm -f docs/screenshots/*.png
for name in "${CHOSEN[@]}"; do cp "$tmp/$name.png" docs/screenshots/; done
ls docs/screenshots
