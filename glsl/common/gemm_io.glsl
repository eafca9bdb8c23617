// Operands, uniforms and element access of the GEMM kernels (gemm/*.comp). Bindings: 0 A,
// 1 B (read), 2 C. Defines chosen by the host (src/gl/gl_gemm.c):
//   F16            elements are IEEE binary16, two per 32-bit word; arithmetic stays f32
//   TRANS_A/B      the operand is stored transposed
//   A_VEC4 ...     the operand's contiguous dimension, row stride, batch stride and window
//                  offset are multiples of 4 elements, so 4 neighbours load as one vector
//   BETA_ZERO      C is written without being read (NaN in the old C must not leak)
//   TEX            A and B are read through buffer textures (see below)
//   EPILOGUE       tgl_gemm_fused (f32 only, beta chosen at run time): bias, activation, gate
// Indices are element indices into the bound windows.

#ifdef TEX
// A and B through buffer textures over the same ranges (texture units 0 and 1, formats R32F or
// RGBA32F with VEC4, R16F / RGBA16F for F16): texels come back as floats.
layout(location = LOC_TEXTURE0, binding = 0) uniform highp samplerBuffer a_tex;
layout(location = LOC_TEXTURE1, binding = 1) uniform highp samplerBuffer b_tex;
#endif

#ifndef TEX
#ifdef F16
#ifdef A_VEC4
layout(std430, binding = 0) readonly buffer MatA { uvec2 a_mem[]; };
#else
layout(std430, binding = 0) readonly buffer MatA { uint a_mem[]; };
#endif
#ifdef B_VEC4
layout(std430, binding = 1) readonly buffer MatB { uvec2 b_mem[]; };
#else
layout(std430, binding = 1) readonly buffer MatB { uint b_mem[]; };
#endif
#else
#ifdef A_VEC4
layout(std430, binding = 0) readonly buffer MatA { vec4 a_mem[]; };
#else
layout(std430, binding = 0) readonly buffer MatA { float a_mem[]; };
#endif
#ifdef B_VEC4
layout(std430, binding = 1) readonly buffer MatB { vec4 b_mem[]; };
#else
layout(std430, binding = 1) readonly buffer MatB { float b_mem[]; };
#endif
#endif
#endif
#ifdef F16
#ifdef C_VEC4
layout(std430, binding = 2) buffer MatC { uvec2 c_mem[]; };
#else
layout(std430, binding = 2) buffer MatC { uint c_mem[]; };
#endif
#else
#ifdef C_VEC4
layout(std430, binding = 2) buffer MatC { vec4 c_mem[]; };
#else
layout(std430, binding = 2) buffer MatC { float c_mem[]; };
#endif
#endif

layout(location = LOC_GEMM_M) uniform uint u_m;
layout(location = LOC_GEMM_N) uniform uint u_n;
layout(location = LOC_GEMM_K) uniform uint u_k;
layout(location = LOC_GEMM_LDA) uniform uint u_lda;
layout(location = LOC_GEMM_LDB) uniform uint u_ldb;
layout(location = LOC_GEMM_LDC) uniform uint u_ldc;
layout(location = LOC_GEMM_A_OFF) uniform uint u_a_off;
layout(location = LOC_GEMM_B_OFF) uniform uint u_b_off;
layout(location = LOC_GEMM_C_OFF) uniform uint u_c_off;
layout(location = LOC_GEMM_STRIDE_A) uniform uint u_stride_a;
layout(location = LOC_GEMM_STRIDE_B) uniform uint u_stride_b;
layout(location = LOC_GEMM_STRIDE_C) uniform uint u_stride_c;
layout(location = LOC_GEMM_ALPHA) uniform float u_alpha;
layout(location = LOC_GEMM_BETA) uniform float u_beta;

#ifdef EPILOGUE
#include "common/math.glsl"
#include "common/epilogue.glsl" // tgl_gemm_fused's bias, activation and gate: binding 3
#endif

