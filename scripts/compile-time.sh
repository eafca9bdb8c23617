#!/bin/sh
# Times the GL driver's cold build (compile, link, first dispatch) of every kernel variant whose
# dumped file name matches PATTERN (a grep pattern; all when left out), with the driver's shader
# cache off. Source a Mesa's env file first to time that Mesa (scripts/newer-mesa.sh).
# Usage: scripts/compile-time.sh BUILD_DIR [PATTERN]
# e.g.   scripts/compile-time.sh build 'attention-flash_reg'
set -eu
build=$1
pattern=${2:-.}
root=$(cd "$(dirname "$0")/.." && pwd)
out="$build/compile-time"
rm -rf "$out"
mkdir -p "$out/gl"
cc -std=c11 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -O1 -o "$out/compile_time" "$root/bench/compile_time.c" -lepoxy
"$build/tensorgl" kernels --dump "$out/gl" --api gl >/dev/null
files=$(ls "$out"/gl/*.comp | grep -e "$pattern" || true)
[ -n "$files" ] || { echo "compile-time: no kernel variant matches '$pattern'" >&2; exit 1; }
# shellcheck disable=SC2086 # one argument per file; the names have no spaces
MESA_SHADER_CACHE_DISABLE=true "$out/compile_time" $files
