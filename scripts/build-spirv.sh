#!/bin/sh
# Builds the SPIR-V modules TGL_SHADER=spirv loads (src/gl/gl_spirv.c): every kernel variant the
# library can ask for, as `tensorgl kernels --dump --api spirv` writes it (each file named by
# the hash the library looks it up by), compiled with glslangValidator -G (OpenGL SPIR-V) and
# optimized with spirv-opt.
# Usage: scripts/build-spirv.sh BUILD_DIR [OUT_DIR [PART]]   (BUILD_DIR/tensorgl dumps the
#        variants; the modules land in OUT_DIR, default BUILD_DIR/tensorgl-spirv; PART is all,
#        the default, or K/N: every N-th variant of each kernel from its K-th, as `tensorgl
#        kernels --part` picks them, recorded in OUT_DIR/part)
#        scripts/build-spirv.sh --add BUILD_DIR OUT_DIR MODULE...   (adds the named modules,
#        HASH.spv, to a part: names that no variant has, such as tgl_map's kernels, are skipped)
set -eu
# Compiles the named .comp files of $1 into modules in $2; prints the tool's output and fails on
# the first that does not build.
compile() {
    src_dir=$1 out_dir=$2
    shift 2
    printf '%s\n' "$@" | xargs -P "$(nproc)" -n 32 sh -c '
    src=$1; out=$2; shift 2
    for f in "$@"; do
        spv="$out/${f%.comp}.spv"
        log=$(glslangValidator -G -o "$spv.raw" "$src/$f" 2>&1) || { echo "$f: $log" >&2; exit 1; }
        log=$(spirv-opt --loop-unroll -O --scalar-replacement=0 "$spv.raw" -o "$spv" 2>&1) ||
            { echo "$f (spirv-opt): $log" >&2; exit 1; }
        rm -f "$spv.raw"
    done' sh "$src_dir" "$out_dir" || { echo "build-spirv: kernels failed to build (see above)" >&2; return 1; }
}
# The library checks for this file before it looks for modules here.
manifest() {
    count=$(ls "$1" | grep -c '\.spv$')
    printf 'tensorgl SPIR-V kernel modules\nmodules: %s\n' "$count" > "$1/tensorgl-spirv.txt"
}

if [ "${1:-}" = --add ]; then
    build=$2 out=$3
    shift 3
    src=$(mktemp -d "${TMPDIR:-/tmp}/tgl-spirv-src.XXXXXX")
    trap 'rm -rf "$src"' EXIT
    "$build/tensorgl" kernels --dump "$src" --api spirv >/dev/null
    names=""
    for m in "$@"; do
        base=${m##*/}
        base=${base%.spv}
        case " $names " in *" $base.comp "*) continue ;; esac
        if [ -f "$src/$base.comp" ] && [ ! -f "$out/$base.spv" ]; then names="$names $base.comp"; fi
    done
    [ -z "$names" ] && exit 0
    # shellcheck disable=SC2086
    compile "$src" "$out" $names || exit 1
    manifest "$out"
    echo "build-spirv: added$(echo "$names" | wc -w | sed 's/^/ /') modules to $out"
    exit 0
fi

build=$1
out=${2:-$build/tensorgl-spirv}
part=${3:-all}
src="$build/kernels/spirv-src"
rm -rf "$out" "$src"
mkdir -p "$out" "$src"
part_args=""
[ "$part" = all ] || part_args="--part $part"
# shellcheck disable=SC2086
"$build/tensorgl" kernels --dump "$src" --api spirv $part_args >/dev/null
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
# shellcheck disable=SC2046
compile "$src" "$out" $(ls "$src" | grep '\.comp$') || exit 1
manifest "$out"
echo "$part" > "$out/part"
echo "build-spirv: $count SPIR-V modules in $out$([ "$part" = all ] || echo " (part $part of the variants)")"
