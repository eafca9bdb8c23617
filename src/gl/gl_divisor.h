/* Division by a divisor known when a kernel is dispatched: the host computes a multiplier and
 * two shifts once (Granlund and Montgomery, "Division by invariant integers using
 * multiplication", 1994, figure 4.1), and the kernel divides with a 32 x 32 -> 64-bit multiply,
 * a subtraction and two shifts (common/divide.glsl) instead of an integer division, which GPUs
 * emulate in about twenty instructions and llvmpipe runs lane by lane. Exact for every n below
 * 2^32 and every d from 1 to 2^32 - 1. Header-only, without GL, so that tests can check the
 * arithmetic on the host. */
#ifndef TGL_GL_DIVISOR_H
#define TGL_GL_DIVISOR_H
#include <stdint.h>

/* With l = ceil(log2 d): m = floor(2^32 (2^l - d) / d) + 1 (below 2^32 for every d) and the
 * shifts min(l, 1) and max(l - 1, 0), packed as shift1 | shift2 << 1. A divisor of 0 (an empty
 * extent, never walked) gets the identity's (1, 0). */
static inline void tgl_gl_divisor_of(uint32_t d, uint32_t *m, uint32_t *shifts)
{
    uint32_t l = 0;
    while (l < 32 && ((uint64_t)1 << l) < d)
        l++;
    if (d == 0) {
        *m = 1;
        *shifts = 0;
        return;
    }
    *m = (uint32_t)((((uint64_t)1 << 32) * (((uint64_t)1 << l) - d)) / d + 1);
    *shifts = (l > 0 ? 1u : 0u) | ((l > 1 ? l - 1 : 0u) << 1);
}

/* n / d from d's multiplier and shifts: the host's twin of common/divide.glsl's tgl_div. */
static inline uint32_t tgl_gl_divide(uint32_t n, uint32_t m, uint32_t shifts)
{
    uint32_t t = (uint32_t)(((uint64_t)n * m) >> 32);
    return (t + ((n - t) >> (shifts & 1u))) >> (shifts >> 1);
}
#endif
