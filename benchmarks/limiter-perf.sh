#!/usr/bin/env bash
# CPU time per request spent in the limiter's own code, on the limited endpoint and on its
# unlimited twin, from samples of the sample application on one pinned core
# (docs/benchmarks.md, section 3). Both profilers sample at a fixed rate without stopping
# the JVM at safepoints, so unlike a JFR recording fine enough for this, they leave the
# one-core server's throughput nearly as it is.
#
#   SAMPLE=servlet|webflux JAR=<sample jar> APP_CPU=0 LOAD_CPU=1 [PROFILER=perf|async] \
#     benchmarks/limiter-perf.sh
#
# PROFILER=perf (the default): Linux perf; the application runs with
# -XX:+PreserveFramePointer (perf walks the stacks of compiled code by frame pointers) and
# writes /tmp/perf-<pid>.map at exit for perf to name them. A method the compiler inlined
# counts as the method it was inlined into.
# PROFILER=async: async-profiler 3.0 (its library taken from the Maven Central artifact
# tools.profiler:async-profiler, fetched by ./mvnw when missing), loaded and started in
# the running application by jcmd; with -XX:+DebugNonSafepoints it names inlined methods
# too, which shows what the limiter's largest compiled methods spend their time on.
#
# After a warm-up of both endpoints and one throw-away recording, the profiler records the
# limited endpoint (the one-route limit of http-bench.sh's TWIN=1 mode) and then the twin,
# each under SECONDS_EACH seconds of wrk, ROUNDS times. A sample counts for the limiter
# when, walking from the executing frame towards the thread's root, a frame of the library
# (io.github.ratelimit, outside the sample's own package) comes before the rest of the
# request's chain (the servlet or WebFlux filter chain, the DispatcherServlet, Spring
# Security's filter chain); the innermost such frame is where it is reported.
# Besides the limiter's frames it reports the whole process by thread, and the samples
# under each frame named in FRAMES (comma-separated parts of frame names; by default
# Tomcat writing the response headers, Http11Processor.prepareResponse), on both endpoints.
# KEEP=<directory> keeps the recordings there (collapsed stacks or perf script output, and
# the request counts), for comparing the two endpoints beyond the limiter's frames; give
# it an empty directory, since files of an earlier run there would be overwritten only
# where their names match.
# Needs wrk, curl, python3, and perf (Debian: linux-perf) with root or
# perf_event_paranoid <= 1; async-profiler needs perf_event_paranoid <= 1 or root too.
set -euo pipefail
set -f

# a relative KEEP names a directory where the script was started, not the repository
[[ -n "${KEEP:-}" ]] && KEEP=$(realpath -m "$KEEP")
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
ROUNDS=${ROUNDS:-1}
PROFILER=${PROFILER:-perf}
FRAMES=${FRAMES-Http11Processor.prepareResponse}
case "$PROFILER" in
  perf) TOOLS=(perf wrk curl python3); JVM_FLAGS=(-XX:+PreserveFramePointer -XX:+DumpPerfMapAtExit) ;;
  async) TOOLS=(jcmd unzip wrk curl python3); JVM_FLAGS=(-XX:+DebugNonSafepoints) ;;
  *) echo "PROFILER must be perf or async: $PROFILER" >&2; exit 1 ;;
esac
for tool in "${TOOLS[@]}"; do
  command -v "$tool" > /dev/null || { echo "needs $tool" >&2; exit 1; }
done

