#!/usr/bin/env bash
# What password guessing costs the sample application (docs/benchmarks.md, section 6).
#
# Starts the sample application on a free loopback port and signs alice in once, as a
# user of the service would. Then CONNECTIONS wrk connections send GET /api/reports/1 with
# HTTP Basic credentials for alice and a wrong password: a warm-up, a run as fast as the
# application answers, and a paced run in which each connection waits PACE_MS between
# requests. For each run the script prints requests/s, wrk's latency percentiles, the
# answers by status, and the CPU time the application's process used (user + system, from
# /proc/<pid>/stat): in cores, and in microseconds per request.
# Needs wrk (Debian: apt-get install wrk), curl and the sample jar:
#   ./mvnw -B -ntp -q -pl sample-app -am clean package -DskipTests
# Environment: JAR (sample-app/target/sample-app.jar), DURATION (25s), WARMUP (30s),
# THREADS (2), CONNECTIONS (8), PACE_MS (100), JAVA_OPTS (-Xms512m -Xmx512m).
set -euo pipefail

cd "$(dirname "$0")/.."
JAR=${JAR:-sample-app/target/sample-app.jar}
DURATION=${DURATION:-25s}
WARMUP=${WARMUP:-30s}
THREADS=${THREADS:-2}
CONNECTIONS=${CONNECTIONS:-8}
PACE_MS=${PACE_MS:-100}
JAVA_OPTS=${JAVA_OPTS:--Xms512m -Xmx512m}
ENDPOINT="/api/reports/1"
SCRIPT=benchmarks/wrong-password.lua
if [[ ! -f "$JAR" ]]; then
  echo "Build first: ./mvnw -B -ntp -q -pl sample-app -am clean package -DskipTests" >&2
  exit 1
fi

source benchmarks/bench-lib.sh

WORK=$(mktemp -d)
APP=
cleanup() {
  if [[ -n "$APP" ]]; then
    kill "$APP" 2>/dev/null || true
    wait "$APP" 2>/dev/null || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

PORT=$(free_port)
URL="http://127.0.0.1:$PORT"
# shellcheck disable=SC2086
java $JAVA_OPTS -jar "$JAR" --server.port="$PORT" --server.address=127.0.0.1 > "$WORK/app.log" 2>&1 &
APP=$!
up=no
for _ in $(seq 1 600); do
  if [[ "$(curl -s -o /dev/null -w '%{http_code}' "$URL/actuator/health")" =~ ^(200|401)$ ]]; then
    up=yes
    break
  fi
  sleep 0.5
done
if [[ $up != yes ]]; then
  echo "the application did not answer within 5 minutes; its log:" >&2
  tail -30 "$WORK/app.log" >&2
  exit 1
fi
echo "# alice signs in: $(curl -s -o /dev/null -w '%{http_code}' -u alice:alice-secret "$URL$ENDPOINT")" \
  "(404: she has no report 1)"

echo "# machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
echo "# $(java -version 2>&1 | head -1), $(wrk --version 2>&1 | head -1 | cut -d' ' -f1-2), JAVA_OPTS=$JAVA_OPTS"
echo "# wrk -t$THREADS -c$CONNECTIONS -d$DURATION --timeout 10s --latency -s $SCRIPT $URL$ENDPOINT, warm-up $WARMUP"
echo "# load before: $(cut -d' ' -f1-3 /proc/loadavg)"

wrk -t"$THREADS" -c"$CONNECTIONS" -d"$WARMUP" --timeout 10s -s "$SCRIPT" "$URL$ENDPOINT" > /dev/null

# user + system CPU time of a process, in clock ticks
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
TICKS=$(getconf CLK_TCK)

echo "| run | requests/s | p50 | p99 | answers | timeouts | app CPU (cores) | app CPU µs/request |"
echo "|---|---|---|---|---|---|---|---|"
for run in flat-out "paced ${PACE_MS} ms"; do
  pace=0
  [[ $run == flat-out ]] || pace=$PACE_MS
  before=$(cpu_ticks "$APP")
  start=$(date +%s%N)
  out=$(WRK_PACE_MS=$pace wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" --timeout 10s --latency -s "$SCRIPT" \
    "$URL$ENDPOINT")
  end=$(date +%s%N)
  after=$(cpu_ticks "$APP")
  requests=$(awk '/requests in/ { print $1 }' <<< "$out")
  rps=$(awk '/^Requests\/sec/ { print $2 }' <<< "$out")
  p50=$(awk '$1 == "50%" { print $2 }' <<< "$out")
  p99=$(awk '$1 == "99%" { print $2 }' <<< "$out")
  answers=$(awk '$1 == "status" { printf "%s%s × %s", sep, $3, $2; sep = ", " }' <<< "$out")
  # requests still unanswered after wrk's timeout, which wrk counts apart from the answers
  timeouts=$(awk '/Socket errors/ { for (i = 1; i < NF; i++) if ($i == "timeout") print $(i + 1) }' <<< "$out")
  cores=$(awk -v t=$((after - before)) -v hz="$TICKS" -v ns=$((end - start)) 'BEGIN { printf "%.2f", t / hz / (ns / 1e9) }')
  per=$(awk -v t=$((after - before)) -v hz="$TICKS" -v n="$requests" 'BEGIN { printf "%.0f", t / hz * 1e6 / n }')
  echo "| $run | $rps | $p50 | $p99 | $answers | ${timeouts:-0} | $cores | $per |"
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
