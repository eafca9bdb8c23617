#version 430
// tgl_map_t: out = MAP_EXPR at each index of out's index space, walked by its row-major linear
// index. The host generates, from the parsed tree (never from the user's text), ahead of the
// defines: MAP_NIN (the inputs the expression reads, at bindings 0..MAP_NIN-1, out at MAP_NIN),
// X0.. (each such input's element as the node reads it: int for i32 and bool, float for the float
// dtypes, decoded from its bits with common/convert.glsl), MAP_NUMS (the numbers, uniforms as
// bits: TGL_FNUM(k) an f32, TGL_INUM(k) an i32 literal), MAP_INT (1 when the root is an i32 node)
// and MAP_EXPR, typed as src/core/expr.h's tgl_expr_types says: f32 nodes through
// common/map_ops.glsl's precise functions, i32 nodes through common/ewise_ops.glsl's wrapping
// ones, an i32 value meeting an f32 one rounded by tgl_itof. OUT_DTYPE is out's tgl_dtype; the
// root is converted into it as tgl_copy converts. Operands are bound from their lowest element
// with two's complement strides, as tensor/elementwise.comp's.
// Plain: an invocation per element; an out element below 4 bytes is written by atomicAnd then
// atomicOr on its word (other elements of the word, any strides, keep their bits).
// WORDS (a row-major dense out below 4 bytes, the host checked): an invocation per out word
// (u_start the dispatch's first), computing the elements it holds and storing it whole; a word
// the tensor covers in part is merged with the bytes around it.
// LINEAR (every operand row-major dense, the host checked): offsets without coordinates.
#extension GL_GOOGLE_include_directive : enable
#include "common/locations.glsl"
#ifndef TGL_WG_SIZE
#define TGL_WG_SIZE 64
#endif
#include "common/index.glsl"
#include "common/convert.glsl"
#include "common/precise.glsl"
#include "common/math.glsl"
#include "common/trig.glsl"
#include "common/ewise_ops.glsl"
#include "common/map_ops.glsl"
#include "common/local_size.glsl"

#ifndef MAP_EXPR // standalone (the file as written): out = float(a) * (b + 1.5), a i32, b f16
#define MAP_NIN 2
#define MAP_NUMS 1
#define MAP_INT 0
#define X0 int(x0[o[0]])
#define X1 uintBitsToFloat(tgl_to_f32(LOAD_2(x1, o[1]), 1u))
#define MAP_EXPR tgl_mul(tgl_itof(X0), tgl_add(X1, TGL_FNUM(0)))
#endif
#ifndef OUT_DTYPE
#define OUT_DTYPE 0
#endif
#if OUT_DTYPE == 0 || OUT_DTYPE == 3
#define OUT_BYTES 4
#elif OUT_DTYPE == 4
#define OUT_BYTES 1
#else
#define OUT_BYTES 2
#endif

// Element e of a packed array of 4-, 2- or 1-byte elements (element k of a word in bits
// 8 * size * k on).
#define LOAD_4(arr, e) arr[e]
#define LOAD_2(arr, e) ((arr[(e) >> 1] >> (16u * ((e) & 1u))) & 0xFFFFu)
#define LOAD_1(arr, e) ((arr[(e) >> 2] >> (8u * ((e) & 3u))) & 0xFFu)

#if MAP_NIN > 0
layout(std430, binding = 0) readonly buffer In0 { uint x0[]; };
#endif
#if MAP_NIN > 1
layout(std430, binding = 1) readonly buffer In1 { uint x1[]; };
#endif
#if MAP_NIN > 2
layout(std430, binding = 2) readonly buffer In2 { uint x2[]; };
#endif
#if MAP_NIN > 3
layout(std430, binding = 3) readonly buffer In3 { uint x3[]; };
#endif
#if MAP_NIN > 4
layout(std430, binding = 4) readonly buffer In4 { uint x4[]; };
#endif
#if MAP_NIN > 5
layout(std430, binding = 5) readonly buffer In5 { uint x5[]; };
#endif
#if MAP_NIN > 6
layout(std430, binding = 6) readonly buffer In6 { uint x6[]; };
#endif
#if MAP_NIN > 7
layout(std430, binding = 7) readonly buffer In7 { uint x7[]; };
#endif
layout(std430, binding = MAP_NIN) buffer Out { uint y[]; };

