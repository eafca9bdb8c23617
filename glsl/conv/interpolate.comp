#version 430
// tgl_interpolate over NCHW f32 planes: one invocation per output pixel of a dispatch's planes
// (element u_start + i of the slab, planes of u_out[0] x u_out[1] read from planes of u_in[0] x
// u_in[1]). Each axis's taps follow PyTorch's CPU kernels (src/cpu/cpu_interpolate.c does the
// same): the source index r = s * o (align_corners, and NEAREST) or s * (o + 0.5) - 0.5 rounded
// to f32 once, as PyTorch's double arithmetic rounds it (source_index: the product exact in 64
// integer bits, then one round to nearest even, so no driver's float contraction or precision
// decides), with s = u_scale the host's f32 scale. NEAREST: floor(r); NEAREST_EXACT:
// floor(max(r, 0) + 0.5); BILINEAR: floor(max(r, 0)) and the next index (the last repeating)
// blended by the fraction, an axis whose sizes agree copied; BICUBIC: the four indices around
// floor(r), clamped to the image, with Keys' weights (a = -0.75). The taps along x are summed
// for each tap row, then those sums along y, every operation `precise` and in PyTorch's order.
// The host keeps every side below 2^24 (f32 indices exact).
#extension GL_GOOGLE_include_directive : enable
#include "common/locations.glsl"
#ifndef TGL_WG_SIZE
#define TGL_WG_SIZE 64
#endif
#include "common/index.glsl"
#include "common/precise.glsl"
#include "common/local_size.glsl"

#if !defined(NEAREST) && !defined(NEAREST_EXACT) && !defined(BILINEAR) && !defined(BICUBIC)
#define BILINEAR // standalone validation of this file
#endif
#if defined(BICUBIC)
#define TAPS 4
#elif defined(BILINEAR)
#define TAPS 2
#else
#define TAPS 1
#endif

layout(std430, binding = 0) readonly buffer In { float x[]; };
layout(std430, binding = 1) writeonly buffer Out { float y[]; };
layout(location = LOC_INTERP_N) uniform uint u_n;         // output elements of this dispatch
layout(location = LOC_INTERP_START) uniform uint u_start; // its first, counted in the slab
layout(location = LOC_INTERP_X_OFF) uniform uint u_x_off; // the slab's first element in each window
layout(location = LOC_INTERP_Y_OFF) uniform uint u_y_off;
layout(location = LOC_INTERP_ALIGN) uniform uint u_align;
layout(location = LOC_INTERP_IN) uniform uint u_in[2];
layout(location = LOC_INTERP_OUT) uniform uint u_out[2];
layout(location = LOC_INTERP_SCALE) uniform float u_scale[2];

// s * (o + 0.5) - 0.5 rounded once to f32 (to nearest, ties to even). s = m 2^-k (m the 24-bit
// significand); the value is D 2^-(k+1) with D = m (2o + 1) - 2^k, formed exactly in 64 bits.
// Where k is out of 0..59 (s of 2^24 or more, or below 2^-36: scales nothing below 2^24 pixels
// produces but a user's scale factor) the f32 formula gives the same value.
float source_index(float s, uint o)
{
    uint bits = floatBitsToUint(s), eb = (bits >> 23) & 0xFFu;
    int k = 150 - int(eb);
    if (eb == 0u || k < 0 || k >= 60) {
        TGL_PRECISE float p = s * (float(o) + 0.5);
        TGL_PRECISE float r = p - 0.5;
        return r;
    }
    uint m = (bits & 0x7FFFFFu) | 0x800000u, phi, plo;
    umulExtended(m, 2u * o + 1u, phi, plo);
    uint thi = k >= 32 ? 1u << uint(k - 32) : 0u, tlo = k >= 32 ? 0u : 1u << uint(k);
    bool neg = phi < thi || (phi == thi && plo < tlo);
    uint borrow, hi, lo;
    if (neg) {
        lo = usubBorrow(tlo, plo, borrow);
        hi = thi - phi - borrow;
    } else {
        lo = usubBorrow(plo, tlo, borrow);
        hi = phi - thi - borrow;
    }
    if (hi == 0u && lo == 0u)
        return 0.0;
    int msb = hi != 0u ? 32 + findMSB(hi) : findMSB(lo);
    int sh = msb - 23; // bits below the 24 kept
    uint mant;
    if (sh <= 0) {
        mant = lo; // below 2^24: exact
        sh = 0;
    } else {
        mant = sh >= 32 ? hi >> uint(sh - 32) : (lo >> uint(sh)) | (hi << uint(32 - sh));
        int g = sh - 1; // the guard bit, then whether any bit below it is set
        uint guard = g >= 32 ? (hi >> uint(g - 32)) & 1u : (lo >> uint(g)) & 1u;
        bool sticky = g >= 32 ? (lo != 0u || (hi & ((1u << uint(g - 32)) - 1u)) != 0u)
                              : (g > 0 && (lo & ((1u << uint(g)) - 1u)) != 0u);
        if (guard == 1u && (sticky || (mant & 1u) == 1u))
            mant += 1u; // 2^24 at most: exact in f32
    }
    float r = ldexp(float(mant), sh - k - 1);
    return neg ? -r : r;
}

