#!/usr/bin/env bash
# Local-first Redis mode beside the exact mode, on a fleet of application instances
# (docs/benchmarks.md, section 7).
#
# Starts a dedicated redis-server on a free loopback port, then, for each run, launches
# INSTANCES separate JVMs of LocalFirstFleetRun (each its own Lettuce connection, Redis
# store and, in local-first mode, its own LocalFirstRateLimitStore syncing every SYNC_MS),
# which warm up for a second, then all start at one wall-clock instant agreed once every
# instance is ready, and decide for SECONDS_PER_RUN on one token bucket. Sums the instances and prints one table row per run: what the fleet admitted
# against what the limit allows over the measured window (capacity + rate x window; Redis
# decides on its own TIME, which is this machine's clock), decisions/s and CPU time per
# decision of each instance, latency, and the scripts and commands Redis ran per second
# (INFO commandstats, reset at the start instant).
# Needs redis-server and redis-cli on PATH and the benchmarks jar:
#   ./mvnw -B -ntp -q -pl benchmarks -am package -DskipTests
# Environment: SECONDS_PER_RUN (10), CALLERS (2 per instance), SYNC_MS (10), RUNS (the plan
# below, as "mode:instances:capacity:rate:pace_us:identities" separated by spaces),
# JAVA_OPTS (-Xms64m -Xmx256m).
set -euo pipefail

cd "$(dirname "$0")/.."
JAR=benchmarks/target/benchmarks.jar
if [[ ! -f "$JAR" ]]; then
  echo "Build first: ./mvnw -B -ntp -q -pl benchmarks -am package -DskipTests" >&2
  exit 1
fi

source benchmarks/bench-lib.sh

RUN_SECONDS=${SECONDS_PER_RUN:-10}
CALLERS=${CALLERS:-2}
SYNC_MS=${SYNC_MS:-10}
JAVA_OPTS=${JAVA_OPTS:--Xms64m -Xmx256m}
# over the limit: 1,000 a second with a burst of 1,000, callers pausing 100 us between requests;
# under it: a limit no run can reach, callers deciding as fast as they are answered
OVER="1000:1000:100:1"
UNDER="1000000000000:1000000000:0:1"
RUNS=${RUNS:-"local-first:4:$OVER exact:4:$OVER local-first:4:$UNDER exact:4:$UNDER \
local-first:4:1000000000000:1000000000:1000:1 local-first:2:$OVER exact:2:$OVER local-first:8:$OVER exact:8:$OVER"}

start_redis

# calls of the commands named by the pattern, from INFO commandstats
command_calls() {
  redis-cli -p "$PORT" info commandstats | tr -d '\r' | grep -E "^cmdstat_($1):" \
    | sed -E 's/^[^:]*:calls=([0-9]+).*/\1/' | awk '{ sum += $1 } END { print sum + 0 }'
}

