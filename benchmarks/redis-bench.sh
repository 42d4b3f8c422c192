#!/usr/bin/env bash
# Redis decision throughput and latency (docs/benchmarks.md, section 2).
#
# Starts a dedicated redis-server on a free loopback port, runs the Java harness
# (RedisDecisionBenchmark: this library's store, Bucket4j-Lettuce and a gateway-shaped
# script, plus redis-benchmark running the store's script as the ceiling), then stops it.
# Needs redis-server and redis-benchmark on PATH and the benchmarks jar:
#   ./mvnw -B -ntp -q -pl benchmarks -am package -DskipTests
# Arguments are passed to the harness, for example:
#   benchmarks/redis-bench.sh --rounds 5 --seconds 10 --callers 1,8,64
# JAVA_OPTS are passed to the harness's JVM; Lettuce uses Netty's epoll transport, which
# the benchmarks jar carries, unless JAVA_OPTS=-Dio.lettuce.core.epoll=false asks for NIO.
# JAR=<path> runs another build's benchmarks jar (an earlier release, for a before/after run).
set -euo pipefail

cd "$(dirname "$0")/.."
source benchmarks/bench-lib.sh
benchmarks_jar

start_redis

echo "# machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
echo "# $(java -version 2>&1 | head -1), $(redis-server --version | cut -d' ' -f1-3)"
echo "# load before: $(cut -d' ' -f1-3 /proc/loadavg)"
# shellcheck disable=SC2086
java ${JAVA_OPTS:-} -cp "$JAR" io.github.ratelimit.benchmarks.redis.RedisDecisionBenchmark --port "$PORT" "$@"
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