layout(location = LOC_TMAP_N) uniform uint u_n;        // plain: elements of this dispatch; WORDS: of the box
layout(location = LOC_TMAP_START) uniform uint u_start; // plain: first linear index; WORDS: first word
layout(location = LOC_TMAP_NDIM) uniform uint u_ndim;
layout(location = LOC_TMAP_OUT_BASE) uniform uint u_out_base; // element (0, ..., 0) in out's window
layout(location = LOC_TMAP_SHAPE) uniform uint u_shape[8];
layout(location = LOC_TMAP_OUT_STRIDE) uniform uint u_out_stride[8];
#if MAP_NIN > 0
layout(location = LOC_TMAP_BASE) uniform uint u_base[MAP_NIN];
layout(location = LOC_TMAP_STRIDE) uniform uint u_stride[8 * MAP_NIN];
#endif
// The numbers are uniforms, not literals, so no compiler folds a*0 or a+0 against IEEE and
// expressions that differ only in their numbers share a program (as glsl/map/map.comp).
#if MAP_NUMS > 0
layout(location = LOC_TMAP_NUM) uniform uint u_num[MAP_NUMS];
#endif
// 0, set by the host where the expression converts an i32 node: tgl_itof's result is then never
// a compile-time constant. A comparison of a value with itself (a > a) folds to 0, and llvmpipe
// then folded tgl_mul(a, 0.0) to 0 despite `precise` (inf * (inf > inf) gave 0, not NaN).
layout(location = LOC_TMAP_ZERO) uniform uint u_zero;
#define TGL_FNUM(k) uintBitsToFloat(u_num[k])
#define TGL_INUM(k) int(u_num[k])

// The i32 nodes (wrapping, common/ewise_ops.glsl's ops by their tgl_unary_op / tgl_binary_op
// numbers), an i32 rounded to the nearest f32 (float(int) rounds as the implementation likes),
// and a select's condition (non-zero; a float's bits, so -0 is false and NaN true).
int tgl_iun(uint op, int x) { return int(tgl_unary_i32(op, uint(x))); }
int tgl_ibin(uint op, int a, int b) { return int(tgl_binary_i32(op, uint(a), uint(b))); }
int tgl_icmp(uint op, int a, int b)
{
    bool r = op == 0u ? a == b : op == 1u ? a != b : op == 2u ? a < b : op == 3u ? a <= b : op == 4u ? a > b : a >= b;
    return r ? 1 : 0;
}
float tgl_itof(int x) { return uintBitsToFloat(tgl_i32_to_f32(uint(x)) | u_zero); }
bool tgl_true(int c) { return c != 0; }
bool tgl_true(float c) { return (floatBitsToUint(c) & 0x7FFFFFFFu) != 0u; }

// The operands' element offsets (in their windows) of the linear index being computed: the
// inputs' at 0..MAP_NIN-1, out's at MAP_NIN. The outermost coordinate needs no division.
uint o[MAP_NIN + 1];

void locate(uint i)
{
#if MAP_NIN > 0
    for (int k = 0; k < MAP_NIN; k++)
        o[k] = u_base[k];
#endif
    o[MAP_NIN] = u_out_base;
#ifdef LINEAR
    for (int k = 0; k <= MAP_NIN; k++)
        o[k] += i;
#else
    uint rest = i;
    for (int d = int(u_ndim) - 1; d >= 0; d--) {
        uint c = rest;
        if (d > 0) {
            c = rest % u_shape[d];
            rest /= u_shape[d];
        }
#if MAP_NIN > 0
        for (int k = 0; k < MAP_NIN; k++)
            o[k] += c * u_stride[8 * k + d];
#endif
        o[MAP_NIN] += c * u_out_stride[d];
    }
#endif
}

// out's element at linear index i, in out's dtype (low bits); o is left at its offsets.
uint value(uint i)
{
    locate(i);
#if MAP_INT
    int v = MAP_EXPR;
    return tgl_convert(uint(v), 3u, uint(OUT_DTYPE));
#else
    TGL_PRECISE float v = MAP_EXPR; // precise: no folding IEEE forbids (a*0, a+0, a-a)
    return tgl_convert(floatBitsToUint(v), 0u, uint(OUT_DTYPE));
#endif
}

void main()
{
#if OUT_BYTES < 4
    const uint per = uint(4 / OUT_BYTES), bits = uint(8 * OUT_BYTES), mask = (1u << bits) - 1u;
#endif
#ifdef WORDS
    uint w = u_start + tgl_global_index();
    if (w >= (u_out_base + u_n + per - 1u) / per)
        return;
    uint word = 0u, keep = 0xFFFFFFFFu;
    for (uint k = 0u; k < per; k++) {
        uint slot = w * per + k; // element of the out window
        if (slot < u_out_base || slot - u_out_base >= u_n)
            continue;
        word |= value(slot - u_out_base) << (bits * k);
        keep &= ~(mask << (bits * k));
    }
    y[w] = keep == 0u ? word : (y[w] & keep) | word;
#else
    uint i = tgl_global_index();
    if (i >= u_n)
        return;
    uint v = value(u_start + i), at = o[MAP_NIN];
#if OUT_BYTES == 4
    y[at] = v;
#else
    uint w = at / per, shift = bits * (at % per);
    atomicAnd(y[w], ~(mask << shift));
    atomicOr(y[w], v << shift);
#endif
#endif
}
