#version 430
// tgl_reduce_t: each element of out reduces a line of u_len elements of in, u_step elements
// apart (two's complement), starting at its coordinates over out's index space (ndim dims,
// in's strides over them in u_in_stride, out's in u_out_stride). u_op is a tgl_reduce_op, or
// OP_ARGMAX / OP_ARGMIN (tgl_argmax_t, tgl_argmin_t: the line's index of its first largest or
// smallest element, or of its first NaN, into an i32 out; floats compared as numbers, -0 == +0).
// Floats (IN_DTYPE 0 f32, 1 f16, 2 bf16) accumulate in f32: SUM and MEAN compensated (Kahan,
// `precise`), PROD plainly, MAX and MIN on the bits with NaN winning; the result is rounded to
// OUT_DTYPE (in's) on the bits. i32 (3) sums and multiplies in uints (two's complement wrap),
// compares as ints. ANY and ALL test each element against zero on its bits (NaN true, -0
// false) into a bool out (4). Operands are bound from their lowest element, u_in_base and
// u_out_base being element (0, ..., 0) in each window; an out element below 4 bytes is written
// by atomicAnd then atomicOr on its word, keeping the bytes around it.
// Plain: an invocation per out element (u_start + i). GROUP: a workgroup per out element
// (u_start + the workgroup's index), its invocations striding along the line, then a tree in
// shared memory.
#extension GL_GOOGLE_include_directive : enable
#include "common/locations.glsl"
#ifndef TGL_WG_SIZE
#define TGL_WG_SIZE 64
#endif
#include "common/convert.glsl"
#include "common/precise.glsl"
#include "common/local_size.glsl"

#ifndef IN_DTYPE
#define IN_DTYPE 0
#endif
#ifndef OUT_DTYPE
#define OUT_DTYPE 0
#endif
#if IN_DTYPE == 0 || IN_DTYPE == 3
#define IN_BYTES 4
#elif IN_DTYPE == 4
#define IN_BYTES 1
#else
#define IN_BYTES 2
#endif
#if OUT_DTYPE == 0 || OUT_DTYPE == 3
#define OUT_BYTES 4
#elif OUT_DTYPE == 4
#define OUT_BYTES 1
#else
#define OUT_BYTES 2
#endif

layout(std430, binding = 0) readonly buffer In { uint x[]; };
layout(std430, binding = 1) buffer Out { uint y[]; };
layout(location = LOC_RDT_N) uniform uint u_n;         // out elements of this dispatch
layout(location = LOC_RDT_START) uniform uint u_start; // the first one's linear index
layout(location = LOC_RDT_NDIM) uniform uint u_ndim;
layout(location = LOC_RDT_OP) uniform uint u_op;
layout(location = LOC_RDT_LEN) uniform uint u_len;
layout(location = LOC_RDT_STEP) uniform uint u_step;
layout(location = LOC_RDT_IN_BASE) uniform uint u_in_base;
layout(location = LOC_RDT_OUT_BASE) uniform uint u_out_base;
layout(location = LOC_RDT_SHAPE) uniform uint u_shape[8];
layout(location = LOC_RDT_IN_STRIDE) uniform uint u_in_stride[8];
layout(location = LOC_RDT_OUT_STRIDE) uniform uint u_out_stride[8];

#define OP_SUM 0u
#define OP_MEAN 1u
#define OP_MAX 2u
#define OP_MIN 3u
#define OP_PROD 4u
#define OP_ANY 5u
#define OP_ALL 6u
#define OP_ARGMAX 7u // TGL__RDT_ARGMAX
#define OP_ARGMIN 8u

uint load_in(uint e)
{
#if IN_BYTES == 4
    return x[e];
#elif IN_BYTES == 2
    return (x[e >> 1] >> (16u * (e & 1u))) & 0xFFFFu;
#else
    return (x[e >> 2] >> (8u * (e & 3u))) & 0xFFu;
#endif
}

void store_out(uint at, uint v)
{
#if OUT_BYTES == 4
    y[at] = v;
#else
    const uint per = 4u / uint(OUT_BYTES), bits = 8u * uint(OUT_BYTES), mask = (1u << bits) - 1u;
    uint w = at / per, shift = bits * (at % per);
    atomicAnd(y[w], ~(mask << shift));
    atomicOr(y[w], v << shift);
#endif
}

