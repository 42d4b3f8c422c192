# Shared by the benchmark scripts: sourced, not run.

# Sets JAR to the benchmarks jar (JAR, when set already, names another build's), and exits
# with the build command when it is missing.
benchmarks_jar() {
  JAR=${JAR:-benchmarks/target/benchmarks.jar}
  if [[ ! -f "$JAR" ]]; then
    echo "Build first: ./mvnw -B -ntp -q -pl benchmarks -am package -DskipTests" >&2
    exit 1
  fi
}

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

# Sets MODULE and JAR for the sample named by SAMPLE (servlet or webflux); JAR, when set
# already, names another build's jar. Exits with the build command when the jar is missing.
sample_jar() {
  case "$SAMPLE" in
    servlet) MODULE=sample-app ;;
    webflux) MODULE=sample-webflux-app ;;
    *) echo "SAMPLE must be servlet or webflux: $SAMPLE" >&2; exit 1 ;;
  esac
  JAR=${JAR:-$MODULE/target/$MODULE.jar}
  if [[ ! -f "$JAR" ]]; then
    echo "Build first: ./mvnw -B -ntp -q -pl $MODULE -am clean package -DskipTests" >&2
    exit 1
  fi
}

# Sets ROUTE to the arguments that replace the sample's routes with the HTTP benchmarks'
# one limit: GET on the pattern $1, keyed on the client IP, a sliding window counter with
# a capacity no benchmark reaches. (A list is bound from one property source, so the
# sample's per-IP route on /** is left out too.) Call it with globbing off (set -f).
search_route() {
  ROUTE=(--ratelimit.routes[0].path="$1" --ratelimit.routes[0].methods=GET
    --ratelimit.routes[0].algorithm=sliding-window-counter --ratelimit.routes[0].capacity=1000000000
    --ratelimit.routes[0].period=1s --ratelimit.routes[0].key=ip)
}

# Starts a PostgreSQL server of its own (initdb in a new directory) on a free loopback port,
# and stops it (and removes the directory) when the script exits. PostgreSQL refuses to run
# as root, so as root the server runs as the user postgres, on a directory that user owns.
# PG_BIN names the directory of initdb and pg_ctl (the first on PATH unless set); PG_OPTS
# adds server settings (-c name=value ...) to max_connections=200; PG_CPUS, when set, pins
# the server to those CPUs (taskset -c). Sets PG_WORK, PG_PORT and PG_PID (the postmaster).
start_postgres() {
  local bin=${PG_BIN:-$(dirname "$(command -v pg_ctl)")}
  local as=()
  PG_WORK=$(mktemp -d)
  PG_PORT=$(free_port)
  if [[ $(id -u) == 0 ]]; then
    chown postgres "$PG_WORK"
    as=(runuser -u postgres --)
  fi
  local pin=()
  [[ -n "${PG_CPUS:-}" ]] && pin=(taskset -c "$PG_CPUS")
  "${as[@]}" "$bin/initdb" -D "$PG_WORK/data" -U postgres -A trust -E UTF8 --no-instructions >"$PG_WORK/initdb.log"
  trap 'stop_postgres' EXIT
  # shellcheck disable=SC2086
  "${pin[@]}" "${as[@]}" "$bin/pg_ctl" -D "$PG_WORK/data" -l "$PG_WORK/postgres.log" -w -o \
    "-p $PG_PORT -k $PG_WORK -c listen_addresses=127.0.0.1 -c max_connections=200 ${PG_OPTS:-}" start >/dev/null
  PG_PID=$(head -1 "$PG_WORK/data/postmaster.pid")
  PG_STOP=("${as[@]}" "$bin/pg_ctl" -D "$PG_WORK/data" -m fast -w stop)
  PSQL=("${as[@]}" psql -h 127.0.0.1 -p "$PG_PORT" -U postgres -v ON_ERROR_STOP=1 -q)
}

stop_postgres() {
  "${PG_STOP[@]}" >/dev/null 2>&1 || true
  rm -rf "$PG_WORK"
}
