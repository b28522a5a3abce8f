# What the bench scripts share; sourced by them (`. bench/lib.sh` from the repository's root),
# never run on its own.

# listening_port LOG: waits up to 10 s for the "listening on HOST:PORT" line a proxy or the Node
# floor writes to LOG, and prints the port; without one, prints LOG to stderr and fails.
listening_port() {
  local log=$1 port
  for _ in $(seq 1 100); do grep -q 'listening on' "$log" && break; sleep 0.1; done
  port=$(sed -n 's/.*listening on [^ ]*:\([0-9]*\).*/\1/p' "$log" | head -n 1)
  [ -n "$port" ] || { cat "$log" >&2; return 1; }
  echo "$port"
}

# ticks PID: the CPU time (user + system) process PID has used so far, every thread included,
# in clock ticks; tick_us is a tick in microseconds.
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
tick_us=$((1000000 / $(getconf CLK_TCK)))

# stop_proxy: ends the proxy whose pid the script keeps in proxy_pid (if any) and waits for it.
stop_proxy() {
  if [ -n "${proxy_pid:-}" ]; then
    kill "$proxy_pid" 2>/dev/null || true
    wait "$proxy_pid" 2>/dev/null || true
    proxy_pid=
  fi
}

# start_listener NAME DIR COMMAND...: runs COMMAND in directory DIR in the background, its output
# in a temporary log, waits for its "listening on" line, and sets NAME_pid and NAME_port. The
# script keeps the pids in `pids` and the logs in `logs` (arrays it declares), to end and remove
# them.
start_listener() {
  local name=$1 dir=$2
  shift 2
  local log
  log=$(mktemp)
  logs+=("$log")
  (cd "$dir" && exec "$@") >"$log" 2>&1 &
  local pid=$!
  pids+=("$pid")
  local listen_port
  listen_port=$(listening_port "$log") || exit 1
  printf -v "${name}_pid" %s "$pid"
  printf -v "${name}_port" %s "$listen_port"
}

# stop_listeners: ends every process start_listener started (their pids in `pids`), waits for
# them, and removes their logs (in `logs`); for a script's EXIT trap.
stop_listeners() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -f "${logs[@]}"
}