// The running state of one line (or one invocation's share of it): f the float accumulator
// (f32 bits' value), c its compensation, u the integer one (i32 sum/prod, max/min as int bits,
// any/all as 0/1), nan whether a NaN was seen (MAX, MIN; the index ops: idx is its index),
// idx the index along the line of the best element so far (the index ops).
struct acc_t {
    float f, c;
    uint u, idx;
    bool nan, seen;
};

acc_t acc_init()
{
    acc_t a;
    a.f = u_op == OP_PROD ? 1.0 : 0.0;
    a.c = 0.0;
    a.u = u_op == OP_PROD ? 1u : u_op == OP_ALL ? 1u : 0u;
    a.idx = 0u;
    a.nan = false;
    a.seen = false;
    return a;
}

// Floats compared as ordered-int keys of their bits (no NaN here): max and min without a
// driver's fmax/fmin NaN rules or flushing.
int key(float v)
{
    int i = floatBitsToInt(v);
    return i < 0 ? int(0x80000000u) - i - 1 : i;
}

// The index ops compare as numbers: -0 and +0 tie (the first kept).
int num_key(float v)
{
    return (floatBitsToUint(v) & 0x7FFFFFFFu) == 0u ? 0 : key(v);
}

bool is_arg()
{
    return u_op == OP_ARGMAX || u_op == OP_ARGMIN;
}

// Whether candidate b (at index bi) beats the best so far a (at ai) for the index ops: NaN beats
// numbers, then larger (argmax) or smaller (argmin), then the lower index. b_key / a_key are
// ordered ints (int bits for i32, num_key for floats).
bool arg_beats(bool b_nan, int b_key, uint bi, bool a_nan, int a_key, uint ai)
{
    if (b_nan != a_nan)
        return b_nan;
    if (!b_nan && b_key != a_key)
        return u_op == OP_ARGMAX ? b_key > a_key : b_key < a_key;
    return bi < ai;
}

// A sum's rescan (see line_rescan): each element times g_scale, the result times 2^g_unscale.
float g_scale = 1.0;
int g_unscale = 0;

// Element k of the line, its bits, into a (k rising within one accumulator).
void acc_add(inout acc_t a, uint bits, uint k)
{
    if (is_arg()) {
#if IN_DTYPE == 3
        bool n_ = false;
        int kb = int(bits);
        int ka = int(a.u);
#else
        uint fb = tgl_to_f32(bits, uint(IN_DTYPE));
        bool n_ = tgl_f32_is_nan(fb);
        int kb = n_ ? 0 : num_key(uintBitsToFloat(fb));
        int ka = a.nan ? 0 : num_key(a.f);
#endif
        if (!a.seen || arg_beats(n_, kb, k, a.nan, ka, a.idx)) {
#if IN_DTYPE == 3
            a.u = bits;
#else
            a.f = uintBitsToFloat(fb);
#endif
            a.nan = n_;
            a.idx = k;
            a.seen = true;
        }
        return;
    }
    if (u_op == OP_ANY || u_op == OP_ALL) {
#if IN_DTYPE <= 2
        bool t = (tgl_to_f32(bits, uint(IN_DTYPE)) & 0x7FFFFFFFu) != 0u;
#else
        bool t = bits != 0u;
#endif
        a.u = u_op == OP_ANY ? (a.u | (t ? 1u : 0u)) : (a.u & (t ? 1u : 0u));
        return;
    }
#if IN_DTYPE == 3
    int v = int(bits);
    if (u_op == OP_SUM)
        a.u += bits;
    else if (u_op == OP_PROD)
        a.u *= bits;
    else if (!a.seen || (u_op == OP_MAX ? v > int(a.u) : v < int(a.u)))
        a.u = bits;
    a.seen = true;
#else
    uint fb = tgl_to_f32(bits, uint(IN_DTYPE));
    float v = uintBitsToFloat(fb);
    if (u_op == OP_SUM || u_op == OP_MEAN) {
        TGL_PRECISE float yv = v * g_scale - a.c;
        TGL_PRECISE float t = a.f + yv;
        TGL_PRECISE float cc = (t - a.f) - yv;
        // past an infinity the compensation would be NaN (inf - inf): the sum is exact there
        a.c = (floatBitsToUint(t) & 0x7FFFFFFFu) >= 0x7F800000u ? 0.0 : cc;
        a.f = t;
    } else if (u_op == OP_PROD) {
        TGL_PRECISE float p = a.f * v;
        a.f = p;
    } else if (tgl_f32_is_nan(fb)) {
        a.nan = true;
    } else if (!a.seen || (u_op == OP_MAX ? key(v) > key(a.f) : key(v) < key(a.f))) {
        a.f = v;
        a.seen = true;
    }
#endif
}

