#version 430
// The passes of tgl_scatter and tgl_index_add (tgl__scatter in src/core/internal.h, which lays
// out the temporary words; src/cpu/cpu_scatter.c runs the same passes on the CPU, bit for bit).
// An invocation per element of a space of u_ndim dims of u_shape (row-major index u_start + i of
// the whole), of which the host binds a run whose windows fit: each operand's window starts at
// the run's bounding box, whose origin u_lo the coordinates are taken from (strides two's
// complement, sums wrapping to the right offset).
//   INIT, FINAL: the space is out's; out (binding 0) element <-> its u_words temp words (binding
//     1) at
//     u_temp_base + (index - u_t_lo) * u_words. FINAL writes out's element only where the
//     result's bits differ from it (an element nothing landed on keeps its bits).
//   FIRST, SECOND: the space is index's; the i32 index (binding 0) and src (binding 1) elements
//     (temp: binding 2)
//     at the coordinates; the element lands on out's row-major position dest (the coordinates,
//     the one along u_axis replaced by the index; u_row out's row-major strides), whose words,
//     where dest - u_t_lo < u_t_len (the temp window bound), it combines into with atomics that
//     commute: the order elements land in changes no bit of the result.
//   ATOMIC (ADD_UNORDERED of floats): the space is index's; no temp words: each element adds
//     its term to out's element (binding 2: the elements at span positions [u_t_lo, u_t_lo +
//     u_t_len) of out, u_temp_base of them before the first; position u_c_base + the coordinates
//     times out's strides u_c_stride) as it lands, in f32, rounded to DTYPE: f32 by the device's
//     float atomicAdd where it has GL_NV_shader_atomic_float (NVIDIA, llvmpipe), else, and for
//     the 16-bit dtypes, a compare-and-swap loop on the element's word. The order terms land in
//     is the device's, so the last bits may differ between runs.
// u_reduce is a tgl_scatter_reduce; DTYPE out's and src's tgl_dtype.
#extension GL_GOOGLE_include_directive : enable
#ifdef ATOMIC
#extension GL_NV_shader_atomic_float : enable
#endif
#include "common/locations.glsl"
#ifndef TGL_WG_SIZE
#define TGL_WG_SIZE 64
#endif
#include "common/index.glsl"
#include "common/local_size.glsl"
#include "common/convert.glsl"

// Standalone (the file as written, without the host's defines): f32's first pass.
#ifndef DTYPE
#define DTYPE 0
#endif
#if !defined(INIT) && !defined(FIRST) && !defined(SECOND) && !defined(FINAL) && !defined(ATOMIC)
#define FIRST
#endif
#if defined(ATOMIC) && DTYPE == 0 && defined(GL_NV_shader_atomic_float)
#define FLOAT_ATOMIC 1
#else
#define FLOAT_ATOMIC 0
#endif
#if DTYPE == 0 || DTYPE == 3
#define BYTES 4
#elif DTYPE == 4
#define BYTES 1
#else
#define BYTES 2
#endif
#define IS_FLOAT (DTYPE <= 2)
#define R_SET 0u
#define R_ADD 1u
#define R_MAX 2u
#define R_MIN 3u
// the flags word (internal.h's TGL__SCATTER_*)
#define F_NAN 1u
#define F_PINF 2u
#define F_NINF 4u
#define F_PZERO 8u

#define LOAD_4(arr, e) arr[e]
#define LOAD_2(arr, e) ((arr[(e) >> 1] >> (16u * ((e) & 1u))) & 0xFFFFu)
#define LOAD_1(arr, e) ((arr[(e) >> 2] >> (8u * ((e) & 3u))) & 0xFFu)
#if BYTES == 4
#define LOAD_DATA(arr, e) LOAD_4(arr, e)
#elif BYTES == 2
#define LOAD_DATA(arr, e) LOAD_2(arr, e)
#else
#define LOAD_DATA(arr, e) (LOAD_1(arr, e) != 0u ? 1u : 0u)
#endif

