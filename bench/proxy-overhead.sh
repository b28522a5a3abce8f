#!/usr/bin/env bash
# The proxy's cost: sysbench directly against the server and through nicecache with its cache off (relay only),
# interleaved step by step in one run so both see the same machine, reported as ratios
# proxy/direct with the proxy's CPU time per query.
#
#   bash bench/proxy-overhead.sh [seconds per run, default 10]
#
# Environment: BACKEND (host:port, default 127.0.0.1:3306), THREADS (default "1 8 32"),
# WORKLOADS (default "oltp_point_select oltp_read_only"), TABLE_SIZE (default 100000),
# WORKERS (proxy worker threads, default: the number of cores).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
export PATH="$PWD/node_modules/.bin:$PATH"

seconds=${1:-10}
backend=${BACKEND:-127.0.0.1:3306}
threads_list=${THREADS:-1 8 32}
workloads=${WORKLOADS:-oltp_point_select oltp_read_only}
table_size=${TABLE_SIZE:-100000}
workers=${WORKERS:-$(nproc)}
db=nc_bench
host=${backend%:*}
port=${backend##*:}

command -v sysbench >/dev/null || { echo "sysbench is missing: apt-get install sysbench" >&2; exit 1; }

log=$(mktemp)
node src/cli/main.ts proxy --listen 127.0.0.1:0 --backend "$backend" --workers "$workers" \
  --query-cache-size 0 2>"$log" &
proxy_pid=$!
trap 'kill $proxy_pid 2>/dev/null; wait $proxy_pid 2>/dev/null; rm -f "$log"' EXIT
proxy_port=$(listening_port "$log") || exit 1

# sb PORT THREADS WORKLOAD COMMAND [options]
sb() {
  local target_port=$1 threads=$2 workload=$3 command=$4
  shift 4
  sysbench "$workload" --db-driver=mysql --mysql-host="$host" --mysql-port="$target_port" \
    --mysql-user=root --mysql-db=$db --tables=1 --table-size="$table_size" --threads="$threads" \
    "$@" "$command"
}


mariadb -h"$host" -P"$port" -uroot -e "DROP DATABASE IF EXISTS $db; CREATE DATABASE $db"
sb "$port" 4 oltp_read_only prepare >/dev/null

echo "sysbench $(sysbench --version | awk '{print $2}'), $(mariadb -h"$host" -P"$port" -uroot -Nse 'SELECT VERSION()'), $(nproc) cores, ${seconds}s per run, 1 table x $table_size rows, proxy workers: $workers"
echo
echo "| workload | threads | direct tps | proxy tps | proxy/direct | direct qps | proxy qps | proxy CPU µs/query |"
echo "|---|---|---|---|---|---|---|---|"
step=0
for workload in $workloads; do
  for threads in $threads_list; do
    # Alternate which target goes first, so neither always gets the warmer machine.
    if [ $((step % 2)) -eq 0 ]; then order="direct proxy"; else order="proxy direct"; fi
    step=$((step + 1))
    for target in $order; do
      if [ "$target" = direct ]; then
        out=$(sb "$port" "$threads" "$workload" run --time="$seconds" --db-ps-mode=disable)
        direct_tps=$(echo "$out" | awk '/transactions:/ { gsub(/\(/, "", $3); print $3 }')
        direct_qps=$(echo "$out" | awk '/queries:/ && !/performed/ { gsub(/\(/, "", $3); print $3 }')
      else
        before=$(ticks "$proxy_pid")
        out=$(sb "$proxy_port" "$threads" "$workload" run --time="$seconds" --db-ps-mode=disable)
        after=$(ticks "$proxy_pid")
        proxy_tps=$(echo "$out" | awk '/transactions:/ { gsub(/\(/, "", $3); print $3 }')
        proxy_qps=$(echo "$out" | awk '/queries:/ && !/performed/ { gsub(/\(/, "", $3); print $3 }')
        queries=$(echo "$out" | awk '/queries:/ && !/performed/ { print $2 }')
        cpu_us=$(awk -v t=$((after - before)) -v u="$tick_us" -v q="$queries" 'BEGIN { printf "%.1f", t * u / q }')
      fi
      if echo "$out" | grep -q 'FATAL'; then echo "$out" >&2; exit 1; fi
    done
    ratio=$(awk -v p="$proxy_tps" -v d="$direct_tps" 'BEGIN { printf "%.2f", p / d }')
    echo "| $workload | $threads | $direct_tps | $proxy_tps | $ratio | $direct_qps | $proxy_qps | $cpu_us |"
  done
done

sb "$port" 1 oltp_read_only cleanup >/dev/null
mariadb -h"$host" -P"$port" -uroot -e "DROP DATABASE IF EXISTS $db"