echo "# machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
echo "# $(java -version 2>&1 | head -1), $(redis-server --version | cut -d' ' -f1-3)"
echo "# $RUN_SECONDS s per run, $CALLERS callers per instance, sync every $SYNC_MS ms (local-first)"
echo
echo "| mode | instances | limit (capacity, rate/s) | pause | attempts/s (fleet) | decisions/s per instance, mean [min-max] | admitted | allowed over the window | over | CPU ns per decision, mean [min-max] | p50 / p99 us (worst instance) | Redis scripts/s | Redis commands/s | load before |"
echo "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for run in $RUNS; do
  IFS=: read -r mode instances capacity rate pace identities <<<"$run"
  redis-cli -p "$PORT" flushall >/dev/null
  load=$(cut -d' ' -f1 /proc/loadavg)
  go="$WORK/go"
  rm -f "$go" "$go".*.ready "$WORK"/instance-*
  pids=()
  for i in $(seq 1 "$instances"); do
    # shellcheck disable=SC2086
    java $JAVA_OPTS -cp "$JAR" io.github.ratelimit.benchmarks.localfirst.LocalFirstFleetRun --port "$PORT" \
      --instance "$i" --mode "$mode" --go-file "$go" --seconds "$RUN_SECONDS" --callers "$CALLERS" \
      --sync-ms "$SYNC_MS" --capacity "$capacity" --rate "$rate" --pace-us "$pace" --identities "$identities" \
      >"$WORK/instance-$i.out" 2>"$WORK/instance-$i.err" &
    pids+=($!)
  done
  waited=0
  until [[ $(find "$WORK" -name 'go.*.ready' | wc -l) -eq $instances ]]; do
    sleep 0.05
    waited=$((waited + 1))
    if ((waited > 1200)); then
      echo "the instances were not all ready within a minute" >&2
      kill "${pids[@]}" 2>/dev/null
      exit 1
    fi
    for pid in "${pids[@]}"; do
      kill -0 "$pid" 2>/dev/null || { echo "an instance stopped:" >&2; cat "$WORK"/instance-*.err >&2; exit 1; }
    done
  done
  start_at=$(($(date +%s%3N) + 500))
  echo "$start_at" >"$go.tmp" && mv "$go.tmp" "$go"
  sleep 0.5
  redis-cli -p "$PORT" config resetstat >/dev/null
  for pid in "${pids[@]}"; do
    wait "$pid" || { echo "instance failed:" >&2; cat "$WORK"/instance-*.err >&2; exit 1; }
  done
  scripts=$(command_calls 'evalsha|eval')
  commands=$(command_calls '[a-z]+' )
  others=$(command_calls 'info|config\|resetstat|ping|flushall|script\|load')
  cat "$WORK"/instance-*.out | awk -v mode="$mode" -v n="$instances" -v cap="$capacity" -v rate="$rate" \
    -v pace="$pace" -v scripts="$scripts" -v commands="$((commands - others))" -v load="$load" '
    function field(name,   i) { for (i = 1; i <= NF; i++) if (index($i, name "=") == 1) return substr($i, length(name) + 2) }
    {
      attempts += field("attempts"); admitted += field("admitted")
      d = field("decisions_per_s") + 0; c = field("cpu_ns_per_decision") + 0
      s = field("start_us") + 0; e = field("end_us") + 0; q50 = field("p50_us") + 0; q99 = field("p99_us") + 0
      dsum += d; csum += c
      if (NR == 1 || d < dmin) dmin = d; if (NR == 1 || d > dmax) dmax = d
      if (NR == 1 || c < cmin) cmin = c; if (NR == 1 || c > cmax) cmax = c
      if (NR == 1 || s < start) start = s
      if (NR == 1 || e > end) end = e
      if (q50 > p50) p50 = q50; if (q99 > p99) p99 = q99
      warnings += field("warnings"); errors += field("errors")
      ready = field("ready_before_start_ms") + 0; if (NR == 1 || ready < slack) slack = ready
    }
    END {
      window = (end - start) / 1e6
      allowance = cap + rate * window
      limit = (cap >= 1e12) ? "none reached" : sprintf("%d, %d", cap, rate)
      over = (cap >= 1e12) ? "-" : sprintf("%+.2f%%", 100 * (admitted - allowance) / allowance)
      allowed = (cap >= 1e12) ? "-" : sprintf("%.0f", allowance)
      printf "| %s | %d | %s | %s | %.0f | %.0f [%.0f-%.0f] | %d | %s | %s | %.0f [%.0f-%.0f] | %.1f / %.1f | %.0f | %.0f | %s |\n",
        mode, n, limit, (pace > 0 ? pace " us" : "none"), attempts / window, dsum / n, dmin, dmax, admitted, allowed,
        over, csum / n, cmin, cmax, p50, p99, scripts / window, commands / window, load
      if (errors > 0) printf "store errors (timeouts) during the run: %d\n", errors > "/dev/stderr"
      if (warnings > 0) printf "warnings from the stores: %d\n", warnings > "/dev/stderr"
      if (slack < 100) printf "an instance was ready only %d ms before the start: raise the lead\n", slack > "/dev/stderr"
    }'
done
echo
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
