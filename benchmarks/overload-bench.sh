#!/usr/bin/env bash
# Overload protection, side by side: does a protection keep a saturated service useful?
#
# The service (benchmarks/overload-app) has one endpoint, GET /work, whose handler calls a
# simulated dependency that saturates: each call takes BASE_MS while at most KNEE calls are
# in flight, and past the knee the calls share the dependency (processor sharing), so it
# completes at most KNEE / BASE_MS calls per second, its capacity (400/s by default), and
# every call slows down as more arrive. The handler sleeps, so the dependency costs no CPU.
# In front of it, one protection per variant (VARIANTS):
#   none     nothing: Tomcat's 200 threads all reach the dependency, the rest queue;
#   fixed    a fixed concurrency limit of KNEE calls, unkeyed, answering 503 over it at
#            once (a Semaphore filter in front of everything else);
#   spring   the same limit as Spring Framework 7's @ConcurrencyLimit on the handler method,
#            with policy REJECT (its default, BLOCK, queues as no protection does), the
#            InvocationRejectedException answered 503; servlet stack only; not in the
#            default VARIANTS;
#   netflix  Netflix's adaptive limiter (com.netflix.concurrency-limits:concurrency-limits-core,
#            Vegas by default: NETFLIX_ALGORITHM), partitioned by the X-Priority header,
#            critical 80% / sheddable 20% of the limit as its README shows, in a filter that
#            does what the project's jakarta servlet filter does (that module is not
#            published on Maven Central, and concurrency-limits-servlet is javax.servlet,
#            which Tomcat 11 cannot load); servlet stack only, it has no WebFlux adapter;
#   ours     this library's overload protection: ratelimit.overload.enabled=true with
#            priority-header=X-Priority, algorithm OVERLOAD_ALGORITHM (vegas) and OURS_ARGS.
# A generator (io.github.ratelimit.benchmarks.overload.OverloadLoad in the benchmarks jar)
# sends requests in an open loop, at a fixed arrival rate whatever the service answers, 20%
# with X-Priority: critical and 80% sheddable, over HTTP/1.1 on loopback, and counts each
# request's latency from its scheduled send time (no coordinated omission). After a
# warm-up (0.5× then 1×) it runs each load of LOADS (1, 2 and 4 times the capacity) for
# DURATION seconds, waiting between loads until the dependency is idle, and reports per
# variant and load: goodput (2xx answers per second within the latency objective SLO_MS,
# 5 × BASE_MS), the p50/p99 latency of admitted critical requests, the shares of critical
# and sheddable requests admitted, 503s, timeouts (TIMEOUT_MS) and errors. For the
# variants in RECOVERY_VARIANTS it then measures recovery: 0.5× for RECOVERY_BEFORE
# seconds, 4× for DURATION, 0.5× for RECOVERY_AFTER, reading the learned limit every 100 ms
# (ours: overload.limit at /actuator/ratelimits; netflix: the service's /bench/state),
# and reports how long after the overload the limit is back to 90% of its level before,
# or more, and stays there for a second. The application runs on APP_CPUS with
# -XX:ActiveProcessorCount=1, the generator on LOAD_CPUS; everything listens on 127.0.0.1,
# on free ports, and is stopped on exit.
# The markdown tables are printed and written to OUT (benchmarks/results/<date>-overload.md).
#
# Build first (this script builds nothing):
#   ./mvnw -B -ntp -q -pl benchmarks,benchmarks/overload-app -am package -DskipTests
# Run:
#   benchmarks/overload-bench.sh
#   VARIANTS="none fixed" WARMUP=6 DURATION=5 benchmarks/overload-bench.sh    # a short check
#   STACK=webflux VARIANTS="none fixed ours" benchmarks/overload-bench.sh      # on WebFlux
# Settings (environment): VARIANTS (none fixed netflix ours), STACK (servlet | webflux),
# BASE_MS (40), KNEE (16), SLO_MS (5 × BASE_MS), LOADS (1,2,4), WARMUP (20 s, half at 0.5×:
# one core compiles slowly), DURATION (20 s), TIMEOUT_MS (2000), CRITICAL_SHARE (0.2),
# RECOVERY_VARIANTS (ours netflix, those that run), RECOVERY_BEFORE (10 s), RECOVERY_AFTER
# (20 s), OVERLOAD_ALGORITHM (vegas), OURS_ARGS (more --ratelimit.overload.* arguments),
# NETFLIX_ALGORITHM (vegas), APP_CPUS (0), LOAD_CPUS (1), APP_OPTS, LOAD_OPTS, APP_JAR and
# JAR (other builds), OUT.
# Run it on a quiet machine: at 4× the service answers 1,600 requests/s on one core and the
# generator sends them from the other, so other work on those cores starves both and the
# high loads then measure the CPU, not the protection. The report says so when the load
# average was high at the start, and its "app CPU" column shows how much of its core the
# service got. BASE_MS=20 doubles the rates (4× = 3,200 requests/s), which is past what the
# generator sends on time from one core of a 2-core machine.
set -euo pipefail

