#version 430
// The element-wise descriptor ops over out's index space, walked by its row-major linear index:
// COPY (out = input 0 converted from IN_DTYPE to OUT_DTYPE), COMPARE (out = input 0 op input 1,
// u_op a tgl_compare_op, bool out), WHERE (out = input 0 ? input 1 : input 2, inputs 1 and 2 of
// out's dtype), UNARY and BINARY (out = op(input 0) or input 0 op input 1, u_op a tgl_unary_op
// or tgl_binary_op, one dtype; common/ewise_ops.glsl; the float tests ISNAN, ISINF, ISFINITE
// into a bool out) and CLAMP (out = min(max(input 0, input 1), input 2), one dtype; floats
// compared on ordered-int keys and moved as bits, NaN anywhere giving NaN) and FILL (out =
// u_value, an element's bits; input 0 is out itself, never read) and ARANGE (1-D out = u_value +
// (index + u_index0) * u_step, f32 bits computed in precise f32 for the float dtypes, i32 with
// wrap for i32; u_index0 is the first index of the box) and RANDOM (out from the Philox words of
// (u_seed, block u_offset + g / 4 for the element's row-major index g in the whole index space,
// which the box's origin u_origin and the whole shape u_whole give, in 64 bits), u_op a tgl_random_kind, its
// parameters in u_value, u_step, u_extra as src/core/api_random.c sets them, input 0 out itself,
// never read) and TRIANGLE (out = input 0 where its last two whole coordinates, col - row, are
// >= (u_op 1: triu) or <= (u_op 0: tril) the i32 diagonal in u_value, else 0), ONE_HOT (out =
// 1 where the i32 input 0 equals the element's last whole coordinate, else 0), MASKED_FILL (out =
// u_value where the bool input 0 is true, else input 1), GATHER (out = input 1's element
// u_axis_stride * k further, k the i32 input 0, the host having checked k; input 1's stride
// along the gathered axis is 0 in the index space, and a dispatch whose window of input 1 holds
// only the indices [u_chunk_lo, u_chunk_lo + u_chunk_len) leaves the other elements as they
// are; it writes nothing unless the status word at binding 2 says the check found no bad
// index; input 1 is walked by coordinates in every variant, LINEAR and VEC4 walking only the
// index and out densely), CHECK_INDEX (the status word, out's element, lowered by atomicMin to
// the whole row-major position of each i32 input 0 outside [0, u_value); no element written) and DROPOUT (out = input 0 * 0 or 1 * f32 u_value, kept where the first word >> 8 is
// at least u_step; one float dtype); the formulas are src/cpu/cpu_random.c's, statement for
// statement. Each operand is bound from the lowest element it reaches, so its
// offsets are small non-negative numbers even with negative strides; the strides are two's
// complement uints and their sums wrap to the right offset. Inputs repeat along stride-0 dims
// (broadcast). IN_DTYPE and OUT_DTYPE are tgl_dtype values (0 f32, 1 f16, 2 bf16, 3 i32,
// 4 bool; WHERE's condition is bool); everything is computed on bits (common/convert.glsl), so
// a device that flushes subnormals or folds NaN tests changes no result. Elements of 1 or 2
// bytes are packed in uints, element k of a word in bits 8 * size * k on.
// Plain: an invocation per element, linear index u_start + i. An out element below 4 bytes is
// written by atomicAnd then atomicOr on its word: invocations writing other elements of that
// word (any strides) keep each other's bits, and bytes of the word outside the tensor keep theirs.
// WORDS (an out below 4 bytes that is row-major dense, the host checked): an invocation per out
// word (u_start the dispatch's first), computing the elements the word holds and storing it
// whole; a word the tensor covers in part is merged with the bytes around it (no other
// invocation of the dispatch touches it; dispatches are ordered by barriers).
// LINEAR (every operand row-major dense, the host checked): offsets without coordinates
// (llvmpipe indexes the stride arrays lane by lane: a 16M f32 -> bf16 copy ran 3x slower
// through them).
// VEC4 (LINEAR, and every operand's element 0 on a multiple of four elements, its binding too,
// the host checked): an invocation per four elements (u_start, a multiple of four, the
// dispatch's first element; u_n its groups of four), each operand read and out written as one
// access of four elements (a uvec4 of 4-byte, a uvec2 of 2-byte, a uint of 1-byte elements),
// walked in the host's direction (common/sweep.glsl); the host runs the tail by the variants
// above. On an H200 (16M elements) scalar accesses of 4 or 8 bytes ran the cast f32 -> bf16 at
// 2.8 TB/s, this at 4.2; two or four groups of four per invocation, side by side or a grid
// apart, were slower than one (the cast 3.2 and 2.0 TB/s side by side).
// LINE_QUADS (GATHER with VEC4, where the last dim's extent is a multiple of four, the host
// checked): each quad lies inside one line along that dim, so in's offsets are one position
// from coordinates and three steps. CHECK_INDEX with VEC4 runs over one line only (the host
// checks a dense index as one line), each position the box's origin plus the element's index.
// TGL_TEX (with VEC4, for llvmpipe; TGL_IMG too: imageLoad): the inputs through unsigned buffer
// textures over the same windows (common/texel.glsl), a quad of 4-byte elements one RGBA32UI
// texel, every other operand R32UI words: llvmpipe gathers texels where each SSBO load is a loop
// over its SIMD lanes (2 cores, 16M elements: a bf16 copy 19.5 -> 10.4 ms, compare + where 62 ->
// 32 ms, dropout 40 -> 31 ms).
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
#include "common/sweep.glsl"
#include "common/philox.glsl"
#include "common/local_size.glsl"
#include "common/texel.glsl"
#include "common/divide.glsl"

