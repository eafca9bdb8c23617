// Helpers for kernels whose workgroup reduces one line: the linear workgroup index over the
// 2-D grid (common/index.glsl), and `precise` where the API has it (common/precise.glsl: it
// stops compilers from simplifying the compensated sums away).
#include "common/precise.glsl"
#include "common/index.glsl"
