#!/bin/sh
# Measures the f32 multiply-add rate the GL driver reaches in a compute shader (bench/fp_peak.c),
# the ceiling docs/performance.md sets compute-bound kernels against. Extra arguments are the
# chain counts to try. For the NVIDIA machine, build here and send the binary (its H100 figure in
# docs/performance.md came that way: `. .gl/on-device.sh && exp/fp_peak`).
# Usage: scripts/fp-peak.sh BUILD_DIR [CHAINS...]
set -eu
build=$1
shift
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$build"
cc -std=c11 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -O1 -o "$build/fp_peak" "$root/bench/fp_peak.c" -lepoxy -lm
"$build/fp_peak" "$@"
