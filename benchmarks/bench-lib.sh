# Shared by the benchmark scripts: sourced, not run.

# Prints a loopback port nothing listens on.
free_port() {
  local port
  for _ in $(seq 1 50); do
    port=$((20000 + RANDOM % 40000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "$port"
      return
    fi
  done
  echo "no free port found" >&2
  exit 1
}

# Starts a redis-server of its own on a free loopback port, without persistence, and stops
# it (and removes its directory) when the script exits. Sets WORK (its directory, which the
# script may use too), PORT and REDIS_PID.
start_redis() {
  WORK=$(mktemp -d)
  PORT=$(free_port)
  redis-server --port "$PORT" --bind 127.0.0.1 --save '' --appendonly no --dir "$WORK" \
    --logfile "$WORK/redis.log" &
  REDIS_PID=$!
  trap 'kill "$REDIS_PID" 2>/dev/null; wait "$REDIS_PID" 2>/dev/null; rm -rf "$WORK"' EXIT
  for _ in $(seq 1 100); do
    redis-cli -p "$PORT" ping >/dev/null 2>&1 && break
    sleep 0.1
  done
}
