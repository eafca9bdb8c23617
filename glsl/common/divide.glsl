#ifndef TGL_DIVIDE_GLSL
#define TGL_DIVIDE_GLSL
// n / d for a divisor d the host knew at dispatch, from its multiplier m and shifts (shift1 |
// shift2 << 1) as src/gl/gl_divisor.h computes them: exact for every n and d >= 1, in a
// multiply-high, a subtraction and two shifts instead of an integer division (emulated in about
// twenty instructions on GPUs, run lane by lane on llvmpipe).
uint tgl_div(uint n, uint m, uint shifts)
{
    uint hi, lo;
    umulExtended(n, m, hi, lo);
    return (hi + ((n - hi) >> (shifts & 1u))) >> (shifts >> 1);
}
#endif