cd "$(dirname "$0")/.."
source benchmarks/bench-lib.sh
benchmarks_jar
APP_JAR=${APP_JAR:-benchmarks/overload-app/target/overload-app.jar}
if [[ ! -f "$APP_JAR" ]]; then
  echo "Build first: ./mvnw -B -ntp -q -pl benchmarks,benchmarks/overload-app -am package -DskipTests" >&2
  exit 1
fi

read -r -a VARIANTS <<< "${VARIANTS:-none fixed netflix ours}"
STACK=${STACK:-servlet}
BASE_MS=${BASE_MS:-40}
KNEE=${KNEE:-16}
CAPACITY=$((KNEE * 1000 / BASE_MS))
SLO_MS=${SLO_MS:-$((5 * BASE_MS))}
LOADS=${LOADS:-1,2,4}
WARMUP=${WARMUP:-20}
DURATION=${DURATION:-20}
TIMEOUT_MS=${TIMEOUT_MS:-2000}
CRITICAL_SHARE=${CRITICAL_SHARE:-0.2}
read -r -a RECOVERY_VARIANTS <<< "${RECOVERY_VARIANTS:-ours netflix}"
RECOVERY_BEFORE=${RECOVERY_BEFORE:-10}
RECOVERY_AFTER=${RECOVERY_AFTER:-20}
OVERLOAD_ALGORITHM=${OVERLOAD_ALGORITHM:-vegas}
NETFLIX_ALGORITHM=${NETFLIX_ALGORITHM:-vegas}
APP_CPUS=${APP_CPUS:-0}
LOAD_CPUS=${LOAD_CPUS:-1}
APP_OPTS=${APP_OPTS:--Xms512m -Xmx512m -XX:ActiveProcessorCount=1}
LOAD_OPTS=${LOAD_OPTS:--Xms512m -Xmx512m}
OUT=${OUT:-benchmarks/results/$(date -u +%F)-overload.md}

case "$STACK" in
  servlet) STACK_ARGS=() ;;
  webflux) STACK_ARGS=(--spring.main.web-application-type=reactive) ;;
  *) echo "STACK must be servlet or webflux: $STACK" >&2; exit 1 ;;
esac

