#!/usr/bin/env bash
# PostgreSQL decision throughput and latency beside Bucket4j's PostgreSQL back-end.
#
# Starts a dedicated PostgreSQL on a free loopback port in a temporary directory (default
# durability: fsync and synchronous_commit on; max_connections=200), creates the benchmark
# database and Bucket4j's table (the harness creates this library's with createSchema()),
# runs the Java harness (PostgresDecisionBenchmark), then stops the server. Needs initdb,
# pg_ctl and psql (PG_BIN names their directory) and the benchmarks jar:
#   ./mvnw -B -ntp -q -pl benchmarks -am package -DskipTests
# Arguments are passed to the harness, for example:
#   benchmarks/postgres-bench.sh --rounds 3 --seconds 5 --callers 1,64
# PIN=yes runs PostgreSQL on CPU 0 and the harness on CPU 1 (PG_CPUS and JAVA_CPUS choose
# others); REDIS=yes starts a redis-server as well and adds this library's Redis store as a
# reference; PG_OPTS adds server settings (-c name=value ...); JAVA_OPTS go to the harness's
# JVM; JAR=<path> runs another build's benchmarks jar.
set -euo pipefail

cd "$(dirname "$0")/.."
source benchmarks/bench-lib.sh
benchmarks_jar

JAVA_PIN=()
if [[ "${PIN:-no}" == yes ]]; then
  PG_CPUS=${PG_CPUS:-0}
  JAVA_PIN=(taskset -c "${JAVA_CPUS:-1}")
fi

REDIS_ARGS=()
if [[ "${REDIS:-no}" == yes ]]; then
  # start_redis sets its own EXIT trap: chain it with the server's
  start_redis
  REDIS_TRAP=$(trap -p EXIT | sed "s/^trap -- '\(.*\)' EXIT$/\1/")
  REDIS_ARGS=(--redis-port "$PORT")
  [[ -n "${PG_CPUS:-}" ]] && taskset -pc "$PG_CPUS" "$REDIS_PID" >/dev/null
fi

start_postgres
if [[ -n "${REDIS_TRAP:-}" ]]; then
  trap "stop_postgres; $REDIS_TRAP" EXIT
fi

"${PSQL[@]}" -d postgres -c 'CREATE DATABASE bench'
# Bucket4j's table, as its documentation has the application create it: string keys, the
# serialized state, and the expiry its expirationAfterWrite strategy writes
"${PSQL[@]}" -d bench -c 'CREATE TABLE bucket4j_bucket (id VARCHAR PRIMARY KEY, state BYTEA, expires_at BIGINT)'

echo "# machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
echo "# $(java -version 2>&1 | head -1), $("${PSQL[@]}" -d bench -At -c 'SELECT version()' | cut -d, -f1)"
echo "# server settings: $("${PSQL[@]}" -d bench -At -F= -c "SELECT string_agg(name || '=' || setting, ' ' ORDER BY name) FROM pg_settings WHERE name IN ('fsync', 'synchronous_commit', 'shared_buffers', 'max_connections', 'wal_level', 'full_page_writes')")"
echo "# pinning: server ${PG_CPUS:-any CPU}, harness ${JAVA_PIN[*]:-any CPU}"
echo "# load before: $(cut -d' ' -f1-3 /proc/loadavg)"
# shellcheck disable=SC2086
"${JAVA_PIN[@]}" java ${JAVA_OPTS:-} -cp "$JAR" io.github.ratelimit.benchmarks.jdbc.PostgresDecisionBenchmark \
  --port "$PG_PORT" --server-pid "$PG_PID" --clock-ticks "$(getconf CLK_TCK)" "${REDIS_ARGS[@]}" "$@"
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