// Standalone (the file as written, without the host's defines): an f32 copy.
#ifndef IN_DTYPE
#define IN_DTYPE 0
#endif
#ifndef OUT_DTYPE
#define OUT_DTYPE 0
#endif
#if defined(WHERE) || defined(CLAMP)
#define NIN 3
#elif defined(COMPARE) || defined(BINARY) || defined(MASKED_FILL) || defined(GATHER)
#define NIN 2
#else
#define NIN 1
#endif
#if OUT_DTYPE == 0 || OUT_DTYPE == 3
#define OUT_BYTES 4
#elif OUT_DTYPE == 4
#define OUT_BYTES 1
#else
#define OUT_BYTES 2
#endif

#if IN_DTYPE == 0 || IN_DTYPE == 3
#define IN_BYTES 4
#elif IN_DTYPE == 4
#define IN_BYTES 1
#else
#define IN_BYTES 2
#endif
#if defined(WHERE) || defined(MASKED_FILL)
#define IN0_BYTES 1 // the condition, the mask
#elif defined(GATHER)
#define IN0_BYTES 4 // the index
#else
#define IN0_BYTES IN_BYTES
#endif

// Four elements of 4, 2 or 1 bytes as one access (VEC4), its type and element k of it; and one
// element of a packed array. GLSL has no token pasting: one #if per operand.
#define LOAD_4(arr, e) arr[e]
#define LOAD_2(arr, e) ((arr[(e) >> 1] >> (16u * ((e) & 1u))) & 0xFFFFu)
#define LOAD_1(arr, e) ((arr[(e) >> 2] >> (8u * ((e) & 3u))) & 0xFFu)
uvec4 unquad(uvec4 q) { return q; }
uvec4 unquad(uvec2 q) { return uvec4(q.x & 0xFFFFu, q.x >> 16, q.y & 0xFFFFu, q.y >> 16); }
uvec4 unquad(uint q) { return uvec4(q & 0xFFu, (q >> 8) & 0xFFu, (q >> 16) & 0xFFu, q >> 24); }
#if IN0_BYTES == 4
#define QUAD0 uvec4
#define LOAD0(e) LOAD_4(x0, e)
#elif IN0_BYTES == 2
#define QUAD0 uvec2
#define LOAD0(e) LOAD_2(x0, e)
#else
#define QUAD0 uint
#define LOAD0(e) LOAD_1(x0, e)
#endif
#if IN_BYTES == 4
#define QUAD_IN uvec4
#define LOAD_IN(arr, e) LOAD_4(arr, e)
#elif IN_BYTES == 2
#define QUAD_IN uvec2
#define LOAD_IN(arr, e) LOAD_2(arr, e)
#else
#define QUAD_IN uint
#define LOAD_IN(arr, e) LOAD_1(arr, e)
#endif
#if OUT_BYTES == 4
#define QUAD_OUT uvec4
#define QUAD_OF(v) (v)
#elif OUT_BYTES == 2
#define QUAD_OUT uvec2
#define QUAD_OF(v) uvec2((v).x | ((v).y << 16), (v).z | ((v).w << 16))
#else
#define QUAD_OUT uint
#define QUAD_OF(v) ((v).x | ((v).y << 8) | ((v).z << 16) | ((v).w << 24))
#endif

