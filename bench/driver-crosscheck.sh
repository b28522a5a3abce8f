#!/usr/bin/env bash
# The built-in driver against the installed sysbench on the same server and workload, run after
# run (alternating which goes first), to show the two measure the same thing and where the
# built-in driver's own CPU starts to cost throughput.
#
#   bash bench/driver-crosscheck.sh [seconds per run, default 10]
#
# Environment: TARGET (default mysql://root@127.0.0.1:3306/sbtest), THREADS (default "1 2 8 32"),
# WORKLOAD (default oltp_read_only), PS_MODE (default disable), TABLE_SIZE (default 100000).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/node_modules/.bin:$PATH"

seconds=${1:-10}
target=${TARGET:-mysql://root@127.0.0.1:3306/sbtest}
threads_list=${THREADS:-1 2 8 32}
workload=${WORKLOAD:-oltp_read_only}
ps_mode=${PS_MODE:-disable}
table_size=${TABLE_SIZE:-100000}
reports=$(mktemp -d)
trap 'rm -rf "$reports"' EXIT

run() {
  local driver=$1 threads=$2
  node src/cli/main.ts bench run --target "db=$target" --driver "$driver" --threads "$threads" \
    --duration "$seconds" --warmup 2 --workload "$workload" --db-ps-mode "$ps_mode" \
    --table-size "$table_size" --report-dir "$reports/$driver-$threads" >/dev/null 2>"$reports/log"
  node -e '
    const fs = require("fs");
    const dir = process.argv[1];
    const file = fs.readdirSync(dir).find((name) => name.endsWith(".json"));
    const step = JSON.parse(fs.readFileSync(`${dir}/${file}`, "utf8")).steps[0];
    console.log(`${step.tps.toFixed(1)} ${step.driverCpu.toFixed(0)}`);
  ' "$reports/$driver-$threads"
}

echo "$workload, --db-ps-mode=$ps_mode, 1 table x $table_size rows, ${seconds}s per run, $(nproc) cores"
echo
echo "| threads | sysbench tps | built-in tps | built-in/sysbench | sysbench CPU % | built-in CPU % |"
echo "|---|---|---|---|---|---|"
step=0
for threads in $threads_list; do
  if [ $((step % 2)) -eq 0 ]; then order="sysbench builtin"; else order="builtin sysbench"; fi
  step=$((step + 1))
  for driver in $order; do
    read -r tps cpu < <(run "$driver" "$threads")
    if [ "$driver" = sysbench ]; then sb_tps=$tps; sb_cpu=$cpu; else bi_tps=$tps; bi_cpu=$cpu; fi
  done
  ratio=$(awk -v a="$bi_tps" -v b="$sb_tps" 'BEGIN { printf "%.2f", a / b }')
  echo "| $threads | $sb_tps | $bi_tps | $ratio | $sb_cpu | $bi_cpu |"
done
