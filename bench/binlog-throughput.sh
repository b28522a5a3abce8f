#!/usr/bin/env bash
# oltp_read_only through nicecache with the binlog follower on and off, interleaved round by
# round, against one throwaway MariaDB with log_bin started here: what following the log costs
# the hit path (one atomic load per hit) and the main thread (heartbeats, no writes).
#
#   bash bench/binlog-throughput.sh [rounds, default 3] [seconds per run, default 10] [threads, default 4]
#
# WORKERS (default 2), TABLE_SIZE (default 10000).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
export PATH="$PWD/node_modules/.bin:$PATH"
rounds=${1:-3}
seconds=${2:-10}
threads=${3:-4}
workers=${WORKERS:-2}
table_size=${TABLE_SIZE:-10000}
db=sbtest

declare -A pids ports
files=()
cleanup() {
  for name in "${!pids[@]}"; do kill "${pids[$name]}" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -f "${files[@]}"
}
trap cleanup EXIT

portfile=$(mktemp)
files+=("$portfile")
rm -f "$portfile"
node src/cli/main.ts mariadb --port-file "$portfile" --set log_bin=binlog --set server_id=1 \
  --set binlog_format=ROW >/dev/null 2>&1 &
pids[server]=$!
for _ in $(seq 1 300); do [ -s "$portfile" ] && break; sleep 0.1; done
port=$(cat "$portfile")
backend=127.0.0.1:$port

# start NAME MODE: a proxy with --binlog MODE.
start() {
  local name=$1 mode=$2 log
  log=$(mktemp)
  files+=("$log")
  node src/cli/main.ts proxy --listen 127.0.0.1:0 --backend "$backend" --workers "$workers" \
    --admin-user root --binlog "$mode" 2>"$log" &
  pids[$name]=$!
  ports[$name]=$(listening_port "$log") || exit 1
}

sb() {
  local target_port=$1 command=$2
  shift 2
  sysbench oltp_read_only --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$target_port" \
    --mysql-user=root --mysql-db=$db --tables=1 --table-size="$table_size" \
    --db-ps-mode=disable "$@" "$command"
}

mariadb -h127.0.0.1 -P"$port" -uroot -e "CREATE DATABASE $db"
sb "$port" prepare >/dev/null
start on on
start off off

echo "sysbench oltp_read_only, $threads threads, ${seconds}s per run, $rounds rounds, $workers worker(s), 1 table x $table_size rows"
echo
echo "| round | follower | tps |"
echo "|---|---|---|"
declare -A sum
sum[on]=0
sum[off]=0
for round in $(seq 1 "$rounds"); do
  order="on off"
  [ $((round % 2)) -eq 0 ] && order="off on"
  for target in $order; do
    tps=$(sb "${ports[$target]}" run --threads="$threads" --time="$seconds" |
      awk '/transactions:/ { gsub(/\(/, "", $3); print $3 }')
    echo "| $round | $target | $tps |"
    sum[$target]=$(awk -v a="${sum[$target]}" -v b="$tps" 'BEGIN { print a + b }')
  done
done
echo
awk -v on="${sum[on]}" -v off="${sum[off]}" 'BEGIN { printf "follower on ÷ off: %.3f\n", on / off }'
