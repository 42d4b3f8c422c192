#!/usr/bin/env bash
# Share of the request threads' CPU samples spent in the limiter's own code, from a JFR
# recording of the sample application under load (docs/benchmarks.md, section 3):
#   java -XX:+FlightRecorder -jar sample-app/target/sample-app.jar <options> &
#   wrk ... (warm-up), then: jcmd <pid> JFR.start name=p settings=profile filename=app.jfr
#   wrk ... (measured), then: jcmd <pid> JFR.stop name=p
#   benchmarks/limiter-profile.sh app.jfr
# A sample counts when, walking from the executing frame towards the thread's root, a
# frame of the library (io.github.ratelimit, outside the sample's own package) comes
# before the servlet filter chain, the DispatcherServlet or Spring Security's filter chain
# continues: the rest of the request, which runs inside the limiter's filter, is not counted.
set -euo pipefail

if [[ $# -ne 1 || ! -f "$1" ]]; then
  echo "usage: $0 <recording.jfr>" >&2
  exit 1
fi

jfr print --events jdk.ExecutionSample --stack-depth 64 "$1" | awk '
  /^jdk.ExecutionSample/ { thread = ""; inStack = 0; decided = 0; next }
  /sampledThread = / { thread = $0; sub(/.*sampledThread = "/, "", thread); sub(/".*/, "", thread); next }
  /stackTrace = \[/ {
    inStack = 1
    if (thread ~ /^http-nio/) { requests++ } else { decided = 1 }
    next
  }
  inStack && /^[ \t]*\]/ { inStack = 0; next }
  inStack && !decided {
    frame = $1
    if (frame ~ /^io\.github\.ratelimit\./ && frame !~ /^io\.github\.ratelimit\.sample\./) {
      sub(/\(.*/, "", frame); limiter++; nearest[frame]++; decided = 1
    }
    else if (frame ~ /^(org\.apache\.catalina\.core\.ApplicationFilterChain\.|org\.springframework\.web\.servlet\.DispatcherServlet\.|org\.springframework\.security\.web\.FilterChainProxy|org\.springframework\.web\.servlet\.HandlerExecutionChain\.|org\.springframework\.web\.filter\.OncePerRequestFilter\.)/) {
      decided = 1
    }
  }
  END {
    printf "request-thread samples: %d, in the limiter: %d (%.1f%%)\n", requests, limiter, 100 * limiter / (requests ? requests : 1)
    print "limiter frame nearest the executing one:"
    for (f in nearest) { printf "%6d  %s\n", nearest[f], f | "sort -rn | head -15" }
  }'