// One element, or 4 from an index that is a multiple of 4 (only with the operand's VEC4).
#ifdef F16
vec4 tgl_unpack4(uvec2 w)
{
    return vec4(unpackHalf2x16(w.x), unpackHalf2x16(w.y));
}
#endif
#if defined(TEX)
#ifdef A_VEC4
float a_at(uint i) { return texelFetch(a_tex, int(i >> 2u))[i & 3u]; }
vec4 a_at4(uint i) { return texelFetch(a_tex, int(i >> 2u)); }
#else
float a_at(uint i) { return texelFetch(a_tex, int(i)).x; }
#endif
#ifdef B_VEC4
float b_at(uint i) { return texelFetch(b_tex, int(i >> 2u))[i & 3u]; }
vec4 b_at4(uint i) { return texelFetch(b_tex, int(i >> 2u)); }
#else
float b_at(uint i) { return texelFetch(b_tex, int(i)).x; }
#endif
#elif defined(F16)
#ifdef A_VEC4
float a_at(uint i) { return unpackHalf2x16(a_mem[i >> 2u][(i >> 1u) & 1u])[i & 1u]; }
vec4 a_at4(uint i) { return tgl_unpack4(a_mem[i >> 2u]); }
#else
float a_at(uint i) { return unpackHalf2x16(a_mem[i >> 1u])[i & 1u]; }
#endif
#ifdef B_VEC4
float b_at(uint i) { return unpackHalf2x16(b_mem[i >> 2u][(i >> 1u) & 1u])[i & 1u]; }
vec4 b_at4(uint i) { return tgl_unpack4(b_mem[i >> 2u]); }
#else
float b_at(uint i) { return unpackHalf2x16(b_mem[i >> 1u])[i & 1u]; }
#endif
#else
#ifdef A_VEC4
float a_at(uint i) { return a_mem[i >> 2u][i & 3u]; }
vec4 a_at4(uint i) { return a_mem[i >> 2u]; }
#else
float a_at(uint i) { return a_mem[i]; }
#endif
#ifdef B_VEC4
float b_at(uint i) { return b_mem[i >> 2u][i & 3u]; }
vec4 b_at4(uint i) { return b_mem[i >> 2u]; }
#else
float b_at(uint i) { return b_mem[i]; }
#endif
#endif

// Where A(i, p) and B(p, j) are stored, relative to the product's base.
uint a_index(uint i, uint p)
{
#ifdef TRANS_A
    return p * u_lda + i;
#else
    return i * u_lda + p;
#endif
}

uint b_index(uint p, uint j)
{
#ifdef TRANS_B
    return j * u_ldb + p;
#else
    return p * u_ldb + j;
#endif
}

#ifdef F16
#include "common/half.glsl"
uint tgl_half_bits(float v)
{
    return tgl_f32_to_f16(floatBitsToUint(v));
}
#endif

// C[idx .. idx+3] = alpha * v + beta * C (columns j .. j+3 of the product; EPILOGUE: its
// epilogue), of which only the first `count` (1..4) elements exist. With C_VEC4 count is
// always 4 (n is a multiple of 4 and blocks start at multiples of 4).
void c_store(uint idx, uint j, vec4 v, uint count)
{
#if defined(EPILOGUE) && defined(C_VEC4)
    vec4 old = tgl_epilogue_reads(u_beta) ? c_mem[idx >> 2u] : vec4(0.0), r = u_alpha * v;
    for (uint q = 0u; q < tgl_epilogue_trips(4u); q++) // rolled too
        r[q] = tgl_epilogue(r[q], old[q], j + q, u_beta);
    c_mem[idx >> 2u] = r;
#elif defined(EPILOGUE)
    for (uint q = 0u; q < count; q++) {
        uint e = idx + q;
        float old = tgl_epilogue_reads(u_beta) ? c_mem[e] : 0.0;
        c_mem[e] = tgl_epilogue(u_alpha * v[q], old, j + q, u_beta);
    }
#elif defined(C_VEC4)
#ifdef F16
    vec4 r = u_alpha * v;
#ifndef BETA_ZERO
    r += u_beta * tgl_unpack4(c_mem[idx >> 2u]);
#endif
    c_mem[idx >> 2u] = uvec2(tgl_half_bits(r.x) | (tgl_half_bits(r.y) << 16),
                             tgl_half_bits(r.z) | (tgl_half_bits(r.w) << 16));
#else
    vec4 r = u_alpha * v;
#ifndef BETA_ZERO
    r += u_beta * c_mem[idx >> 2u];
#endif
    c_mem[idx >> 2u] = r;
#endif
#else
    for (uint q = 0u; q < count; q++) {
        uint e = idx + q;
        float r = u_alpha * v[q];
#ifdef F16
        // Two elements share a word, and its other half may belong to another invocation
        // (or to the caller, past C's edge): replace only this half, atomically.
        uint shift = (e & 1u) * 16u;
#ifndef BETA_ZERO
        r += u_beta * unpackHalf2x16(c_mem[e >> 1u])[e & 1u];
#endif
        atomicAnd(c_mem[e >> 1u], ~(0xFFFFu << shift));
        atomicOr(c_mem[e >> 1u], tgl_half_bits(r) << shift);
#else
#ifndef BETA_ZERO
        r += u_beta * c_mem[e];
#endif
        c_mem[e] = r;
#endif
    }
#endif
}
