#!/usr/bin/env bash
# Does storing results pay when the table is written all the time? sysbench oltp_read_write
# (every transaction writes the one table) and oltp_read_only through nicecache with its cache on
# and through nicecache as a plain relay (--query-cache-size 0), interleaved run by run in one
# session, so every target sees the same machine. Optionally a third target: another checkout's
# nicecache with its cache on (BASELINE_DIR), to compare hit ratios with and without a change.
#
#   bash bench/admission.sh [seconds per run, default 10] [rounds, default 3]
#
# Per run: transactions per second, the proxy's CPU per transaction and per query (user + system
# from /proc/<pid>/stat), the database server's own CPU per transaction (when it runs on this
# machine: SERVER_PID, or the one mariadbd or mysqld found; "-" otherwise), and per query as a
# ratio to the Node floor (bench/node-floor.ts, one
# write of a fixed reply per command, driven by oltp_point_select at the same thread count at the
# start of each round), and for cache targets the hits, the SELECTs the server ran (its
# Com_select), the fills admission declined for their tables' writes (Qcache_admission_declined)
# and the first misses not stored while the store was nearly full (Qcache_admission_unseen) in
# that run.
#
# Environment: BACKEND (default 127.0.0.1:3306), THREADS (default 8), TABLE_SIZE (default
# 200000), CACHE (default 100M), WORKERS (proxy worker threads, default 1), WORKLOADS (default
# "oltp_read_write oltp_read_only"), BASELINE_DIR (a nicecache checkout, default none),
# ADMIN_USER (the proxies' --admin-user, default root: without one every write may fire triggers,
# so the cache probes the session after each, and invalidates everything), FLUSH_AT_COMMIT (the
# server's innodb_flush_log_at_trx_commit for the run, put back at the end; default: as it is.
# 2 takes the disk's flush out of each commit, so oltp_read_write is bound by CPU, where the
# proxy's cost shows, rather than by the disk), PS_MODE (sysbench's --db-ps-mode for the measured
# runs, default disable: statements as texts; auto sends them as prepared statements).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
export PATH="$PWD/node_modules/.bin:$PATH"

