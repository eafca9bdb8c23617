#!/bin/sh
# Validates every GLSL kernel with glslangValidator: each .comp file as written (its includes
# resolved from glsl/), then every variant the library compiles, for desktop GL 4.3 and for
# ES 3.1, exactly as the driver receives it (dumped by `tensorgl kernels --dump`).
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
for f in "$out"/gl/*.comp "$out"/gles/*.comp; do
    glslangValidator "$f" > "$out/variant.log" 2>&1 || { cat "$out/variant.log"; fail=1; }
    count=$((count + 1))
done
if [ "$fail" != 0 ]; then
    echo "validate-kernels: glslangValidator rejected kernels (see above)" >&2
    exit 1
fi
echo "validate-kernels: $count kernel sources passed glslangValidator"