WORK=$(mktemp -d)
APP_PID=
LOAD_PID=
stop_app() {
  if [[ -n "$APP_PID" ]]; then
    kill "$APP_PID" 2>/dev/null || true
    wait "$APP_PID" 2>/dev/null || true
    APP_PID=
  fi
}
cleanup() {
  if [[ -n "$LOAD_PID" ]]; then
    kill "$LOAD_PID" 2>/dev/null || true
    wait "$LOAD_PID" 2>/dev/null || true
  fi
  stop_app
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Starts the service with protection $1 on a free port; sets PORT and APP_PID.
start_app() {
  local variant=$1 args=()
  case "$variant" in
    none | fixed) ;;
    spring | netflix)
      if [[ $STACK != servlet ]]; then
        echo "$variant runs on the servlet stack only" >&2
        return 1
      fi
      [[ $variant == netflix ]] && args=(--bench.netflix.algorithm="$NETFLIX_ALGORITHM") ;;
    ours)
      # shellcheck disable=SC2206
      args=(--ratelimit.overload.enabled=true --ratelimit.overload.priority-header=X-Priority
        --ratelimit.overload.algorithm="$OVERLOAD_ALGORITHM" ${OURS_ARGS:-}) ;;
    *) echo "VARIANTS lists none, fixed, spring, netflix and ours: $variant" >&2; return 1 ;;
  esac
  # another program may take the free port first: then again on another
  for _ in 1 2 3; do
    PORT=$(free_port)
    # shellcheck disable=SC2086
    taskset -c "$APP_CPUS" java $APP_OPTS -jar "$APP_JAR" --server.port="$PORT" --bench.protection="$variant" \
      --bench.base="${BASE_MS}ms" --bench.knee="$KNEE" "${STACK_ARGS[@]}" "${args[@]}" > "$WORK/$variant.log" 2>&1 &
    APP_PID=$!
    for _ in $(seq 1 240); do
      if [[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/bench/state")" == 200 ]]; then
        return 0
      fi
      if ! kill -0 "$APP_PID" 2>/dev/null; then
        break
      fi
      sleep 0.5
    done
    wait "$APP_PID" 2>/dev/null || true
    grep -q "already in use" "$WORK/$variant.log" || break
  done
  echo "the $variant service did not start; its log:" >&2
  tail -30 "$WORK/$variant.log" >&2
  [[ $variant == ours ]] && echo "(ours needs a build whose starter has ratelimit.overload.*)" >&2
  APP_PID=
  return 1
}

# Runs the generator on LOAD_CPUS with the given arguments; its rows go to $WORK/out (and
# to the terminal), its notes (how late it sent, first errors) are appended to $WORK/notes.
load() {
  # shellcheck disable=SC2086
  taskset -c "$LOAD_CPUS" java $LOAD_OPTS -cp "$JAR" io.github.ratelimit.benchmarks.overload.OverloadLoad \
    --url "http://127.0.0.1:$PORT" --capacity "$CAPACITY" --duration "$DURATION" --slo-ms "$SLO_MS" \
    --timeout-ms "$TIMEOUT_MS" --critical-share "$CRITICAL_SHARE" --app-pid "$APP_PID" --clock-ticks "$(getconf CLK_TCK)" \
    "$@" > "$WORK/out" 2>> "$WORK/notes" &
  LOAD_PID=$!
  wait "$LOAD_PID"
  LOAD_PID=
  cat "$WORK/out" >&2
}

# ours: the requests turned away over the warm-up and all loads, by priority and reason
# (ratelimit.overload.shed), and the critical requests that waited for a place
shed_reasons() {
  local base="http://127.0.0.1:$PORT/actuator/metrics" line="- ours, turned away over the warm-up and the loads:"
  # only critical requests wait, so only they are turned away for the queue or the wait
  for tags in critical:limit critical:queue critical:wait sheddable:limit; do
    line+=" ${tags%%:*}/${tags#*:} $(curl -s "$base/ratelimit.overload.shed?tag=priority:${tags%%:*}&tag=reason:${tags#*:}" |
      sed -n 's/.*"value":\([0-9.E]*\).*/\1/p' | cut -d. -f1)"
  done
  for result in admitted shed; do
    line+=", waited and $result $(curl -s "$base/ratelimit.overload.waited?tag=result:$result" |
      sed -n 's/.*"value":\([0-9.E]*\).*/\1/p' | cut -d. -f1)"
  done
  echo "$line"
}

contains() {
  local item=$1
  shift
  for candidate in "$@"; do
    [[ $candidate == "$item" ]] && return 0
  done
  return 1
}