seconds=${1:-10}
rounds=${2:-3}
backend=${BACKEND:-127.0.0.1:3306}
threads=${THREADS:-8}
table_size=${TABLE_SIZE:-200000}
cache=${CACHE:-100M}
workers=${WORKERS:-1}
ps_mode=${PS_MODE:-disable}
workloads=${WORKLOADS:-oltp_read_write oltp_read_only}
baseline_dir=${BASELINE_DIR:-}
admin_user=${ADMIN_USER:-root}
db=nc_admission
host=${backend%:*}
port=${backend##*:}

command -v sysbench >/dev/null || { echo "sysbench is missing: apt-get install sysbench" >&2; exit 1; }

declare -A pids ports
logs=()
flush_before=
cleanup() {
  for name in "${!pids[@]}"; do kill "${pids[$name]}" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -f "${logs[@]}"
  if [ -n "$flush_before" ]; then
    mariadb -h"$host" -P"$port" -uroot -e "SET GLOBAL innodb_flush_log_at_trx_commit = $flush_before"
  fi
}
trap cleanup EXIT

# start NAME DIR SIZE: a proxy from checkout DIR with --query-cache-size SIZE.
start() {
  local name=$1 dir=$2 size=$3 log
  log=$(mktemp)
  logs+=("$log")
  node "$dir/src/cli/main.ts" proxy --listen 127.0.0.1:0 --backend "$backend" \
    --workers "$workers" --query-cache-size "$size" --admin-user "$admin_user" 2>"$log" &
  pids[$name]=$!
  ports[$name]=$(listening_port "$log") || exit 1
}

sb() {
  local target_port=$1 workload=$2 command=$3
  shift 3
  sysbench "$workload" --db-driver=mysql --mysql-host="$host" --mysql-port="$target_port" \
    --mysql-user=root --mysql-db=$db --tables=1 --table-size="$table_size" \
    --db-ps-mode="$ps_mode" "$@" "$command"
}
status() {
  local value
  value=$(mariadb -h127.0.0.1 -P"$1" -uroot -Nse "SHOW GLOBAL STATUS LIKE '$2'" | awk '{ print $2 }')
  echo "${value:-0}"
}

mariadb -h"$host" -P"$port" -uroot -e "CREATE DATABASE IF NOT EXISTS $db"
if [ -n "${FLUSH_AT_COMMIT:-}" ]; then
  flush_before=$(mariadb -h"$host" -P"$port" -uroot -Nse 'SELECT @@innodb_flush_log_at_trx_commit')
  mariadb -h"$host" -P"$port" -uroot -e "SET GLOBAL innodb_flush_log_at_trx_commit = $FLUSH_AT_COMMIT"
fi
rows=$(mariadb -h"$host" -P"$port" -uroot -Nse "SELECT COUNT(*) FROM $db.sbtest1" 2>/dev/null || echo 0)
if [ "$rows" != "$table_size" ]; then
  sb "$port" oltp_read_write cleanup >/dev/null 2>&1 || true
  sb "$port" oltp_read_write prepare >/dev/null
fi

start_floor() {
  local log
  log=$(mktemp)
  logs+=("$log")
  node bench/node-floor.ts 0 >"$log" 2>&1 &
  pids[floor]=$!
  ports[floor]=$(listening_port "$log") || exit 1
}
start_floor
start relay . 0
start cache . "$cache"
targets="relay cache"
if [ -n "$baseline_dir" ]; then
  start baseline "$baseline_dir" "$cache"
  targets="relay cache baseline"
fi

echo "sysbench $(sysbench --version | awk '{print $2}'), $(mariadb -h"$host" -P"$port" -uroot -Nse 'SELECT VERSION(), @@innodb_flush_log_at_trx_commit' | awk '{ print $1 ", innodb_flush_log_at_trx_commit " $2 }'), $(nproc) cores, --db-ps-mode=$ps_mode, $threads threads, 1 table x $table_size rows, cache $cache, $workers worker(s), ${seconds}s per run, $rounds rounds"
echo
server_pid=${SERVER_PID:-$(pidof mariadbd || pidof mysqld || true)}
case "$server_pid" in *' '* | '') server_pid= ;; esac
server_ticks() { if [ -n "$server_pid" ]; then ticks "$server_pid"; else echo 0; fi; }
echo "| workload | round | target | tps | proxy CPU µs/txn | server CPU µs/txn | µs/query | ÷ floor | hits | server SELECTs | hit ratio | declined | unseen |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
step=0
for workload in $workloads; do
  for round in $(seq 1 "$rounds"); do
    # Rotate the order so no target always runs first or last.
    set -- $targets
    for _ in $(seq 1 $((step % $#))); do set -- "${@:2}" "$1"; done
    step=$((step + 1))
    ticks0=$(ticks "${pids[floor]}")
    out=$(sysbench oltp_point_select --db-driver=mysql --mysql-host=127.0.0.1 \
      --mysql-port="${ports[floor]}" --mysql-user=root --mysql-db=$db --tables=1 \
      --table-size="$table_size" --db-ps-mode=disable --threads="$threads" --time="$seconds" run)
    floor_queries=$(echo "$out" | awk '/queries:/ && !/performed/ { print $2 }')
    floor_us=$(awk -v c="$((($(ticks "${pids[floor]}") - ticks0) * tick_us))" -v q="$floor_queries" \
      'BEGIN { printf "%.1f", c / q }')
    echo "| oltp_point_select | $round | floor | - | - | - | $floor_us | 1.00 | - | - | - | - | - |"
    for target in "$@"; do
      target_port=${ports[$target]}
      hits0=$(status "$target_port" Qcache_hits)
      declined0=$(status "$target_port" Qcache_admission_declined)
      unseen0=$(status "$target_port" Qcache_admission_unseen)
      selects0=$(status "$port" Com_select)
      ticks0=$(ticks "${pids[$target]}")
      server0=$(server_ticks)
      out=$(sb "$target_port" "$workload" run --threads="$threads" --time="$seconds")
      ticks1=$(ticks "${pids[$target]}")
      server1=$(server_ticks)
      selects=$(($(status "$port" Com_select) - selects0))
      hits=$(($(status "$target_port" Qcache_hits) - hits0))
      declined=$(($(status "$target_port" Qcache_admission_declined) - declined0))
      unseen=$(($(status "$target_port" Qcache_admission_unseen) - unseen0))
      tps=$(echo "$out" | awk '/transactions:/ { gsub(/\(/, "", $3); print $3 }')
      txns=$(echo "$out" | awk '/transactions:/ { print $2 }')
      queries=$(echo "$out" | awk '/queries:/ && !/performed/ { print $2 }')
      awk -v w="$workload" -v r="$round" -v t="$target" -v tps="$tps" -v n="$txns" \
        -v c="$(((ticks1 - ticks0) * tick_us))" -v h="$hits" -v s="$selects" -v d="$declined" -v u="$unseen" \
        -v q="$queries" -v f="$floor_us" -v sc="$(((server1 - server0) * tick_us))" \
        -v known="${server_pid:+1}" \
        'BEGIN { server = known ? sprintf("%.0f", sc / n) : "-"
          printf "| %s | %d | %s | %.1f | %.0f | %s | %.1f | %.2f | %d | %d | %.1f%% | %d | %d |\n",
          w, r, t, tps, c / n, server, c / q, c / q / f, h, s, 100 * h / (h + s), d, u }'
    done
  done
done
