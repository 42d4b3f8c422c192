#!/usr/bin/env bash
# HTTP overhead of the limiter (docs/benchmarks.md, section 3).
#
# Starts a dedicated redis-server and three instances of the sample application on free
# loopback ports: the limiter disabled (ratelimit.enabled=false), the in-memory store, and
# the Redis store. The endpoint is GET /api/search?q=cable, which Spring Security permits
# anonymously and which only the sample's ratelimit.routes entry limits (in the servlet
# filter, keyed on the client IP); its capacity is raised on the command line so that the
# limiter admits every request and the run measures what a decision costs, not rejections.
# After a warm-up of each instance, wrk measures them in turn, in a different order each
# round, and the script prints every run and the medians. Besides wrk's requests/s and
# latencies, it reports the CPU time the application used per request (from
# /proc/<pid>/stat), which other load on the machine disturbs far less than throughput.
# JAR=<path> measures another build of the sample (an earlier release, for a before/after run).
# BEFORE_JAR=<path> adds a fourth instance, "before": the in-memory store on that build of the
# sample, measured in the same rounds as the others, so that two builds are compared side by
# side rather than in runs minutes apart.
# LOCAL_FIRST=1 adds an instance "local-first": the Redis store in local-first mode
# (ratelimit.redis.mode=local-first, default sync interval) on the same redis-server.
# TWIN=1 adds a mode "twin": the in-memory instance's unlimited twin of the endpoint,
# GET /api/search/products?q=cable (the same handler; the route then limits /api/search
# alone), measured in the same rounds on the same process, so that the limited and the
# unlimited handler are compared in one JVM, with one JIT's compiled code, rather than
# across two launches that compile differently; the summary adds memory ÷ twin.
# INSTANCES (off memory redis) chooses which of the three instances run; with TWIN=1,
# INSTANCES=memory measures the limited handler and its twin alone, so that more rounds fit
# in the same time (ratios against off are then left out).
# ROUTE_PATH sets the limited route's pattern instead. With TWIN=1 it gives two controls:
# ROUTE_PATH=/api/none limits neither endpoint (memory ÷ twin then measures how the two
# endpoints differ without the limiter), and ROUTE_PATH=/api/search/products limits the
# twin instead of the first endpoint (the ratio then compares them the other way round).
# CROSSED=1 (with TWIN=1) runs both in one go: a second in-memory instance, "crossed",
# limits /api/search/products and leaves /api/search unlimited ("crossed-twin"), measured
# in the same rounds. The two endpoints do not cost the same without the limiter, so
# memory ÷ twin mixes the limiter's cost with their difference; the geometric mean of
# memory ÷ twin and crossed ÷ crossed-twin, round by round, cancels the difference and
# leaves the limiter's cost.
# SAMPLE=webflux measures the reactive sample (sample-webflux-app, the same route limit in a
# WebFilter before Spring Security) instead of the servlet one.
# Needs wrk (Debian: apt-get install wrk), redis-server, curl and the sample jar, built with
# clean: a plain package keeps a sample jar whose own sources did not change, with the
# starter it was first built with:
#   ./mvnw -B -ntp -q -pl sample-app -am clean package -DskipTests   (or -pl sample-webflux-app)
# Environment: ROUNDS (5), DURATION (20s), WARMUP (30s), THREADS (2), CONNECTIONS (32),
# JAVA_OPTS (-Xms512m -Xmx512m), APP_CPUS and LOAD_CPUS (taskset CPU lists that pin the
# application instances and wrk to disjoint cores, for example APP_CPUS=0 LOAD_CPUS=1 with
# JAVA_OPTS="-Xms512m -Xmx512m -XX:ActiveProcessorCount=1"; unset, nothing is pinned).
set -euo pipefail
# the route pattern and list indexes below must reach Java as written, not as globs
set -f

cd "$(dirname "$0")/.."
source benchmarks/bench-lib.sh
SAMPLE=${SAMPLE:-servlet}
sample_jar
ROUNDS=${ROUNDS:-5}
DURATION=${DURATION:-20s}
WARMUP=${WARMUP:-30s}
THREADS=${THREADS:-2}
CONNECTIONS=${CONNECTIONS:-32}
JAVA_OPTS=${JAVA_OPTS:--Xms512m -Xmx512m}
APP_PIN=()
LOAD_PIN=()
[[ -n "${APP_CPUS:-}" ]] && APP_PIN=(taskset -c "$APP_CPUS")
[[ -n "${LOAD_CPUS:-}" ]] && LOAD_PIN=(taskset -c "$LOAD_CPUS")
ENDPOINT="/api/search?q=cable"

WORK=$(mktemp -d)
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do
    kill "$pid" 2>/dev/null || true
  done
  for pid in "${PIDS[@]}"; do
    wait "$pid" 2>/dev/null || true
  done
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

REDIS_PORT=$(free_port)
redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no --dir "$WORK" \
  --logfile "$WORK/redis.log" &