#if defined(VEC4) && defined(TGL_TEX)
// A quad from a texture of its words: 4-byte elements one RGBA32UI texel, 2-byte ones two R32UI
// texels, 1-byte ones one.
#define QUAD_T4(t, q) TGL_UREAD(t, q)
#define QUAD_T2(t, q) uvec2(TGL_UREAD(t, 2u * (q)).x, TGL_UREAD(t, 2u * (q) + 1u).x)
#define QUAD_T1(t, q) TGL_UREAD(t, q).x
#if IN0_BYTES == 4
TGL_UTEXTURE(LOC_TEXTURE0, 0, x0_tex, rgba32ui);
#define QUAD0_AT(q) QUAD_T4(x0_tex, q)
#elif IN0_BYTES == 2
TGL_UTEXTURE(LOC_TEXTURE0, 0, x0_tex, r32ui);
#define QUAD0_AT(q) QUAD_T2(x0_tex, q)
#else
TGL_UTEXTURE(LOC_TEXTURE0, 0, x0_tex, r32ui);
#define QUAD0_AT(q) QUAD_T1(x0_tex, q)
#endif
#if defined(GATHER) // its in: an element at a time, from R32UI words
TGL_UTEXTURE(LOC_TEXTURE1, 1, x1_tex, r32ui);
#define LOAD_X1(e) LOAD_T(x1_tex, e, IN_BYTES)
#elif NIN > 1 && IN_BYTES == 4
TGL_UTEXTURE(LOC_TEXTURE1, 1, x1_tex, rgba32ui);
#define QUAD1_AT(q) QUAD_T4(x1_tex, q)
#elif NIN > 1
TGL_UTEXTURE(LOC_TEXTURE1, 1, x1_tex, r32ui);
#endif
#if NIN > 2 && IN_BYTES == 4
TGL_UTEXTURE(LOC_TEXTURE2, 2, x2_tex, rgba32ui);
#define QUAD2_AT(q) QUAD_T4(x2_tex, q)
#elif NIN > 2
TGL_UTEXTURE(LOC_TEXTURE2, 2, x2_tex, r32ui);
#endif
#if NIN > 1 && !defined(GATHER) && IN_BYTES == 2
#define QUAD1_AT(q) QUAD_T2(x1_tex, q)
#define QUAD2_AT(q) QUAD_T2(x2_tex, q)
#elif NIN > 1 && !defined(GATHER) && IN_BYTES == 1
#define QUAD1_AT(q) QUAD_T1(x1_tex, q)
#define QUAD2_AT(q) QUAD_T1(x2_tex, q)
#endif
// Element e of DTYPE bytes b from a texture of R32UI words.
#define WORD_T(t, w) TGL_UREAD(t, w).x
#define LOAD_T(t, e, b) ((b) == 4 ? WORD_T(t, e) : (b) == 2 ? ((WORD_T(t, (e) >> 1) >> (16u * ((e) & 1u))) & 0xFFFFu) \
                                                    : ((WORD_T(t, (e) >> 2) >> (8u * ((e) & 3u))) & 0xFFu))
