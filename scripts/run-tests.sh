#!/usr/bin/env bash
# Runs each cmocka test binary, then prints one summary line over all of them.
# Usage: scripts/run-tests.sh BUILD_DIR TEST_BINARY...
# TGL_TEST_JOBS binaries run at once (default: one per CPU core). Most of a binary's time is
# spent on one core (kernel compilation in the driver, the CPU oracle, softpipe's interpreter),
# so this nearly halves the suite on the 2-core CI machine. Binaries start in the order given
# (the longest first); each one's output is printed whole as soon as it has finished, and a line
# says what is still running every TGL_TEST_PROGRESS seconds (default 30) of silence.
set -u
build=$1
shift
mkdir -p "$build/tests"
# Program binaries go under the build tree, not the user's cache (an explicit TGL_CACHE_DIR,
# empty included, is kept). The cache is safe for concurrent processes (entries are written
# under a temporary name and renamed into place).
export TGL_CACHE_DIR="${TGL_CACHE_DIR-$build/program-cache}"
# The SPIR-V modules every build directory shares (`make spirv`), for test_spirv and for
# TGL_SHADER=spirv runs.
export TGL_SPIRV_DIR="${TGL_SPIRV_DIR-$(cd "$(dirname "$0")/.." && pwd)/build/tensorgl-spirv}"
# A decimal-comma locale for test_map's locale test (number literals must not follow it), built
# from the `locales` package's sources into the build tree: no system locale is needed.
if [ ! -d "$build/locale/de_DE.UTF-8" ] && command -v localedef >/dev/null 2>&1 &&
    [ -f /usr/share/i18n/locales/de_DE ]; then
    mkdir -p "$build/locale"
    localedef -i de_DE -f UTF-8 "$build/locale/de_DE.UTF-8" >/dev/null 2>&1 || rm -rf "$build/locale/de_DE.UTF-8"
fi
[ -d "$build/locale/de_DE.UTF-8" ] && export LOCPATH="$(cd "$build/locale" && pwd)"

jobs=${TGL_TEST_JOBS:-$(nproc 2>/dev/null || echo 1)}
case $jobs in '' | *[!0-9]* | 0) echo "run-tests.sh: TGL_TEST_JOBS must be a positive integer, not '$jobs'" >&2; exit 2 ;; esac
log="$build/tests/last-run.log"
: > "$log"
work=$(mktemp -d "$build/tests/.run.XXXXXX")
trap 'rm -rf "$work"' EXIT
tests=("$@")

# A binary still running after TGL_TEST_TIMEOUT seconds (default 1200; the longest, test_gemm
# under ASan, takes about 4 minutes on the 2-core VM) is stopped and fails, named, so a hang
# costs minutes and says where it was instead of running into CI's limit.
limit=${TGL_TEST_TIMEOUT:-1200}
case $limit in '' | *[!0-9]* | 0) echo "run-tests.sh: TGL_TEST_TIMEOUT must be a positive integer, not '$limit'" >&2; exit 2 ;; esac

# One binary: its output, exit status and seconds into $work/N.{out,rc,secs}.
run_one() {
    local i=$1 t=$2 start rc
    start=$(date +%s)
    timeout -k 10 "$limit" "$t" > "$work/$i.out" 2>&1
    rc=$?
    if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
        echo "!! $t was still running after $limit s (TGL_TEST_TIMEOUT) and was stopped" >> "$work/$i.out"
    fi
    echo $(($(date +%s) - start)) > "$work/$i.secs"
    # written whole, then renamed: the scheduler takes the .rc file's presence for the end
    echo "$rc" > "$work/$i.rc.tmp" && mv "$work/$i.rc.tmp" "$work/$i.rc"
}

