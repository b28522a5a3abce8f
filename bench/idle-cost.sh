#!/usr/bin/env bash
# What an idle proxy costs the machine: a proxy (cache on, one client connected and silent) left
# alone for a while, its wake-ups per second (voluntary context switches, every thread) and its
# CPU per second. With OTHER=<checkout>, that checkout's proxy is measured the same way after it.
#
#   [OTHER=<checkout>] bash bench/idle-cost.sh [seconds, default 10]
#
# Environment: BACKEND (default 127.0.0.1:3306), WORKERS (default 2), OTHER.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
export PATH="$PWD/node_modules/.bin:$PATH"

seconds=${1:-10}
backend=${BACKEND:-127.0.0.1:3306}
workers=${WORKERS:-2}

proxy_pid=
client_pid=
log=$(mktemp)
cleanup() {
  if [ -n "$client_pid" ]; then kill "$client_pid" 2>/dev/null || true; fi
  stop_proxy
  rm -f "$log"
}
trap cleanup EXIT

# switches PID: voluntary context switches of every thread of PID so far.
switches() {
  local total=0 count
  for status in /proc/"$1"/task/*/status; do
    count=$(awk '/^voluntary_ctxt_switches/ { print $2 }' "$status" 2>/dev/null || echo 0)
    total=$((total + ${count:-0}))
  done
  echo "$total"
}

# measure NAME DIR
measure() {
  local name=$1 dir=$2 port before_switches before_ticks after_switches after_ticks
  (cd "$dir" && exec node --disable-sigusr1 src/cli/main.ts proxy --listen 127.0.0.1:0 \
    --backend "$backend" --workers "$workers" --query-cache-size 64M) 2>"$log" &
  proxy_pid=$!
  port=$(listening_port "$log") || exit 1
  # A client logged in and silent, as an application's pool keeps them: the CLI waiting on its
  # input, which ends by itself a little after the measurement.
  sleep $((seconds + 5)) | mariadb -h127.0.0.1 -P"$port" -uroot >/dev/null 2>&1 &
  client_pid=$!
  sleep 2
  before_switches=$(switches "$proxy_pid")
  before_ticks=$(ticks "$proxy_pid")
  sleep "$seconds"
  after_switches=$(switches "$proxy_pid")
  after_ticks=$(ticks "$proxy_pid")
  kill "$client_pid" 2>/dev/null || true
  wait "$client_pid" 2>/dev/null || true
  client_pid=
  stop_proxy
  awk -v name="$name" -v s="$seconds" -v w=$((after_switches - before_switches)) \
    -v us=$(((after_ticks - before_ticks) * tick_us)) \
    'BEGIN { printf "| %s | %.0f | %.1f |\n", name, w / s, us / 1000 / s }'
}

echo "idle for ${seconds}s, $workers workers, one silent client"
echo
echo "| proxy | wake-ups per second | CPU ms per second |"
echo "|---|---|---|"
measure this "$PWD"
if [ -n "${OTHER:-}" ]; then measure other "$OTHER"; fi
