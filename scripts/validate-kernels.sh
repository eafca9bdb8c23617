#!/bin/sh
# Validates every GLSL kernel with glslangValidator: each .comp file as written (its includes
# resolved from glsl/), then every variant the library compiles, for desktop GL 4.3 and for
# ES 3.1, exactly as the driver receives it (dumped by `tensorgl kernels --dump`; desktop variants
# with an ES twin compiled, not linked), and checks
# that none binds more storage buffers than every device offers.
# Usage: scripts/validate-kernels.sh BUILD_DIR [PART]   (PART: all, the default, or K/N: every
# N-th variant of each kernel from its K-th, as `tensorgl kernels --part` picks them; the .comp
# files as written are checked whole either way)
set -eu

# Checks the variant files named after the limit; run by this script itself, several at once
# (see below). Prints what fails and exits 1 if any does.
check_variants() {
    max_blocks=$1
    shift
    status=0
    for f in "$@"; do
        echo >> "${f%/*}/../checked"   # one byte per variant, for the progress count
        log=$(glslangValidator -l -q "$f" 2>&1) || { printf '%s\n' "$log"; status=1; continue; }
        blocks=$(printf '%s\n' "$log" | awk '/^(Uniform|Buffer) block reflection:/ { s = 1; next } /^$/ { s = 0 } s' | wc -l)
        if [ "$blocks" -gt "$max_blocks" ]; then
            echo "$f: $blocks storage blocks, more than the $max_blocks every device offers" >&2
            status=1
        fi
    done
    return $status
}
# Compiles the variant files given in one glslangValidator process, without linking (see below).
compile_variants() {
    for f in "$@"; do echo >> "${f%/*}/../checked"; done
    log=$(glslangValidator "$@" 2>&1) || { printf '%s\n' "$log"; return 1; }
}
if [ "${1:-}" = --check-variants ]; then
    shift
    check_variants "$@"
    exit $?
fi
if [ "${1:-}" = --compile-variants ]; then
    shift
    compile_variants "$@"
    exit $?
fi

build=$1
part=${2:-all}
root=$(cd "$(dirname "$0")/.." && pwd)
out="$build/kernels"
rm -rf "$out"
mkdir -p "$out/gl" "$out/gles"
fail=0
count=0
for f in "$root"/glsl/*/*.comp; do
    # -l: glslangValidator resolves #include only when linking
    glslangValidator -l -I"$root/glsl" "$f" > "$out/raw.log" 2>&1 || { cat "$out/raw.log"; fail=1; }
    count=$((count + 1))
done
part_args=""
[ "$part" = all ] || part_args="--part $part"
# shellcheck disable=SC2086
"$build/tensorgl" kernels --dump "$out/gl" --api gl $part_args >/dev/null
# shellcheck disable=SC2086
"$build/tensorgl" kernels --dump "$out/gles" --api gles $part_args >/dev/null
# -q adds glslang's reflection: the storage blocks each variant declares live must stay within
# TGL_GL_KERNEL_STORAGE_BLOCKS (src/gl/gl_internal.h), ES 3.1's guaranteed 4, which the library
# assumes of every device (kernels use no uniform blocks, so glslang's "Uniform block" section,
# where version 12 lists SSBOs, counts them too). tgl_map's kernels, generated per expression,
# are checked against the device's own limit at run time instead.
max_blocks=$(sed -n 's/^#define TGL_GL_KERNEL_STORAGE_BLOCKS \([0-9]*\).*/\1/p' "$root/src/gl/gl_internal.h")
# Desktop variants without an ES twin (tgl_gl_es_excluded) run only on desktop GL, whose 4.3
# guarantees TGL_GL_KERNEL_STORAGE_BLOCKS_GL.
max_blocks_gl=$(sed -n 's/^#define TGL_GL_KERNEL_STORAGE_BLOCKS_GL \([0-9]*\).*/\1/p' "$root/src/gl/gl_internal.h")
# One glslangValidator process per variant (it links one program at a time), as many at once as
# there are cores: the 3500 or so took 9.8 minutes one after another on the 2-core CI machine.
variants=$(find "$out/gl" "$out/gles" -name '*.comp' | wc -l)
: > "$out/checked"
(while sleep 30; do echo "validate-kernels: $(wc -c < "$out/checked") of $variants variants"; done) &
watcher=$!
trap 'kill $watcher 2>/dev/null' EXIT
# Each ES variant, and each desktop variant that has no ES twin, is linked with its reflection
# (a process each: about 0.11 s). A desktop variant with an ES twin of the same name (the same
# kernel and defines, so the same storage blocks, already counted on the twin) is only compiled,
# 64 to a process (about 0.025 s each): the whole check took 397 s instead of 547 on the 2-core
# VM (2026-12-02, one run of each, one after the other).
(cd "$out/gl" && ls) | sort > "$out/gl.names"
(cd "$out/gles" && ls) | sort > "$out/gles.names"
find "$out/gles" -name '*.comp' | sort |
    xargs -P "$(nproc)" -n 64 sh "$root/scripts/validate-kernels.sh" --check-variants "$max_blocks" || fail=1
comm -23 "$out/gl.names" "$out/gles.names" | sed "s|^|$out/gl/|" |
    xargs -P "$(nproc)" -n 64 sh "$root/scripts/validate-kernels.sh" --check-variants "$max_blocks_gl" || fail=1
comm -12 "$out/gl.names" "$out/gles.names" | sed "s|^|$out/gl/|" |
    xargs -P "$(nproc)" -n 64 sh "$root/scripts/validate-kernels.sh" --compile-variants || fail=1
count=$((count + variants))
if [ "$fail" != 0 ]; then
    echo "validate-kernels: kernels failed the checks above" >&2
    exit 1
fi
echo "validate-kernels: $count kernel sources passed glslangValidator (storage blocks within $max_blocks, desktop-only variants $max_blocks_gl)$([ "$part" = all ] || echo "; part $part of the variants")"