// b folded into a (b the later part of the line; for the index ops, any part: indices decide).
void acc_merge(inout acc_t a, acc_t b)
{
    if (is_arg()) {
#if IN_DTYPE == 3
        int kb = int(b.u), ka = int(a.u);
#else
        int kb = b.nan ? 0 : num_key(b.f), ka = a.nan ? 0 : num_key(a.f);
#endif
        if (b.seen && (!a.seen || arg_beats(b.nan, kb, b.idx, a.nan, ka, a.idx)))
            a = b;
    } else if (u_op == OP_ANY) {
        a.u |= b.u;
    } else if (u_op == OP_ALL) {
        a.u &= b.u;
    } else {
#if IN_DTYPE == 3
        if (u_op == OP_SUM)
            a.u += b.u;
        else if (u_op == OP_PROD)
            a.u *= b.u;
        else if (b.seen && (!a.seen || (u_op == OP_MAX ? int(b.u) > int(a.u) : int(b.u) < int(a.u))))
            a.u = b.u;
        a.seen = a.seen || b.seen;
#else
        if (u_op == OP_SUM || u_op == OP_MEAN) {
            TGL_PRECISE float s = a.f + b.f;
            TGL_PRECISE float cc = a.c + b.c;
            a.f = s;
            a.c = cc;
        } else if (u_op == OP_PROD) {
            TGL_PRECISE float p = a.f * b.f;
            a.f = p;
        } else {
            a.nan = a.nan || b.nan;
            if (b.seen && (!a.seen || (u_op == OP_MAX ? key(b.f) > key(a.f) : key(b.f) < key(a.f))))
                a.f = b.f;
            a.seen = a.seen || b.seen;
        }
#endif
    }
}

// The line's result as out's bits.
uint acc_result(acc_t a)
{
    if (is_arg())
        return a.idx;
    if (u_op == OP_ANY || u_op == OP_ALL)
        return a.u;
#if IN_DTYPE == 3
    return a.u;
#else
    float r = a.f;
    if (u_op == OP_SUM || u_op == OP_MEAN) {
        TGL_PRECISE float s = a.f - a.c;
        r = s;
    }
    if (u_op == OP_MEAN)
        r = u_len == 0u ? uintBitsToFloat(0x7FC00000u) : r / float(u_len);
    if (u_op == OP_SUM || u_op == OP_MEAN)
        r = ldexp(r, g_unscale);
    uint rb = floatBitsToUint(r);
    if ((u_op == OP_MAX || u_op == OP_MIN) && a.nan)
        rb = 0x7FC00000u;
    return tgl_convert(rb, 0u, uint(OUT_DTYPE));
#endif
}

// Element offsets (in elements, in each window) of out's linear index i: in's line start, out's.
void locate(uint i, out uint oi, out uint oo)
{
    uint rest = i;
    oi = u_in_base;
    oo = u_out_base;
    for (int k = int(u_ndim) - 1; k > 0; k--) {
        uint c = rest % u_shape[k];
        rest /= u_shape[k];
        oi += c * u_in_stride[k];
        oo += c * u_out_stride[k];
    }
    if (u_ndim > 0u) {
        oi += rest * u_in_stride[0];
        oo += rest * u_out_stride[0];
    }
}

// Whether a float sum (or mean) whose total t overflowed f32 is taken again: when the line's
// elements are all finite (the CPU's double does not overflow there). Then g_scale is the power
// of two that brings the largest magnitude m (its bits: the largest as uints, NaN above inf) to
// about 2^32, so nothing overflows or becomes subnormal, and g_unscale undoes it exactly.
bool line_rescan(float t, uint m)
{
#if IN_DTYPE <= 2
    if ((u_op == OP_SUM || u_op == OP_MEAN) && (floatBitsToUint(t) & 0x7FFFFFFFu) >= 0x7F800000u &&
        m < 0x7F800000u) {
        int e;
        frexp(uintBitsToFloat(m), e);
        g_scale = ldexp(1.0, 32 - e);
        g_unscale = e - 32;
        return true;
    }
#endif
    return false;
}

