#!/usr/bin/env bash
# Reads by key while the table is written: sysbench oltp_point_select (8 threads, the "special"
# distribution: most reads on a few hot rows) and, at the same time on the same table,
# oltp_insert (1 thread at INSERT_RATE inserts a second, keys from AUTO_INCREMENT), against the
# server directly, nicecache (this tree) and, with OTHER, a second checkout (the code before, say),
# in rotating order. What it shows: whether adding rows takes the cached reads of the rows that
# were there with it. Text protocol unless PS_MODE says otherwise; CPU per query is the proxy's
# user + system time over the run (every thread), for the reads and writes together.
#
#   bash bench/insert-mix.sh [seconds per run, default 10] [rounds, default 1]
#
# Environment: BACKEND (host:port, default 127.0.0.1:3306), TABLE_SIZE (default 100000),
# INSERT_RATE (default 200: writes a second), CACHE (default 64M), WORKERS (default 2), OTHER;
# READER (default oltp_point_select; bench/in-list-select.lua reads ten rows by an IN list of
# their keys) and WRITER (default oltp_insert; oltp_update_non_index updates one row by its key;
# bench/upsert.lua upserts one by its key, ON DUPLICATE KEY UPDATE and REPLACE by turns);
# WRITES_TO=direct sends the writes straight to the server, beside the target's reads: writes made
# elsewhere, which nicecache sees only through the binlog follower (a BACKEND with log_bin).
# PS_MODE (sysbench's --db-ps-mode for reader and writer, default disable: the text protocol) and
# READER_ARGS (more options for the reader: --prepared=on for bench/in-list-select.lua).
# SETUP_SQL: statements run on the server once the table is made (a trigger on sbtest1, say).
# READER_SQL, WRITER_SQL: a text statement for the reader or the writer, in place of READER or
# WRITER, run by bench/text-point.lua ({id} stands for a row's id, {tenant} for the id % 16).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
export PATH="$PWD/node_modules/.bin:$PATH"

seconds=${1:-10}
rounds=${2:-1}
backend=${BACKEND:-127.0.0.1:3306}
table_size=${TABLE_SIZE:-100000}
insert_rate=${INSERT_RATE:-200}
cache=${CACHE:-64M}
workers=${WORKERS:-2}
other=${OTHER:-}
reader=${READER:-oltp_point_select}
writer=${WRITER:-oltp_insert}
reader_sql=${READER_SQL:-}
writer_sql=${WRITER_SQL:-}
[ -n "$reader_sql" ] && reader=bench/text-point.lua
[ -n "$writer_sql" ] && writer=bench/text-point.lua
writes_to=${WRITES_TO:-target}
ps_mode=${PS_MODE:-disable}
read -r -a reader_args <<<"${READER_ARGS:-}"
db=nc_insert_mix
host=${backend%:*}
port=${backend##*:}

command -v sysbench >/dev/null || { echo "sysbench is missing: apt-get install sysbench" >&2; exit 1; }

pids=()
logs=()
trap stop_listeners EXIT

proxy() {
  local dir=$1 name=$2
  start_listener "$name" "$dir" node src/cli/main.ts proxy --listen 127.0.0.1:0 \
    --backend "$backend" --workers "$workers" --query-cache-size "$cache" --admin-user root
}

mariadb -h"$host" -P"$port" -uroot -e "DROP DATABASE IF EXISTS $db; CREATE DATABASE $db"
sysbench oltp_point_select --db-driver=mysql --mysql-host="$host" --mysql-port="$port" \
  --mysql-user=root --mysql-db=$db --tables=1 --table-size="$table_size" prepare >/dev/null
if [ -n "${SETUP_SQL:-}" ]; then mariadb -h"$host" -P"$port" -uroot "$db" -e "$SETUP_SQL"; fi

direct_port=$port
direct_pid=
proxy . this
targets="direct this"
if [ -n "$other" ]; then
  proxy "$other" other
  targets="$targets other"
fi

sb() {
  local test=$1 target_port=$2
  shift 2
  sysbench "$test" --db-driver=mysql --mysql-host="${host/localhost/127.0.0.1}" \
    --mysql-port="$target_port" --mysql-user=root --mysql-db=$db --tables=1 \
    --table-size="$table_size" --db-ps-mode="$ps_mode" --time="$seconds" "$@" run
}
hits() {
  mariadb -h127.0.0.1 -P"$1" -uroot -Nse "SHOW GLOBAL STATUS LIKE 'Qcache_hits'" | awk '{ print $2 }'
}
per_second() { awk '/queries:/ && !/performed/ { gsub(/\(/, "", $3); print $3 }'; }
total() { awk '/queries:/ && !/performed/ { print $2 }'; }

echo "sysbench $(sysbench --version | awk '{print $2}'), $(mariadb -h"$host" -P"$port" -uroot -Nse 'SELECT VERSION()'), $(nproc) cores; ${reader_sql:-$reader} 8 threads + ${writer_sql:-$writer} 1 thread at $insert_rate/s (to the $writes_to), ps-mode $ps_mode ${READER_ARGS:-}, $table_size rows, ${seconds}s per run, $rounds round(s), cache $cache, $workers workers"
echo
echo "| round | target | reads/s | writes/s | hit ratio | proxy CPU µs/query |"
echo "|---|---|---|---|---|---|"
step=0
for round in $(seq 1 "$rounds"); do
  set -- $targets
  for _ in $(seq 1 $((step % $#))); do set -- "${@:2}" "$1"; done
  step=$((step + 1))
  for target in "$@"; do
    p="${target}_port"
    pid="${target}_pid"
    hits_before=0
    before=0
    if [ "$target" != direct ]; then
      # Warm the hot rows first, as a long run would have them.
      POINT_SQL=$reader_sql sb "$reader" "${!p}" --threads=8 --time=3 "${reader_args[@]}" >/dev/null
      hits_before=$(hits "${!p}")
      before=$(ticks "${!pid}")
    fi
    inserts_log=$(mktemp)
    logs+=("$inserts_log")
    writer_port=${!p}
    [ "$writes_to" = direct ] && writer_port=$direct_port
    POINT_SQL=$writer_sql sb "$writer" "$writer_port" --threads=1 --rate="$insert_rate" >"$inserts_log" 2>&1 &
    inserter=$!
    reads=$(POINT_SQL=$reader_sql sb "$reader" "${!p}" --threads=8 "${reader_args[@]}")
    wait "$inserter"
    if echo "$reads" | grep -q FATAL || grep -q FATAL "$inserts_log"; then
      echo "$reads" >&2
      cat "$inserts_log" >&2
      exit 1
    fi
    selects=$(echo "$reads" | total)
    inserts=$(total <"$inserts_log")
    ratio=-
    cpu=-
    if [ "$target" != direct ]; then
      after=$(ticks "${!pid}")
      ratio=$(awk -v h=$(($(hits "${!p}") - hits_before)) -v q="$selects" 'BEGIN { printf "%.1f%%", 100 * h / q }')
      cpu=$(awk -v t=$((after - before)) -v u="$tick_us" -v q=$((selects + inserts)) 'BEGIN { printf "%.1f", t * u / q }')
    fi
    printf '| %s | %s | %s | %s | %s | %s |\n' "$round" "$target" "$(echo "$reads" | per_second)" \
      "$(per_second <"$inserts_log")" "$ratio" "$cpu"
  done
done

mariadb -h"$host" -P"$port" -uroot -e "DROP DATABASE IF EXISTS $db"