: > "$WORK/notes"
: > "$WORK/levels"
: > "$WORK/recovery"
: > "$WORK/recovery-phases"
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
for variant in "${VARIANTS[@]}"; do
  echo "# $variant: starting" >&2
  if ! start_app "$variant"; then
    echo "| $variant | did not start | | | | | | | | | | | | |" >> "$WORK/levels"
    continue
  fi
  load --variant "$variant" --mode levels --loads "$LOADS" --warmup "$WARMUP"
  cat "$WORK/out" >> "$WORK/levels"
  [[ $variant == ours ]] && shed_reasons >> "$WORK/notes"
  if contains "$variant" "${RECOVERY_VARIANTS[@]}"; then
    path=/bench/state
    [[ $variant == ours ]] && path=/actuator/ratelimits
    load --variant "$variant" --mode recovery --limit-path "$path" --before "$RECOVERY_BEFORE" \
      --after "$RECOVERY_AFTER"
    grep -E '(before|overload|after) \|' "$WORK/out" >> "$WORK/recovery-phases" || true
    grep -vE '(before|overload|after) \||^$' "$WORK/out" >> "$WORK/recovery" || true
  fi
  stop_app
done
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)

mkdir -p "$(dirname "$OUT")"
{
  echo "# Overload protection, side by side ($(date -u +%F), $STACK)"
  echo
  echo "Command: \`VARIANTS=\"${VARIANTS[*]}\" STACK=$STACK BASE_MS=$BASE_MS KNEE=$KNEE LOADS=$LOADS WARMUP=$WARMUP" \
    "DURATION=$DURATION SLO_MS=$SLO_MS benchmarks/overload-bench.sh\`"
  echo
  echo "- machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs);" \
    "$(java -version 2>&1 | head -1); application on CPU $APP_CPUS ($APP_OPTS), generator on CPU $LOAD_CPUS"
  echo "- dependency: $BASE_MS ms per call up to $KNEE in flight, capacity $CAPACITY requests/s;" \
    "latency objective $SLO_MS ms; $(awk -v s="$CRITICAL_SHARE" 'BEGIN { printf "%d", s * 100 }')% critical;" \
    "request timeout $TIMEOUT_MS ms; warm-up $WARMUP s, $DURATION s per load"
  echo "- load average before $LOAD_BEFORE, after $LOAD_AFTER$(awk -v l="${LOAD_BEFORE%% *}" -v n="$(nproc)" \
    'BEGIN { if (l > n / 2) printf " (a busy machine: the service and the generator shared their cores, the high loads measure that too)" }')"
  echo "- goodput: 2xx answers within the objective per second; admitted: 2xx answers among the requests sent;" \
    "latency from each request's scheduled send time; app CPU: the service's CPU time over the load's wall time"
  echo
  java -cp "$JAR" io.github.ratelimit.benchmarks.overload.OverloadLoad --mode header | sed -n 1,2p
  grep -v '^<!--' "$WORK/levels" || true
  if [[ -s "$WORK/recovery" ]]; then
    echo
    echo "Recovery: 0.5× for $RECOVERY_BEFORE s, 4× for $DURATION s, then 0.5× for $RECOVERY_AFTER s;" \
      "the limit read every 100 ms."
    echo
    java -cp "$JAR" io.github.ratelimit.benchmarks.overload.OverloadLoad --mode header | sed -n 4,5p
    cat "$WORK/recovery"
    echo
    java -cp "$JAR" io.github.ratelimit.benchmarks.overload.OverloadLoad --mode header | sed -n 1,2p
    cat "$WORK/recovery-phases"
  fi
  if [[ -s "$WORK/notes" ]]; then
    echo
    echo "Generator notes:"
    echo
    sed 's/^# /- /' "$WORK/notes"
  fi
  if grep -q '^<!--' "$WORK/levels"; then
    echo
    echo "Warm-up rows (0.5×, then 1×):"
    echo
    grep '^<!--' "$WORK/levels" | sed 's/^<!-- warm-up /    /; s/ -->$//'
  fi
} > "$WORK/report.md"
cp "$WORK/report.md" "$OUT"
cat "$OUT"
echo "# written to $OUT" >&2