#elif defined(VEC4)
layout(std430, binding = 0) readonly buffer In0 { QUAD0 x0[]; };
#define QUAD0_AT(q) x0[q]
#if defined(GATHER) // its in: an element at a time
layout(std430, binding = 1) readonly buffer In1 { uint x1[]; };
#elif NIN > 1
layout(std430, binding = 1) readonly buffer In1 { QUAD_IN x1[]; };
#define QUAD1_AT(q) x1[q]
#endif
#if NIN > 2
layout(std430, binding = 2) readonly buffer In2 { QUAD_IN x2[]; };
#define QUAD2_AT(q) x2[q]
#endif
#endif
#if defined(VEC4) && defined(CHECK_INDEX) // the status word
layout(std430, binding = 3) buffer Out { uint y[]; };
#elif defined(VEC4)
layout(std430, binding = 3) writeonly buffer Out { QUAD_OUT y[]; };
#else
layout(std430, binding = 0) readonly buffer In0 { uint x0[]; };
#if NIN > 1
layout(std430, binding = 1) readonly buffer In1 { uint x1[]; };
#endif
#if NIN > 2
layout(std430, binding = 2) readonly buffer In2 { uint x2[]; };
#endif
layout(std430, binding = 3) buffer Out { uint y[]; };
#endif
layout(location = LOC_TEW_N) uniform uint u_n;               // plain: elements of this dispatch; WORDS: of the box
layout(location = LOC_TEW_START) uniform uint u_start;       // plain: first linear index; WORDS: first word
layout(location = LOC_TEW_NDIM) uniform uint u_ndim;
layout(location = LOC_TEW_VALUE) uniform uint u_value;      // FILL: the element's bits; ARANGE: start
layout(location = LOC_TEW_STEP) uniform uint u_step;        // ARANGE
layout(location = LOC_TEW_INDEX0) uniform uint u_index0;    // ARANGE: the box's first index
layout(location = LOC_TEW_EXTRA) uniform uint u_extra;      // RANDOM: a third parameter
layout(location = LOC_TEW_SEED) uniform uint u_seed[2];     // RANDOM, DROPOUT: low, high word
layout(location = LOC_TEW_OFFSET) uniform uint u_offset[2];
layout(location = LOC_TEW_OP) uniform uint u_op;            // COMPARE, UNARY, BINARY: the op
layout(location = LOC_TEW_OUT_BASE) uniform uint u_out_base; // element (0, ..., 0) in each window, in elements
layout(location = LOC_TEW_BASE0) uniform uint u_base0;
layout(location = LOC_TEW_BASE1) uniform uint u_base1;
layout(location = LOC_TEW_BASE2) uniform uint u_base2;
layout(location = LOC_TEW_SHAPE) uniform uint u_shape[8];
layout(location = LOC_TEW_DIV_M) uniform uint u_div_m[8]; // u_shape's multipliers and shifts
layout(location = LOC_TEW_DIV_S) uniform uint u_div_s[8]; // for tgl_div (common/divide.glsl)
layout(location = LOC_TEW_OUT_STRIDE) uniform uint u_out_stride[8];
layout(location = LOC_TEW_STRIDE0) uniform uint u_stride0[8];
#if NIN > 1
layout(location = LOC_TEW_STRIDE1) uniform uint u_stride1[8];
#endif
#if NIN > 2
layout(location = LOC_TEW_STRIDE2) uniform uint u_stride2[8];
#endif
#ifndef LOAD_X1
#define LOAD_X1(e) LOAD_IN(x1, e)
#endif
#if defined(TRIANGLE) || defined(ONE_HOT) || defined(RANDOM) || defined(DROPOUT) || defined(CHECK_INDEX)
layout(location = LOC_TEW_ORIGIN) uniform uint u_origin[8]; // the box's first index along each dim
#endif
#ifdef GATHER
layout(std430, binding = 2) readonly buffer Status { uint status[]; }; // the check's: 0xFFFFFFFF, none bad
layout(location = LOC_TEW_AXIS_STRIDE) uniform uint u_axis_stride; // input 1's along the axis
layout(location = LOC_TEW_CHUNK_LO) uniform uint u_chunk_lo;       // the indices input 1's window
layout(location = LOC_TEW_CHUNK_LEN) uniform uint u_chunk_len;     // holds: u_chunk_lo on
bool g_skip = false; // the element's index is outside this dispatch's: out keeps it
#endif
#if defined(TRIANGLE) || defined(ONE_HOT)
// Coordinate d of the box's linear index i in the whole index space.
uint whole_coord(uint i, int d)
{
    uint rest = i;
    for (int k = int(u_ndim) - 1; k > d; k--)
        rest = tgl_div(rest, u_div_m[k], u_div_s[k]);
    return (d > 0 ? rest - tgl_div(rest, u_div_m[d], u_div_s[d]) * u_shape[d] : rest) + u_origin[d];
}
#endif
#if defined(RANDOM) || defined(DROPOUT) || defined(CHECK_INDEX)
layout(location = LOC_TEW_WHOLE) uniform uint u_whole[8];   // the whole index space's shape

// The row-major index (low, high word) in the whole index space of the box's linear index i:
// each coordinate plus the box's origin times the whole extents inside it, from the innermost
// dim out, in 64-bit sums of 32x32 -> 64-bit products. No local array: on softpipe, where a
// quad's first lane skips this code (WORDS' first word), the other three lanes' elements came out
// with the first lane's value while the coordinates went through an indexed local array
// (measured; tgsi_exec addressing the array by one lane's index is the likely mechanism).
uvec2 whole_index(uint i)
{
    uvec2 at = uvec2(0u), inner = uvec2(1u, 0u); // inner: the whole extents inside dim k
    uint rest = i;
    for (int k = int(u_ndim) - 1; k >= 0; k--) {
        uint q = k > 0 ? tgl_div(rest, u_div_m[k], u_div_s[k]) : 0u;
        uint c = rest - q * u_shape[k];
        rest = q;
        uint x = u_origin[k] + c, hi, lo, carry;
        umulExtended(x, inner.x, hi, lo);
        at.x = uaddCarry(at.x, lo, carry);
        at.y += hi + x * inner.y + carry;
        umulExtended(inner.x, u_whole[k], hi, lo);
        inner = uvec2(lo, inner.y * u_whole[k] + hi);
    }
    return at;
}
#endif

#if defined(RANDOM) || defined(DROPOUT)
layout(location = LOC_TEW_CONSECUTIVE) uniform uint u_consecutive;  // the box's elements follow
layout(location = LOC_TEW_FIRST_INDEX) uniform uint u_first_index[2]; // each other from this one

// (x >> 8) * 2^-24: exact, in [0, 1).
float u24(uint x)
{
    return float(x >> 8) * 5.9604644775390625e-8;
}

// Element i's value in out's dtype (low bits); a0 dropout's input element.
// The words of the block holding whole index g (low, high word): block u_offset + g / 4.
uvec4 draw(uvec2 g)
{
    uint carry;
    uvec2 block;
    block.x = uaddCarry(u_offset[0], (g.x >> 2) | (g.y << 30), carry);
    block.y = u_offset[1] + (g.y >> 2) + carry;
    return tgl_philox4x32_10(uvec4(block, 0u, 0u), uvec2(u_seed[0], u_seed[1]));
}

