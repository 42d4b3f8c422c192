#!/usr/bin/env bash
# Runs the consumer suites of compat-tests on each Spring Boot and Java version of the
# compatibility matrix, with the versions Spring Boot manages: every suite once, and the
# reactive suites (in memory and on Redis) five runs in a row, each run a JVM of its own.
#
#   compat-tests/run-matrix.sh
#
# BOOT_VERSIONS (default "4.0.7 4.1.2") and JAVA_HOMES (default: the JDK that runs `java`,
# then every Java 25 under /usr/lib/jvm) choose the matrix. Needs redis-server on the PATH.
# Prints one line per cell with the versions tested and the passed/failed counts, then
# "N passed, N failed" for the whole matrix; exits non-zero if any test failed.
set -euo pipefail
cd "$(dirname "$0")/.."

BOOT_VERSIONS=${BOOT_VERSIONS:-"4.0.7 4.1.2"}
if [ -z "${JAVA_HOMES:-}" ]; then
  JAVA_HOMES=$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")
  for home in /usr/lib/jvm/*-25-*; do
    [ -x "$home/bin/java" ] && JAVA_HOMES="$JAVA_HOMES $home"
  done
fi

# Properties a user of that Boot version sets on spring-boot-starter-parent. Boot 4.1.2
# manages Netty 4.2.19.Final, which not every Maven mirror serves: take 4.2.18.Final.
boot_properties() {
  case "$1" in
    4.1.2) echo "-Dnetty.version=4.2.18.Final" ;;
  esac
}

reports=compat-tests/target/surefire-reports
logs=compat-tests/target/matrix
mkdir -p "$logs"
total_passed=0
total_failed=0
summary=()
for boot in $BOOT_VERSIONS; do
  for home in $JAVA_HOMES; do
    java_feature=$("$home/bin/java" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p')
    log="$logs/boot-$boot-java-$java_feature.log"
    echo "== Spring Boot $boot, Java $java_feature ($home)"
    rm -rf "$reports"
    # the starter's modules are built from this tree and run none of their own tests
    # (-Dtest names only compat-tests' classes); failures are counted below, not fatal here
    # shellcheck disable=SC2046
    JAVA_HOME="$home" ./mvnw -B -ntp -pl compat-tests -am test -Preactive-runs \
      -Dboot.version="$boot" $(boot_properties "$boot") \
      -Dtest='*ConsumerTests,ResolvedVersionsTests' -Dsurefire.failIfNoSpecifiedTests=false \
      -Dmaven.test.failure.ignore=true -Djacoco.skip=true >"$log" 2>&1 \
      || { echo "build failed, see $log"; tail -n 20 "$log"; exit 1; }
    versions=$(grep -h -o 'compat: .*' "$log" | head -n 1)
    [ -n "$versions" ] || { echo "no versions line in $log"; exit 1; }
    read -r passed failed reactive_clean < <(python3 - "$reports" <<'PY'
import sys, pathlib, xml.etree.ElementTree as ET
passed = failed = 0
runs = {}
for report in pathlib.Path(sys.argv[1]).rglob("TEST-*.xml"):
    suite = ET.parse(report).getroot()
    tests = int(suite.get("tests"))
    bad = int(suite.get("failures")) + int(suite.get("errors"))
    skipped = int(suite.get("skipped"))
    passed += tests - bad - skipped
    failed += bad
    if ".Reactive" in suite.get("name"):
        run = report.parent.name
        runs[run] = runs.get(run, 0) + bad
print(passed, failed, sum(1 for bad in runs.values() if bad == 0), sep=" ")
PY
)
    line="Boot $boot / Java $java_feature: $passed passed, $failed failed; reactive suites clean in $reactive_clean of 5 runs | ${versions#compat: }"
    echo "$line"
    summary+=("$line")
    total_passed=$((total_passed + passed))
    total_failed=$((total_failed + failed))
  done
done
echo
printf '%s\n' "${summary[@]}"
echo "$total_passed passed, $total_failed failed"
[ "$total_failed" -eq 0 ]
