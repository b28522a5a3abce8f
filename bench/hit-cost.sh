#!/usr/bin/env bash
# What a cache hit and a relayed query cost the proxy, as ratios to the Node floor measured in
# the same run: sysbench oltp_point_select on a small table (every SELECT a hit once warm)
# against (1) the Node floor server (bench/node-floor.ts: a 'data' listener and one write of a
# fixed reply), (2) nicecache with its cache on, (3) nicecache as a plain relay. Text protocol
# (--db-ps-mode=disable) and binary (auto), the targets in rotating order, CPU per query from
# /proc/PID/stat (user + system, all threads) over each run.
#
#   bash bench/hit-cost.sh [seconds per run, default 10] [rounds, default 1]
#
# Environment: BACKEND (host:port, default 127.0.0.1:3306), THREADS (default 8), TABLE_SIZE
# (default 1000), WORKERS (proxy worker threads, default 1), OTHER (a second nicecache checkout
# to measure side by side, e.g. the previous release: its hit and relay are added as targets).
#
# MISSES=1 measures a miss that fills instead of a hit: 1 000 000 rows (TABLE_SIZE) read
# uniformly, no warm-up, each run from an emptied store (RESET QUERY CACHE), so nearly every
# SELECT is a first read that the cache stores (the hit ratio column says how nearly); the cache
# target is then called "fill", with a store of 1 GB that these results do not fill.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
export PATH="$PWD/node_modules/.bin:$PATH"

seconds=${1:-10}
rounds=${2:-1}
backend=${BACKEND:-127.0.0.1:3306}
threads=${THREADS:-8}
misses=${MISSES:-0}
table_size=${TABLE_SIZE:-1000}
rand_type=special
warm_up=1
cache=64M
if [ "$misses" = 1 ]; then
  table_size=${TABLE_SIZE:-1000000}
  rand_type=uniform
  warm_up=0
  # Room for every row's result: a nearly full store stores a first miss no more (README,
  # "Admission"), and this measures the misses that fill.
  cache=1G