// -2 ln u for u in (0, 1]. GLSL allows log an absolute error of 2^-21 in [0.5, 2], which near
// u = 1 is more than -2 ln u itself (the smallest radii: u = 1 - 2^-24 gives 1.2e-7), so for
// u >= 0.75 it is 4 atanh(t), t = (1 - u) / (1 + u) in [0, 1/7] (1 - u exact on u's grid), by
// its series to t^9 (the first term left out is below 2^-31 of the sum); cpu_random.c sums the same.
float minus_two_ln(float u)
{
    TGL_PRECISE float t = (1.0 - u) / (1.0 + u);
    TGL_PRECISE float t2 = t * t;
    TGL_PRECISE float series = 4.0 * t * (1.0 + t2 * (1.0 / 3.0 + t2 * (0.2 + t2 * (1.0 / 7.0 + t2 * (1.0 / 9.0)))));
    TGL_PRECISE float far = -2.0 * log(u);
    return u >= 0.75 ? series : far;
}

#ifdef RANDOM
// Box-Muller's radius from a pair's first word and angle in [-pi, pi) from its second.
float normal_radius(uint x0)
{
    TGL_PRECISE float u = u24(x0) + 5.9604644775390625e-8;
    TGL_PRECISE float radius = sqrt(minus_two_ln(u));
    return radius;
}

float normal_angle(uint x1)
{
    TGL_PRECISE float turn = 6.28318548 * u24(x1);
    TGL_PRECISE float angle = turn - 3.14159274;
    return angle;
}

// A normal element, mean u_value and std u_step (f32 bits), from its radius and its angle's
// cosine (the pair's first) or sine (its second), in out's dtype.
uint normal_value(float radius, float trig)
{
    TGL_PRECISE float z = radius * trig;
    TGL_PRECISE float scaled = uintBitsToFloat(u_step) * z;
    TGL_PRECISE float r = uintBitsToFloat(u_value) + scaled;
    return tgl_convert(floatBitsToUint(r), 0u, uint(OUT_DTYPE));
}
#endif

// The value in out's dtype (low bits) of the element at position q (its whole index mod 4) of
// the block whose words are w; a0 dropout's input element. Its word is w[q]; a normal pair
// (q even and q + 1) shares w[q & 2] and the word after it.
uint from_words(uvec4 w, uint q, uint a0)
{
    uint x = q == 0u ? w.x : q == 1u ? w.y : q == 2u ? w.z : w.w; // selects, not an indexed access (see whole_index)
#ifdef DROPOUT
    TGL_PRECISE float masked = uintBitsToFloat(tgl_to_f32(a0, uint(IN_DTYPE))) * ((x >> 8) >= u_step ? 1.0 : 0.0);
    TGL_PRECISE float r = masked * uintBitsToFloat(u_value);
    return tgl_convert(floatBitsToUint(r), 0u, uint(OUT_DTYPE));
#else
    if (u_op == 0u) { // uniform
        TGL_PRECISE float scaled = uintBitsToFloat(u_step) * u24(x);
        TGL_PRECISE float r = uintBitsToFloat(u_value) + scaled;
        float cap = uintBitsToFloat(u_extra);
        return tgl_convert(floatBitsToUint(r < cap ? r : cap), 0u, uint(OUT_DTYPE));
    }
    if (u_op == 1u) { // normal: Box-Muller, cos for the pair's first, sin for its second
        uint x0 = q < 2u ? w.x : w.z, x1 = q < 2u ? w.y : w.w;
        float angle = normal_angle(x1);
        return normal_value(normal_radius(x0), (q & 1u) == 0u ? cos(angle) : sin(angle));
    }
    uint hi, lo;
    umulExtended(x, u_step, hi, lo);
    uint v = u_op == 2u ? ((x >> 8) < u_step ? 1u : 0u) // bernoulli
                        : u_value + hi;                 // randint: i32 with wrap
    return tgl_convert(v, 3u, uint(OUT_DTYPE));
#endif
}

// The whole index of the box's linear index i: counted from the box's first where its elements
// are one run of the whole index space (no coordinates: they cost llvmpipe 3x), else rebuilt.
uvec2 index_of(uint i)
{
    if (u_consecutive == 0u)
        return whole_index(i);
    uint carry;
    uint lo = uaddCarry(u_first_index[0], i, carry);
    return uvec2(lo, u_first_index[1] + carry);
}

// The block last drawn by this invocation (WORDS computes neighbours one after another, so
// half its elements reuse it) and its words.
bool g_drawn = false;
uvec2 g_block;
uvec4 g_words;