crashed=0
# What failed, repeated after the summary: CI logs keep only their tail.
failures=""
times=""
done_count=0
began=$(date +%s)
last_print=$began
# Prints binary $1's output, its seconds and what failed in it.
report() {
    local i=$1 t out rc secs seed f
    t=${tests[$i]}
    out="$work/$i.out"
    rc=$(cat "$work/$i.rc")
    secs=$(cat "$work/$i.secs")
    done_count=$((done_count + 1))
    echo "== $t ($done_count of ${#tests[@]})"
    cat "$out"
    cat "$out" >> "$log"
    echo "-- $t: $secs s"
    times="$times
$secs $t"
    # cmocka exits with the number of failed tests and counts them in its summary; a non-zero
    # exit without that count (a crash or sanitizer abort, even after a test had failed; a group
    # setup that failed, so that no test ran) is counted here.
    if [ "$rc" != 0 ] && ! grep -q '^\[  FAILED  \] [0-9]* test(s), listed below:' "$out"; then
        echo "!! $t exited with status $rc without a cmocka failure count"
        crashed=$((crashed + 1))
        if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
            failures="$failures
$t: still running after $limit s, stopped (TGL_TEST_TIMEOUT)"
        elif grep -q '^\[  FAILED  \] GROUP \(SETUP\|TEARDOWN\)' "$out"; then
            failures="$failures
$t: its group setup or teardown failed (output above)"
        else
            failures="$failures
$t: exited with status $rc (crash or sanitizer report above)"
        fi
    fi
    # cmocka names each failed test after its summary; the binary's seed (drawn once per
    # process) reproduces it.
    seed=$(sed -n 's/^\[ SEED     \] //p' "$out" | head -n 1)
    for f in $(sed -n 's/^\[  FAILED  \] \([A-Za-z_][A-Za-z0-9_]*\)$/\1/p' "$out" | sort -u); do
        failures="$failures
$t: $f${seed:+ ($seed)}"
    done
    last_print=$(date +%s)
}

# The scheduler: starts binaries while fewer than $jobs run, prints each one that ends, and
# after TGL_TEST_PROGRESS seconds without output names those still running.
progress=${TGL_TEST_PROGRESS:-30}
case $progress in '' | *[!0-9]* | 0) echo "run-tests.sh: TGL_TEST_PROGRESS must be a positive integer, not '$progress'" >&2; exit 2 ;; esac
started=0
declare -A live=()
declare -A since=()
while [ "$started" -lt "${#tests[@]}" ] || [ "${#live[@]}" -gt 0 ]; do
    while [ "$started" -lt "${#tests[@]}" ] && [ "${#live[@]}" -lt "$jobs" ]; do
        run_one "$started" "${tests[$started]}" &
        live[$started]=1
        since[$started]=$(date +%s)
        started=$((started + 1))
    done
    for i in "${!live[@]}"; do
        if [ -f "$work/$i.rc" ]; then
            unset "live[$i]"
            report "$i"
        fi
    done
    now=$(date +%s)
    if [ "${#live[@]}" -gt 0 ] && [ $((now - last_print)) -ge "$progress" ]; then
        line=""
        for i in $(printf '%s\n' "${!live[@]}" | sort -n); do
            line="$line${line:+, }${tests[$i]##*/} ($((now - ${since[$i]})) s)"
        done
        echo ".. [$((now - began)) s] $done_count of ${#tests[@]} done; running: $line"
        last_print=$now
    fi
    sleep 1
done
wait

sum() { sed -n "s/$1/\\1/p" "$log" | awk '{s+=$1} END {print s+0}'; }
passed=$(sum '^\[  PASSED  \] \([0-9]*\) test(s)\.')
failed=$(sum '^\[  FAILED  \] \([0-9]*\) test(s), listed below:')
skipped=$(sum '^\[  SKIPPED \] \([0-9]*\) test(s), listed below:')
failed=$((failed + crashed))
echo
echo "slowest:" $(echo "$times" | sort -rn | head -n 5 | awk 'NF {printf "%s%s (%d s)", (n++ ? ", " : ""), $2, $1}')
echo "tests: $passed passed, $failed failed, $skipped skipped"
[ -z "$failures" ] || echo "failed:$failures"
[ "$failed" = 0 ]
