#!/usr/bin/env bash
# The query cache against the server's own, as issue 4 measures it: one interleaved sweep per
# workload, each with (a) a throwaway MariaDB with its query cache off, (b) one with it on at
# 100 MB, (c) nicecache with its cache on in front of (a), and nicecache as a plain relay in
# front of (a) to show what the cache itself earns. sysbench drives every step.
#
#   bash bench/query-cache.sh [seconds per step, default 10] [report dir, default reports]
#
# Environment: THREADS (default "1,2,4,8,16,32,64"), TABLE_SIZE (default 200000),
# WORKLOADS (default "oltp_read_only:disable oltp_read_write:disable oltp_point_select:auto").
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/node_modules/.bin:$PATH"

seconds=${1:-10}
reports=${2:-reports}
threads=${THREADS:-1,2,4,8,16,32,64}
table_size=${TABLE_SIZE:-200000}
workloads=${WORKLOADS:-oltp_read_only:disable oltp_read_write:disable oltp_point_select:auto}
server='innodb_buffer_pool_size=1G'

for entry in $workloads; do
  workload=${entry%%:*}
  ps_mode=${entry##*:}
  echo "== $workload --db-ps-mode=$ps_mode, $table_size rows, threads $threads, $seconds s per step"
  node src/cli/main.ts bench sweep --workload "$workload" --db-ps-mode "$ps_mode" \
    --table-size "$table_size" --threads "$threads" --duration "$seconds" --driver sysbench \
    --report-dir "$reports" \
    --target "server-cache-off=mariadb:query_cache_type=0,query_cache_size=0,$server" \
    --target "server-cache-on=mariadb:query_cache_type=1,query_cache_size=100M,$server" \
    --target "nicecache=nicecache:server-cache-off:query-cache-size=100M" \
    --target "nicecache-relay=nicecache:server-cache-off:query-cache-size=0"
done
