#!/usr/bin/env bash
# Sets up a machine that has only Node (any version) and apt: the Debian packages nicecache's
# tests and benchmarks use (MariaDB server, client and test suite, sysbench, xmllint, promtool,
# openssl, Chromium, PyMySQL) when missing, then the npm packages, which include the Node 24 the project runs on.
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
command -v mariadbd >/dev/null 2>&1 || [ -x /usr/sbin/mariadbd ] || missing+=(mariadb-server)
command -v mariadb >/dev/null 2>&1 || missing+=(mariadb-client)
# mariadb-test: MariaDB's own regression suite (mysql-test-run), for npm run test:mtr.
command -v mariadb-test >/dev/null 2>&1 || missing+=(mariadb-test)
command -v sysbench >/dev/null 2>&1 || missing+=(sysbench)
# xmllint: the tests check that the benchmark's SVG charts are well-formed XML.
command -v xmllint >/dev/null 2>&1 || missing+=(libxml2-utils)
# promtool (Debian's prometheus package): the tests check the /metrics output with it.
command -v promtool >/dev/null 2>&1 || missing+=(prometheus)
# openssl: the TLS tests make their certificate with it.
command -v openssl >/dev/null 2>&1 || missing+=(openssl)
# Chromium: the tests load the live page (the metrics port's /) in it, headless.
command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || missing+=(chromium)
# PyMySQL: the tests check that Python clients print nicecache's own errors whole.
/usr/bin/python3 -c 'import pymysql' >/dev/null 2>&1 || missing+=(python3-pymysql)
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  echo "setup: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

npm ci --no-audit --no-fund
