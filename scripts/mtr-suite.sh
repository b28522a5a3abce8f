#!/usr/bin/env bash
# MariaDB's own regression suite (mysql-test-run from the `mariadb-test` package) through
# nicecache: the curated list in test/mtr/suite.txt directly, through the proxy with its cache on
# and with it off, compared (see test/mtr/run-suite.ts for the options). Exits 2 with a message
# when the suite is not installed (scripts/setup.sh installs it).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/node_modules/.bin:$PATH"
exec node test/mtr/run-suite.ts "$@"
