#!/usr/bin/env bash
# Stages `make install` into a temporary DESTDIR, builds every docs/examples/*.c out of the tree
# against the staged copy with `pkg-config --cflags --libs tensorgl` only (shared, then static
# with --static), runs each, checks the installed pieces (SONAME, symlinks, man page), then
# runs the shared form again with TGL_SHADER=spirv (which must find the modules installed beside
# the library), and checks that `make uninstall` removes every file install wrote.
# Usage: scripts/check-install.sh   (from the repository root; the packages of `make deps`)
set -euo pipefail
stage=$(mktemp -d)
work=$(mktemp -d)
trap 'rm -rf "$stage" "$work"' EXIT
prefix=/usr/local
make --no-print-directory install install-spirv DESTDIR="$stage" PREFIX="$prefix" >/dev/null
lib="$stage$prefix/lib"

echo "installed:"
(cd "$stage" && find . \( -type f -o -type l \) -not -name '*.spv' | sort | sed 's/^\./  /')
modules=$(find "$lib/tensorgl-spirv" -name '*.spv' | wc -l)
echo "  ... and $modules SPIR-V modules in .$prefix/lib/tensorgl-spirv"
[ "$modules" -gt 100 ] || { echo "check-install: too few SPIR-V modules ($modules)" >&2; exit 1; }
soname=$(objdump -p "$lib/libtensorgl.so" | awk '/SONAME/ {print $2}')
[ "$soname" = "libtensorgl.so.0" ] || { echo "check-install: SONAME is '$soname'" >&2; exit 1; }
[ "$(readlink "$lib/libtensorgl.so")" = "$soname" ] || { echo "check-install: bad dev symlink" >&2; exit 1; }
[ -s "$stage$prefix/share/man/man1/tensorgl.1" ] || { echo "check-install: no man page" >&2; exit 1; }
"$stage$prefix/bin/tensorgl" version

# pkg-config sees only the staged copy: the sysroot prefixes its -I and -L paths.
export PKG_CONFIG_SYSROOT_DIR="$stage" PKG_CONFIG_PATH="$lib/pkgconfig" PKG_CONFIG_LIBDIR="$lib/pkgconfig:/usr/lib/x86_64-linux-gnu/pkgconfig:/usr/lib/pkgconfig:/usr/share/pkgconfig"
pkg-config --exists --print-errors tensorgl
echo "pkg-config: $(pkg-config --cflags --libs tensorgl)"
cp docs/examples/*.c "$work/"
cd "$work"
for src in *.c; do
    name=${src%.c}
    # shellcheck disable=SC2046
    cc -std=c11 -Wall -Wextra -Werror -o "$name" "$src" $(pkg-config --cflags --libs tensorgl) -lm
    # The static form: the archive by path, its private dependencies from pkg-config --static.
    # shellcheck disable=SC2046
    cc -std=c11 -Wall -Wextra -Werror -o "$name-static" "$src" $(pkg-config --cflags tensorgl) \
        "$lib/libtensorgl.a" $(pkg-config --static --libs-only-l tensorgl | sed 's/-ltensorgl//')
    echo "== docs/examples/$src (shared, installed copy)"
    LD_LIBRARY_PATH="$lib" "./$name"
    echo "== docs/examples/$src (shared, kernels from the installed SPIR-V modules: TGL_SHADER=spirv)"
    TGL_BACKEND=gl TGL_SHADER=spirv LD_LIBRARY_PATH="$lib" "./$name" >/dev/null
    echo "== docs/examples/$src (static)"
    "./$name-static" >/dev/null
    loaded=$(LD_LIBRARY_PATH="$lib" ldd "./$name")
    case "$loaded" in *"$lib/libtensorgl.so.0"*) ;; *) echo "check-install: $name did not load the staged library" >&2; exit 1 ;; esac
done
cd - >/dev/null
make --no-print-directory uninstall DESTDIR="$stage" PREFIX="$prefix" >/dev/null
left=$(find "$stage" \( -type f -o -type l \))
[ -z "$left" ] || { echo "check-install: uninstall left: $left" >&2; exit 1; }
echo "check-install: install, pkg-config build of $(ls docs/examples/*.c | wc -l) examples, run, uninstall: ok"
