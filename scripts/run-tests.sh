#!/bin/sh
# Runs each cmocka test binary, then prints one summary line over all of them.
# Usage: scripts/run-tests.sh BUILD_DIR TEST_BINARY...
set -u
build=$1
shift
log="$build/tests/last-run.log"
mkdir -p "$build/tests"
: > "$log"
status=0
for t in "$@"; do
    echo "== $t"
    "$t" 2>&1 | tee -a "$log"
    rc=$(cat "$build/tests/.rc" 2>/dev/null || true)
    [ -z "$rc" ] || true
done
passed=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test(s)\./\1/p' "$log" | awk '{s+=$1} END {print s+0}')
failed=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test(s), listed below:/\1/p' "$log" | awk '{s+=$1} END {print s+0}')
skipped=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) test(s), listed below:/\1/p' "$log" | awk '{s+=$1} END {print s+0}')
echo
echo "tests: $passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ] || status=1
exit $status
