#!/usr/bin/env bash
# What a limit costs on the smallest handler (docs/benchmarks.md, section 9).
#
# Starts the minimal application (benchmarks/minimal-app: GET handlers answering "ok",
# no security, actuator and Micrometer present) twice per stack, pinned to APP_CPUS with
# -XX:ActiveProcessorCount=1, and measures with wrk pinned to LOAD_CPUS, in alternating
# rounds, the CPU time the application spends per request (from /proc/<pid>/stat) on:
#   ours          a path limited by this library: one ratelimit.routes entry keyed on the
#                 client IP, a capacity no run reaches, IETF headers and metrics on (the
#                 defaults), in the servlet filter or the WebFlux web filter;
#   resilience4j  a handler annotated @RateLimiter(name = "minimal") (resilience4j-spring-boot4),
#                 limit-for-period so high that it never rejects;
#   plain         the unlimited twin of each: the same handler on a path nothing limits.
# Every limited path has a twin, and the two launches cross them: launch x limits /ours/a
# and /r4j/a and leaves /ours/b and /r4j/b unlimited, launch y the other way round. Two
# paths do not cost quite the same without a limit, so one launch's limited ÷ twin mixes
# the limiter's cost with the paths' difference; the geometric mean of x's and y's ratios,
# round by round, cancels the difference (as http-bench.sh's CROSSED=1), and so does the
# mean of their differences in µs. Each mode runs once a round, in a new random order
# each round. The script prints every run, the medians, ours ÷ plain and resilience4j ÷ plain
# with the µs over plain, and writes the same as markdown to OUT.
# Needs wrk (Debian: apt-get install wrk), curl, taskset and the application jar:
#   ./mvnw -B -ntp -q -pl benchmarks/minimal-app -am package -DskipTests
# Environment: STACKS (servlet webflux), ROUNDS (10), DURATION (10s), WARMUP (60s, the load
# each launch gets before the rounds, shared among its four paths; whole seconds),
# THREADS (2), CONNECTIONS (32), APP_CPUS (0) and LOAD_CPUS (1) (taskset CPU lists; empty
# pins nothing), JAVA_OPTS (-Xms512m -Xmx512m -XX:ActiveProcessorCount=1), JAR (another
# build of the application), OUT (benchmarks/results/<date>-minimal-handler.md), NOTE (a
# line written at the top of OUT, for example that a run was short or the machine loaded).
set -euo pipefail
# the route pattern and list indexes below must reach Java as written, not as globs
set -f

cd "$(dirname "$0")/.."
source benchmarks/bench-lib.sh
JAR=${JAR:-benchmarks/minimal-app/target/minimal-app.jar}
if [[ ! -f "$JAR" ]]; then
  echo "Build first: ./mvnw -B -ntp -q -pl benchmarks/minimal-app -am package -DskipTests" >&2
  exit 1
fi
read -r -a STACK_LIST <<< "${STACKS:-servlet webflux}"
ROUNDS=${ROUNDS:-10}
DURATION=${DURATION:-10s}
WARMUP=${WARMUP:-60s}
THREADS=${THREADS:-2}
CONNECTIONS=${CONNECTIONS:-32}
APP_CPUS=${APP_CPUS-0}
LOAD_CPUS=${LOAD_CPUS-1}
JAVA_OPTS=${JAVA_OPTS:--Xms512m -Xmx512m -XX:ActiveProcessorCount=1}
OUT=${OUT:-benchmarks/results/$(date -u +%F)-minimal-handler.md}
APP_PIN=()
LOAD_PIN=()
[[ -n "$APP_CPUS" ]] && APP_PIN=(taskset -c "$APP_CPUS")
[[ -n "$LOAD_CPUS" ]] && LOAD_PIN=(taskset -c "$LOAD_CPUS")
if [[ ! "$WARMUP" =~ ^[0-9]+s?$ ]]; then
  echo "WARMUP is whole seconds (60 or 60s): $WARMUP" >&2
  exit 1
fi
# each of a launch's four paths gets a quarter of its warm-up
WARMUP_PATH=$(( ${WARMUP%s} / 4 > 0 ? ${WARMUP%s} / 4 : 1 ))s
command -v wrk >/dev/null || { echo "wrk is missing (Debian: apt-get install wrk)" >&2; exit 1; }

WORK=$(mktemp -d)
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do
    kill "$pid" 2>/dev/null || true
  done
  for pid in "${PIDS[@]}"; do
    wait "$pid" 2>/dev/null || true
  done
  PIDS=()
}
trap 'cleanup; rm -rf "$WORK"' EXIT
trap 'exit 130' INT TERM

# Markdown goes to standard output and to OUT; progress to standard error
mkdir -p "$(dirname "$OUT")"
exec 3> "$OUT"
say() { echo "$*"; echo "$*" >&3; }

