#!/usr/bin/env bash
# Where a proxy's CPU goes, thread by thread: sysbench oltp_point_select through one nicecache
# proxy (one worker), and each of its threads' user and system time, minor page faults and
# context switches per query, from /proc/PID/task/*/stat and status over the run. The worker
# thread is the proxy's own work; the V8Worker threads are V8's helpers (parallel scavenges,
# concurrent marking, compilation), which a CPU profile of the worker does not show.
#
#   bash bench/thread-cpu.sh [seconds, default 10] [rows, default 1000000] [proxy options…]
#
# e.g. `bash bench/thread-cpu.sh 10 1000000 --query-cache-size 1G` (misses that fill: uniform
# reads of 1M rows) against `--query-cache-size 0` (the relay). Environment: BACKEND (host:port,
# default 127.0.0.1:3306), PS_MODE (sysbench --db-ps-mode, default disable), THREADS (default 8),
# WARMUP (seconds, default 0).
#
# WARMUP runs the load that long first and then RESET QUERY CACHE, so the measured fills write
# arena memory already written once: the store's ring goes on from where it was, so a warm-up
# at least as long as the run, into a budget the warm-up fills (e.g. 64M), leaves every page the
# run writes resident. A first write of a page of a fresh store costs a page fault, which on
# some virtual machines is tens of µs; this tells that one-time cost from a fill's own.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
export PATH="$PWD/node_modules/.bin:$PATH"

seconds=${1:-10}
rows=${2:-1000000}
shift 2 || shift $#
backend=${BACKEND:-127.0.0.1:3306}
host=${backend%:*}
port=${backend##*:}
db=nc_thread_cpu

command -v sysbench >/dev/null || { echo "sysbench is missing: apt-get install sysbench" >&2; exit 1; }

pids=()
logs=()
cleanup() {
  stop_listeners
  mariadb -h"$host" -P"$port" -uroot -e "DROP DATABASE IF EXISTS $db" 2>/dev/null || true
}
trap cleanup EXIT

sb() {
  sysbench oltp_point_select --db-driver=mysql --mysql-user=root --mysql-db=$db --tables=1 \
    --table-size="$rows" --threads="${THREADS:-8}" --db-ps-mode="${PS_MODE:-disable}" \
    --rand-type=uniform "$@"
}

mariadb -h"$host" -P"$port" -uroot -e "DROP DATABASE IF EXISTS $db; CREATE DATABASE $db"
sb --mysql-host="$host" --mysql-port="$port" prepare >/dev/null
start_listener proxy . node src/cli/main.ts proxy --listen 127.0.0.1:0 --backend "$backend" \
  --workers 1 "$@"

# tid name utime stime minflt voluntary nonvoluntary, one line a thread.
threads() {
  for task in /proc/"$proxy_pid"/task/*; do
    printf '%s %s %s %s\n' "${task##*/}" "$(tr ' ' _ <"$task/comm")" \
      "$(awk '{ print $14, $15, $10 }' "$task/stat")" \
      "$(awk '/^voluntary_ctxt/ { v = $2 } /^nonvoluntary_ctxt/ { n = $2 } END { print v, n }' "$task/status")"
  done | sort
}
if [ "${WARMUP:-0}" -gt 0 ]; then
  sb --mysql-host=127.0.0.1 --mysql-port="$proxy_port" --time="$WARMUP" run >/dev/null
  mariadb -h127.0.0.1 -P"$proxy_port" -uroot -e "RESET QUERY CACHE"
fi
before=$(threads)
out=$(sb --mysql-host=127.0.0.1 --mysql-port="$proxy_port" --time="$seconds" run)
after=$(threads)
queries=$(echo "$out" | awk '/queries:/ && !/performed/ { print $2 }')

echo "oltp_point_select, $rows rows uniform, ${seconds}s after ${WARMUP:-0}s of warm-up, proxy options: $*; $queries queries"
echo
echo "| thread | user µs/query | system µs/query | minor faults/query | voluntary switches/query | involuntary/query |"
echo "|---|---|---|---|---|---|"
join <(echo "$before") <(echo "$after") | awk -v q="$queries" -v tick="$tick_us" '
  {
    u = ($9 - $3) * tick / q; s = ($10 - $4) * tick / q
    if (u + s < 0.05) next
    printf "| %s | %.2f | %.2f | %.3f | %.3f | %.3f |\n", $2, u, s, ($11 - $5) / q, ($12 - $6) / q, ($13 - $7) / q
    U += u; S += s
  }
  END { printf "| all | %.2f | %.2f | | | |\n", U, S }'
