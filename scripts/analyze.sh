#!/bin/sh
# Static analysis: cppcheck and clang-tidy (configuration: .clang-tidy) over the library, the
# command, the tests, the fuzz harnesses, the examples and the developer tools in bench/. Exits
# non-zero on any finding.
# Usage: scripts/analyze.sh [BUILD]   (BUILD holds gen/kernels.c; default build)
set -eu
build=${1:-build}
files=$(ls src/*/*.c tests/*.c tests/*/*.c examples/*.c docs/examples/*.c bench/*.c)
flags="-std=c11 -D_POSIX_C_SOURCE=200809L -Iinclude -Isrc -Itests/common -Iexamples"

echo "analyze: cppcheck $(cppcheck --version | cut -d' ' -f2) over $(echo "$files" | wc -l) files"
# shellcheck disable=SC2086
cppcheck -q --enable=warning,portability,performance --std=c11 -Iinclude -Isrc -Itests/common -Iexamples \
    --inline-suppr --error-exitcode=1 -D__GNUC__ --suppress=missingIncludeSystem $files

echo "analyze: clang-tidy $(clang-tidy --version | sed -n 's/.*version \([0-9.]*\).*/\1/p' | head -1) (.clang-tidy)"
# One file per process, two at a time; any finding is an error (WarningsAsErrors in .clang-tidy).
# shellcheck disable=SC2086
echo "$files" | xargs -P 2 -I{} clang-tidy -quiet {} -- $flags > "$build/clang-tidy.log" 2>&1 || true
if grep -q 'error:' "$build/clang-tidy.log"; then
    grep -A3 'error:' "$build/clang-tidy.log"
    echo "analyze: clang-tidy reported the findings above" >&2
    exit 1
fi
echo "analyze: no findings"
