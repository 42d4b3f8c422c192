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

# User + system CPU time of the process $1, in clock ticks.
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

# Microseconds of a latency as wrk prints it, with its unit (us, ms, s).
micros() {
  awk '{ v = $1; if (v ~ /us$/) { sub(/us$/, "", v); print v } else if (v ~ /ms$/) { sub(/ms$/, "", v); print v * 1000 }
         else { sub(/s$/, "", v); print v * 1000000 } }' <<< "$1"
}

# One measured wrk run against the URL $2 while the process $1 serves it: wrk -t$THREADS
# -c$CONNECTIONS -d$DURATION, pinned by LOAD_PIN (an array, empty for none). Sets WRK_RPS,
# WRK_P50, WRK_P90, WRK_P99 (µs), WRK_ERRORS (non-2xx answers) and WRK_CPU, the process's
# CPU time per request in µs.
wrk_measure() {
  local before after out requests tick_micros
  tick_micros=$((1000000 / $(getconf CLK_TCK)))
  before=$(cpu_ticks "$1")
  out=$("${LOAD_PIN[@]}" wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" --latency "$2")
  after=$(cpu_ticks "$1")
  requests=$(awk '/requests in/ { print $1 }' <<< "$out")
  WRK_CPU=$(awk -v t=$((after - before)) -v n="$requests" -v u="$tick_micros" 'BEGIN { printf "%.1f", t * u / n }')
  WRK_RPS=$(awk '/^Requests\/sec/ { print $2 }' <<< "$out")
  WRK_P50=$(micros "$(awk '$1 == "50%" { print $2 }' <<< "$out")")
  WRK_P90=$(micros "$(awk '$1 == "90%" { print $2 }' <<< "$out")")
  WRK_P99=$(micros "$(awk '$1 == "99%" { print $2 }' <<< "$out")")
  WRK_ERRORS=$(awk '/Non-2xx/ { print $5 }' <<< "$out")
  WRK_ERRORS=${WRK_ERRORS:-0}
}

# The median, and the range as min–max, of the numbers on standard input, one a line.
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
spread() { sort -g | awk 'NR == 1 { min = $1 } { max = $1 } END { print min "–" max }'; }

# The median of the round ratios in $1 (one a line), how many are above 1, and the ranks
# of the ratios that hold the median with 95% confidence (sign test).
summarise() {
  local interval
  interval=$(sort -g <<< "$1" | awk '{ v[NR] = $1 } END { lo = int(NR / 2 - 0.98 * sqrt(NR));
    hi = int(NR / 2 + 0.98 * sqrt(NR)); if (hi < NR / 2 + 0.98 * sqrt(NR)) hi++; if (lo < 1) lo = 1; if (hi > NR) hi = NR;
    print v[lo] "–" v[hi] " (ranks " lo " and " hi " of " NR ")" }')
  echo "$(median <<< "$1") (rounds $(spread <<< "$1"), above 1 in $(awk '$1 > 1' <<< "$1" | wc -l)" \
    "of $(wc -l <<< "$1"); 95% interval of the median $interval)"
}

# Polls the URL $1 until it answers 200, for at most 5 minutes; otherwise prints the last
# lines of the log $2 and exits.
await_http() {
  for _ in $(seq 1 600); do
    [[ "$(curl -s -o /dev/null -w '%{http_code}' "$1")" == 200 ]] && return
    sleep 0.5
  done
  echo "$1 did not answer within 5 minutes; the log:" >&2
  tail -30 "$2" >&2
  exit 1
}
