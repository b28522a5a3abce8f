#!/usr/bin/env bash
# What a miss that fills costs when the result is large: sysbench oltp_read_only reduced to its
# simple range read (100 rows, about 12 KB a reply), uniform over 1 000 000 rows so nearly every
# read is a first read, through nicecache with its cache on (every miss copied and stored) and as
# a plain relay (--query-cache-size 0), one worker, interleaved; the proxy's user and system CPU
# per query from /proc/PID/stat, and its minor page faults (a fresh store's first touch of each
# page of its arena).
#
#   bash bench/range-fill.sh [seconds per run, default 10] [rounds, default 2]
#
# Environment: BACKEND (host:port, default 127.0.0.1:3306), THREADS (default 8), CACHE (default
# 2G: room for what a run reads, since a nearly full store stores a first miss no more and this
# measures the misses that fill), OTHER (a second nicecache checkout: its fill is added as a
# target).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
export PATH="$PWD/node_modules/.bin:$PATH"

seconds=${1:-10}
rounds=${2:-2}
backend=${BACKEND:-127.0.0.1:3306}
host=${backend%:*}
port=${backend##*:}
threads=${THREADS:-8}
cache=${CACHE:-2G}
other=${OTHER:-}
db=nc_range_fill
rows=1000000

command -v sysbench >/dev/null || { echo "sysbench is missing: apt-get install sysbench" >&2; exit 1; }
sb() {
  sysbench oltp_read_only --db-driver=mysql --mysql-host="$host" --mysql-port="$1" --mysql-user=root \
    --mysql-db=$db --tables=1 --table-size=$rows "${@:2}"
}
mariadb -h"$host" -P"$port" -uroot -e "CREATE DATABASE IF NOT EXISTS $db"
have=$(mariadb -h"$host" -P"$port" -uroot -Nse "SELECT COUNT(*) FROM $db.sbtest1" 2>/dev/null || echo 0)
[ "$have" = $rows ] || { sb "$port" cleanup >/dev/null 2>&1 || true; sb "$port" prepare >/dev/null; }

proxy_pid=
log=$(mktemp)
trap 'stop_proxy; rm -f "$log"' EXIT
field() { awk -v f="$2" '{ print $f }' "/proc/$1/stat"; }

run() {
  local name=$1 size=$2 dir=$3
  node "$dir/src/cli/main.ts" proxy --listen 127.0.0.1:0 --backend "$backend" --workers 1 \
    --query-cache-size "$size" 2>"$log" &
  proxy_pid=$!
  local proxy_port u0 s0 u1 s1 queries faults hits
  proxy_port=$(listening_port "$log")
  u0=$(field $proxy_pid 14)
  s0=$(field $proxy_pid 15)
  queries=$(sb "$proxy_port" --threads="$threads" --time="$seconds" --db-ps-mode=disable \
    --rand-type=uniform --skip-trx=on --point-selects=0 --simple-ranges=1 --sum-ranges=0 \
    --order-ranges=0 --distinct-ranges=0 run | awk '/queries:/ && !/performed/ { print $2 }')
  u1=$(field $proxy_pid 14)
  s1=$(field $proxy_pid 15)
  faults=$(field $proxy_pid 10)
  hits=$(mariadb -h127.0.0.1 -P"$proxy_port" -uroot -Nse "SHOW STATUS LIKE 'Qcache_hits'" | awk '{ print $2 }')
  stop_proxy
  awk -v n="$name" -v q="$queries" -v u=$((u1 - u0)) -v s=$((s1 - s0)) -v f="$faults" \
    -v us="$tick_us" -v h="$hits" 'BEGIN {
      printf "| %s | %d | %.1f | %.1f | %.1f | %.1f | %.1f%% |\n", n, q, (u + s) * us / q, u * us / q, s * us / q, f / q, 100 * h / q
    }'
}

echo "sysbench $(sysbench --version | awk '{print $2}'), $(nproc) cores, 100-row range reads, $rows rows (uniform), $threads threads, cache $cache, ${seconds}s per run, $rounds round(s), one worker"
echo
echo "| target | queries | CPU µs/query | user | system | page faults/query | hits |"
echo "|---|---|---|---|---|---|---|"
for _ in $(seq 1 "$rounds"); do
  run fill "$cache" .
  run relay 0 .
  [ -z "$other" ] || run "other fill" "$cache" "$other"
done
mariadb -h"$host" -P"$port" -uroot -e "DROP DATABASE IF EXISTS $db"
