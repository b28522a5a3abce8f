#!/usr/bin/env bash
# What TLS and compression cost the proxy, as ratios measured side by side in one run: sysbench
# oltp_point_select (text protocol, 8 threads, a small table, so every SELECT of a cache target
# is a hit once warm) against a throwaway MariaDB that has a certificate, through
#   hit          nicecache with its cache on, clients in the clear
#   hit_tls      the same, clients on TLS (--tls-cert; sysbench --mysql-ssl=on)
#   hit_zlib     the same proxy as hit, clients on the compressed protocol
#                (sysbench --mysql-compression=on)
#   relay        nicecache as a plain relay (--query-cache-size 0), both legs in the clear
#   relay_server the relay with TLS to the server (--backend-tls required)
#   relay_both   the relay with TLS on both legs
#   relay_zlib   the same proxy as relay, clients on the compressed protocol
# and the Node floor (bench/node-floor.ts), targets in rotating order; CPU per query from
# /proc/PID/stat (user + system, all threads).
#
#   bash bench/transport-cost.sh [seconds per run, default 10] [rounds, default 2]
#
# Environment: THREADS (default 8), TABLE_SIZE (default 1000).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
export PATH="$PWD/node_modules/.bin:$PATH"

seconds=${1:-10}
rounds=${2:-2}
threads=${THREADS:-8}
table_size=${TABLE_SIZE:-1000}
db=sbtest

command -v sysbench >/dev/null || { echo "sysbench is missing: apt-get install sysbench" >&2; exit 1; }
command -v openssl >/dev/null || { echo "openssl is missing: apt-get install openssl" >&2; exit 1; }

work=$(mktemp -d)
pids=()
logs=()
cleanup() {
  stop_listeners
  rm -rf "$work"
}
trap cleanup EXIT

openssl req -x509 -newkey rsa:2048 -nodes -keyout "$work/key.pem" -out "$work/cert.pem" \
  -days 2 -subj /CN=localhost -addext 'subjectAltName=IP:127.0.0.1,DNS:localhost' 2>/dev/null
chmod 644 "$work/key.pem"
# sysbench's --mysql-ssl=on reads these names from its working directory (the proxy asks for no
# client certificate, so any pair does).
cp "$work/cert.pem" "$work/cacert.pem"
cp "$work/cert.pem" "$work/client-cert.pem"
cp "$work/key.pem" "$work/client-key.pem"

node src/cli/main.ts mariadb --set "ssl_cert=$work/cert.pem" --set "ssl_key=$work/key.pem" \
  --port-file "$work/server.port" >"$work/server.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 600); do [ -s "$work/server.port" ] && break; sleep 0.1; done
[ -s "$work/server.port" ] || { cat "$work/server.log" >&2; exit 1; }
server_port=$(cat "$work/server.port")
mariadb -h127.0.0.1 -P"$server_port" -uroot -e "CREATE DATABASE IF NOT EXISTS $db"
sysbench oltp_point_select --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$server_port" \
  --mysql-user=root --mysql-db=$db --tables=1 --table-size="$table_size" prepare >/dev/null

proxy() {
  local name=$1
  shift
  start_listener "$name" . node src/cli/main.ts proxy --listen 127.0.0.1:0 \
    --backend "127.0.0.1:$server_port" --workers 1 "$@"
}

client_tls=(--tls-cert "$work/cert.pem" --tls-key "$work/key.pem")
start_listener floor . node bench/node-floor.ts 0
proxy hit --query-cache-size 64M --backend-tls off
proxy hit_tls --query-cache-size 64M --backend-tls off "${client_tls[@]}"
proxy relay --query-cache-size 0 --backend-tls off
proxy relay_server --query-cache-size 0 --backend-tls required
proxy relay_both --query-cache-size 0 --backend-tls required "${client_tls[@]}"
# The compressing clients talk to the same proxies as those in the clear.
hit_zlib_pid=$hit_pid hit_zlib_port=$hit_port
relay_zlib_pid=$relay_pid relay_zlib_port=$relay_port
targets="floor hit hit_tls hit_zlib relay relay_server relay_both relay_zlib"

ssl_of() { case $1 in hit_tls | relay_both) echo on ;; *) echo off ;; esac; }
compression_of() { case $1 in *_zlib) echo on ;; *) echo off ;; esac; }
sb() {
  local target=$1 time=$2 port="${1}_port"
  (cd "$work" && sysbench oltp_point_select --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="${!port}" \
    --mysql-user=root --mysql-db=$db --tables=1 --table-size="$table_size" --threads="$threads" \
    --db-ps-mode=disable --mysql-ssl="$(ssl_of "$target")" \
    --mysql-compression="$(compression_of "$target")" --time="$time" run)
}

# Every key cached before measuring (TLS and compression change no reply's packets, so the
# clients of all three hit targets share these results).
sb hit 3 >/dev/null
sb hit_tls 3 >/dev/null
sb hit_zlib 3 >/dev/null

echo "sysbench $(sysbench --version | awk '{print $2}'), $(mariadb -h127.0.0.1 -P"$server_port" -uroot -Nse 'SELECT VERSION()'), $(nproc) cores, oltp_point_select (text), $threads threads, $table_size rows, ${seconds}s per run, $rounds round(s), proxy workers: 1"
echo
echo "| target | qps | CPU µs/query | ÷ floor | ÷ in the clear |"
echo "|---|---|---|---|---|"
declare -A cpu_sum qps_sum
for target in $targets; do cpu_sum[$target]=0; qps_sum[$target]=0; done
step=0
for _ in $(seq 1 "$rounds"); do
  set -- $targets
  for _ in $(seq 1 $((step % $#))); do set -- "${@:2}" "$1"; done
  step=$((step + 1))
  for target in "$@"; do
    pid="${target}_pid"
    before=$(ticks "${!pid}")
    out=$(sb "$target" "$seconds")
    after=$(ticks "${!pid}")
    if echo "$out" | grep -q 'FATAL'; then echo "$out" >&2; exit 1; fi
    queries=$(echo "$out" | awk '/queries:/ && !/performed/ { print $2 }')
    qps=$(echo "$out" | awk '/queries:/ && !/performed/ { gsub(/\(/, "", $3); print $3 }')
    cpu_sum[$target]=$(awk -v s="${cpu_sum[$target]}" -v t=$((after - before)) -v u="$tick_us" -v q="$queries" 'BEGIN { print s + t * u / q }')
    qps_sum[$target]=$(awk -v s="${qps_sum[$target]}" -v q="$qps" 'BEGIN { print s + q }')
  done
done
mean() { awk -v s="$1" -v n="$rounds" 'BEGIN { print s / n }'; }
floor_cpu=$(mean "${cpu_sum[floor]}")
for target in $targets; do
  case $target in hit_tls | hit_zlib) plain=hit ;; relay_server | relay_both | relay_zlib) plain=relay ;; *) plain=$target ;; esac
  awk -v target="$target" -v c="$(mean "${cpu_sum[$target]}")" -v q="$(mean "${qps_sum[$target]}")" \
    -v f="$floor_cpu" -v p="$(mean "${cpu_sum[$plain]}")" \
    'BEGIN { printf "| %s | %.0f | %.1f | %.2f | %.2f |\n", target, q, c, c / f, c / p }'
done