# The modes of one stack: launch, path, and which handler answers the path
MODES=(x-ours x-ours-twin x-r4j x-r4j-twin y-ours y-ours-twin y-r4j y-r4j-twin)
declare -A LAUNCH=([x-ours]=x [x-ours-twin]=x [x-r4j]=x [x-r4j-twin]=x
  [y-ours]=y [y-ours-twin]=y [y-r4j]=y [y-r4j-twin]=y)
declare -A URL_PATH=([x-ours]=/ours/a [x-ours-twin]=/ours/b [x-r4j]=/r4j/a [x-r4j-twin]=/r4j/b
  [y-ours]=/ours/b [y-ours-twin]=/ours/a [y-r4j]=/r4j/b [y-r4j-twin]=/r4j/a)
declare -A HANDLER=([x-ours]=ours [x-ours-twin]=plain [x-r4j]=resilience4j [x-r4j-twin]=plain
  [y-ours]=ours [y-ours-twin]=plain [y-r4j]=resilience4j [y-r4j-twin]=plain)
declare -A PORT
declare -A APP_PID

# Starts launch $1 of the application on the stack $2 (servlet or reactive), limiting the
# paths $3 (this library) and $4 (Resilience4j), the twin of $4 being $5.
launch() {
  local port
  search_route "$3"
  port=$(free_port)
  # shellcheck disable=SC2086
  "${APP_PIN[@]}" java $JAVA_OPTS -jar "$JAR" --server.port="$port" --server.address=127.0.0.1 \
    --spring.main.web-application-type="$2" "${ROUTE[@]}" \
    --minimal.resilience4j.limited-path="$4" --minimal.resilience4j.unlimited-path="$5" \
    > "$WORK/$1.log" 2>&1 &
  PIDS+=($!)
  APP_PID[$1]=$!
  PORT[$1]=$port
  await_http "http://127.0.0.1:$port$3" "$WORK/$1.log"
}

RESULTS="$WORK/results"
: > "$RESULTS"
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
say "# Minimal handler: CPU per request, unlimited, this library and Resilience4j"
say
[[ -n "${NOTE:-}" ]] && { say "$NOTE"; say; }
say "Run $(date -u '+%F %H:%M') UTC at commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown):"
say
say '```sh'
say "STACKS=\"${STACK_LIST[*]}\" ROUNDS=$ROUNDS DURATION=$DURATION WARMUP=$WARMUP THREADS=$THREADS CONNECTIONS=$CONNECTIONS \\"
say "  APP_CPUS=$APP_CPUS LOAD_CPUS=$LOAD_CPUS JAVA_OPTS=\"$JAVA_OPTS\" benchmarks/minimal-bench.sh"
say '```'
say
say "Machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs);" \
  "$(java -version 2>&1 | head -1); $(wrk --version 2>&1 | head -1 | cut -d' ' -f1-2);" \
  "application on CPUs ${APP_CPUS:-any}, wrk (-t$THREADS -c$CONNECTIONS) on CPUs ${LOAD_CPUS:-any};" \
  "load average before: $LOAD_BEFORE."

