#!/usr/bin/env bash
# Redis CPU per script call (docs/benchmarks.md, section 2): the store's token-bucket script
# as the store calls it on Redis 7 and later (store-fcall: FCALL of its function library)
# and on servers without functions (store: EVALSHA), against the gateway-shaped script,
# without a Java client in the way, and the store's function on a bucket kept in a hash
# (ratelimit.redis.key-layout=hash-per-slot).
#
# Starts a dedicated redis-server on a free loopback port, loads the scripts (and any
# other script file given, called with the store's arguments, such as the script of an
# earlier release printed by its benchmarks jar), then runs redis-benchmark against each in
# turn, pipelined (-P 64, 2 connections) on one hot key, and reads the server's CPU time
# (utime + stime from /proc) around each run. Prints every round and the median µs of
# Redis CPU per call. Needs redis-server, redis-benchmark, bc and the benchmarks jar:
#   ./mvnw -B -ntp -q -pl benchmarks -am package -DskipTests
#   benchmarks/redis-script-cpu.sh [--rounds 7] [--requests 300000] [other-script.lua ...]
set -euo pipefail

cd "$(dirname "$0")/.."
JAR=benchmarks/target/benchmarks.jar
if [[ ! -f "$JAR" ]]; then
  echo "Build first: ./mvnw -B -ntp -q -pl benchmarks -am package -DskipTests" >&2
  exit 1
fi

ROUNDS=7
REQUESTS=300000
EXTRA=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --rounds) ROUNDS=$2; shift 2 ;;
    --requests) REQUESTS=$2; shift 2 ;;
    *) EXTRA+=("$1"); shift ;;
  esac
done

source benchmarks/bench-lib.sh

start_redis

java -cp "$JAR" io.github.ratelimit.benchmarks.redis.RedisDecisionBenchmark script > "$WORK/store.lua"
java -cp "$JAR" io.github.ratelimit.benchmarks.redis.RedisDecisionBenchmark library > "$WORK/store-library.lua"
load() { redis-cli -p "$PORT" script load "$(cat "$1")"; }
# the same script as the store calls it on Redis 7 and later: a function of a library
FUNCTION=$(redis-cli -p "$PORT" -x function load replace < "$WORK/store-library.lua")
# the store's call for one token bucket of 10^9 tokens refilled per second: every call admits
STORE_ARGS="1 ratelimit:{hot}:bench '' acquire 1 tb 1000000000 1 1 ''"
# the same bucket in the hash-per-slot key layout, a field of a hash that holds 63 other
# identities' buckets, as a hash does at about a million identities per limit
HASH_KEY='ratelimit:{hot}:hash'
for i in $(seq 1 63); do redis-cli -p "$PORT" hset "$HASH_KEY" "ip:10.0.0.$i" 'xxxxxxxxxxxx' >/dev/null; done
# a TTL of its own, so that the hash outlives the gaps between runs (scripts only raise it)
redis-cli -p "$PORT" pexpire "$HASH_KEY" 86400000 >/dev/null
HASH_ARGS="1 $HASH_KEY '' acquire 1 tb 1000000000 1 1 ip:10.0.1.1"
NAMES=(store-fcall store gateway store-hash-per-slot)
CALLS=("FCALL $FUNCTION $STORE_ARGS"
  "EVALSHA $(load "$WORK/store.lua") $STORE_ARGS"
  "EVALSHA $(load benchmarks/src/main/resources/io/github/ratelimit/benchmarks/redis/gateway_token_bucket.lua) 2 gw.{hot}.tokens gw.{hot}.timestamp 1000000000 1000000000 1"
  "FCALL $FUNCTION $HASH_ARGS")
for file in "${EXTRA[@]}"; do
  NAMES+=("$(basename "$file")")
  CALLS+=("EVALSHA $(load "$file") $STORE_ARGS")
done

cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$REDIS_PID/stat"; }
HZ=$(getconf CLK_TCK)
declare -A RESULTS
echo "# machine: $(nproc) cores, $(redis-server --version | cut -d' ' -f1-3), load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "| round | script | Redis CPU µs per call |"
echo "|---|---|---|"
for round in $(seq 1 "$ROUNDS"); do
  for i in "${!NAMES[@]}"; do
    before=$(cpu_ticks)
    eval "redis-benchmark -p $PORT -c 2 -P 64 -n $REQUESTS --csv ${CALLS[$i]}" >/dev/null
    after=$(cpu_ticks)
    micros=$(echo "($after - $before) * 1000000 / $HZ / $REQUESTS" | bc -l | xargs printf '%.2f')
    RESULTS[${NAMES[$i]}]="${RESULTS[${NAMES[$i]}]:-} $micros"
    echo "| $round | ${NAMES[$i]} | $micros |"
  done
done
echo
echo "| script | median | min–max |"
echo "|---|---|---|"
for name in "${NAMES[@]}"; do
  sorted=$(echo "${RESULTS[$name]}" | tr ' ' '\n' | grep . | sort -n)
  count=$(echo "$sorted" | wc -l)
  echo "| $name | $(echo "$sorted" | sed -n "$(( (count + 1) / 2 ))p") | $(echo "$sorted" | head -1)–$(echo "$sorted" | tail -1) |"
done
if ! redis-cli -p "$PORT" info errorstats | grep -q '^errorstat'; then
  echo "# no script call failed"
else
  echo "# script errors:"; redis-cli -p "$PORT" info errorstats | grep '^errorstat'
fi
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