#if defined(INIT) || defined(FINAL)
layout(std430, binding = 0) buffer Out { uint y[]; };
layout(std430, binding = 1) buffer Temp { uint tw[]; };
#else
layout(std430, binding = 0) readonly buffer Index { uint ix[]; };
layout(std430, binding = 1) readonly buffer Src { uint sx[]; };
#if FLOAT_ATOMIC
layout(std430, binding = 2) buffer OutF { float yf[]; };
#elif defined(ATOMIC)
layout(std430, binding = 2) buffer Out { uint y[]; };
#else
layout(std430, binding = 2) buffer Temp { uint tw[]; };
#endif
#endif
layout(location = LOC_SCT_N) uniform uint u_n;
layout(location = LOC_SCT_START) uniform uint u_start;
layout(location = LOC_SCT_NDIM) uniform uint u_ndim;
layout(location = LOC_SCT_AXIS) uniform uint u_axis;
layout(location = LOC_SCT_REDUCE) uniform uint u_reduce;
layout(location = LOC_SCT_WORDS) uniform uint u_words;
layout(location = LOC_SCT_SHIFT) uniform uint u_shift;
layout(location = LOC_SCT_A_BASE) uniform uint u_a_base;
layout(location = LOC_SCT_B_BASE) uniform uint u_b_base;
layout(location = LOC_SCT_TEMP_BASE) uniform uint u_temp_base;
layout(location = LOC_SCT_T_LO) uniform uint u_t_lo;
layout(location = LOC_SCT_T_LEN) uniform uint u_t_len;
layout(location = LOC_SCT_SHAPE) uniform uint u_shape[8];
layout(location = LOC_SCT_LO) uniform uint u_lo[8];
layout(location = LOC_SCT_A_STRIDE) uniform uint u_a_stride[8];
layout(location = LOC_SCT_B_STRIDE) uniform uint u_b_stride[8];
layout(location = LOC_SCT_ROW) uniform uint u_row[8];
#ifdef ATOMIC
layout(location = LOC_SCT_C_BASE) uniform uint u_c_base;
layout(location = LOC_SCT_C_STRIDE) uniform uint u_c_stride[8];
#endif

#if IS_FLOAT
uint to_f32(uint x)
{
    return tgl_to_f32(x, uint(DTYPE));
}

uint from_f32(uint f)
{
#if DTYPE == 1
    return tgl_f32_to_f16(f);
#elif DTYPE == 2
    return tgl_f32_to_bf16(f);
#else
    return f;
#endif
}
#endif

// MAX and MIN's order key of x (DTYPE's bits): unsigned order is the value's. Floats: -0 below
// +0, NaN past every number (0xFFFFFFFF for MAX, 0 for MIN).
uint order_key(uint x)
{
#if DTYPE == 3
    return x ^ 0x80000000u;
#elif DTYPE == 4
    return x;
#else
    uint f = to_f32(x);
    if ((f & 0x7FFFFFFFu) > 0x7F800000u)
        return u_reduce == R_MAX ? 0xFFFFFFFFu : 0u;
    return (f >> 31) != 0u ? ~f : f | 0x80000000u;
#endif
}

uint from_key(uint k)
{
#if DTYPE == 3
    return k ^ 0x80000000u;
#elif DTYPE == 4
    return k;
#else
    uint f = k == 0u || k == 0xFFFFFFFFu ? 0x7FC00000u : ((k >> 31) != 0u ? k & 0x7FFFFFFFu : ~k);
    return from_f32(f);
#endif
}

#if IS_FLOAT
// ---- ADD of floats: 96-bit fixed point (x least significant) ----

// The flags and the biased exponent (0: none) a term of f32 bits f adds.
uvec2 term_class(uint f)
{
    uint a = f & 0x7FFFFFFFu;
    if (a > 0x7F800000u)
        return uvec2(F_NAN, 0u);
    if (a == 0x7F800000u)
        return uvec2((f >> 31) != 0u ? F_NINF : F_PINF, 0u);
    if (a == 0u)
        return uvec2((f >> 31) != 0u ? 0u : F_PZERO, 0u);
    return uvec2(0u, max(a >> 23, 1u));
}

uvec3 neg96(uvec3 t)
{
    uint c;
    t.x = uaddCarry(~t.x, 1u, c);
    t.y = uaddCarry(~t.y, c, c);
    t.z = ~t.z + c;
    return t;
}

// A finite term of f32 bits f as a multiple of 2^(emax - 150 - u_shift), toward zero.
uvec3 term_fixed(uint f, uint emax)
{
    uint a = f & 0x7FFFFFFFu, e = a >> 23;
    if (a == 0u)
        return uvec3(0u);
    uint m = (a & 0x7FFFFFu) | (e != 0u ? 0x800000u : 0u);
    int k = int(max(e, 1u)) - int(emax) + int(u_shift); // at most u_shift (71): m << k below 2^95
    uvec3 t = uvec3(0u);
    if (k < 0) {
        t.x = k > -24 ? m >> uint(-k) : 0u;
    } else {
        uint q = uint(k) >> 5, r = uint(k) & 31u;
        uint lo = m << r, hi = r != 0u ? m >> (32u - r) : 0u;
        t = q == 0u ? uvec3(lo, hi, 0u) : (q == 1u ? uvec3(0u, lo, hi) : uvec3(0u, 0u, lo));
    }
    return (f >> 31) != 0u ? neg96(t) : t;
}

