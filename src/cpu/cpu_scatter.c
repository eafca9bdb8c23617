/* CPU tgl_scatter (tgl__scatter): the passes of the GL kernel (glsl/tensor/scatter.comp) over
 * the same temporary words (their layout: internal.h), run in order on one thread. Their
 * combining ops commute, so the result is the kernel's bit for bit. */
#include "cpu_convert.h"
#include "cpu_half.h"
#include "cpu_ops.h"

#include <string.h>

/* An element's bits (low bytes; bool as 0 or 1). */
static uint32_t load_bits(tgl_dtype dt, const uint8_t *p)
{
    uint32_t x = 0;
    memcpy(&x, p, tgl_dtype_size(dt));
    return dt == TGL_DTYPE_BOOL ? x != 0 : x;
}

static void store_bits(tgl_dtype dt, uint32_t x, uint8_t *p)
{
    memcpy(p, &x, tgl_dtype_size(dt)); /* little-endian: the element in the low bytes */
}

static int is_float(tgl_dtype dt)
{
    return dt == TGL_DTYPE_F32 || dt == TGL_DTYPE_F16 || dt == TGL_DTYPE_BF16;
}

static uint32_t to_f32(tgl_dtype dt, uint32_t x)
{
    return dt == TGL_DTYPE_F16 ? tgl_f16_to_f32_bits((uint16_t)x) : dt == TGL_DTYPE_BF16 ? x << 16 : x;
}

static uint32_t from_f32(tgl_dtype dt, uint32_t f)
{
    return dt == TGL_DTYPE_F16 ? tgl_f32_to_f16_bits(f) : dt == TGL_DTYPE_BF16 ? tgl_f32_to_bf16_bits(f) : f;
}

/* MAX and MIN's order key of x (dt's bits): unsigned order is the value's. Floats: -0 below +0,
 * NaN past every number (0xFFFFFFFF for MAX, 0 for MIN). */
static uint32_t order_key(tgl_dtype dt, tgl_scatter_reduce r, uint32_t x)
{
    if (dt == TGL_DTYPE_I32)
        return x ^ 0x80000000u;
    if (dt == TGL_DTYPE_BOOL)
        return x;
    uint32_t f = to_f32(dt, x);
    if ((f & 0x7FFFFFFFu) > 0x7F800000u)
        return r == TGL_SCATTER_MAX ? 0xFFFFFFFFu : 0u;
    return f >> 31 ? ~f : f | 0x80000000u;
}

static uint32_t from_key(tgl_dtype dt, uint32_t k)
{
    if (dt == TGL_DTYPE_I32)
        return k ^ 0x80000000u;
    if (dt == TGL_DTYPE_BOOL)
        return k;
    uint32_t f = k == 0u || k == 0xFFFFFFFFu ? 0x7FC00000u : k >> 31 ? k & 0x7FFFFFFFu : ~k;
    return from_f32(dt, f);
}

/* ---- ADD of floats: 96-bit fixed point (three u32s, least significant first) ---- */

/* The flags and the biased exponent (0: none) a term of f32 bits f adds. */
static void term_class(uint32_t f, uint32_t *flags, uint32_t *exponent)
{
    uint32_t a = f & 0x7FFFFFFFu;
    *exponent = 0;
    *flags = 0;
    if (a > 0x7F800000u)
        *flags = TGL__SCATTER_NAN;
    else if (a == 0x7F800000u)
        *flags = f >> 31 ? TGL__SCATTER_NINF : TGL__SCATTER_PINF;
    else if (a == 0)
        *flags = f >> 31 ? 0u : TGL__SCATTER_PZERO;
    else
        *exponent = (a >> 23) ? (a >> 23) : 1u;
}