// Axis a's taps for output index o: indices into the axis, weights.
void axis_taps(uint a, uint o, out int idx[TAPS], out float w[TAPS])
{
    int last = int(u_in[a]) - 1;
    float s = u_scale[a];
#if defined(NEAREST)
    TGL_PRECISE float r = s * float(o);
    idx[0] = min(int(floor(r)), last);
    w[0] = 1.0;
#else
    TGL_PRECISE float r;
    if (u_align != 0u) {
        TGL_PRECISE float ra = s * float(o);
        r = ra;
    } else {
        r = source_index(s, o);
    }
#if defined(NEAREST_EXACT)
    TGL_PRECISE float rr = max(r, 0.0) + 0.5;
    idx[0] = min(int(floor(rr)), last);
    w[0] = 1.0;
#elif defined(BILINEAR)
    if (u_in[a] == u_out[a]) { // PyTorch copies an axis that keeps its size
        idx[0] = int(o);
        idx[1] = int(o);
        w[0] = 1.0;
        w[1] = 0.0;
        return;
    }
    r = max(r, 0.0);
    idx[0] = min(int(floor(r)), last);
    idx[1] = idx[0] + (idx[0] < last ? 1 : 0);
    TGL_PRECISE float l1 = min(max(r - float(idx[0]), 0.0), 1.0);
    TGL_PRECISE float l0 = 1.0 - l1;
    w[0] = l0;
    w[1] = l1;
#else // BICUBIC
    int i = min(int(floor(r)), last);
    TGL_PRECISE float t = min(max(r - float(i), 0.0), 1.0);
    const float A = -0.75;
    TGL_PRECISE float x1 = t + 1.0;
    TGL_PRECISE float x2 = 1.0 - t;
    TGL_PRECISE float x3 = x2 + 1.0;
    TGL_PRECISE float w0 = ((A * x1 - 5.0 * A) * x1 + 8.0 * A) * x1 - 4.0 * A;
    TGL_PRECISE float w1 = ((A + 2.0) * t - (A + 3.0)) * t * t + 1.0;
    TGL_PRECISE float w2 = ((A + 2.0) * x2 - (A + 3.0)) * x2 * x2 + 1.0;
    TGL_PRECISE float w3 = ((A * x3 - 5.0 * A) * x3 + 8.0 * A) * x3 - 4.0 * A;
    w[0] = w0;
    w[1] = w1;
    w[2] = w2;
    w[3] = w3;
    for (int j = 0; j < 4; j++)
        idx[j] = clamp(i - 1 + j, 0, last);
#endif
#endif
}

void main()
{
    uint i = tgl_global_index();
    if (i >= u_n)
        return;
    uint e = u_start + i, ox = e % u_out[1], rest = e / u_out[1], oy = rest % u_out[0], plane = rest / u_out[0];
    int iy[TAPS], ix[TAPS];
    float wy[TAPS], wx[TAPS];
    axis_taps(0u, oy, iy, wy);
    axis_taps(1u, ox, ix, wx);
    uint base = u_x_off + plane * (u_in[0] * u_in[1]);
    TGL_PRECISE float acc = 0.0;
    for (int j = 0; j < TAPS; j++) {
        uint line = base + uint(iy[j]) * u_in[1];
        TGL_PRECISE float t = x[line + uint(ix[0])] * wx[0];
        for (int k = 1; k < TAPS; k++) {
            TGL_PRECISE float tk = t + x[line + uint(ix[k])] * wx[k];
            t = tk;
        }
        TGL_PRECISE float a = j == 0 ? t * wy[j] : acc + t * wy[j];
        acc = a;
    }
    y[u_y_off + e] = acc;
}