// The largest magnitude's bits of this invocation's elements k = first, first + by, ...
uint line_magnitude(uint oi, uint first, uint by)
{
    uint m = 0u;
#if IN_DTYPE <= 2
    for (uint k = first; k < u_len; k += by)
        m = max(m, tgl_to_f32(load_in(oi + k * u_step), uint(IN_DTYPE)) & 0x7FFFFFFFu);
#endif
    return m;
}

#ifdef GROUP
shared float s_f[TGL_WG_SIZE];
shared float s_c[TGL_WG_SIZE];
shared uint s_u[TGL_WG_SIZE];
shared uint s_i[TGL_WG_SIZE];
shared uint s_flags[TGL_WG_SIZE]; // bit 0 nan, bit 1 seen

// The line at oi reduced by the group: lane 0's result, also in s_f[0], s_c[0], s_u[0] ... for
// every lane to read.
acc_t group_line(uint oi, uint lane)
{
    acc_t a = acc_init();
    // neighbouring lanes read neighbouring elements (a dense line's loads coalesce)
    for (uint k = lane; k < u_len; k += uint(TGL_WG_SIZE))
        acc_add(a, load_in(oi + k * u_step), k);
    s_f[lane] = a.f;
    s_c[lane] = a.c;
    s_u[lane] = a.u;
    s_i[lane] = a.idx;
    s_flags[lane] = (a.nan ? 1u : 0u) | (a.seen ? 2u : 0u);
    // barrier() orders execution only; memoryBarrierShared() keeps the compiler from carrying
    // shared values across it (common/group.glsl does the same)
    memoryBarrierShared();
    barrier();
    for (uint half_ = uint(TGL_WG_SIZE) / 2u; half_ > 0u; half_ >>= 1u) {
        if (lane < half_) {
            acc_t b;
            b.f = s_f[lane + half_];
            b.c = s_c[lane + half_];
            b.u = s_u[lane + half_];
            b.idx = s_i[lane + half_];
            b.nan = (s_flags[lane + half_] & 1u) != 0u;
            b.seen = (s_flags[lane + half_] & 2u) != 0u;
            acc_merge(a, b);
            s_f[lane] = a.f;
            s_c[lane] = a.c;
            s_u[lane] = a.u;
            s_i[lane] = a.idx;
            s_flags[lane] = (a.nan ? 1u : 0u) | (a.seen ? 2u : 0u);
        }
        memoryBarrierShared();
        barrier();
    }
    return a;
}

void main()
{
    uint i = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
    uint lane = gl_LocalInvocationID.x;
    if (i >= u_n)
        return; // a whole workgroup: uniform
    uint oi, oo;
    locate(u_start + i, oi, oo);
    acc_t a = group_line(oi, lane);
    TGL_PRECISE float t = s_f[0] - s_c[0]; // the group's: the branch is uniform
    if (u_op == OP_SUM || u_op == OP_MEAN) {
        if ((floatBitsToUint(t) & 0x7FFFFFFFu) >= 0x7F800000u) {
            s_u[lane] = line_magnitude(oi, lane, uint(TGL_WG_SIZE));
            memoryBarrierShared();
            barrier();
            for (uint half_ = uint(TGL_WG_SIZE) / 2u; half_ > 0u; half_ >>= 1u) {
                if (lane < half_)
                    s_u[lane] = max(s_u[lane], s_u[lane + half_]);
                memoryBarrierShared();
                barrier();
            }
            if (line_rescan(t, s_u[0])) { // uniform: s_u[0] is the group's
                memoryBarrierShared();
                barrier(); // every lane has read s_u[0] before group_line writes it
                a = group_line(oi, lane);
            }
        }
    }
    if (lane == 0u)
        store_out(oo, acc_result(a));
}

#else
void main()
{
    uint i = gl_GlobalInvocationID.x;
    if (i >= u_n)
        return;
    uint oi, oo;
    locate(u_start + i, oi, oo);
    acc_t a = acc_init();
    for (uint k = 0u; k < u_len; k++)
        acc_add(a, load_in(oi + k * u_step), k);
    float t = a.f - a.c;
    if ((u_op == OP_SUM || u_op == OP_MEAN) && (floatBitsToUint(t) & 0x7FFFFFFFu) >= 0x7F800000u &&
        line_rescan(t, line_magnitude(oi, 0u, 1u))) {
        a = acc_init();
        for (uint k = 0u; k < u_len; k++)
            acc_add(a, load_in(oi + k * u_step), k);
    }
    store_out(oo, acc_result(a));
}
#endif