// Element i's value in out's dtype (low bits), one at a time (the scalar variants).
uint random_value(uint i, uint a0)
{
    uvec2 g = index_of(i), block = uvec2((g.x >> 2) | (g.y << 30), g.y >> 2);
    if (!g_drawn || block != g_block) {
        g_words = draw(g);
        g_block = block;
        g_drawn = true;
    }
    return from_words(g_words, g.x & 3u, a0);
}
#endif


// The operands' element offsets (in their windows) of linear index i: the inputs', then out's.
// The outermost coordinate needs no division.
void locate(uint i, out uint o0, out uint o1, out uint o2, out uint oy)
{
    o0 = u_base0 + i;
    o1 = u_base1 + i;
    o2 = u_base2 + i;
    oy = u_out_base + i;
#ifndef LINEAR
    uint rest = i;
    o0 = u_base0;
    o1 = u_base1;
    o2 = u_base2;
    oy = u_out_base;
    for (int k = int(u_ndim) - 1; k > 0; k--) {
        uint q = tgl_div(rest, u_div_m[k], u_div_s[k]), c = rest - q * u_shape[k];
        rest = q;
        o0 += c * u_stride0[k];
#if NIN > 1
        o1 += c * u_stride1[k];
#endif
#if NIN > 2
        o2 += c * u_stride2[k];
#endif
        oy += c * u_out_stride[k];
    }
    if (u_ndim > 0u) { // rest is the outermost coordinate
        o0 += rest * u_stride0[0];
#if NIN > 1
        o1 += rest * u_stride1[0];
#endif
#if NIN > 2
        o2 += rest * u_stride2[0];
#endif
        oy += rest * u_out_stride[0];
    }
#endif
}

#ifdef GATHER
// Input 1's element offset (at index 0 along the gathered axis) of linear index i, from its
// coordinates: the LINEAR and VEC4 variants walk only the index and out without them.
uint source_offset(uint i)
{
    uint o = u_base1, rest = i;
    for (int k = int(u_ndim) - 1; k > 0; k--) {
        uint q = tgl_div(rest, u_div_m[k], u_div_s[k]);
        o += (rest - q * u_shape[k]) * u_stride1[k];
        rest = q;
    }
    return u_ndim > 0u ? o + rest * u_stride1[0] : o;
}

// The element of input 1 that index k picks for linear index i whose input 1 offset is at.
uint gathered(uint at, uint k)
{
    return tgl_convert(LOAD_X1(at + k * u_axis_stride), uint(IN_DTYPE), uint(OUT_DTYPE));
}
#endif

// An ordered integer for f32 bits that are not NaN: -0 and +0 alike, subnormals kept.
int float_key(uint f)
{
    return (f & 0x80000000u) != 0u ? -int(f & 0x7FFFFFFFu) : int(f);
}