/* A finite term of f32 bits f as a multiple of 2^(emax - 150 - shift), toward zero. */
static void term_fixed(uint32_t f, uint32_t emax, unsigned shift, uint32_t t[3])
{
    uint32_t a = f & 0x7FFFFFFFu, e = a >> 23, m = a & 0x7FFFFFu;
    t[0] = t[1] = t[2] = 0;
    if (a == 0)
        return;
    m = e ? m | 0x800000u : m;
    int k = (int)(e ? e : 1u) - (int)emax + (int)shift; /* at most shift (71): m << k below 2^95 */
    if (k < 0) {
        if (k > -24)
            t[0] = m >> -k;
    } else {
        unsigned q = (unsigned)k / 32u, r = (unsigned)k % 32u;
        t[q] = m << r;
        if (r && q < 2)
            t[q + 1] = m >> (32u - r);
    }
    if (f >> 31) { /* two's complement */
        uint32_t c = 1;
        for (int w = 0; w < 3; w++) {
            t[w] = ~t[w] + c;
            c = c && t[w] == 0;
        }
    }
}

static void add96(uint32_t acc[3], const uint32_t t[3])
{
    uint32_t c = 0;
    for (int w = 0; w < 3; w++) {
        uint32_t old = acc[w];
        acc[w] = old + t[w] + c;
        c = acc[w] < old || (c && acc[w] == old);
    }
}

/* Bit i of m. */
static uint32_t bit96(const uint32_t m[3], unsigned i)
{
    return (m[i / 32] >> (i % 32)) & 1u;
}

/* The sum (words [0] emax, [1] flags, [2..4] the terms', fixed point) plus out's own term (f32
 * bits self) rounded once to dtype dt's bits (nearest even). */
static uint32_t round_sum(tgl_dtype dt, const uint32_t *w, unsigned shift, uint32_t self)
{
    uint32_t flags = w[1], emax = w[0];
    if ((flags & TGL__SCATTER_NAN) || ((flags & TGL__SCATTER_PINF) && (flags & TGL__SCATTER_NINF)))
        return from_f32(dt, 0x7FC00000u);
    if (flags & (TGL__SCATTER_PINF | TGL__SCATTER_NINF))
        return from_f32(dt, flags & TGL__SCATTER_PINF ? 0x7F800000u : 0xFF800000u);
    uint32_t m[3] = {w[2], w[3], w[4]}, t[3];
    term_fixed(self, emax, shift, t);
    add96(m, t);
    uint32_t sign = m[2] >> 31;
    if (sign) {
        uint32_t c = 1;
        for (int k = 0; k < 3; k++) {
            m[k] = ~m[k] + c;
            c = c && m[k] == 0;
        }
    }
    if (!(m[0] | m[1] | m[2])) /* an exact cancellation is +0; zeros alone -0 unless a +0 landed */
        return emax || (flags & TGL__SCATTER_PZERO) ? 0u : from_f32(dt, 0x80000000u);
    /* the format: t_bits kept below the leading one, lsb_min the exponent of the smallest
     * subnormal, inf its infinity's bits */
    int t_bits = dt == TGL_DTYPE_F32 ? 23 : dt == TGL_DTYPE_F16 ? 10 : 7;
    int lsb_min = dt == TGL_DTYPE_F32 ? -149 : dt == TGL_DTYPE_F16 ? -24 : -133;
    uint32_t inf = dt == TGL_DTYPE_F32 ? 0x7F800000u : dt == TGL_DTYPE_F16 ? 0x7C00u : 0x7F80u;
    int h = 95;
    while (!bit96(m, (unsigned)h))
        h--;
    int p = (int)emax - 150 - (int)shift; /* the exponent of the fixed point's unit */
    int q = h + p - t_bits > lsb_min ? h + p - t_bits : lsb_min; /* the result's lowest bit */
    int r = q - p; /* bits dropped */
    uint32_t keep;
    if (r <= 0) {
        keep = m[0] << -r; /* m below 2^(t_bits + 1): exact */
    } else {
        unsigned s = (unsigned)r, qw = s / 32u, rb = s % 32u;
        keep = m[qw] >> rb;
        if (rb && qw < 2)
            keep |= m[qw + 1] << (32u - rb);
        uint32_t guard = bit96(m, s - 1u), sticky = 0;
        for (unsigned i = 0; i + 1u < s && !sticky; i++)
            sticky = bit96(m, i);
        keep += guard && (sticky || (keep & 1u));
    }
    uint32_t bits = ((uint32_t)(q - lsb_min) << t_bits) + keep;
    bits = bits > inf ? inf : bits;
    return bits | (sign << (dt == TGL_DTYPE_F32 ? 31 : 15));
}

