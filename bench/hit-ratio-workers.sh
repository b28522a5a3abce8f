#!/usr/bin/env bash
# Does the cache shrink as workers are added? The same budget and the same load through nicecache
# with 1, 2, 4 and 8 workers: sysbench oltp_point_select (special distribution) over a table
# larger than the cache holds, each worker count from a cold cache, the hit ratio over the
# measured window after a warm-up.
#
#   bash bench/hit-ratio-workers.sh [seconds per run, default 20] [warm-up seconds, default 10]
#
# Environment: BACKEND (default 127.0.0.1:3306), WORKERS_LIST (default "1 2 4 8"), THREADS
# (default 32, so every worker gets connections), TABLE_SIZE (default 200000), CACHE (default 16M),
# PS_MODE (default disable), OTHER (a second nicecache checkout, e.g. the previous release: run
# right after this one at each worker count, side by side).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
export PATH="$PWD/node_modules/.bin:$PATH"

seconds=${1:-20}
warmup=${2:-10}
backend=${BACKEND:-127.0.0.1:3306}
workers_list=${WORKERS_LIST:-1 2 4 8}
threads=${THREADS:-32}
table_size=${TABLE_SIZE:-200000}
cache=${CACHE:-16M}
ps_mode=${PS_MODE:-disable}
db=nc_hit_ratio
host=${backend%:*}
port=${backend##*:}

command -v sysbench >/dev/null || { echo "sysbench is missing: apt-get install sysbench" >&2; exit 1; }

proxy_pid=
log=$(mktemp)
trap 'stop_proxy; rm -f "$log"' EXIT

sb() {
  local target_port=$1 command=$2
  shift 2
  sysbench oltp_point_select --db-driver=mysql --mysql-host="$host" --mysql-port="$target_port" \
    --mysql-user=root --mysql-db=$db --tables=1 --table-size="$table_size" "$@" "$command"
}
status() {
  mariadb -h127.0.0.1 -P"$1" -uroot -Nse "SHOW GLOBAL STATUS LIKE '$2'" | awk '{ print $2 }'
}

mariadb -h"$host" -P"$port" -uroot -e "CREATE DATABASE IF NOT EXISTS $db"
rows=$(mariadb -h"$host" -P"$port" -uroot -Nse "SELECT COUNT(*) FROM $db.sbtest1" 2>/dev/null || echo 0)
if [ "$rows" != "$table_size" ]; then
  sb "$port" cleanup >/dev/null 2>&1 || true
  sb "$port" prepare >/dev/null
fi

echo "sysbench $(sysbench --version | awk '{print $2}'), $(nproc) cores, oltp_point_select --db-ps-mode=$ps_mode, $threads threads, $table_size rows, cache $cache, ${warmup}s warm-up + ${seconds}s measured per worker count"
echo
echo "| checkout | workers | qps | hits | server SELECTs | hit ratio | entries cached |"
echo "|---|---|---|---|---|---|---|"
checkouts=.
[ -n "${OTHER:-}" ] && checkouts=". $OTHER"
for workers in $workers_list; do
for checkout in $checkouts; do
  node "$checkout/src/cli/main.ts" proxy --listen 127.0.0.1:0 --backend "$backend" \
    --workers "$workers" --query-cache-size "$cache" 2>"$log" &
  proxy_pid=$!
  proxy_port=$(listening_port "$log")
  sb "$proxy_port" run --threads="$threads" --time="$warmup" --db-ps-mode="$ps_mode" >/dev/null
  hits_before=$(status "$proxy_port" Qcache_hits)
  selects_before=$(status "$port" Com_select)
  out=$(sb "$proxy_port" run --threads="$threads" --time="$seconds" --db-ps-mode="$ps_mode")
  hits=$(($(status "$proxy_port" Qcache_hits) - hits_before))
  # The server's own counter: every SELECT that reached it, whoever sent it.
  selects=$(($(status "$port" Com_select) - selects_before))
  entries=$(status "$proxy_port" Qcache_queries_in_cache)
  qps=$(echo "$out" | awk '/queries:/ && !/performed/ { gsub(/\(/, "", $3); print $3 }')
  name=this
  [ "$checkout" = . ] || name=$(basename "$checkout")
  awk -v c="$name" -v w="$workers" -v q="$qps" -v h="$hits" -v s="$selects" -v e="$entries" \
    'BEGIN { printf "| %s | %d | %.0f | %d | %d | %.1f%% | %d |\n", c, w, q, h, s, 100 * h / (h + s), e }'
  stop_proxy
done
done