WORK=$(mktemp -d)
APP=
cleanup() {
  [[ -n "$APP" ]] && kill "$APP" 2>/dev/null && wait "$APP" 2>/dev/null || true
  if [[ -n "${KEEP:-}" ]]; then
    mkdir -p "$KEEP" && find "$WORK" -maxdepth 1 \( -name '*.requests' -o -name '*.collapsed' -o -name '*.txt' \) \
      -exec cp {} "$KEEP"/ \; || echo "could not keep the recordings in $KEEP" >&2
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT

if [[ $PROFILER == async ]]; then
  AP_JAR=${MAVEN_REPO:-$HOME/.m2/repository}/tools/profiler/async-profiler/3.0/async-profiler-3.0.jar
  [[ -f "$AP_JAR" ]] || ./mvnw -B -q dependency:get -Dartifact=tools.profiler:async-profiler:3.0 > /dev/null
  AP_LIB=linux-$(uname -m | sed 's/x86_64/x64/; s/aarch64/arm64/')/libasyncProfiler.so
  unzip -q -o "$AP_JAR" "$AP_LIB" -d "$WORK"
  AP_LIB=$WORK/$AP_LIB
  INTERVAL_US=$((1000000 / HZ))
fi

PORT=$(free_port)
taskset -c "$APP_CPU" java -Xms512m -Xmx512m -XX:ActiveProcessorCount=1 -XX:+UnlockDiagnosticVMOptions \
  "${JVM_FLAGS[@]}" -jar "$JAR" --server.port="$PORT" --server.address=127.0.0.1 \
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
# Records what the application does while wrk loads one URL: record <name> <url> <seconds>.
record() {
  if [[ $PROFILER == perf ]]; then
    perf record -e cpu-clock -F "$HZ" -g -p "$APP" -o "$WORK/$1.data" -- sleep "$3" > /dev/null 2>&1 &
    local recorder=$!
    load "$3" "$2" | awk '/requests in/ { print $1 }' > "$WORK/$1.requests"
    wait "$recorder"
  else
    jcmd "$APP" JVMTI.agent_load "$AP_LIB" "\"start,event=cpu,interval=${INTERVAL_US}us,threads\"" > /dev/null
    load "$3" "$2" | awk '/requests in/ { print $1 }' > "$WORK/$1.requests"
    jcmd "$APP" JVMTI.agent_load "$AP_LIB" "\"stop,collapsed,file=$WORK/$1.collapsed\"" > /dev/null
  fi
}
# the first recording of a process costs more than the next ones: thrown away
record first "$LIMITED" 10
MODES=()
for round in $(seq "$ROUNDS"); do
  for mode in limited twin; do
    url=$LIMITED
    [[ $mode == twin ]] && url=$TWIN
    record "$mode-$round" "$url" "$SECONDS_EACH"
    MODES+=("$mode-$round")
  done
done
kill "$APP"
wait "$APP" 2>/dev/null || true
APP=
if [[ $PROFILER == perf ]]; then
  for mode in "${MODES[@]}"; do
    perf script -i "$WORK/$mode.data" -F comm,ip,sym 2>/dev/null > "$WORK/$mode.txt"
  done
fi

echo "# $SAMPLE sample, $(java -version 2>&1 | head -1), application on CPU $APP_CPU, wrk -t2 -c32 on CPU $LOAD_CPU, $PROFILER at $HZ Hz, $ROUNDS × ${SECONDS_EACH} s each"
python3 - "$WORK" "$HZ" "$PROFILER" "$FRAMES" "${MODES[@]}" <<'EOF'
import collections, re, sys

work, hz, profiler, frames_of_interest, modes = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5:]
STOPS = re.compile(r'^(org\.apache\.catalina\.core\.ApplicationFilterChain\.|org\.springframework\.web\.servlet\.'
                   r'(DispatcherServlet|HandlerExecutionChain)\.|org\.springframework\.security\.web\.'
                   r'(FilterChainProxy|ObservationFilterChainDecorator\$VirtualFilterChain)|'
                   r'org\.springframework\.web\.server\.handler\.(DefaultWebFilterChain|FilteringWebHandler)|'
                   r'io\.github\.ratelimit\.sample\.)')


def perf_samples(path):
    """(thread, frames from the executing one to the root, samples) of perf script output."""
    thread, frames = None, []
    for line in open(path, errors='replace'):
        if not line.strip():
            if thread is not None:
                yield thread, frames, 1
            thread, frames = None, []
        elif not line[0].isspace():
            thread = line.split()[0]
        else:
            parts = line.strip().split(None, 1)
            frames.append(re.sub(r'\(.*', '', parts[1] if len(parts) > 1 else '').split(' ')[-1])
    if thread is not None:
        yield thread, frames, 1


