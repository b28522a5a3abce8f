#!/usr/bin/env bash
# This checkout's proxy side by side with another checkout's (OTHER), under one sysbench workload:
# runs alternate between the two, one fresh proxy each, so both see the same machine; per run the
# transactions per second and the proxy's CPU (user + system, all threads, /proc/PID/stat) per
# transaction, then the means and their ratio. For changes too small for one run to show on a
# noisy machine: more rounds, not longer ones.
#
#   OTHER=<checkout> bash bench/checkout-ab.sh [rounds, default 6] [seconds per run, default 12]
#
# Environment: OTHER (required: a nicecache checkout, its dependencies installed or linked),
# BACKEND (default 127.0.0.1:3306), WORKLOAD (default oltp_read_write), THREADS (default 8),
# TABLE_SIZE (default 200000), ARGS (proxy options for both, default "--workers 1
# --query-cache-size 100M --admin-user root"), THIS_ARGS and OTHER_ARGS (added to one side's).
# The table is made if missing (database nc_checkout_ab) and left for the next run.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
export PATH="$PWD/node_modules/.bin:$PATH"

rounds=${1:-6}
seconds=${2:-12}
other=${OTHER:?OTHER=<another nicecache checkout> is required}
backend=${BACKEND:-127.0.0.1:3306}
workload=${WORKLOAD:-oltp_read_write}
threads=${THREADS:-8}
table_size=${TABLE_SIZE:-200000}
args=${ARGS:---workers 1 --query-cache-size 100M --admin-user root}
db=nc_checkout_ab
host=${backend%:*}
port=${backend##*:}
this=$PWD

command -v sysbench >/dev/null || { echo "sysbench is missing: apt-get install sysbench" >&2; exit 1; }

pid=
log=$(mktemp)
cleanup() {
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  rm -f "$log"
}
trap cleanup EXIT

# sb PORT COMMAND [options]
sb() {
  local target_port=$1 command=$2
  shift 2
  sysbench "$workload" --db-driver=mysql --mysql-host="$host" --mysql-port="$target_port" \
    --mysql-user=root --mysql-db=$db --tables=1 --table-size="$table_size" --threads="$threads" \
    --db-ps-mode=disable "$@" "$command"
}

mariadb -h"$host" -P"$port" -uroot -e "CREATE DATABASE IF NOT EXISTS $db"
if ! mariadb -h"$host" -P"$port" -uroot -Nse "SELECT 1 FROM $db.sbtest1 LIMIT 1" >/dev/null 2>&1; then
  sb "$port" prepare >/dev/null
fi

# run NAME DIR EXTRA: one run through a fresh proxy from checkout DIR; prints "NAME tps cpu".
run() {
  local name=$1 dir=$2 extra=$3 proxy_port before after out txns
  # shellcheck disable=SC2086
  (cd "$dir" && exec node --disable-sigusr1 src/cli/main.ts proxy --listen 127.0.0.1:0 \
    --backend "$backend" $args $extra) 2>"$log" &
  pid=$!
  proxy_port=$(listening_port "$log") || exit 1
  sb "$proxy_port" run --time=3 >/dev/null
  before=$(ticks "$pid")
  out=$(sb "$proxy_port" run --time="$seconds")
  after=$(ticks "$pid")
  kill "$pid"
  wait "$pid" 2>/dev/null || true
  pid=
  txns=$(echo "$out" | awk '/transactions:/ { print $2 }')
  awk -v name="$name" -v txns="$txns" -v s="$seconds" -v us=$(((after - before) * tick_us)) \
    'BEGIN { printf "%s %.1f %.1f\n", name, txns / s, us / txns }'
}

echo "$workload, $threads threads, $table_size rows, ${seconds}s a run, $rounds rounds; proxy: $args"
echo "this: $this ${THIS_ARGS:-}; other: $other ${OTHER_ARGS:-}"
echo
echo "| round | target | tps | proxy CPU µs/txn |"
echo "|---|---|---|---|"
results=$(mktemp)
for round in $(seq "$rounds"); do
  # The order alternates, so neither side always runs right after the other.
  if [ $((round % 2)) -eq 1 ]; then order="other this"; else order="this other"; fi
  for name in $order; do
    if [ "$name" = this ]; then line=$(run this "$this" "${THIS_ARGS:-}")
    else line=$(run other "$other" "${OTHER_ARGS:-}"); fi
    echo "$line" >>"$results"
    echo "$line" | awk -v r="$round" '{ printf "| %d | %s | %s | %s |\n", r, $1, $2, $3 }'
  done
done
awk '{ tps[$1] += $2; cpu[$1] += $3; n[$1]++ }
  END {
    printf "\nmeans: this %.1f tps, %.1f µs/txn; other %.1f tps, %.1f µs/txn\n",
      tps["this"] / n["this"], cpu["this"] / n["this"], tps["other"] / n["other"], cpu["other"] / n["other"]
    printf "this ÷ other: tps %.3f, CPU per transaction %.3f\n",
      (tps["this"] / n["this"]) / (tps["other"] / n["other"]), (cpu["this"] / n["this"]) / (cpu["other"] / n["other"])
  }' "$results"
rm -f "$results"