// The value of out's element at linear index i, in out's dtype (low bits), from the inputs'
// elements there (a0: where's condition; unused ones 0).
uint compute(uint i, uint a0, uint a1, uint a2)
{
#if defined(WHERE)
    return tgl_convert(a0 != 0u ? a1 : a2, uint(IN_DTYPE), uint(OUT_DTYPE));
#elif defined(MASKED_FILL)
    return a0 != 0u ? u_value : tgl_convert(a1, uint(IN_DTYPE), uint(OUT_DTYPE));
#elif defined(COMPARE)
    uint a = a0, b = a1;
#if IN_DTYPE == 3
    int ka = int(a), kb = int(b);
#elif IN_DTYPE == 4
    int ka = a != 0u ? 1 : 0, kb = b != 0u ? 1 : 0;
#else
    uint fa = tgl_to_f32(a, uint(IN_DTYPE)), fb = tgl_to_f32(b, uint(IN_DTYPE));
    if (tgl_f32_is_nan(fa) || tgl_f32_is_nan(fb))
        return u_op == 1u ? 1u : 0u; // NaN: only ne holds
    int ka = float_key(fa), kb = float_key(fb);
#endif
    bool r = u_op == 0u ? ka == kb
             : u_op == 1u ? ka != kb
             : u_op == 2u ? ka < kb
             : u_op == 3u ? ka <= kb
             : u_op == 4u ? ka > kb
                               : ka >= kb;
    return r ? 1u : 0u;
#elif defined(RANDOM) || defined(DROPOUT)
    return random_value(i, a0);
#elif defined(ONE_HOT)
    return tgl_convert(int(a0) == int(whole_coord(i, int(u_ndim) - 1)) ? 1u : 0u, 3u, uint(OUT_DTYPE));
#elif defined(TRIANGLE)
    int diff = int(whole_coord(i, int(u_ndim) - 1)) - int(whole_coord(i, int(u_ndim) - 2));
    bool keep = u_op != 0u ? diff >= int(u_value) : diff <= int(u_value);
    return keep ? tgl_convert(a0, uint(IN_DTYPE), uint(OUT_DTYPE)) : 0u;
#elif defined(FILL)
    return u_value;
#elif defined(ARANGE)
    uint k = i + u_index0;
#if OUT_DTYPE == 3
    return u_value + k * u_step;
#else
    TGL_PRECISE float offset = float(k) * uintBitsToFloat(u_step);
    TGL_PRECISE float v = uintBitsToFloat(u_value) + offset;
    return tgl_convert(floatBitsToUint(v), 0u, uint(OUT_DTYPE));
#endif
#elif defined(CLAMP)
    uint v = a0, lo = a1, hi = a2;
#if IN_DTYPE == 3
    return uint(min(max(int(v), int(lo)), int(hi)));
#else
    uint fv = tgl_to_f32(v, uint(IN_DTYPE)), fl = tgl_to_f32(lo, uint(IN_DTYPE)), fh = tgl_to_f32(hi, uint(IN_DTYPE));
    if (tgl_f32_is_nan(fv) || tgl_f32_is_nan(fl) || tgl_f32_is_nan(fh))
        return tgl_convert(0x7FC00000u, 0u, uint(OUT_DTYPE));
    uint r = float_key(fv) < float_key(fl) ? lo : v; // ties keep x, as the CPU's v < lo does
    uint fr = float_key(fv) < float_key(fl) ? fl : fv;
    return float_key(fr) > float_key(fh) ? hi : r;
#endif
#elif defined(UNARY) && OUT_DTYPE == 4 && IN_DTYPE != 4
    uint f = tgl_to_f32(a0, uint(IN_DTYPE)) & 0x7FFFFFFFu; // |x|'s bits
    bool r = u_op == 25u ? f > 0x7F800000u : u_op == 26u ? f == 0x7F800000u : f < 0x7F800000u;
    return r ? 1u : 0u; // isnan, isinf, isfinite
#elif defined(UNARY) || defined(BINARY)
    uint a = a0;
#ifdef BINARY
    uint b = a1;
    bool unary = false;
#else
    uint b = 0u;
    bool unary = true;
#endif
#if IN_DTYPE == 3
    return unary ? tgl_unary_i32(u_op, a) : tgl_binary_i32(u_op, a, b);
#elif IN_DTYPE == 4
    return tgl_logical(u_op, unary, a, b);
#else
    float fa = uintBitsToFloat(tgl_to_f32(a, uint(IN_DTYPE)));
    float r = unary ? tgl_unary_f32(u_op, fa) : tgl_binary_f32(u_op, fa, uintBitsToFloat(tgl_to_f32(b, uint(IN_DTYPE))));
    return tgl_convert(floatBitsToUint(r), 0u, uint(OUT_DTYPE));
#endif
#else
    return tgl_convert(a0, uint(IN_DTYPE), uint(OUT_DTYPE));
#endif
}

#ifndef VEC4
// The value of out's element at linear index i, read from the inputs' windows.
uint value(uint i)
{
    uint o0, o1, o2, oy, a0 = 0u, a1 = 0u, a2 = 0u;
    locate(i, o0, o1, o2, oy);
#ifdef GATHER
    // the index (checked: in [0, the axis's extent)) picks input 1's element along the axis
    uint k = LOAD0(o0);
    if (k - u_chunk_lo >= u_chunk_len) {
        g_skip = true;
        return 0u;
    }
#ifdef LINEAR
    o1 = source_offset(i);
#endif
    return gathered(o1, k);
#endif
#if !defined(FILL) && !defined(ARANGE) && !defined(RANDOM)
    a0 = LOAD0(o0);
#endif
#if NIN > 1
    a1 = LOAD_IN(x1, o1);
#endif
#if NIN > 2
    a2 = LOAD_IN(x2, o2);
#endif
    return compute(i, a0, a1, a2);
}

// out's element offset of linear index i (plain variant).
uint out_offset(uint i)
{
    uint o0, o1, o2, oy;
    locate(i, o0, o1, o2, oy);
    return oy;
}
#endif

