#!/bin/sh
# Unpacks a newer Mesa than Debian 12's 22.3 (bookworm-backports: Mesa 25.0, built against the
# same LLVM 15) into DIR, beside the system's Mesa and without installing it, and writes
# DIR/llvmpipe.env and DIR/zink.env: sourced, they point the GL loader at that Mesa's llvmpipe,
# or at zink (GL on Vulkan) over its lavapipe. `make check-newer-mesa` runs the suite on both.
# Usage: scripts/newer-mesa.sh DIR   (needs deb.debian.org; exits 2 when it cannot fetch)
set -eu
dir=$1
suite=bookworm-backports
here=$(cd "$(dirname "$0")" && pwd)
if [ -f "$dir/zink.env" ] && [ -f "$dir/llvmpipe.env" ] && [ -f "$dir/version" ]; then
    exit 0
fi
# What the backported libraries link to and do not bring: Debian 12's own packages.
"$here/install-deps.sh" libvulkan1 libllvm15 libsensors5 libwayland-client0 libwayland-server0 libxcb-randr0 \
    libxcb-shm0 libxcb-dri3-0 libxcb-present0 libxcb-sync1 libxcb-xfixes0 libxshmfence1 libx11-xcb1 libzstd1 libelf1 \
    libexpat1

# A private apt state: the system's sources, lists and caches stay as they are.
mkdir -p "$dir/apt/lists/partial" "$dir/apt/cache/archives/partial" "$dir/debs"
dir=$(cd "$dir" && pwd)
echo "deb http://deb.debian.org/debian $suite main" > "$dir/apt/sources.list"
set -- -o Dir::Etc::SourceList="$dir/apt/sources.list" -o Dir::Etc::SourceParts=/dev/null \
    -o Dir::State::Lists="$dir/apt/lists" -o Dir::Cache="$dir/apt/cache" -o Debug::NoLocking=1 -qq
# (as root, apt would hand the download to its _apt user, who cannot write into a build tree)
[ "$(id -u)" != 0 ] || set -- "$@" -o APT::Sandbox::User=root
if ! apt-get "$@" update; then
    echo "newer-mesa: cannot read $suite from deb.debian.org" >&2
    exit 2
fi
rm -f "$dir"/debs/*.deb
# libgallium holds the drivers; libegl-mesa0 and libgbm1 load it; mesa-vulkan-drivers has
# lavapipe; the libdrm packages are the versions libgallium 25 needs.
if ! (cd "$dir/debs" && apt-get "$@" download mesa-libgallium libegl-mesa0 libgbm1 libgl1-mesa-dri \
        mesa-vulkan-drivers libdrm2 libdrm-amdgpu1 libdrm-intel1); then
    echo "newer-mesa: cannot download Mesa from $suite" >&2
    exit 2
fi
rm -rf "$dir/root"
for deb in "$dir"/debs/*.deb; do
    dpkg-deb -x "$deb" "$dir/root"
done
lib="$dir/root/usr/lib/x86_64-linux-gnu"
version=$(dpkg-deb -f "$dir"/debs/mesa-libgallium_*.deb Version)
echo "$version" > "$dir/version"
# The ICD file names its library without a path; the loader finds it through LD_LIBRARY_PATH.
cp "$dir/root/usr/share/vulkan/icd.d/lvp_icd.json" "$dir/lvp_icd.json"
cat > "$dir/llvmpipe.env" <<EOF
# Sourced: GL from Mesa $version (llvmpipe), unpacked by scripts/newer-mesa.sh.
export LD_LIBRARY_PATH="$lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
export __EGL_VENDOR_LIBRARY_FILENAMES="$dir/root/usr/share/glvnd/egl_vendor.d/50_mesa.json"
export LIBGL_DRIVERS_PATH="$lib/dri"
export GBM_BACKENDS_PATH="$lib/gbm"
EOF
# zink picks a CPU Vulkan device only when software rendering is asked for.
cat "$dir/llvmpipe.env" > "$dir/zink.env"
cat >> "$dir/zink.env" <<EOF
# ... and zink over lavapipe (GL translated to Vulkan, run on the CPU).
export VK_ICD_FILENAMES="$dir/lvp_icd.json"
export GALLIUM_DRIVER=zink
export LIBGL_ALWAYS_SOFTWARE=1
EOF
echo "newer-mesa: Mesa $version unpacked in $dir"
