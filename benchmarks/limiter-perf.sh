#!/usr/bin/env bash
# CPU time per request spent in the limiter's own code, on the limited endpoint and on its
# unlimited twin, from Linux perf samples of the sample application on one pinned core
# (docs/benchmarks.md, section 3). perf samples at a fixed rate without stopping the JVM
# at safepoints, so unlike a JFR recording fine enough for this, it leaves the one-core
# server's throughput nearly as it is.
#
#   SAMPLE=servlet|webflux JAR=<sample jar> APP_CPU=0 LOAD_CPU=1 benchmarks/limiter-perf.sh
#
# The application runs with -XX:+PreserveFramePointer (perf walks the stacks of compiled
# code by frame pointers) and writes /tmp/perf-<pid>.map at exit for perf to name them.
# After a warm-up of both endpoints and one throw-away recording, perf records the limited
# endpoint (the one-route limit of http-bench.sh's TWIN=1 mode) and then the twin, each
# under SECONDS_EACH seconds of wrk. A sample counts for the limiter when, walking from the
# executing frame towards the thread's root, a frame of the library (io.github.ratelimit,
# outside the sample's own package) comes before the rest of the request's chain (the
# servlet or WebFlux filter chain, the DispatcherServlet, Spring Security's filter chain).
# Needs perf (Debian: linux-perf), wrk, curl, python3 and root or perf_event_paranoid <= 1.
set -euo pipefail
set -f

cd "$(dirname "$0")/.."
source benchmarks/bench-lib.sh
SAMPLE=${SAMPLE:-servlet}
sample_jar
search_route /api/search
APP_CPU=${APP_CPU:-0}
LOAD_CPU=${LOAD_CPU:-1}
WARMUP_EACH=${WARMUP_EACH:-40}
SECONDS_EACH=${SECONDS_EACH:-20}
HZ=${HZ:-4000}
for tool in perf wrk curl python3; do
  command -v "$tool" > /dev/null || { echo "needs $tool" >&2; exit 1; }
done

WORK=$(mktemp -d)
APP=
cleanup() {
  [[ -n "$APP" ]] && kill "$APP" 2>/dev/null && wait "$APP" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

PORT=$(free_port)
taskset -c "$APP_CPU" java -Xms512m -Xmx512m -XX:ActiveProcessorCount=1 -XX:+UnlockDiagnosticVMOptions \
  -XX:+PreserveFramePointer -XX:+DumpPerfMapAtExit -jar "$JAR" --server.port="$PORT" --server.address=127.0.0.1 \
  --ratelimit.store=memory "${ROUTE[@]}" > "$WORK/app.log" 2>&1 &
APP=$!
LIMITED="http://127.0.0.1:$PORT/api/search?q=cable"
TWIN="http://127.0.0.1:$PORT/api/search/products?q=cable"
for _ in $(seq 60); do
  [[ "$(curl -s -o /dev/null -w '%{http_code}' "$LIMITED")" == 200 ]] && break
  sleep 1
done
load() { taskset -c "$LOAD_CPU" wrk -t2 -c32 -d"$1"s "$2"; }
for url in "$LIMITED" "$TWIN" "$LIMITED" "$TWIN"; do
  load "$WARMUP_EACH" "$url" > /dev/null
done
# the first recording of a process costs more than the next ones: thrown away
perf record -e cpu-clock -F "$HZ" -g -p "$APP" -o "$WORK/first.data" -- sleep 10 > /dev/null 2>&1 &
load 10 "$LIMITED" > /dev/null
wait $!
for mode in limited twin; do
  url=$LIMITED
  [[ $mode == twin ]] && url=$TWIN
  perf record -e cpu-clock -F "$HZ" -g -p "$APP" -o "$WORK/$mode.data" -- sleep "$SECONDS_EACH" > /dev/null 2>&1 &
  recorder=$!
  load "$SECONDS_EACH" "$url" | awk '/requests in/ { print $1 }' > "$WORK/$mode.requests"
  wait "$recorder"
done
kill "$APP"
wait "$APP" 2>/dev/null || true
APP=
for mode in limited twin; do
  perf script -i "$WORK/$mode.data" -F comm,ip,sym 2>/dev/null > "$WORK/$mode.txt"
done

echo "# $SAMPLE sample, $(java -version 2>&1 | head -1), application on CPU $APP_CPU, wrk -t2 -c32 on CPU $LOAD_CPU, perf at $HZ Hz, ${SECONDS_EACH} s each"
python3 - "$WORK" "$HZ" <<'EOF'
import collections, re, sys

work, hz = sys.argv[1], int(sys.argv[2])
STOPS = re.compile(r'^(org\.apache\.catalina\.core\.ApplicationFilterChain\.|org\.springframework\.web\.servlet\.'
                   r'(DispatcherServlet|HandlerExecutionChain)\.|org\.springframework\.security\.web\.'
                   r'(FilterChainProxy|ObservationFilterChainDecorator\$VirtualFilterChain)|'
                   r'org\.springframework\.web\.server\.handler\.(DefaultWebFilterChain|FilteringWebHandler)|'
                   r'io\.github\.ratelimit\.sample\.)')


def samples(path):
    thread, frames = None, []
    for line in open(path, errors='replace'):
        if not line.strip():
            if thread is not None:
                yield thread, frames
            thread, frames = None, []
        elif not line[0].isspace():
            thread = line.split()[0]
        else:
            parts = line.strip().split(None, 1)
            frames.append(re.sub(r'\(.*', '', parts[1] if len(parts) > 1 else '').split(' ')[-1])
    if thread is not None:
        yield thread, frames


print('| endpoint | requests | process CPU µs/request | request threads µs/request | limiter µs/request |')
print('|---|---:|---:|---:|---:|')
nearest, innermost = {}, {}
for mode in ('limited', 'twin'):
    requests = int(open(f'{work}/{mode}.requests').read().split()[0])
    total = request_threads = limiter = 0
    nearest[mode] = collections.Counter()
    innermost[mode] = collections.Counter()
    for thread, frames in samples(f'{work}/{mode}.txt'):
        total += 1
        if not thread.startswith(('http-nio', 'reactor-http')):
            continue
        request_threads += 1
        for frame in frames:
            if frame.startswith('io.github.ratelimit.') and not frame.startswith('io.github.ratelimit.sample.'):
                limiter += 1
                nearest[mode][frames[0]] += 1
                innermost[mode][frame] += 1
                break
            if STOPS.match(frame):
                break
    per = 1e6 / hz / requests
    print(f'| {mode} | {requests} | {total * per:.1f} | {request_threads * per:.1f} | {limiter * per:.2f} |')
    nearest[mode] = {frame: count * per for frame, count in nearest[mode].items()}
    innermost[mode] = {frame: count * per for frame, count in innermost[mode].items()}
print()
print('executing frames of the limiter samples on the limited endpoint (µs/request):')
for frame, us in sorted(nearest['limited'].items(), key=lambda item: -item[1])[:10]:
    print(f'  {us:6.3f}  {frame}')
print()
print('innermost library frame of the limiter samples (µs/request): limited, twin, difference')
frames = set(innermost['limited']) | set(innermost['twin'])
rows = sorted(frames, key=lambda f: -(innermost['limited'].get(f, 0) - innermost['twin'].get(f, 0)))
for frame in rows[:15]:
    limited, twin = innermost['limited'].get(frame, 0), innermost['twin'].get(frame, 0)
    print(f'  {limited:6.3f} {twin:6.3f} {limited - twin:+6.3f}  {frame}')
EOF