def async_samples(path):
    """The same of async-profiler's collapsed stacks: the thread first, then root to leaf."""
    for line in open(path, errors='replace'):
        stack, _, count = line.rstrip('\n').rpartition(' ')
        frames = stack.split(';')
        thread = frames[0][1:].split(' tid=')[0] if frames[0].startswith('[') else ''
        yield thread, [frame.replace('/', '.') for frame in reversed(frames[1:])], int(count)


def library(frame):
    return frame.startswith('io.github.ratelimit.') and not frame.startswith('io.github.ratelimit.sample.')


print('| endpoint | round | requests | process CPU µs/request | request threads µs/request | limiter µs/request |')
print('|---|---:|---:|---:|---:|---:|')
innermost = {'limited': collections.Counter(), 'twin': collections.Counter()}
limiter_total = {'limited': 0.0, 'twin': 0.0}
# the whole process, by thread (numbers in names folded) and under the frames asked for
by_thread = {'limited': collections.Counter(), 'twin': collections.Counter()}
under = {'limited': collections.Counter(), 'twin': collections.Counter()}
wanted = [f for f in frames_of_interest.split(',') if f]
for mode in modes:
    endpoint, round_ = mode.rsplit('-', 1)
    requests = int(open(f'{work}/{mode}.requests').read().split()[0])
    samples = perf_samples(f'{work}/{mode}.txt') if profiler == 'perf' else async_samples(f'{work}/{mode}.collapsed')
    total = request_threads = limiter = 0
    for thread, frames, count in samples:
        total += count
        by_thread[endpoint][re.sub(r'\d+', '#', thread)] += count / requests
        for want in wanted:
            if any(want in frame for frame in frames):
                under[endpoint][want] += count / requests
        if not thread.startswith(('http-nio', 'reactor-http')):
            continue
        request_threads += count
        for frame in frames:
            if library(frame):
                limiter += count
                innermost[endpoint][frame] += count / requests
                break
            if STOPS.match(frame):
                break
    per = 1e6 / hz / requests
    limiter_total[endpoint] += limiter * per / (len(modes) // 2)
    print(f'| {endpoint} | {round_} | {requests} | {total * per:.1f} | {request_threads * per:.1f} | {limiter * per:.2f} |')
rounds = len(modes) // 2
print()
print(f'limiter µs/request, mean of rounds: limited {limiter_total["limited"]:.2f}, twin {limiter_total["twin"]:.2f}, '
      f'difference {limiter_total["limited"] - limiter_total["twin"]:.2f}')
print()
print('innermost library frame of the limiter samples, µs/request (mean of rounds): limited, twin, difference')
scale = 1e6 / hz / rounds
frames = set(innermost['limited']) | set(innermost['twin'])
for frame in sorted(frames, key=lambda f: -(innermost['limited'][f] - innermost['twin'][f]))[:25]:
    limited, twin = innermost['limited'][frame] * scale, innermost['twin'][frame] * scale
    print(f'  {limited:6.3f} {twin:6.3f} {limited - twin:+6.3f}  {frame}')
print()
print('the whole process by thread, µs/request (mean of rounds): limited, twin, difference')
for thread in sorted(set(by_thread['limited']) | set(by_thread['twin']),
                     key=lambda t: -abs(by_thread['limited'][t] - by_thread['twin'][t]))[:10]:
    limited, twin = by_thread['limited'][thread] * scale, by_thread['twin'][thread] * scale
    print(f'  {limited:8.2f} {twin:8.2f} {limited - twin:+6.2f}  {thread}')
if wanted:
    print()
    print('samples under these frames, µs/request (mean of rounds): limited, twin, difference')
    for want in wanted:
        limited, twin = under['limited'][want] * scale, under['twin'][want] * scale
        print(f'  {limited:6.3f} {twin:6.3f} {limited - twin:+6.3f}  {want}')
EOF