/* ---- the passes ---- */

typedef struct walk {
    size_t idx[TGL_MAX_DIMS];
    int64_t at[2];
} walk;

/* The odometer's next element over shape, two views' offsets kept. */
static void step(walk *w, size_t ndim, const size_t *shape, const int64_t *s0, const int64_t *s1)
{
    for (size_t d = ndim; d-- > 0;) {
        w->at[0] += s0[d];
        w->at[1] += s1[d];
        if (++w->idx[d] < shape[d])
            return;
        w->at[0] -= s0[d] * (int64_t)shape[d];
        w->at[1] -= s1[d] * (int64_t)shape[d];
        w->idx[d] = 0;
    }
}

/* Out's element at its row-major position of out, from temp's words: INIT (write = 0) or FINAL. */
static void init_or_final(const tgl__scatter *s, uint8_t *out, uint32_t *temp, int final)
{
    tgl_dtype dt = s->out.dtype;
    size_t es = tgl_dtype_size(dt);
    int fl = is_float(dt);
    walk w = {.at = {(int64_t)s->out.base, 0}};
    for (size_t i = 0; i < s->out_n; i++) {
        uint8_t *o = out + w.at[0] * (int64_t)es;
        uint32_t *t = temp + i * s->words, x = load_bits(dt, o), y;
        if (!final) {
            if (s->reduce == TGL_SCATTER_SET) {
                t[0] = t[1] = 0;
            } else if (s->reduce == TGL_SCATTER_ADD && fl) {
                term_class(to_f32(dt, x), &t[1], &t[0]);
                t[2] = t[3] = t[4] = 0;
            } else if (s->reduce == TGL_SCATTER_ADD) {
                t[0] = x;
            } else {
                t[0] = order_key(dt, s->reduce, x);
            }
        } else {
            if (s->reduce == TGL_SCATTER_SET)
                y = t[0] ? t[1] : x;
            else if (s->reduce == TGL_SCATTER_ADD && fl)
                y = (to_f32(dt, x) & 0x7FFFFFFFu) > 0x7F800000u ? x : round_sum(dt, t, s->shift, to_f32(dt, x));
            else if (s->reduce == TGL_SCATTER_ADD) /* i32 (wrapped), bool (or) */
                y = t[0];
            else
                y = t[0] == order_key(dt, s->reduce, x) ? x : from_key(dt, t[0]);
            if (y != x) /* (a bool's byte other than 0 and 1 is true, and stays as it is) */
                store_bits(dt, y, o);
        }
        step(&w, s->ndim, s->out_shape, s->out.strides, s->out.strides);
    }
}

