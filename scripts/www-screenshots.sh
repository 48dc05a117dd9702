#!/usr/bin/env bash
# Refreshes the committed screenshots of the notes page (docs/screenshots/): runs the page's
# end-to-end tests with their screenshots pointed there instead of www/artifacts/. Review the
# images before committing them.
set -euo pipefail
cd "$(dirname "$0")/.."
rm -f docs/screenshots/*.png
SCREENSHOTS_DIR="$PWD/docs/screenshots" bash scripts/www-test.sh
ls docs/screenshots