uvec3 add96(uvec3 a, uvec3 b)
{
    uint c0, c1, c2;
    a.x = uaddCarry(a.x, b.x, c0);
    a.y = uaddCarry(a.y, b.y, c1);
    a.y = uaddCarry(a.y, c0, c2);
    a.z += b.z + c1 + c2;
    return a;
}

// Bits [0, n) of m as one flag: any set (n <= 96).
bool any_below(uvec3 m, uint n)
{
    uvec3 lim = uvec3(clamp(ivec3(int(n)) - ivec3(0, 32, 64), ivec3(0), ivec3(32)));
    uvec3 mask = uvec3(lim.x >= 32u ? 0xFFFFFFFFu : (1u << lim.x) - 1u, lim.y >= 32u ? 0xFFFFFFFFu : (1u << lim.y) - 1u,
                       lim.z >= 32u ? 0xFFFFFFFFu : (1u << lim.z) - 1u);
    return (m & mask) != uvec3(0u);
}

uint word96(uvec3 m, uint w)
{
    return w == 0u ? m.x : (w == 1u ? m.y : (w == 2u ? m.z : 0u));
}

// The sum (emax, flags, acc: the words) plus out's own term (f32 bits self), rounded once to
// DTYPE's bits, nearest even.
uint round_sum(uint emax, uint flags, uvec3 acc, uint self)
{
    if ((flags & F_NAN) != 0u || (flags & (F_PINF | F_NINF)) == (F_PINF | F_NINF))
        return from_f32(0x7FC00000u);
    if ((flags & (F_PINF | F_NINF)) != 0u)
        return from_f32((flags & F_PINF) != 0u ? 0x7F800000u : 0xFF800000u);
    uvec3 m = add96(acc, term_fixed(self, emax));
    uint sign = m.z >> 31;
    if (sign != 0u)
        m = neg96(m);
    if (m == uvec3(0u)) // an exact cancellation is +0; zeros alone -0 unless a +0 landed
        return emax != 0u || (flags & F_PZERO) != 0u ? 0u : from_f32(0x80000000u);
#if DTYPE == 0
    const int t_bits = 23, lsb_min = -149;
    const uint inf = 0x7F800000u, sign_at = 31u;
#elif DTYPE == 1
    const int t_bits = 10, lsb_min = -24;
    const uint inf = 0x7C00u, sign_at = 15u;
#else
    const int t_bits = 7, lsb_min = -133;
    const uint inf = 0x7F80u, sign_at = 15u;
#endif
    int h = m.z != 0u ? 64 + findMSB(m.z) : (m.y != 0u ? 32 + findMSB(m.y) : findMSB(m.x));
    int p = int(emax) - 150 - int(u_shift); // the exponent of the fixed point's unit
    int q = max(h + p - t_bits, lsb_min);  // the result's lowest bit
    int r = q - p;                          // bits dropped
    uint keep;
    if (r <= 0) {
        keep = m.x << uint(-r); // m below 2^(t_bits + 1): exact
    } else {
        uint s = uint(r), qw = s >> 5, rb = s & 31u;
        keep = word96(m, qw) >> rb;
        if (rb != 0u)
            keep |= word96(m, qw + 1u) << (32u - rb);
        bool guard = ((word96(m, (s - 1u) >> 5) >> ((s - 1u) & 31u)) & 1u) != 0u;
        keep += guard && (any_below(m, s - 1u) || (keep & 1u) != 0u) ? 1u : 0u;
    }
    uint bits = (uint(q - lsb_min) << uint(t_bits)) + keep;
    return min(bits, inf) | (sign << sign_at);
}
#endif