fi
workers=${WORKERS:-1}
other=${OTHER:-}
db=nc_hit_cost
host=${backend%:*}
port=${backend##*:}

command -v sysbench >/dev/null || { echo "sysbench is missing: apt-get install sysbench" >&2; exit 1; }

pids=()
logs=()
trap stop_listeners EXIT

proxy() {
  local dir=$1
  shift
  start_listener "$@" "$dir" node src/cli/main.ts proxy --listen 127.0.0.1:0 --backend "$backend" \
    --workers "$workers" "${proxy_args[@]}"
}

mariadb -h"$host" -P"$port" -uroot -e "DROP DATABASE IF EXISTS $db; CREATE DATABASE $db"
sysbench oltp_point_select --db-driver=mysql --mysql-host="$host" --mysql-port="$port" \
  --mysql-user=root --mysql-db=$db --tables=1 --table-size="$table_size" prepare >/dev/null

start_listener floor . node bench/node-floor.ts 0
proxy_args=(--query-cache-size "$cache")
proxy . hit
proxy_args=(--query-cache-size 0)
proxy . relay
targets="floor hit relay"
if [ -n "$other" ]; then
  proxy_args=(--query-cache-size "$cache")
  proxy "$other" other_hit
  proxy_args=(--query-cache-size 0)
  proxy "$other" other_relay
  targets="$targets other_hit other_relay"
fi

sb() {
  local target_port=$1 mode=$2 time=$3
  sysbench oltp_point_select --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$target_port" \
    --mysql-user=root --mysql-db=$db --tables=1 --table-size="$table_size" --threads="$threads" \
    --db-ps-mode="$mode" --rand-type="$rand_type" --time="$time" run
}
reset_cache() {
  mariadb -h127.0.0.1 -P"$1" -uroot -e 'RESET QUERY CACHE'
}
hits() {
  mariadb -h127.0.0.1 -P"$1" -uroot -Nse "SHOW GLOBAL STATUS LIKE 'Qcache_hits'" | awk '{ print $2 }'
}

echo "sysbench $(sysbench --version | awk '{print $2}'), $(mariadb -h"$host" -P"$port" -uroot -Nse 'SELECT VERSION()'), $(nproc) cores, oltp_point_select, $threads threads, $table_size rows, ${seconds}s per run, $rounds round(s), proxy workers: $workers"
echo
echo "| protocol | target | qps | hit ratio | CPU µs/query | ÷ floor |"
echo "|---|---|---|---|---|---|"
declare -A cpu_sum qps_sum hit_sum
step=0
for mode in disable auto; do
  # Every key cached before measuring (hits), or none (misses).
  if [ "$warm_up" = 1 ]; then
    for target in $targets; do
      case $target in *hit) p="${target}_port"; sb "${!p}" "$mode" 3 >/dev/null ;; esac
    done
  fi
  for target in $targets; do cpu_sum[$target]=0; qps_sum[$target]=0; hit_sum[$target]=0; done
  for _ in $(seq 1 "$rounds"); do
    set -- $targets
    for _ in $(seq 1 $((step % $#))); do set -- "${@:2}" "$1"; done
    step=$((step + 1))
    for target in "$@"; do
      p="${target}_port"
      pid="${target}_pid"
      hits_before=0
      case $target in
        *hit)
          # Misses: every run starts from an empty store, or the rows an earlier run read (about
          # one in eight of a 10 s run's, on 1M rows) would be hits and make a fill look cheaper.
          if [ "$misses" = 1 ]; then reset_cache "${!p}"; fi
          hits_before=$(hits "${!p}")
          ;;
      esac
      before=$(ticks "${!pid}")
      out=$(sb "${!p}" "$mode" "$seconds")
      after=$(ticks "${!pid}")
      if echo "$out" | grep -q 'FATAL'; then echo "$out" >&2; exit 1; fi
      queries=$(echo "$out" | awk '/queries:/ && !/performed/ { print $2 }')
      qps=$(echo "$out" | awk '/queries:/ && !/performed/ { gsub(/\(/, "", $3); print $3 }')
      ratio=1
      case $target in *hit) ratio=$(awk -v h=$(($(hits "${!p}") - hits_before)) -v q="$queries" 'BEGIN { print h / q }') ;; esac
      cpu_sum[$target]=$(awk -v s="${cpu_sum[$target]}" -v t=$((after - before)) -v u="$tick_us" -v q="$queries" 'BEGIN { print s + t * u / q }')
      qps_sum[$target]=$(awk -v s="${qps_sum[$target]}" -v q="$qps" 'BEGIN { print s + q }')
      hit_sum[$target]=$(awk -v s="${hit_sum[$target]}" -v r="$ratio" 'BEGIN { print s + r }')
    done
  done
  protocol=text
  [ "$mode" = auto ] && protocol=binary
  floor_cpu=$(awk -v s="${cpu_sum[floor]}" -v n="$rounds" 'BEGIN { print s / n }')
  for target in $targets; do
    label=${target/_/ }
    [ "$misses" = 1 ] && label=${label/hit/fill}
    awk -v protocol="$protocol" -v target="$label" -v c="${cpu_sum[$target]}" \
      -v q="${qps_sum[$target]}" -v h="${hit_sum[$target]}" -v n="$rounds" -v f="$floor_cpu" \
      'BEGIN {
        hit = target ~ /hit|fill/ ? sprintf("%.0f%%", 100 * h / n) : "-"
        printf "| %s | %s | %.0f | %s | %.1f | %.2f |\n", protocol, target, q / n, hit, c / n, c / n / f
      }'
  done
done

sysbench oltp_point_select --db-driver=mysql --mysql-host="$host" --mysql-port="$port" \
  --mysql-user=root --mysql-db=$db --tables=1 cleanup >/dev/null
mariadb -h"$host" -P"$port" -uroot -e "DROP DATABASE IF EXISTS $db"
