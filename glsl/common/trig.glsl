#ifndef TGL_TRIG_GLSL
#define TGL_TRIG_GLSL
// sin and cos of every f32 argument (needs common/math.glsl). GLSL promises their precision
// only on [-pi, pi] (llvmpipe gave sin(-3e38) = 1, C -0.875), so |x| past pi/4 is reduced to
// x = (n + f) pi/2, |f| <= 1/2, by Payne and Hanek's method in integers: its 24-bit significand
// times the 96 bits of 2/pi that can reach the product's two integer bits (those before are
// multiples of 4) and 64 bits of its fraction; then the driver's sin or cos of f pi/2 by the
// quadrant n mod 4.
const uint TGL_TWO_OVER_PI[8] = uint[8](0xA2F9836Eu, 0x4E441529u, 0xFC2757D1u, 0xF534DDC0u, 0xDB629599u,
                                        0x3C439041u, 0xFE5163ABu, 0xDEBBC561u);
// Bits start + 1 .. start + 32 of 2/pi's binary fraction (start < 192).
uint tgl_two_over_pi_bits(uint start)
{
    uint q = start >> 5, r = start & 31u, hi = TGL_TWO_OVER_PI[q];
    return r == 0u ? hi : (hi << r) | (TGL_TWO_OVER_PI[q + 1u] >> (32u - r));
}
// Bits [pos, pos + 32) of the 128-bit p (p.x least significant), pos in [0, 96].
uint tgl_bits128(uvec4 p, uint pos)
{
    uint w = pos >> 5, r = pos & 31u, lo = p[w], hi = w < 3u ? p[w + 1u] : 0u;
    return r == 0u ? lo : (lo >> r) | (hi << (32u - r));
}
// |x| >= pi/4, finite: f pi/2 (as r) and n mod 4 (as the result).
uint tgl_reduce_half_pi(float x, out float r)
{
    uint bits = floatBitsToUint(x) & 0x7FFFFFFFu, m = (bits & 0x7FFFFFu) | 0x800000u;
    int e = int(bits >> 23) - 127;      // |x| = m 2^(e - 23), e >= -1
    uint i0 = uint(max(1, e - 24));     // the window: bits i0 .. i0 + 95 of 2/pi
    uint h0, l0, h1, l1, h2, l2, c1, c2, c3;
    umulExtended(m, tgl_two_over_pi_bits(i0 + 63u), h0, l0);
    umulExtended(m, tgl_two_over_pi_bits(i0 + 31u), h1, l1);
    umulExtended(m, tgl_two_over_pi_bits(i0 - 1u), h2, l2);
    uvec4 p;
    p.x = l0;
    p.y = uaddCarry(l1, h0, c1);
    p.z = uaddCarry(l2, h1, c2);
    p.z = uaddCarry(p.z, c1, c3);
    p.w = h2 + c2 + c3;
    uint s = i0 + 118u - uint(e);       // |x| 2/pi = p 2^-s (mod 4), s in [94, 120]
    uint n = tgl_bits128(p, s) & 3u, hi = tgl_bits128(p, s - 32u), lo = tgl_bits128(p, s - 64u);
    float sign = 1.0;
    if ((hi >> 31) != 0u) {             // f past 1/2: 1 - f, negated, from the next quadrant
        hi = ~hi;
        lo = uaddCarry(~lo, 1u, c1);
        hi += c1;
        n += 1u;
        sign = -1.0;
    }
    r = sign * ((float(hi) + float(lo) * 2.3283064365386963e-10) * 2.3283064365386963e-10) * 1.5707963267948966;
    if ((floatBitsToUint(x) >> 31) != 0u) { // sin(-x) = -sin(x), cos(-x) = cos(x): n -> -n, r -> -r
        r = -r;
        n = 0u - n;
    }
    return n & 3u;
}
// sin x, or (cosine) cos x = sin(x + pi/2), the next quadrant: one reduction for both, so that a
// kernel choosing between them at run time (the descriptor ops' switch) carries its code once.
float tgl_sin_cos(float x, bool cosine)
{
    if (abs(x) < 0.78539816 || isnan(x))
        return cosine ? cos(x) : sin(x);
    if (isinf(x))
        return tgl_nan();
    float r;
    uint n = tgl_reduce_half_pi(x, r) + (cosine ? 1u : 0u);
    float v = (n & 1u) != 0u ? cos(r) : sin(r);
    return (n & 2u) != 0u ? -v : v;
}
float tgl_sin(float x) { return tgl_sin_cos(x, false); }
float tgl_cos(float x) { return tgl_sin_cos(x, true); }
vec4 tgl_sin(vec4 x) { return vec4(tgl_sin(x.x), tgl_sin(x.y), tgl_sin(x.z), tgl_sin(x.w)); }
vec4 tgl_cos(vec4 x) { return vec4(tgl_cos(x.x), tgl_cos(x.y), tgl_cos(x.z), tgl_cos(x.w)); }
#endif