PIDS+=($!)

# The sample's routes, replaced whole by the benchmarks' one route limit
DEFAULT_ROUTE=/api/search/**
[[ "${TWIN:-0}" == 1 ]] && DEFAULT_ROUTE=/api/search
search_route "${ROUTE_PATH:-$DEFAULT_ROUTE}"
declare -A PORTS
declare -A APP_PID
declare -A ARGS
declare -A JARS
declare -A ENDPOINTS
ARGS[off]="--ratelimit.enabled=false"
ARGS[memory]="--ratelimit.store=memory ${ROUTE[*]}"
ARGS[redis]="--spring.profiles.active=redis --spring.data.redis.host=127.0.0.1 --spring.data.redis.port=$REDIS_PORT ${ROUTE[*]}"
read -r -a MODES <<< "${INSTANCES:-off memory redis}"
if [[ ${#MODES[@]} -eq 0 ]]; then
  echo "INSTANCES names no instance" >&2
  exit 1
fi
for mode in "${MODES[@]}"; do
  if [[ -z "${ARGS[$mode]:-}" || -n "${JARS[$mode]:-}" ]]; then
    echo "INSTANCES lists off, memory and redis, each once: $mode" >&2
    exit 1
  fi
  JARS[$mode]=$JAR
done
if [[ "${TWIN:-0}" == 1 && -z "${JARS[memory]:-}" ]]; then
  echo "TWIN=1 needs the memory instance in INSTANCES" >&2
  exit 1
fi
if [[ "${CROSSED:-0}" == 1 ]]; then
  if [[ "${TWIN:-0}" != 1 || -n "${ROUTE_PATH:-}" ]]; then
    echo "CROSSED=1 needs TWIN=1 and the default route (no ROUTE_PATH)" >&2
    exit 1
  fi
  # ROUTE is not read again below: the other instances' arguments are set already
  search_route /api/search/products
  ARGS[crossed]="--ratelimit.store=memory ${ROUTE[*]}"
  JARS[crossed]=$JAR
  MODES+=(crossed)
fi
if [[ "${LOCAL_FIRST:-0}" == 1 ]]; then
  ARGS[local-first]="${ARGS[redis]} --ratelimit.redis.mode=local-first"
  JARS[local-first]=$JAR
  MODES+=(local-first)
fi
if [[ -n "${BEFORE_JAR:-}" ]]; then
  if [[ ! -f "$BEFORE_JAR" ]]; then
    echo "BEFORE_JAR is not a file: $BEFORE_JAR" >&2
    exit 1
  fi
  ARGS[before]=${ARGS[memory]}
  JARS[before]=$BEFORE_JAR
  MODES+=(before)
fi

for mode in "${MODES[@]}"; do
  ENDPOINTS[$mode]=$ENDPOINT
  PORTS[$mode]=$(free_port)
  # shellcheck disable=SC2086
  "${APP_PIN[@]}" java $JAVA_OPTS -jar "${JARS[$mode]}" --server.port="${PORTS[$mode]}" --server.address=127.0.0.1 ${ARGS[$mode]} \
    > "$WORK/$mode.log" 2>&1 &
  PIDS+=($!)
  APP_PID[$mode]=$!
  await_http "http://127.0.0.1:${PORTS[$mode]}$ENDPOINT" "$WORK/$mode.log"
  # the crossed instance limits another path: its headers are counted below, on that path
  [[ $mode == crossed ]] ||
    echo "# $mode: $(curl -s -D - -o /dev/null "http://127.0.0.1:${PORTS[$mode]}$ENDPOINT" | grep -ci '^ratelimit') RateLimit headers"
done

if [[ "${TWIN:-0}" == 1 ]]; then
  # not a process of its own: the memory instance, on the unlimited twin of the endpoint
  PORTS[twin]=${PORTS[memory]}
  APP_PID[twin]=${APP_PID[memory]}
  ENDPOINTS[twin]="/api/search/products?q=cable"
  echo "# twin: $(curl -s -D - -o /dev/null "http://127.0.0.1:${PORTS[twin]}${ENDPOINTS[twin]}" | grep -ci '^ratelimit') RateLimit headers"
  MODES+=(twin)
fi
if [[ "${CROSSED:-0}" == 1 ]]; then
  # the crossed instance is measured on the path it limits, its twin on the one it does not
  ENDPOINTS[crossed]="/api/search/products?q=cable"
  echo "# crossed: $(curl -s -D - -o /dev/null "http://127.0.0.1:${PORTS[crossed]}${ENDPOINTS[crossed]}" | grep -ci '^ratelimit') RateLimit headers"
  PORTS[crossed-twin]=${PORTS[crossed]}
  APP_PID[crossed-twin]=${APP_PID[crossed]}
  ENDPOINTS[crossed-twin]=$ENDPOINT
  echo "# crossed-twin: $(curl -s -D - -o /dev/null "http://127.0.0.1:${PORTS[crossed-twin]}${ENDPOINTS[crossed-twin]}" | grep -ci '^ratelimit') RateLimit headers"
  MODES+=(crossed-twin)
fi

echo "# machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
echo "# $(java -version 2>&1 | head -1), $(wrk --version 2>&1 | head -1 | cut -d' ' -f1-2), JAVA_OPTS=$JAVA_OPTS"
echo "# wrk -t$THREADS -c$CONNECTIONS -d$DURATION --latency, warm-up $WARMUP per instance, sample $SAMPLE," \
  "application on CPUs ${APP_CPUS:-any}, wrk on CPUs ${LOAD_CPUS:-any}"
echo "# load before: $(cut -d' ' -f1-3 /proc/loadavg)"

for mode in "${MODES[@]}"; do
  "${LOAD_PIN[@]}" wrk -t"$THREADS" -c"$CONNECTIONS" -d"$WARMUP" "http://127.0.0.1:${PORTS[$mode]}${ENDPOINTS[$mode]}" > /dev/null
done

RESULTS="$WORK/results"
: > "$RESULTS"

echo "| round | mode | requests/s | p50 µs | p90 µs | p99 µs | non-2xx | app CPU µs/request |"
echo "|---|---|---|---|---|---|---|---|"
order=("${MODES[@]}")
for round in $(seq 1 "$ROUNDS"); do
  for mode in "${order[@]}"; do
    wrk_measure "${APP_PID[$mode]}" "http://127.0.0.1:${PORTS[$mode]}${ENDPOINTS[$mode]}"
    echo "| $round | $mode | $WRK_RPS | $WRK_P50 | $WRK_P90 | $WRK_P99 | $WRK_ERRORS | $WRK_CPU |"
    echo "$round $mode $WRK_RPS $WRK_P50 $WRK_P90 $WRK_P99 $WRK_CPU" >> "$RESULTS"
  done
  # another order next round, so that no mode always runs first or last
  order=("${order[@]:1}" "${order[0]}")
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"

echo
echo "| mode | requests/s median (min–max) | p50 µs | p90 µs | p99 µs median (min–max)" \
  "| throughput vs off (median of rounds) | app CPU µs/request median (min–max) | CPU/request vs off (median of rounds) |"
echo "|---|---|---|---|---|---|---|---|"
# the median over rounds of a column's value for a mode divided by a base mode's (off
# unless given) in the same round
ratios() {
  awk -v m="$1" -v c="$2" -v b="${3:-off}" '$2 == b { off[$1] = $c } $2 == m { own[$1] = $c }
    END { for (r in own) if (r in off) printf "%.4f\n", own[r] / off[r] }' "$RESULTS"
}
paired() {
  local values
  values=$(ratios "$@")
  if [[ -z "$values" ]]; then
    echo "–"
  else
    median <<< "$values"
  fi
}
for mode in "${MODES[@]}"; do
  rows=$(awk -v m="$mode" '$2 == m' "$RESULTS")
  ratio=$(paired "$mode" 3)
  cpu_ratio=$(paired "$mode" 7)
  echo "| $mode | $(awk '{ print $3 }' <<< "$rows" | median) ($(awk '{ print $3 }' <<< "$rows" | spread))" \
    "| $(awk '{ print $4 }' <<< "$rows" | median) | $(awk '{ print $5 }' <<< "$rows" | median)" \
    "| $(awk '{ print $6 }' <<< "$rows" | median) ($(awk '{ print $6 }' <<< "$rows" | spread)) | $ratio" \
    "| $(awk '{ print $7 }' <<< "$rows" | median) ($(awk '{ print $7 }' <<< "$rows" | spread)) | $cpu_ratio |"
done
if [[ "${TWIN:-0}" == 1 ]]; then
  twin_ratios=$(ratios memory 7 twin)
  echo
  echo "memory ÷ twin, the limited handler against its unlimited twin in the same process (median of rounds):" \
    "CPU per request $(summarise "$twin_ratios"), throughput $(paired memory 3 twin)"
fi
if [[ "${CROSSED:-0}" == 1 ]]; then
  crossed_ratios=$(ratios crossed 7 crossed-twin)
  echo
  echo "crossed ÷ crossed-twin, the other endpoint limited (median of rounds): CPU per request" \
    "$(summarise "$crossed_ratios")"
  both=$(awk '$2 == "memory" { m[$1] = $7 } $2 == "twin" { t[$1] = $7 } $2 == "crossed" { c[$1] = $7 }
    $2 == "crossed-twin" { u[$1] = $7 } END { for (r in m) if ((r in t) && (r in c) && (r in u))
    printf "%.4f\n", sqrt(m[r] / t[r] * c[r] / u[r]) }' "$RESULTS")
  echo
  echo "the limiter's cost with the endpoints' own difference cancelled, the geometric mean of both ratios" \
    "(median of rounds): CPU per request $(summarise "$both")"
fi
