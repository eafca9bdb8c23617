#!/bin/sh
# Builds the SPIR-V modules TGL_SHADER=spirv loads (src/gl/gl_spirv.c): every kernel variant the
# library can ask for, as `tensorgl kernels --dump --api spirv` writes it (each file named by
# the hash the library looks it up by), compiled with glslangValidator -G (OpenGL SPIR-V) and
# optimized with spirv-opt.
# Usage: scripts/build-spirv.sh BUILD_DIR [OUT_DIR]   (BUILD_DIR/tensorgl dumps the variants;
# the modules land in OUT_DIR, default BUILD_DIR/tensorgl-spirv)
set -eu
build=$1
out=${2:-$build/tensorgl-spirv}
src="$build/kernels/spirv-src"
rm -rf "$out" "$src"
mkdir -p "$out" "$src"
"$build/tensorgl" kernels --dump "$src" --api spirv >/dev/null
# Each file through glslangValidator, then spirv-opt, as many at once as there are cores; a
# failure prints the tool's output and fails the build. spirv-opt unrolls the loops the kernels
# mark (TGL_UNROLL) and runs its performance passes with no size limit on replacing arrays by
# scalars: glslangValidator's output keeps register arrays in memory and loops rolled, and the
# H100's driver ran it as it was (GEMM 7x slower than from GLSL; 1.5x after these passes).
# A count every 30 s: the whole build takes minutes.
total=$(ls "$src" | grep -c '\.comp$')
(while sleep 30; do echo "build-spirv: $(ls "$out" | grep -c '\.spv$') of $total modules"; done) &
watcher=$!
trap 'kill $watcher 2>/dev/null' EXIT
ls "$src" | grep '\.comp$' | xargs -P "$(nproc)" -n 32 sh -c '
    src=$1; out=$2; shift 2
    for f in "$@"; do
        spv="$out/${f%.comp}.spv"
        log=$(glslangValidator -G -o "$spv.raw" "$src/$f" 2>&1) || { echo "$f: $log" >&2; exit 1; }
        log=$(spirv-opt --loop-unroll -O --scalar-replacement=0 "$spv.raw" -o "$spv" 2>&1) ||
            { echo "$f (spirv-opt): $log" >&2; exit 1; }
        rm -f "$spv.raw"
    done' sh "$src" "$out" || { echo "build-spirv: kernels failed to build (see above)" >&2; exit 1; }
count=$(ls "$out" | grep -c '\.spv$')
# The library checks for this file before it looks for modules here.
printf 'tensorgl SPIR-V kernel modules\nmodules: %s\n' "$count" > "$out/tensorgl-spirv.txt"
echo "build-spirv: $count SPIR-V modules in $out"