void main()
{
    uint i = tgl_global_index();
    if (i >= u_n)
        return;
    uint g = u_start + i;
    // the operands' offsets from the coordinates, innermost dim first
    uint rest = g, a = u_a_base, b = u_b_base, dest = 0u;
    for (int d = int(u_ndim) - 1; d >= 0; d--) {
        uint c = rest % u_shape[d];
        rest /= u_shape[d];
        a += (c - u_lo[d]) * u_a_stride[d];
        b += (c - u_lo[d]) * u_b_stride[d];
#ifdef ATOMIC
        dest += uint(d) != u_axis ? c * u_c_stride[d] : 0u; // out's span position, wrapping
#else
        dest += uint(d) != u_axis ? c * u_row[d] : 0u;
#endif
    }
#if defined(ATOMIC)
    uint local = u_c_base + dest + ix[a] * u_c_stride[u_axis] - u_t_lo; // (index checked)
    if (local >= u_t_len)
        return;
    uint e = u_temp_base + local; // the element in the binding
    uint x = LOAD_DATA(sx, b);
#if FLOAT_ATOMIC
    atomicAdd(yf[e], uintBitsToFloat(x));
#elif IS_FLOAT
    float t = uintBitsToFloat(to_f32(x));
#if BYTES == 4
    uint old = y[e];
    for (;;) { // (a lost race means another term landed: at most as many trips as terms)
        uint seen = atomicCompSwap(y[e], old, floatBitsToUint(uintBitsToFloat(old) + t));
        if (seen == old)
            break;
        old = seen;
    }
#else
    uint w = e >> 1, shift = 16u * (e & 1u), mask = 0xFFFFu << shift;
    uint old = y[w];
    for (;;) {
        uint sum = from_f32(floatBitsToUint(uintBitsToFloat(to_f32((old >> shift) & 0xFFFFu)) + t));
        uint seen = atomicCompSwap(y[w], old, (old & ~mask) | (sum << shift));
        if (seen == old)
            break;
        old = seen;
    }
#endif
#endif
#elif defined(INIT) || defined(FINAL)
    uint at = u_temp_base + (g - u_t_lo) * u_words;
    uint x = LOAD_DATA(y, a);
#ifdef INIT
    if (u_reduce == R_SET) {
        tw[at] = 0u;
        tw[at + 1u] = 0u;
    } else if (IS_FLOAT && u_reduce == R_ADD) {
#if IS_FLOAT
        uvec2 c = term_class(to_f32(x));
        tw[at] = c.y;
        tw[at + 1u] = c.x;
        tw[at + 2u] = 0u;
        tw[at + 3u] = 0u;
        tw[at + 4u] = 0u;
#endif
    } else {
        tw[at] = u_reduce == R_ADD ? x : order_key(x);
    }
#else
    uint r = x;
    if (u_reduce == R_SET) {
        r = tw[at] != 0u ? tw[at + 1u] : x;
    } else if (IS_FLOAT && u_reduce == R_ADD) {
#if IS_FLOAT
        uint f = to_f32(x);
        if ((f & 0x7FFFFFFFu) <= 0x7F800000u) // out's NaN stays as it is
            r = round_sum(tw[at], tw[at + 1u], uvec3(tw[at + 2u], tw[at + 3u], tw[at + 4u]), f);
#endif
    } else if (u_reduce == R_ADD) { // i32 (wrapped), bool (or)
        r = tw[at];
    } else {
        r = tw[at] == order_key(x) ? x : from_key(tw[at]);
    }
    if (r == x) // (a bool's byte other than 0 and 1 is true, and stays as it is)
        return;
#if BYTES == 4
    y[a] = r;
#else
    const uint per = uint(4 / BYTES), mask = (1u << uint(8 * BYTES)) - 1u;
    uint shift = uint(8 * BYTES) * (a % per);
    atomicAnd(y[a / per], ~(mask << shift));
    atomicOr(y[a / per], r << shift);
#endif
#endif
#else
    dest += ix[a] * u_row[u_axis]; // (checked: inside out's extent)
    uint local = dest - u_t_lo;
    if (local >= u_t_len)
        return;
    uint at = u_temp_base + local * u_words;
    uint x = LOAD_DATA(sx, b);
#ifdef FIRST
    if (u_reduce == R_SET) {
        atomicMax(tw[at], g + 1u);
    } else if (IS_FLOAT && u_reduce == R_ADD) {
#if IS_FLOAT
        uvec2 c = term_class(to_f32(x));
        if (c.x != 0u)
            atomicOr(tw[at + 1u], c.x);
        if (c.y > tw[at]) // (a stale read is below the word: the atomic decides)
            atomicMax(tw[at], c.y);
#endif
    } else if (DTYPE == 3 && u_reduce == R_ADD) {
        atomicAdd(tw[at], x);
    } else if (u_reduce == R_MIN) {
        uint k = order_key(x);
        if (k < tw[at])
            atomicMin(tw[at], k);
    } else { // MAX, and bool ADD (or)
        uint k = order_key(x);
        if (k > tw[at])
            atomicMax(tw[at], k);
    }
#else // SECOND: SET's value, float ADD's sum
    if (u_reduce == R_SET) {
        if (tw[at] == g + 1u)
            tw[at + 1u] = x;
    } else {
#if IS_FLOAT
        uint f = to_f32(x);
        if (term_class(f).y == 0u) // NaN, infinities and zeros add nothing here
            return;
        uvec3 v = term_fixed(f, tw[at]);
        uint c0 = 0u, c1 = 0u, c2 = 0u;
        if (v.x != 0u) {
            uint old = atomicAdd(tw[at + 2u], v.x);
            uaddCarry(old, v.x, c0);
        }
        uint mid = uaddCarry(v.y, c0, c1);
        if (mid != 0u) {
            uint old = atomicAdd(tw[at + 3u], mid);
            uaddCarry(old, mid, c2);
        }
        uint top = v.z + c1 + c2;
        if (top != 0u)
            atomicAdd(tw[at + 4u], top);
#endif
    }
#endif
#endif
}