for stack in "${STACK_LIST[@]}"; do
  case "$stack" in
    servlet) type=servlet ;;
    webflux) type=reactive ;;
    *) echo "STACKS lists servlet and webflux: $stack" >&2; exit 1 ;;
  esac
  echo "starting the $stack launches" >&2
  launch x "$type" /ours/a /r4j/a /r4j/b
  launch y "$type" /ours/b /r4j/b /r4j/a
  say
  say "## $stack"
  say
  for mode in "${MODES[@]}"; do
    headers=$(curl -s -D - -o /dev/null "http://127.0.0.1:${PORT[${LAUNCH[$mode]}]}${URL_PATH[$mode]}" | grep -ci '^ratelimit' || true)
    expected=0
    [[ ${HANDLER[$mode]} == ours ]] && expected=2
    if [[ $headers != "$expected" ]]; then
      echo "$mode (${URL_PATH[$mode]}) answered $headers RateLimit headers, not $expected" >&2
      exit 1
    fi
  done
  echo "warming up: $WARMUP_PATH on each of the ${#MODES[@]} paths" >&2
  warmed=()
  for mode in "${MODES[@]}"; do
    warmed+=("${LAUNCH[$mode]} ${URL_PATH[$mode]} $("${LOAD_PIN[@]}" wrk -t"$THREADS" -c"$CONNECTIONS" -d"$WARMUP_PATH" \
      "http://127.0.0.1:${PORT[${LAUNCH[$mode]}]}${URL_PATH[$mode]}" | awk '/requests in/ { print $1 }')")
  done
  # too few requests in the warm-up (a core shared with other work) leave the JIT unfinished
  say "Warm-up, $WARMUP_PATH a path, requests: $(IFS=,; echo "${warmed[*]}" | sed 's/,/, /g')."
  say

  say "| round | launch | path | handler | requests/s | p50 µs | p99 µs | non-2xx | CPU µs/request |"
  say "|---|---|---|---|---:|---:|---:|---:|---:|"
  for round in $(seq 1 "$ROUNDS"); do
    # a new order every round, so that no mode always runs first or last, nor always
    # right after the same one
    mapfile -t order < <(printf '%s\n' "${MODES[@]}" | shuf)
    for mode in "${order[@]}"; do
      wrk_measure "${APP_PID[${LAUNCH[$mode]}]}" "http://127.0.0.1:${PORT[${LAUNCH[$mode]}]}${URL_PATH[$mode]}"
      say "| $round | ${LAUNCH[$mode]} | ${URL_PATH[$mode]} | ${HANDLER[$mode]} | $WRK_RPS | $WRK_P50 | $WRK_P99 | $WRK_ERRORS | $WRK_CPU |"
      echo "$stack $round $mode $WRK_RPS $WRK_CPU $WRK_ERRORS" >> "$RESULTS"
    done
  done
  cleanup

  # per round: the mean CPU of each handler, the crossed ratios and the µs over the twins
  per_round=$(awk -v s="$stack" '$1 == s { c[$2 " " $3] = $5; r[$2] = 1 }
    END { for (n in r) {
      plain = (c[n " x-ours-twin"] + c[n " y-ours-twin"] + c[n " x-r4j-twin"] + c[n " y-r4j-twin"]) / 4
      ours = (c[n " x-ours"] + c[n " y-ours"]) / 2; r4j = (c[n " x-r4j"] + c[n " y-r4j"]) / 2
      ours_ratio = sqrt(c[n " x-ours"] / c[n " x-ours-twin"] * c[n " y-ours"] / c[n " y-ours-twin"])
      r4j_ratio = sqrt(c[n " x-r4j"] / c[n " x-r4j-twin"] * c[n " y-r4j"] / c[n " y-r4j-twin"])
      ours_us = (c[n " x-ours"] - c[n " x-ours-twin"] + c[n " y-ours"] - c[n " y-ours-twin"]) / 2
      r4j_us = (c[n " x-r4j"] - c[n " x-r4j-twin"] + c[n " y-r4j"] - c[n " y-r4j-twin"]) / 2
      printf "%s %.2f %.2f %.2f %.4f %.4f %.2f %.2f\n", n, plain, ours, r4j, ours_ratio, r4j_ratio, ours_us, r4j_us } }' "$RESULTS" | sort -n)
  col() { awk -v c="$1" '{ print $c }' <<< "$per_round"; }
  rps() { awk -v s="$stack" -v h="$1" '$1 == s && $3 ~ h { print $4 }' "$RESULTS" | median; }
  errors=$(awk -v s="$stack" '$1 == s { n += $6 } END { print n + 0 }' "$RESULTS")
  say
  say "Per round, crossed (each ratio the geometric mean of launch x's and launch y's limited ÷ twin):"
  say
  say "| round | plain µs | ours µs | resilience4j µs | ours ÷ plain | resilience4j ÷ plain | ours µs over plain | resilience4j µs over plain |"
  say "|---|---:|---:|---:|---:|---:|---:|---:|"
  while read -r n plain ours r4j ours_ratio r4j_ratio ours_us r4j_us; do
    say "| $n | $plain | $ours | $r4j | $ours_ratio | $r4j_ratio | $ours_us | $r4j_us |"
  done <<< "$per_round"
  say
  say "**$stack, CPU per request on one pinned core, median of $ROUNDS rounds (min–max)**" \
    "($errors non-2xx answers in all):"
  say
  say "| handler | requests/s | CPU µs/request | ÷ plain, crossed | µs over plain, crossed |"
  say "|---|---:|---:|---:|---:|"
  say "| plain | $(rps 'twin$') | $(col 2 | median) ($(col 2 | spread)) | | |"
  say "| ours | $(rps 'ours$') | $(col 3 | median) ($(col 3 | spread))" \
    "| $(col 5 | median) ($(col 5 | spread)) | $(col 7 | median) ($(col 7 | spread)) |"
  say "| resilience4j | $(rps 'r4j$') | $(col 4 | median) ($(col 4 | spread))" \
    "| $(col 6 | median) ($(col 6 | spread)) | $(col 8 | median) ($(col 8 | spread)) |"
  say
  say "- ours ÷ plain: $(summarise "$(col 5)")"
  say "- resilience4j ÷ plain: $(summarise "$(col 6)")"
  say "- ours µs over plain minus resilience4j's, median of rounds:" \
    "$(awk '{ printf "%.2f\n", $7 - $8 }' <<< "$per_round" | median)" \
    "($(awk '{ printf "%.2f\n", $7 - $8 }' <<< "$per_round" | spread))"
done
say
say "Load average after: $(cut -d' ' -f1-3 /proc/loadavg)."
echo "written to $OUT" >&2
