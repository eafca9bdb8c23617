#!/bin/sh
# Validates every GLSL kernel with glslangValidator: each .comp file as written (its includes
# resolved from glsl/), then every variant the library compiles, for desktop GL 4.3 and for
# ES 3.1, exactly as the driver receives it (dumped by `tensorgl kernels --dump`), and checks
# that none binds more storage buffers than every device offers.
# Usage: scripts/validate-kernels.sh BUILD_DIR
set -eu
build=$1
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
"$build/tensorgl" kernels --dump "$out/gl" --api gl >/dev/null
"$build/tensorgl" kernels --dump "$out/gles" --api gles >/dev/null
# -q adds glslang's reflection: the storage blocks each variant declares live must stay within
# TGL_GL_KERNEL_STORAGE_BLOCKS (src/gl/gl_internal.h), ES 3.1's guaranteed 4, which the library
# assumes of every device (kernels use no uniform blocks, so glslang's "Uniform block" section,
# where version 12 lists SSBOs, counts them too). tgl_map's kernels, generated per expression,
# are checked against the device's own limit at run time instead.
max_blocks=$(sed -n 's/^#define TGL_GL_KERNEL_STORAGE_BLOCKS \([0-9]*\).*/\1/p' "$root/src/gl/gl_internal.h")
for f in "$out"/gl/*.comp "$out"/gles/*.comp; do
    glslangValidator -l -q "$f" > "$out/variant.log" 2>&1 || { cat "$out/variant.log"; fail=1; }
    blocks=$(awk '/^(Uniform|Buffer) block reflection:/ { s = 1; next } /^$/ { s = 0 } s' "$out/variant.log" | wc -l)
    if [ "$blocks" -gt "$max_blocks" ]; then
        echo "$f: $blocks storage blocks, more than the $max_blocks every device offers" >&2
        fail=1
    fi
    count=$((count + 1))
done
if [ "$fail" != 0 ]; then
    echo "validate-kernels: kernels failed the checks above" >&2
    exit 1
fi
echo "validate-kernels: $count kernel sources passed glslangValidator (storage blocks within $max_blocks)"
