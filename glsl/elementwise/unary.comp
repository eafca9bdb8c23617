#version 430
// out[i] = op(in[i]). One define picks the op (OP_NEG ... OP_CEIL); TGL_VEC4 makes each
// invocation handle one vec4 (the host guarantees 16-byte-aligned windows and sends any tail
// of 1..3 elements to the scalar variant).
#extension GL_GOOGLE_include_directive : enable
#include "common/locations.glsl"
#include "common/unroll.glsl"
#ifndef TGL_WG_SIZE
#define TGL_WG_SIZE 64
#endif
#ifndef TGL_ITEMS
#define TGL_ITEMS 1
#endif
#include "common/index.glsl"
#include "common/sweep.glsl"
#include "common/texel.glsl"
#include "common/wide_store.glsl"
#include "common/math.glsl"
#include "common/trig.glsl"

#if defined(OP_NEG)
#define UNARY(x) (-(x))
#elif defined(OP_ABS)
#define UNARY(x) abs(x)
#elif defined(OP_EXP)
#define UNARY(x) exp(x)
#elif defined(OP_LOG)
#define UNARY(x) tgl_log(x)
#elif defined(OP_SQRT)
#define UNARY(x) sqrt(x)
#elif defined(OP_RSQRT)
#define UNARY(x) inversesqrt(x)
#elif defined(OP_RECIP)
#define UNARY(x) (1.0 / (x))
#elif defined(OP_SQUARE)
#define UNARY(x) ((x) * (x))
#elif defined(OP_SIN)
#define UNARY(x) tgl_sin(x)
#elif defined(OP_COS)
#define UNARY(x) tgl_cos(x)
#elif defined(OP_TANH)
#define UNARY(x) tgl_tanh(x)
#elif defined(OP_SIGMOID)
#define UNARY(x) tgl_sigmoid(x)
#elif defined(OP_RELU)
#define UNARY(x) tgl_relu(x)
#elif defined(OP_GELU)
#define UNARY(x) tgl_gelu(x)
#elif defined(OP_SILU)
#define UNARY(x) tgl_silu(x)
#elif defined(OP_FLOOR)
#define UNARY(x) floor(x)
#elif defined(OP_CEIL)
#define UNARY(x) ceil(x)
#else
#define UNARY(x) (x) // no op chosen: only for standalone validation of this file
#endif

#ifdef TGL_VEC4
#define ELEM vec4
#else
#define ELEM float
#endif

#include "common/local_size.glsl"
#ifdef TGL_TEX
TGL_TEXTURE(LOC_TEXTURE0, 0, x_tex);
#define X_AT(i) TGL_READ(x_tex, i)
#else
layout(std430, binding = 0) readonly buffer Src { ELEM x[]; };
#define X_AT(i) x[i]
#endif
#ifdef TGL_WIDE
layout(std430, binding = 1) writeonly buffer Dst { dvec4 y[]; };
#else
layout(std430, binding = 1) writeonly buffer Dst { ELEM y[]; };
#endif
layout(location = LOC_EW_N) uniform uint u_n;      // elements in this dispatch
layout(location = LOC_EW_OFF0) uniform uint u_x_off;  // window offsets, in ELEM units
layout(location = LOC_EW_OFF1) uniform uint u_y_off;

// Each invocation takes TGL_ITEMS elements (vec4s with TGL_VEC4), one grid apart, so accesses
// stay coalesced; u_n counts in the same unit.
void main()
{
#ifdef TGL_WIDE
    // an exact grid (see common/wide_store.glsl), so every invocation has its mirror
    uint w = tgl_sweep(tgl_global_index(), tgl_grid_invocations()) * TGL_WIDE_PAIRS;
    TGL_UNROLL for (uint k = 0u; k < TGL_WIDE_PAIRS; k++) {
        uint i = 2u * (w + k);
        vec4 lo = UNARY(X_AT(u_x_off + i));
        i++;
        y[u_y_off / 2u + w + k] = tgl_wide(lo, UNARY(X_AT(u_x_off + i)));
    }
#else
    uint first = tgl_global_index(), stride = tgl_grid_invocations();
    TGL_UNROLL for (uint k = 0u; k < uint(TGL_ITEMS); k++) {
        uint i = first + k * stride;
        if (i >= u_n)
            return;
        i = tgl_sweep(i, u_n);
        y[u_y_off + i] = UNARY(X_AT(u_x_off + i));
    }
#endif
}
