#!/bin/sh
# Runs each cmocka test binary, then prints one summary line over all of them.
# Usage: scripts/run-tests.sh BUILD_DIR TEST_BINARY...
set -u
build=$1
shift
mkdir -p "$build/tests"
# Program binaries go under the build tree, not the user's cache (an explicit TGL_CACHE_DIR,
# empty included, is kept).
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
log="$build/tests/last-run.log"
: > "$log"
crashed=0
# What failed, repeated after the summary: CI logs keep only their tail.
failures=""
for t in "$@"; do
    echo "== $t"
    out="$build/tests/.output"
    "$t" > "$out" 2>&1
    rc=$?
    cat "$out"
    cat "$out" >> "$log"
    # cmocka exits with the number of failed tests; anything its summary does not explain
    # (a crash, a sanitizer abort) is counted here.
    if [ "$rc" != 0 ] && ! grep -q '^\[  FAILED  \]' "$out"; then
        echo "!! $t exited with status $rc without a cmocka failure report"
        crashed=$((crashed + 1))
        failures="$failures
$t: exited with status $rc (crash or sanitizer report above)"
    fi
    # cmocka names each failed test after its summary; the binary's seed (drawn once per
    # process) reproduces it.
    seed=$(sed -n 's/^\[ SEED     \] //p' "$out" | head -n 1)
    for f in $(sed -n 's/^\[  FAILED  \] \([A-Za-z_][A-Za-z0-9_]*\)$/\1/p' "$out" | sort -u); do
        failures="$failures
$t: $f${seed:+ ($seed)}"
    done
done
sum() { sed -n "s/$1/\\1/p" "$log" | awk '{s+=$1} END {print s+0}'; }
passed=$(sum '^\[  PASSED  \] \([0-9]*\) test(s)\.')
failed=$(sum '^\[  FAILED  \] \([0-9]*\) test(s), listed below:')
skipped=$(sum '^\[  SKIPPED \] \([0-9]*\) test(s), listed below:')
failed=$((failed + crashed))
echo
echo "tests: $passed passed, $failed failed, $skipped skipped"
[ -z "$failures" ] || echo "failed:$failures"
[ "$failed" = 0 ]
