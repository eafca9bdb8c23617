// Helpers for kernels whose workgroup reduces one line: the linear workgroup index over the
// 2-D grid (common/index.glsl), and `precise` where the API has it (it stops compilers from simplifying the
// compensated sums away: NVIDIA's does without it). ES 3.1 has it only through gpu_shader5,
// which the ES preamble enables where offered.
#if defined(TGL_ES) && !defined(TGL_HAS_PRECISE)
#define TGL_PRECISE
#else
#define TGL_PRECISE precise
#endif
#include "common/index.glsl"