void main()
{
#ifdef GATHER
    if (status[0] != 0xFFFFFFFFu) // an index out of range: the call fails, nothing written
        return;
#endif
#if defined(CHECK_INDEX)
    // the index space's first position (row-major) whose i32 index is outside [0, u_value); a
    // negative index is a large unsigned one
#ifdef VEC4
    uint q = tgl_global_index();
    if (q >= u_n)
        return;
    uint i = u_start + 4u * tgl_sweep(q, u_n);
    uvec4 k = QUAD0_AT((u_base0 + i) / 4u);
    // the quad's first bad element, and its position only then: llvmpipe runs a branch's code
    // for every lane under a mask, and four positions (divisions each) ran the check 2x slower
    // the host runs this variant over one line only (a dense index is checked as one), so the
    // position is the box's origin plus i + j: whole_index's loop over uniform arrays, which
    // llvmpipe runs under a mask even where no lane needs it, took a third of the check there
    uint j = k.x >= u_value ? 0u : k.y >= u_value ? 1u : k.z >= u_value ? 2u : k.w >= u_value ? 3u : 4u;
    if (j < 4u)
        atomicMin(y[u_out_base], u_origin[0] + i + j);
#else
    uint i = tgl_global_index();
    if (i >= u_n)
        return;
    uint o0, o1, o2, oy;
    locate(u_start + i, o0, o1, o2, oy);
    if (LOAD0(o0) >= u_value)
        atomicMin(y[u_out_base], whole_index(u_start + i).x);
#endif
#elif defined(VEC4)
    uint q = tgl_global_index();
    if (q >= u_n)
        return;
    uint i = u_start + 4u * tgl_sweep(q, u_n);
    uvec4 a0 = uvec4(0u), a1 = uvec4(0u), a2 = uvec4(0u);
#if !defined(FILL) && !defined(ARANGE) && !defined(RANDOM)
    a0 = unquad(QUAD0_AT((u_base0 + i) / 4u));
#endif
#if NIN > 1 && !defined(GATHER)
    a1 = unquad(QUAD1_AT((u_base1 + i) / 4u));
#endif
#if NIN > 2
    a2 = unquad(QUAD2_AT((u_base2 + i) / 4u));
#endif
    uvec4 r;
#if defined(GATHER) && defined(LINE_QUADS) // the last dim's extent a multiple of four
    // the quad inside one line: in's offset from the coordinates once, then steps along it
    uint at = source_offset(i), step = u_stride1[u_ndim - 1u];
    for (uint k = 0u; k < 4u; k++)
        r[k] = gathered(at + k * step, a0[k]);
#elif defined(GATHER) // the host takes this variant where in's window holds the whole axis
    // in's offsets from the coordinates twice at most: at the quad's first element and, where
    // the quad runs past the end of its line along the last dim, at the next line's start; the
    // elements between are steps along that dim (an H200 spent more time in the divisions than
    // in the loads; llvmpipe, computing both sides of a select, in each element's; lines whose
    // extent is a multiple of four take LINE_QUADS, without either: llvmpipe 16M, 56 -> 42 ms)
    int last = int(u_ndim) - 1;
    uint len = u_shape[last], c = i - tgl_div(i, u_div_m[last], u_div_s[last]) * len;
    uint at = source_offset(i), step = u_stride1[last];
    if (len >= 4u) { // one wrap at most
        uint next = c + 4u > len ? source_offset(i - c + len) : 0u;
        for (uint k = 0u; k < 4u; k++)
            r[k] = gathered(c + k < len ? at + k * step : next + (c + k - len) * step, a0[k]);
    } else {
        for (uint k = 0u; k < 4u; k++)
            r[k] = gathered(k == 0u ? at : source_offset(i + k), a0[k]);
    }
#else
#if defined(RANDOM) || defined(DROPOUT)
    uvec4 w = draw(index_of(i)); // the host takes this variant where the four are one block
#ifdef RANDOM
    if (u_op == 1u) { // normal: each pair's radius and angle once
        float r0 = normal_radius(w.x), t0 = normal_angle(w.y), r1 = normal_radius(w.z), t1 = normal_angle(w.w);
        r = uvec4(normal_value(r0, cos(t0)), normal_value(r0, sin(t0)), normal_value(r1, cos(t1)),
                  normal_value(r1, sin(t1)));
    } else
#endif
    for (int k = 0; k < 4; k++)
        r[k] = from_words(w, uint(k), a0[k]);
#else
    for (int k = 0; k < 4; k++)
        r[k] = compute(i + uint(k), a0[k], a1[k], a2[k]);
#endif
#endif
    y[(u_out_base + i) / 4u] = QUAD_OF(r);
#else
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
        uint v = value(slot - u_out_base);
#ifdef GATHER
        if (g_skip) { // another dispatch writes it: keep its bits
            g_skip = false;
            continue;
        }
#endif
        word |= v << (bits * k);
        keep &= ~(mask << (bits * k));
    }
    y[w] = keep == 0u ? word : (y[w] & keep) | word;
#else
    uint i = tgl_global_index();
    if (i >= u_n)
        return;
    uint v = value(u_start + i), at = out_offset(u_start + i);
#ifdef GATHER
    if (g_skip)
        return;
#endif
#if OUT_BYTES == 4
    y[at] = v;
#else
    uint w = at / per, shift = bits * (at % per);
    atomicAnd(y[w], ~(mask << shift));
    atomicOr(y[w], v << shift);
#endif
#endif
#endif
}
