#!/usr/bin/env bash
# This checkout against another one (BASELINE_DIR, e.g. the previous release), side by side on
# one sysbench workload: tps, the proxy's CPU and the database server's CPU per transaction
# (/proc/PID/stat), the server's SELECTs per transaction, and the deferred-transaction
# counters. Rounds alternate which target goes first. Needs the nc_admission tables that
# bench/admission.sh prepares (1 x 200 000 rows).
#
#   BASELINE_DIR=<checkout> bash bench/transaction-compare.sh [seconds] [rounds] [workload]
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
secs=${1:-10}; rounds=${2:-2}; wl=${3:-oltp_read_only}
base_dir=${BASELINE_DIR:?BASELINE_DIR: a second nicecache checkout to compare with}
export PATH="$PWD/node_modules/.bin:$PATH"
srv=$(pgrep -x mariadbd | head -1)
declare -A pid port
trap 'kill "${pid[@]}" 2>/dev/null || true' EXIT
i=0
for name in new base; do
  dir=.; [ $name = base ] && dir=$base_dir
  p=$((7400 + i)); i=$((i+1))
  node "$dir/src/cli/main.ts" proxy --listen 127.0.0.1:$p --workers 1 --query-cache-size 100M --admin-user root >/dev/null 2>&1 &
  pid[$name]=$!; port[$name]=$p
done
sleep 2
echo "| round | target | tps | proxy µs/txn | server µs/txn | server SELECT/txn |"
for r in $(seq 1 $rounds); do
  order="new base"; [ $((r % 2)) = 0 ] && order="base new"
  for name in $order; do
    s0=$(ticks $srv); p0=$(ticks ${pid[$name]}); c0=$(mariadb -h127.0.0.1 -uroot -Nse "SHOW GLOBAL STATUS LIKE 'Com_select'" | awk '{print $2}')
    out=$(sysbench $wl --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=${port[$name]} --mysql-user=root --mysql-db=nc_admission --tables=1 --table-size=200000 --db-ps-mode=disable --threads=8 --time=$secs run)
    s1=$(ticks $srv); p1=$(ticks ${pid[$name]}); c1=$(mariadb -h127.0.0.1 -uroot -Nse "SHOW GLOBAL STATUS LIKE 'Com_select'" | awk '{print $2}')
    n=$(echo "$out" | awk '/transactions:/ { print $2 }'); tps=$(echo "$out" | awk '/transactions:/ { gsub(/\(/, "", $3); print $3 }')
    awk -v r=$r -v t=$name -v tps=$tps -v n=$n -v p=$(( (p1-p0)*tick_us )) -v s=$(( (s1-s0)*tick_us )) -v c=$((c1-c0)) 'BEGIN { printf "| %d | %s | %.1f | %.0f | %.0f | %.2f |\n", r, t, tps, p/n, s/n, c/n }'
  done
done
for name in new base; do
  echo "$name: $(mariadb -h127.0.0.1 -P${port[$name]} -uroot -Nse "SHOW GLOBAL STATUS LIKE 'Qcache_%'" | grep -E 'transaction|commits_deferred' | tr '\n\t' '  ')"
done
