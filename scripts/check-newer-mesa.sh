#!/bin/sh
# Runs the test suite on a newer Mesa than Debian 12's: bookworm-backports' Mesa 25, unpacked
# beside the system's by scripts/newer-mesa.sh, as its llvmpipe and as zink (GL on Vulkan) over
# its lavapipe. `tensorgl info` must show GL from that Mesa, so a loader that fell back to the
# system's driver fails here instead of passing on 22.3. tensorgl's driver check refuses zink
# over lavapipe while Mesa's stale-variant bug stands (src/gl/gl_driver_check.c): there the
# refusal is what gets checked, and the suite runs only where zink is accepted.
# When the packages cannot be fetched it says NOT RUN and exits 0 (a mirror outage is not a
# failure of tensorgl's); any other failure fails.
# Usage: scripts/check-newer-mesa.sh BUILD_DIR TEST_BINARY...
set -eu
build=$1
shift
dir=build/newer-mesa
rc=0
"$(dirname "$0")/newer-mesa.sh" "$dir" || rc=$?
if [ "$rc" = 2 ]; then
    # deb.debian.org out of reach: nothing of tensorgl's was tested, and this says so loudly.
    echo "check-newer-mesa: NOT RUN: bookworm-backports' Mesa could not be fetched"
    exit 0
fi
[ "$rc" = 0 ] || exit "$rc"
version=$(cat "$dir/version")
for driver in llvmpipe zink; do
    echo "== Mesa $version: $driver"
    info=$(. "$dir/$driver.env" && "$build/tensorgl" info 2>&1) || { echo "$info"; exit 1; }
    echo "$info" | grep -E '^(backend|version|renderer):' || true
    if [ "$driver" = zink ] && echo "$info" | grep -q 'stale shader variant'; then
        echo "zink refused by tensorgl's driver check (Mesa's stale shader variant); the suite is not run on it"
        continue
    fi
    if ! echo "$info" | grep -qF "Mesa $version" ||
        { [ "$driver" = zink ] && ! echo "$info" | grep -q '^renderer: *zink'; }; then
        echo "check-newer-mesa: GL did not come from $dir as $driver:"
        echo "$info"
        exit 1
    fi
    # Where the SPIR-V modules are a part (KERNEL_PART), the ones test_spirv asks this driver for.
    (. "$dir/$driver.env" && make --no-print-directory spirv-test-modules BUILD="$build")
    (. "$dir/$driver.env" && scripts/run-tests.sh "$build" "$@")
done