/* The passes over the index space: pass 0 (the first) and pass 1 (SET and float ADD's second). */
static void land(const tgl__scatter *s, const uint8_t *src, const int32_t *index, uint32_t *temp, int pass)
{
    tgl_dtype dt = s->src.dtype;
    size_t es = tgl_dtype_size(dt);
    int fl = is_float(dt);
    size_t row[TGL_MAX_DIMS] = {0}; /* out's row-major strides */
    for (size_t d = s->ndim, r = 1; d-- > 0; r *= s->out_shape[d])
        row[d] = r;
    walk w = {.at = {(int64_t)s->index.base, (int64_t)s->src.base}};
    for (size_t i = 0; i < s->n; i++) {
        size_t dest = 0;
        for (size_t d = 0; d < s->ndim; d++)
            dest += (d == s->axis ? (size_t)index[w.at[0]] : w.idx[d]) * row[d];
        uint32_t *t = temp + dest * s->words, x = load_bits(dt, src + w.at[1] * (int64_t)es);
        if (s->reduce == TGL_SCATTER_SET) {
            if (pass == 0)
                t[0] = (uint32_t)i + 1u > t[0] ? (uint32_t)i + 1u : t[0];
            else if (t[0] == (uint32_t)i + 1u)
                t[1] = x;
        } else if (s->reduce == TGL_SCATTER_ADD && fl) {
            uint32_t f = to_f32(dt, x), flags, e;
            term_class(f, &flags, &e);
            if (pass == 0) {
                t[1] |= flags;
                t[0] = e > t[0] ? e : t[0];
            } else if (e) {
                uint32_t v[3];
                term_fixed(f, t[0], s->shift, v);
                add96(t + 2, v);
            }
        } else if (s->reduce == TGL_SCATTER_ADD && dt == TGL_DTYPE_I32) {
            t[0] += x;
        } else {
            /* bool ADD and MAX are or (the larger key), MIN and (the smaller) */
            uint32_t k = order_key(dt, s->reduce, x);
            int min = s->reduce == TGL_SCATTER_MIN;
            t[0] = (min ? k < t[0] : k > t[0]) ? k : t[0];
        }
        step(&w, s->ndim, s->shape, s->index.strides, s->src.strides);
    }
}

/* ADD_UNORDERED of floats: each term added to out's element as it lands, in f32 and rounded to
 * out's dtype, in index's row-major order (GL's atomics take the order they come in). */
static void add_unordered(const tgl__scatter *s, uint8_t *out, const uint8_t *src, const int32_t *index)
{
    tgl_dtype dt = s->src.dtype;
    size_t es = tgl_dtype_size(dt);
    walk w = {.at = {(int64_t)s->index.base, (int64_t)s->src.base}};
    for (size_t i = 0; i < s->n; i++) {
        int64_t at = (int64_t)s->out.base;
        for (size_t d = 0; d < s->ndim; d++)
            at += (int64_t)(d == s->axis ? (size_t)index[w.at[0]] : w.idx[d]) * s->out.strides[d];
        uint8_t *o = out + at * (int64_t)es;
        float sum = tgl_cpu_bits_f32(to_f32(dt, load_bits(dt, o))) +
                    tgl_cpu_bits_f32(to_f32(dt, load_bits(dt, src + w.at[1] * (int64_t)es)));
        store_bits(dt, from_f32(dt, tgl_cpu_f32_bits(sum)), o);
        step(&w, s->ndim, s->shape, s->index.strides, s->src.strides);
    }
}

tgl_status tgl_cpu_scatter(tgl_backend *b, const tgl__tew *check, const tgl__scatter *s, uint64_t *bad_pos,
                           int32_t *bad_value)
{
    tgl_status st = tgl_cpu_index_check(b, check, bad_pos, bad_value);
    if (st || *bad_pos != UINT64_MAX)
        return st;
    uint8_t *out = (uint8_t *)tgl_cpu_at(s->out.view);
    const uint8_t *src = (const uint8_t *)tgl_cpu_at(s->src.view);
    const int32_t *index = (const int32_t *)tgl_cpu_at(s->index.view);
    uint32_t *temp = (uint32_t *)tgl_cpu_at(s->temp);
    if (!out || !src || !index || (s->words && !temp))
        return tgl__fail(b, TGL_ERR_INTERNAL, "tgl_scatter: an operand has no buffer");
    if (s->reduce == TGL_SCATTER_ADD_UNORDERED) {
        add_unordered(s, out, src, index);
        return TGL_OK;
    }
    int two = s->reduce == TGL_SCATTER_SET || (s->reduce == TGL_SCATTER_ADD && is_float(s->out.dtype));
    init_or_final(s, out, temp, 0);
    land(s, src, index, temp, 0);
    if (two)
        land(s, src, index, temp, 1);
    init_or_final(s, out, temp, 1);
    return TGL_OK;
}
