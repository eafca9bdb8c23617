// TGL_PRECISE: `precise` where the API has it. It stops compilers from simplifying arithmetic
// in ways IEEE does not allow (a*0 to 0, a+0 to a, a-a to 0, compensated sums away: NVIDIA's and
// llvmpipe's compilers do all of these without it). ES 3.1 has it only through gpu_shader5,
// which the ES preamble enables where offered.
#ifndef TGL_PRECISE_GLSL
#define TGL_PRECISE_GLSL
#if defined(TGL_ES) && !defined(TGL_HAS_PRECISE)
#define TGL_PRECISE
#else
#define TGL_PRECISE precise
#endif
#endif
