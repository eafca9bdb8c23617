/* tgl_scatter and tgl_index_add on both backends against a host reference that walks the index
 * space by the ops' definitions, over out's whole allocation image (gaps included: nothing
 * outside out's elements may change): the backends agree bit for bit on every call; SET, MAX,
 * MIN and the integer ADDs equal the reference bit for bit; float ADD equals the exact sum (a
 * wide integer of 2^-149 units, independent of the library's fixed point) rounded once to out's
 * dtype, or, where a term has bits below the library's documented cutoff, lies within one unit
 * in the last place of it; ADD_UNORDERED of floats lies within its running sum's documented bound
 * of the exact sum on each backend. Random calls of 1-4 dims (extents 1, primes, 2^k +- 1, past a
 * workgroup; permuted, reversed and gapped strides; broadcast index views; every dtype and
 * reduce; edge-value pools with signed zeros, NaN, infinities, subnormals; indices crowding onto
 * a few places), PyTorch's outputs for small cases, a shrunk SSBO limit, temp windows cut by the
 * profile, indices out of range (nothing written) and the refusals. */
#include "testing.h"
#include "tensors.h"
#include "cpu/cpu_convert.h"
#include "cpu/cpu_half.h"
#include "gl/gl_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef tgt_pair pair;

static int setup(void **state)
{
    return tgt_pair_setup(state, 0x5ca77e);
}

static int teardown(void **state)
{
    return tgt_pair_teardown(state);
}

/* One call: each operand an offset into its own allocation. index_add: index is 1-D. */
typedef struct call {
    int index_add;
    tgl_scatter_reduce reduce;
    size_t axis;
    tgl_tensor out, index, src;
    size_t out_bytes, index_bytes, src_bytes;
    uint8_t *out_init, *index_init, *src_init;
} call;

static tgl_status run_on(tgl_backend *b, const call *c, uint8_t *got)
{
    tgl_ptr o, x, s;
    TGT_OK(b, tgl_alloc(b, c->out_bytes, &o));
    TGT_OK(b, tgl_alloc(b, c->index_bytes, &x));
    TGT_OK(b, tgl_alloc(b, c->src_bytes, &s));
    TGT_OK(b, tgl_copy_htod(b, o, c->out_init, c->out_bytes));
    TGT_OK(b, tgl_copy_htod(b, x, c->index_init, c->index_bytes));
    TGT_OK(b, tgl_copy_htod(b, s, c->src_init, c->src_bytes));
    tgl_tensor out = c->out, index = c->index, src = c->src;
    out.data += o;
    index.data += x;
    src.data += s;
    tgl_status st = c->index_add ? tgl_index_add(b, &src, c->axis, &index, &out)
                                 : tgl_scatter(b, &src, c->axis, &index, &out, c->reduce);
    TGT_OK(b, tgl_copy_dtoh(b, got, o, c->out_bytes));
    tgl_ptr ps[3] = {o, x, s};
    for (int i = 0; i < 3; i++)
        TGT_OK(b, tgl_free(b, ps[i]));
    return st;
}

/* The byte offset of t's element at idx (t's own ndim). */
static int64_t byte_at(const tgl_tensor *t, const size_t *idx)
{
    size_t es = tgl_dtype_size(t->dtype);
    int64_t at = (int64_t)(t->data / es);
    for (size_t d = 0; d < t->ndim; d++)
        at += (int64_t)idx[d] * t->strides[d];
    return at * (int64_t)es;
}

static uint32_t load(tgl_dtype dt, const uint8_t *p)
{
    uint32_t x = 0;
    memcpy(&x, p, tgl_dtype_size(dt));
    return x;
}

static uint32_t f32_of(tgl_dtype dt, uint32_t x)
{
    return dt == TGL_DTYPE_F16 ? tgl_f16_to_f32_bits((uint16_t)x) : dt == TGL_DTYPE_BF16 ? x << 16 : x;
}

static int is_float(tgl_dtype dt)
{
    return dt == TGL_DTYPE_F32 || dt == TGL_DTYPE_F16 || dt == TGL_DTYPE_BF16;
}

/* ---- the exact sum: a wide integer of 2^-149 units, 32-bit chunks in int64 ---- */
#define CHUNKS 12 /* 384 bits: past 2^128 * 2^32 terms over 2^-149 */
typedef struct exact {
    int64_t c[CHUNKS];
    int nan, pinf, ninf, pzero, nonzero;
    int emax, emin; /* the largest and smallest biased exponents of the finite non-zero terms */
} exact;

static void exact_add(exact *e, uint32_t f)
{
    uint32_t a = f & 0x7FFFFFFFu, ex = a >> 23;
    if (a > 0x7F800000u) {
        e->nan = 1;
        return;
    }
    if (a == 0x7F800000u) {
        *(f >> 31 ? &e->ninf : &e->pinf) = 1;
        return;
    }
    if (a == 0) {
        e->pzero |= !(f >> 31);
        return;
    }
    uint64_t m = (a & 0x7FFFFFu) | (ex ? 0x800000u : 0u);
    int be = ex ? (int)ex : 1;
    e->nonzero = 1;
    e->emax = be > e->emax ? be : e->emax;
    e->emin = be < e->emin ? be : e->emin;
    unsigned shift = (unsigned)(be - 1); /* the unit is 2^-149 = 2^(1 - 150) */
    uint64_t lo = (m << (shift % 32u)) & 0xFFFFFFFFu, hi = (m << (shift % 32u)) >> 32;
    int64_t sign = f >> 31 ? -1 : 1;
    e->c[shift / 32u] += sign * (int64_t)lo;
    e->c[shift / 32u + 1] += sign * (int64_t)hi;
}

/* The exact sum rounded once (nearest even) to dt's bits. */
static uint32_t exact_round(exact *e, tgl_dtype dt)
{
    uint32_t nan = dt == TGL_DTYPE_F32 ? 0x7FC00000u : dt == TGL_DTYPE_F16 ? 0x7E00u : 0x7FC0u;
    uint32_t inf = dt == TGL_DTYPE_F32 ? 0x7F800000u : dt == TGL_DTYPE_F16 ? 0x7C00u : 0x7F80u;
    uint32_t sign_bit = dt == TGL_DTYPE_F32 ? 0x80000000u : 0x8000u;
    if (e->nan || (e->pinf && e->ninf))
        return nan;
    if (e->pinf || e->ninf)
        return e->pinf ? inf : inf | sign_bit;
    /* carry-normalize into 32-bit chunks with the sign in the top one */
    for (int k = 0; k + 1 < CHUNKS; k++) {
        int64_t carry = e->c[k] >> 32; /* arithmetic: floor */
        e->c[k] -= carry * ((int64_t)1 << 32);
        e->c[k + 1] += carry;
    }
    int neg = e->c[CHUNKS - 1] < 0;
    uint32_t mag[CHUNKS];
    uint64_t borrow = 0;
    for (int k = 0; k < CHUNKS; k++) { /* |sum| */
        uint64_t v = (uint64_t)e->c[k] & 0xFFFFFFFFu;
        if (neg) {
            v = (uint64_t)(~(uint32_t)v) + (k == 0 ? 1u : 0u) + borrow;
            borrow = v >> 32;
        }
        mag[k] = (uint32_t)v;
    }
    int h = -1;
    for (int bit = 32 * CHUNKS - 1; bit >= 0 && h < 0; bit--)
        if ((mag[bit / 32] >> (bit % 32)) & 1u)
            h = bit;
    if (h < 0)
        return e->nonzero || e->pzero ? 0u : sign_bit;
    /* bits of value 2^(h - 149); keep p bits: the result's lowest is 2^(q - 149) */
    int p = dt == TGL_DTYPE_F32 ? 24 : dt == TGL_DTYPE_F16 ? 11 : 8;
    int min_q = dt == TGL_DTYPE_F32 ? 0 : dt == TGL_DTYPE_F16 ? 125 : 16; /* smallest subnormal */
    int q = h - p + 1 > min_q ? h - p + 1 : min_q;
    uint64_t keep = 0;
    for (int bit = h; bit >= q; bit--)
        keep = keep << 1 | ((mag[bit / 32] >> (bit % 32)) & 1u);
    int guard = q > 0 && ((mag[(q - 1) / 32] >> ((q - 1) % 32)) & 1u), sticky = 0;
    for (int bit = q - 2; bit >= 0 && !sticky; bit--)
        sticky = (mag[bit / 32] >> (bit % 32)) & 1u;
    keep += guard && (sticky || (keep & 1u));
    /* value = keep * 2^(q - 149): as bits, (q - min_q) << (p - 1) plus keep (the leading one
     * adds the exponent's last step, a carry to 2^p the next) */
    uint64_t bits = ((uint64_t)(q - min_q) << (p - 1)) + keep;
    return (uint32_t)(bits >= inf ? inf : bits) | (neg ? sign_bit : 0u);
}

/* The exact sum's value, near enough (long double from the top chunk down). */
static double exact_value(const exact *e)
{
    long double v = 0;
    for (int k = CHUNKS; k-- > 0;)
        v = v * 4294967296.0L + (long double)e->c[k];
    return (double)ldexpl(v, -149);
}

static double value_of(tgl_dtype dt, uint32_t bits)
{
    return (double)tgl_cpu_bits_f32(f32_of(dt, bits));
}

/* Whether got, a finite value of dt, lies within `bound` of `want` give or take one unit in
 * the last place of got (its rounding). */
static int within(uint32_t got, double want, double bound, tgl_dtype dt)
{
    uint32_t sign = dt == TGL_DTYPE_F32 ? 0x80000000u : 0x8000u, mag = got & ~sign;
    double g = value_of(dt, got), ulp = value_of(dt, mag + 1u) - value_of(dt, mag);
    return isfinite(g) && fabs(g - want) <= bound + ulp;
}

typedef struct place {
    uint32_t bits;  /* MAX/MIN/SET/int ADD: the running result */
    int touched;
    exact sum;
    double mag; /* ADD_UNORDERED: the sum of the finite terms' magnitudes (out's own included) */
    size_t terms;
} place;

/* What an ADD_UNORDERED float element may hold (its running sum's documented bound): set per
 * byte of out at an element's first, `on` where the element is one. */
typedef struct loose {
    int on, nan;      /* nan: only a NaN */
    uint32_t inf;     /* an infinity of the terms (its bits; 0: none) */
    int may_overflow; /* a partial sum may round to an infinity (or, with inf, to NaN) */
    double exact, bound;
} loose;

/* The running sum's bound, g S + m * 2^-126 (tensorgl.h), vacuous where (m - 1) u reaches 1. */
static double unordered_bound(tgl_dtype dt, double mag, size_t m)
{
    double u = dt == TGL_DTYPE_F32 ? 0x1p-24 : (dt == TGL_DTYPE_F16 ? 0x1p-11 : 0x1p-8) + 0x1p-24;
    double k = (double)(m - 1) * u;
    return k >= 1.0 ? INFINITY : k / (1.0 - k) * mag + (double)m * 0x1p-126;
}

/* Whether got (dt's bits) is what lz allows. */
static int loose_ok(tgl_dtype dt, uint32_t got, uint32_t want, const loose *lz)
{
    uint32_t f = f32_of(dt, got), a = f & 0x7FFFFFFFu;
    if (a > 0x7F800000u)
        return lz->nan || (lz->inf && lz->may_overflow);
    if (lz->nan)
        return 0;
    if (a == 0x7F800000u)
        return lz->inf ? f32_of(dt, lz->inf) == f || lz->may_overflow : lz->may_overflow;
    if (lz->inf)
        return 0;
    if (lz->bound == 0) /* every term a zero: the sign rule decides */
        return got == want;
    return within(got, lz->exact, lz->bound, dt);
}

/* max/min of two dt values by the op's order: -0 below +0, NaN wins. */
static uint32_t pick(tgl_dtype dt, int max, uint32_t a, uint32_t b)
{
    if (dt == TGL_DTYPE_I32)
        return max == ((int32_t)b > (int32_t)a) ? b : a;
    if (dt == TGL_DTYPE_BOOL)
        return max ? (a | b) != 0 : (a && b);
    uint32_t fa = f32_of(dt, a), fb = f32_of(dt, b);
    if ((fa & 0x7FFFFFFFu) > 0x7F800000u)
        return a;
    if ((fb & 0x7FFFFFFFu) > 0x7F800000u)
        return dt == TGL_DTYPE_F32 ? 0x7FC00000u : dt == TGL_DTYPE_F16 ? 0x7E00u : 0x7FC0u;
    float x = tgl_cpu_bits_f32(fa), y = tgl_cpu_bits_f32(fb);
    int b_wins = max ? (y > x || (y == x && !(fb >> 31) && (fa >> 31))) : (y < x || (y == x && (fb >> 31) && !(fa >> 31)));
    return b_wins ? b : a;
}

/* out's allocation image by the definitions; bound (per byte of out, at an element's first):
 * where a float ADD place has terms below the library's cutoff, the documented bound on what
 * they may lose (there the result is within it of the exact sum, exact[], plus the rounding),
 * else 0. */
static void reference(const call *c, uint8_t *want, double *bound, double *exact_sum, loose *lz)
{
    tgl_dtype dt = c->out.dtype;
    size_t es = tgl_dtype_size(dt), out_n = 1, n = 1;
    for (size_t d = 0; d < c->out.ndim; d++)
        out_n *= c->out.shape[d];
    const tgl_tensor *space = c->index_add ? &c->src : &c->index;
    size_t ndim = space->ndim ? space->ndim : 1, shape[TGL_MAX_DIMS] = {0};
    for (size_t d = 0; d < ndim; d++)
        n *= shape[d] = space->ndim ? space->shape[d] : 1;
    place *pl = calloc(out_n ? out_n : 1, sizeof *pl);
    size_t idx[TGL_MAX_DIMS] = {0}, at[TGL_MAX_DIMS] = {0}, row[TGL_MAX_DIMS] = {0};
    for (size_t d = c->out.ndim, r = 1; d-- > 0; r *= c->out.shape[d])
        row[d] = r;
    for (size_t i = 0; i < out_n; i++) { /* out's own element first */
        size_t rest = i;
        for (size_t d = c->out.ndim; d-- > 0; rest /= c->out.shape[d])
            at[d] = rest % c->out.shape[d];
        uint32_t x = load(dt, c->out_init + byte_at(&c->out, at));
        pl[i].bits = dt == TGL_DTYPE_BOOL ? x != 0 : x;
        pl[i].sum.emin = 1000;
        pl[i].terms = 1;
        if (is_float(dt))
            exact_add(&pl[i].sum, f32_of(dt, x));
        if (is_float(dt) && isfinite(value_of(dt, x)))
            pl[i].mag = fabs(value_of(dt, x));
    }
    for (size_t i = 0; i < n; i++) {
        int32_t k;
        if (c->index_add) {
            size_t one = idx[c->axis];
            memcpy(&k, c->index_init + byte_at(&c->index, &one), 4);
        } else {
            memcpy(&k, c->index_init + byte_at(&c->index, idx), 4);
        }
        size_t dest = 0;
        for (size_t d = 0; d < c->out.ndim; d++)
            dest += (d == c->axis ? (size_t)k : idx[d]) * row[d];
        uint32_t x = load(dt, c->src_init + byte_at(&c->src, idx));
        x = dt == TGL_DTYPE_BOOL ? x != 0 : x;
        place *q = &pl[dest];
        q->touched = 1;
        tgl_scatter_reduce r = c->index_add ? TGL_SCATTER_ADD : c->reduce;
        if (r == TGL_SCATTER_ADD_UNORDERED) { /* i32 and bool: ADD */
            r = TGL_SCATTER_ADD;
            q->terms++;
            if (is_float(dt) && isfinite(value_of(dt, x)))
                q->mag += fabs(value_of(dt, x));
        }
        if (r == TGL_SCATTER_SET)
            q->bits = x;
        else if (r == TGL_SCATTER_ADD && is_float(dt))
            exact_add(&q->sum, f32_of(dt, x));
        else if (r == TGL_SCATTER_ADD && dt == TGL_DTYPE_I32)
            q->bits += x;
        else
            q->bits = pick(dt, r != TGL_SCATTER_MIN, q->bits, x);
        for (size_t d = ndim; d-- > 0;) {
            if (++idx[d] < shape[d])
                break;
            idx[d] = 0;
        }
    }
    memcpy(want, c->out_init, c->out_bytes);
    for (size_t i = 0; i < c->out_bytes; i++) {
        bound[i] = exact_sum[i] = 0;
        lz[i] = (loose){0};
    }
    size_t len = c->index_add ? c->index.shape[0] : shape[c->axis];
    unsigned log2 = 0;
    while (((uint64_t)1 << log2) < (uint64_t)len + 1)
        log2++;
    for (size_t i = 0; i < out_n; i++) {
        size_t rest = i;
        for (size_t d = c->out.ndim; d-- > 0; rest /= c->out.shape[d])
            at[d] = rest % c->out.shape[d];
        int64_t b = byte_at(&c->out, at);
        uint32_t old = load(dt, c->out_init + b), y = pl[i].bits;
        int float_add = is_float(dt) && (c->index_add || c->reduce == TGL_SCATTER_ADD);
        if (is_float(dt) && !c->index_add && c->reduce == TGL_SCATTER_ADD_UNORDERED) {
            if (!pl[i].touched)
                continue;
            exact *s = &pl[i].sum;
            loose *l = &lz[b];
            double top = dt == TGL_DTYPE_F16 ? 65504.0 : (double)3.38953139e38f; /* bf16's largest */
            top = dt == TGL_DTYPE_F32 ? (double)3.40282347e38f : top;
            l->on = 1;
            l->nan = (f32_of(dt, old) & 0x7FFFFFFFu) > 0x7F800000u || s->nan || (s->pinf && s->ninf);
            l->inf = s->pinf ? exact_round(s, dt) : s->ninf ? exact_round(s, dt) : 0;
            l->bound = s->nonzero ? unordered_bound(dt, pl[i].mag, pl[i].terms) : 0;
            l->may_overflow = pl[i].mag + l->bound >= top;
            l->exact = exact_value(s);
            y = exact_round(s, dt);
            memcpy(want + b, &y, es);
            continue;
        }
        if (float_add) {
            if ((f32_of(dt, old) & 0x7FFFFFFFu) > 0x7F800000u || !pl[i].touched)
                continue; /* out's NaN, and an element nothing landed on, keep their bits */
            /* the cutoff: 2^(emax - 150 - (71 - log2)), below which each term (len + 1 at
             * most) may lose less than it; a term's lowest bit is 2^(e - 150) */
            const exact *s = &pl[i].sum;
            int cut = s->emax - 150 - (int)(71 - log2);
            if (s->nonzero && s->emin - 150 < cut) {
                bound[b] = ldexp((double)len + 1.0, cut);
                exact_sum[b] = exact_value(s);
            }
            y = exact_round(&pl[i].sum, dt);
        } else if (!pl[i].touched || y == (dt == TGL_DTYPE_BOOL ? old != 0 : old)) {
            continue; /* unchanged: the bits stay (a bool byte other than 0 and 1 too) */
        }
        memcpy(want + b, &y, es);
    }
    free(pl);
}

static void check(pair *p, tgl_backend *gl, const call *c, const char *what)
{
    uint8_t *want = malloc(c->out_bytes), *got[2] = {malloc(c->out_bytes), malloc(c->out_bytes)};
    double *bound = malloc(c->out_bytes * sizeof *bound), *exact_sum = malloc(c->out_bytes * sizeof *exact_sum);
    loose *lz = malloc(c->out_bytes * sizeof *lz);
    reference(c, want, bound, exact_sum, lz);
    static const char *const reduces[] = {"set", "add", "max", "min", "add_unordered"};
    const char *op = c->index_add ? "index_add" : reduces[c->reduce];
    tgl_dtype dt = c->out.dtype;
    size_t es = tgl_dtype_size(dt);
    tgl_backend *bs[2] = {p->cpu, gl};
    for (int j = 0; j < 2; j++) {
        tgl_backend *b = bs[j];
        if (!b)
            continue;
        TGT_OK(b, run_on(b, c, got[j]));
        for (size_t i = 0; i < c->out_bytes; i++) {
            if (got[j][i] == want[i])
                continue;
            size_t e = i / es * es; /* the element's first byte (out's data is element-aligned) */
            if (bound[e] > 0 && within(load(dt, got[j] + e), exact_sum[e], bound[e], dt))
                continue;
            if (lz[e].on && loose_ok(dt, load(dt, got[j] + e), load(dt, want + e), &lz[e]))
                continue;
            fail_msg("%s: %s %s %zu-d axis %zu: %s out byte %zu is 0x%02x, the reference's 0x%02x (element 0x%x, "
                     "reference 0x%x)", what, op, tgl_dtype_name(dt), c->out.ndim, c->axis, tgl_backend_name(b), i,
                     got[j][i], want[i], load(dt, got[j] + e), load(dt, want + e));
        }
    }
    /* (ADD_UNORDERED of floats: each backend within the bound, in its own order) */
    int ordered = c->index_add || c->reduce != TGL_SCATTER_ADD_UNORDERED || !is_float(dt);
    if (ordered && p->cpu && gl && memcmp(got[0], got[1], c->out_bytes) != 0)
        fail_msg("%s: %s %s: the backends differ", what, op, tgl_dtype_name(dt));
    free(lz);
    free(want);
    free(bound);
    free(exact_sum);
    free(got[0]);
    free(got[1]);
}

static tgl_tensor layout(tgt_rng *r, tgl_dtype dt, size_t ndim, const size_t *shape, size_t *bytes)
{
    return tgt_below(r, 3) ? tgt_random_layout(r, dt, ndim, shape, bytes) : tgt_dense_layout(r, dt, ndim, shape, bytes);
}

/* Indices in [0, extent), crowding onto a few places at times. */
static void fill_indices(tgt_rng *r, uint8_t *p, size_t bytes, size_t extent)
{
    size_t spread = tgt_below(r, 3) == 0 ? 1 + tgt_below(r, 3) : extent;
    spread = spread < extent ? spread : extent;
    for (size_t i = 0; i + 4 <= bytes; i += 4) {
        int32_t k = (int32_t)tgt_below(r, spread);
        memcpy(p + i, &k, 4);
    }
}

/* Floats that add up to something: the pool's edge values at times, else numbers of a few
 * magnitudes (integers for bf16 and f16 sometimes, so that exact sums show). */
static void fill_values(tgt_rng *r, tgl_dtype dt, uint8_t *p, size_t bytes)
{
    tgt_pool_fill(r, dt, p, bytes);
    if (!is_float(dt) || tgt_below(r, 4) == 0)
        return;
    size_t es = tgl_dtype_size(dt);
    int scale = (int)tgt_below(r, 40) - 20;
    for (size_t i = 0; i + es <= bytes; i += es) {
        float v = ((float)tgt_below(r, 2001) - 1000.0f) * ldexpf(1.0f, scale - (int)tgt_below(r, 12));
        tgl_cpu_store_f32(dt, v, p + i);
    }
}

static call random_call(tgt_rng *r, int index_add, size_t ndim, const size_t *space)
{
    static const tgl_dtype dts[] = {TGL_DTYPE_F32, TGL_DTYPE_F16, TGL_DTYPE_BF16, TGL_DTYPE_I32, TGL_DTYPE_BOOL};
    call c = {.index_add = index_add, .reduce = (tgl_scatter_reduce)tgt_below(r, TGL_SCATTER_REDUCE_COUNT),
              .axis = tgt_below(r, ndim)};
    tgl_dtype dt = dts[tgt_below(r, 5)];
    size_t out_shape[TGL_MAX_DIMS], src_shape[TGL_MAX_DIMS];
    for (size_t d = 0; d < ndim; d++) {
        /* out: the space's extent or more, along the axis any extent from 1 */
        out_shape[d] = d == c.axis ? 1 + tgt_below(r, 2 * space[d] + 2) : space[d] + (tgt_below(r, 3) ? 0 : tgt_below(r, 3));
        src_shape[d] = space[d] + (index_add || tgt_below(r, 2) ? 0 : tgt_below(r, 3));
    }
    if (index_add)
        for (size_t d = 0; d < ndim; d++)
            out_shape[d] = d == c.axis ? out_shape[d] : space[d];
    c.out = layout(r, dt, ndim, out_shape, &c.out_bytes);
    c.src = layout(r, dt, ndim, src_shape, &c.src_bytes);
    size_t len = space[c.axis];
    if (index_add)
        c.index = layout(r, TGL_DTYPE_I32, 1, &len, &c.index_bytes);
    else if (tgt_below(r, 4) == 0) { /* a broadcast view: stride 0 along the dims but the axis */
        c.index = layout(r, TGL_DTYPE_I32, 1, &len, &c.index_bytes);
        int64_t step = c.index.strides[0];
        c.index.ndim = ndim;
        for (size_t d = 0; d < ndim; d++) {
            c.index.shape[d] = space[d];
            c.index.strides[d] = d == c.axis ? step : 0;
        }
    } else
        c.index = layout(r, TGL_DTYPE_I32, ndim, space, &c.index_bytes);
    return c;
}

static void run_random(pair *p, tgl_backend *gl, call *c, const char *what)
{
    tgt_rng *r = &p->rng;
    c->out_init = malloc(c->out_bytes);
    c->src_init = malloc(c->src_bytes);
    c->index_init = malloc(c->index_bytes);
    fill_values(r, c->out.dtype, c->out_init, c->out_bytes);
    fill_values(r, c->src.dtype, c->src_init, c->src_bytes);
    fill_indices(r, c->index_init, c->index_bytes, c->out.shape[c->axis]);
    check(p, gl, c, what);
    free(c->out_init);
    free(c->src_init);
    free(c->index_init);
}

static void random_calls(pair *p, tgl_backend *gl, int count, size_t most, const char *what)
{
    tgt_rng *r = &p->rng;
    for (int i = 0; i < count; i++) {
        size_t ndim = 1 + tgt_below(r, 4), shape[TGL_MAX_DIMS] = {0}, n = 1;
        for (size_t d = 0; d < ndim; d++) {
            shape[d] = n * 257 <= most ? tgt_awkward_extent(r, 257) : 1 + tgt_below(r, 2);
            n *= shape[d];
        }
        call c = random_call(r, i % 3 == 2, ndim, shape);
        run_random(p, gl, &c, what);
    }
}

static void test_random_calls(void **state)
{
    pair *p = *state;
    random_calls(p, p->gl, 300, 20000, "random calls");
}

/* Index spaces past one workgroup, many elements landing on one place (the fixed point's
 * headroom and the atomics' contention), and a space far larger than out. */
static void test_large(void **state)
{
    pair *p = *state;
    tgt_rng *r = &p->rng;
    const size_t spaces[3][2] = {{(1u << 18) + 3, 1}, {1001, 347}, {3, 65537}};
    for (int k = 0; k < 3; k++)
        for (int index_add = 0; index_add < 2; index_add++) {
            call c = random_call(r, index_add, 2, spaces[k]);
            run_random(p, p->gl, &c, "large");
        }
}

/* A shrunk SSBO limit: runs of each space and windows of the temporary words cut to fit it. */
static void test_small_ssbo_limit(void **state)
{
    pair *p = *state;
    if (!p->gl)
        skip();
    tgl_backend *gl = tgt_open(TGL_BACKEND_GL);
    tgl_gl_test_set_limits(gl, 8192, NULL);
    random_calls(p, gl, tgt_count(40), 6000, "small SSBO limit");
    for (int index_add = 0; index_add < 2; index_add++) { /* an out of many temp windows */
        call c = random_call(&p->rng, index_add, 2, (size_t[]){3000, 2});
        run_random(p, gl, &c, "small SSBO limit, wide out");
    }
    tgl_close(gl);
}

/* The profile's scatter_window_bytes cutting FIRST and SECOND's temp windows below the block
 * limit (a window of a single place's words, of a few places, of many). */
static void test_temp_windows(void **state)
{
    pair *p = *state;
    if (!p->gl)
        skip();
    tgl_backend *gl = tgt_open(TGL_BACKEND_GL);
    const uint64_t windows[3] = {1, 100, 4096}; /* 1: a place's words at a time */
    for (int w = 0; w < 3; w++) {
        tgl_gl_of(gl)->limits.scatter_window_bytes = windows[w];
        random_calls(p, gl, tgt_count(20), w ? 3000 : 200, "temp windows");
        call c = random_call(&p->rng, w & 1, 2, w ? (size_t[]){1500, 2} : (size_t[]){60, 2});
        run_random(p, gl, &c, "temp windows, wide out");
    }
    tgl_close(gl);
}

/* PyTorch's outputs: torch.zeros(3, 5).scatter_(0, index, src) of its documentation, and
 * scatter_reduce_ "sum", "amax" and "amin" with include_self (and "sum" as ADD_UNORDERED) of x = [1, 2, 3, 4] at index
 * [0, 1, 0, 1, 2, 1] of src [1, 2, 3, 4, 5, 6]; index_add of its documentation (ones(5, 3),
 * rows [0, 4, 2] of t = 1..9). */
static void test_known_values(void **state)
{
    pair *p = *state;
    tgl_backend *bs[2] = {p->cpu, p->gl};
    const float src[10] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    const int32_t index[4] = {0, 1, 2, 0}, red_index[6] = {0, 1, 0, 1, 2, 1}, rows[3] = {0, 4, 2};
    const float want_set[15] = {1, 0, 0, 4, 0, 0, 2, 0, 0, 0, 0, 0, 3, 0, 0};
    const float want_red[4][4] = {{5, 14, 8, 4}, {3, 6, 5, 4}, {1, 2, 3, 4}, {5, 14, 8, 4}};
    const float want_add[15] = {2, 3, 4, 1, 1, 1, 8, 9, 10, 1, 1, 1, 5, 6, 7};
    for (int j = 0; j < 2; j++) {
        tgl_backend *b = bs[j];
        if (!b)
            continue;
        tgl_ptr ps, pi, po;
        TGT_OK(b, tgl_alloc(b, sizeof src, &ps));
        TGT_OK(b, tgl_alloc(b, 64, &pi));
        TGT_OK(b, tgl_alloc(b, 15 * 4, &po));
        TGT_OK(b, tgl_copy_htod(b, ps, src, sizeof src));
        /* scatter_(0, [[0, 1, 2, 0]], src 2x5) into zeros(3, 5) */
        float got[15] = {0};
        TGT_OK(b, tgl_copy_htod(b, po, got, sizeof got));
        TGT_OK(b, tgl_copy_htod(b, pi, index, sizeof index));
        tgl_tensor out = tgl_tensor_contiguous(po, TGL_DTYPE_F32, 2, (size_t[]){3, 5});
        tgl_tensor idx = tgl_tensor_contiguous(pi, TGL_DTYPE_I32, 2, (size_t[]){1, 4});
        tgl_tensor s = tgl_tensor_contiguous(ps, TGL_DTYPE_F32, 2, (size_t[]){2, 5});
        TGT_OK(b, tgl_scatter(b, &s, 0, &idx, &out, TGL_SCATTER_SET));
        TGT_OK(b, tgl_copy_dtoh(b, got, po, sizeof got));
        for (int k = 0; k < 15; k++)
            if (got[k] != want_set[k])
                fail_msg("%s: scatter_ element %d is %g, PyTorch's %g", tgl_backend_name(b), k, (double)got[k],
                         (double)want_set[k]);
        const tgl_scatter_reduce reds[4] = {TGL_SCATTER_ADD, TGL_SCATTER_MAX, TGL_SCATTER_MIN,
                                            TGL_SCATTER_ADD_UNORDERED}; /* (small integers: exact) */
        TGT_OK(b, tgl_copy_htod(b, pi, red_index, sizeof red_index));
        for (int k = 0; k < 4; k++) {
            const float x[4] = {1, 2, 3, 4};
            TGT_OK(b, tgl_copy_htod(b, po, x, sizeof x));
            out = tgl_tensor_contiguous(po, TGL_DTYPE_F32, 1, (size_t[]){4});
            idx = tgl_tensor_contiguous(pi, TGL_DTYPE_I32, 1, (size_t[]){6});
            s = tgl_tensor_contiguous(ps, TGL_DTYPE_F32, 1, (size_t[]){6});
            TGT_OK(b, tgl_scatter(b, &s, 0, &idx, &out, reds[k]));
            TGT_OK(b, tgl_copy_dtoh(b, got, po, sizeof x));
            for (int e = 0; e < 4; e++)
                if (got[e] != want_red[k][e])
                    fail_msg("%s: scatter_reduce %d element %d is %g, PyTorch's %g", tgl_backend_name(b), k, e,
                             (double)got[e], (double)want_red[k][e]);
        }
        for (int k = 0; k < 15; k++)
            got[k] = 1;
        TGT_OK(b, tgl_copy_htod(b, po, got, sizeof got));
        TGT_OK(b, tgl_copy_htod(b, pi, rows, sizeof rows));
        out = tgl_tensor_contiguous(po, TGL_DTYPE_F32, 2, (size_t[]){5, 3});
        idx = tgl_tensor_contiguous(pi, TGL_DTYPE_I32, 1, (size_t[]){3});
        s = tgl_tensor_contiguous(ps, TGL_DTYPE_F32, 2, (size_t[]){3, 3});
        TGT_OK(b, tgl_index_add(b, &s, 0, &idx, &out));
        TGT_OK(b, tgl_copy_dtoh(b, got, po, sizeof got));
        for (int k = 0; k < 15; k++)
            if (got[k] != want_add[k])
                fail_msg("%s: index_add element %d is %g, PyTorch's %g", tgl_backend_name(b), k, (double)got[k],
                         (double)want_add[k]);
        tgl_ptr all[3] = {ps, pi, po};
        for (int k = 0; k < 3; k++)
            TGT_OK(b, tgl_free(b, all[k]));
    }
}

/* A float sum that a sequential f32 loop gets wrong and the op gets right: 2^24 + 1 + 1 is
 * 2^24 + 2 exactly (a loop rounds each 2^24 + 1 back to 2^24), and 1e8 - 1e8 + 0.5 keeps the
 * 0.5 whatever the order. */
static void test_exact_sums(void **state)
{
    pair *p = *state;
    tgl_backend *bs[2] = {p->cpu, p->gl};
    for (int j = 0; j < 2; j++) {
        tgl_backend *b = bs[j];
        if (!b)
            continue;
        const float src[5] = {1, 1, 1e8f, -1e8f, 0.5f}, init[2] = {16777216.0f, 0};
        const int32_t index[5] = {0, 0, 1, 1, 1};
        tgl_ptr ps, pi, po;
        TGT_OK(b, tgl_alloc(b, sizeof src, &ps));
        TGT_OK(b, tgl_alloc(b, sizeof index, &pi));
        TGT_OK(b, tgl_alloc(b, sizeof init, &po));
        TGT_OK(b, tgl_copy_htod(b, ps, src, sizeof src));
        TGT_OK(b, tgl_copy_htod(b, pi, index, sizeof index));
        TGT_OK(b, tgl_copy_htod(b, po, init, sizeof init));
        tgl_tensor out = tgl_tensor_contiguous(po, TGL_DTYPE_F32, 1, (size_t[]){2});
        tgl_tensor idx = tgl_tensor_contiguous(pi, TGL_DTYPE_I32, 1, (size_t[]){5});
        tgl_tensor s = tgl_tensor_contiguous(ps, TGL_DTYPE_F32, 1, (size_t[]){5});
        TGT_OK(b, tgl_scatter(b, &s, 0, &idx, &out, TGL_SCATTER_ADD));
        float got[2];
        TGT_OK(b, tgl_copy_dtoh(b, got, po, sizeof got));
        if (got[0] != 16777218.0f || got[1] != 0.5f)
            fail_msg("%s: sums %.1f and %g, want 16777218 and 0.5", tgl_backend_name(b), (double)got[0],
                     (double)got[1]);
        tgl_ptr all[3] = {ps, pi, po};
        for (int k = 0; k < 3; k++)
            TGT_OK(b, tgl_free(b, all[k]));
    }
}

/* An index out of range (negative, or at the extent) fails the call and writes nothing. */
static void test_bad_index(void **state)
{
    pair *p = *state;
    tgl_backend *bs[2] = {p->cpu, p->gl};
    for (int j = 0; j < 2; j++) {
        tgl_backend *b = bs[j];
        if (!b)
            continue;
        const float init[8] = {1, 2, 3, 4, 5, 6, 7, 8};
        const int32_t bad[2][4] = {{0, 1, 3, 4}, {0, -1, 2, 1}};
        tgl_ptr ps, pi, po;
        TGT_OK(b, tgl_alloc(b, sizeof init, &ps));
        TGT_OK(b, tgl_alloc(b, 16, &pi));
        TGT_OK(b, tgl_alloc(b, sizeof init, &po));
        TGT_OK(b, tgl_copy_htod(b, ps, init, sizeof init));
        for (int k = 0; k < 2; k++) {
            TGT_OK(b, tgl_copy_htod(b, po, init, sizeof init));
            TGT_OK(b, tgl_copy_htod(b, pi, bad[k], 16));
            tgl_tensor out = tgl_tensor_contiguous(po, TGL_DTYPE_F32, 2, (size_t[]){4, 2});
            tgl_tensor idx = tgl_tensor_contiguous(pi, TGL_DTYPE_I32, 2, (size_t[]){2, 2});
            tgl_tensor s = tgl_tensor_contiguous(ps, TGL_DTYPE_F32, 2, (size_t[]){4, 2});
            TGT_EXPECT(b, tgl_scatter(b, &s, 0, &idx, &out, TGL_SCATTER_ADD), TGL_ERR_INVALID_ARGUMENT);
            tgl_tensor rows = tgl_tensor_contiguous(pi, TGL_DTYPE_I32, 1, (size_t[]){4});
            TGT_EXPECT(b, tgl_index_add(b, &s, 0, &rows, &out), TGL_ERR_INVALID_ARGUMENT);
            float got[8];
            TGT_OK(b, tgl_copy_dtoh(b, got, po, sizeof got));
            for (int e = 0; e < 8; e++)
                if (got[e] != init[e])
                    fail_msg("%s: a call with a bad index wrote out's element %d", tgl_backend_name(b), e);
        }
        tgl_ptr all[3] = {ps, pi, po};
        for (int k = 0; k < 3; k++)
            TGT_OK(b, tgl_free(b, all[k]));
    }
}

static void test_refusals(void **state)
{
    pair *p = *state;
    tgl_backend *bs[2] = {p->cpu, p->gl};
    for (int j = 0; j < 2; j++) {
        tgl_backend *b = bs[j];
        if (!b)
            continue;
        tgl_ptr pa, pb;
        TGT_OK(b, tgl_alloc(b, 4096, &pa));
        TGT_OK(b, tgl_alloc(b, 4096, &pb));
        TGT_OK(b, tgl_fill(b, pa, 0.0f, 1024));
        tgl_tensor out = tgl_tensor_contiguous(pb, TGL_DTYPE_F32, 2, (size_t[]){4, 8});
        tgl_tensor idx = tgl_tensor_contiguous(pa, TGL_DTYPE_I32, 2, (size_t[]){4, 8});
        tgl_tensor src = tgl_tensor_contiguous(pa + 256, TGL_DTYPE_F32, 2, (size_t[]){4, 8});
        tgl_tensor rows = tgl_tensor_contiguous(pa, TGL_DTYPE_I32, 1, (size_t[]){4});
        tgl_tensor src4 = tgl_tensor_contiguous(pa + 256, TGL_DTYPE_F32, 2, (size_t[]){4, 8});
        TGT_OK(b, tgl_scatter(b, &src, 1, &idx, &out, TGL_SCATTER_SET));
        TGT_OK(b, tgl_index_add(b, &src4, 0, &rows, &out));
        TGT_EXPECT(b, tgl_scatter(b, &src, 0, &idx, NULL, TGL_SCATTER_SET), TGL_ERR_INVALID_ARGUMENT);
        TGT_EXPECT(b, tgl_scatter(b, NULL, 0, &idx, &out, TGL_SCATTER_SET), TGL_ERR_INVALID_ARGUMENT);
        TGT_EXPECT(b, tgl_scatter(b, &src, 2, &idx, &out, TGL_SCATTER_SET), TGL_ERR_INVALID_ARGUMENT); /* axis */
        TGT_EXPECT(b, tgl_scatter(b, &src, 0, &idx, &out, TGL_SCATTER_REDUCE_COUNT), TGL_ERR_INVALID_ARGUMENT);
        TGT_EXPECT(b, tgl_scatter(b, &src, 0, &idx, &out, (tgl_scatter_reduce)-1), TGL_ERR_INVALID_ARGUMENT);
        tgl_tensor bad = idx;
        bad.dtype = TGL_DTYPE_F32;
        TGT_EXPECT(b, tgl_scatter(b, &src, 0, &bad, &out, TGL_SCATTER_ADD), TGL_ERR_UNSUPPORTED);
        bad = src;
        bad.dtype = TGL_DTYPE_I32;
        TGT_EXPECT(b, tgl_scatter(b, &bad, 0, &idx, &out, TGL_SCATTER_ADD), TGL_ERR_INVALID_ARGUMENT); /* dtypes */
        bad = tgl_tensor_contiguous(pa, TGL_DTYPE_I32, 1, (size_t[]){32});
        TGT_EXPECT(b, tgl_scatter(b, &src, 0, &bad, &out, TGL_SCATTER_ADD), TGL_ERR_INVALID_ARGUMENT); /* ndim */
        bad = tgl_tensor_contiguous(pa, TGL_DTYPE_I32, 2, (size_t[]){4, 9});
        TGT_EXPECT(b, tgl_scatter(b, &src, 0, &bad, &out, TGL_SCATTER_ADD), TGL_ERR_INVALID_ARGUMENT); /* > out */
        bad = tgl_tensor_contiguous(pa + 256, TGL_DTYPE_F32, 2, (size_t[]){4, 7});
        TGT_EXPECT(b, tgl_scatter(b, &bad, 1, &idx, &out, TGL_SCATTER_ADD), TGL_ERR_INVALID_ARGUMENT); /* > src */
        bad = out;
        bad.strides[0] = 0; /* reaches elements twice */
        TGT_EXPECT(b, tgl_scatter(b, &src, 1, &idx, &bad, TGL_SCATTER_ADD), TGL_ERR_INVALID_ARGUMENT);
        bad = tgl_tensor_contiguous(pa + 64, TGL_DTYPE_F32, 2, (size_t[]){4, 8});
        TGT_EXPECT(b, tgl_scatter(b, &src, 1, &idx, &bad, TGL_SCATTER_ADD), TGL_ERR_INVALID_ARGUMENT); /* on index */
        TGT_EXPECT(b, tgl_scatter(b, &src, 1, &idx, &src, TGL_SCATTER_ADD), TGL_ERR_INVALID_ARGUMENT); /* on src */
        bad = tgl_tensor_contiguous(pb + 4000, TGL_DTYPE_F32, 2, (size_t[]){4, 8});
        TGT_EXPECT(b, tgl_scatter(b, &src, 1, &idx, &bad, TGL_SCATTER_ADD), TGL_ERR_INVALID_POINTER);
        tgl_tensor q = tgl_tensor_contiguous(pb, TGL_DTYPE_Q8_0, 2, (size_t[]){4, 32});
        TGT_EXPECT(b, tgl_scatter(b, &src, 1, &idx, &q, TGL_SCATTER_ADD), TGL_ERR_UNSUPPORTED);
        bad = tgl_tensor_contiguous(pa, TGL_DTYPE_I32, 2, (size_t[]){2, 2});
        TGT_EXPECT(b, tgl_index_add(b, &src4, 0, &bad, &out), TGL_ERR_INVALID_ARGUMENT); /* 2-D index */
        bad = tgl_tensor_contiguous(pa, TGL_DTYPE_I32, 1, (size_t[]){3});
        TGT_EXPECT(b, tgl_index_add(b, &src4, 0, &bad, &out), TGL_ERR_INVALID_ARGUMENT); /* src's length */
        tgl_tensor scalar = tgl_tensor_contiguous(pb, TGL_DTYPE_F32, 0, NULL);
        TGT_EXPECT(b, tgl_index_add(b, &src4, 0, &rows, &scalar), TGL_ERR_INVALID_ARGUMENT);
        /* empty index: nothing to do, out untouched */
        tgl_tensor none = tgl_tensor_contiguous(pa, TGL_DTYPE_I32, 2, (size_t[]){0, 8});
        TGT_OK(b, tgl_scatter(b, &src, 0, &none, &out, TGL_SCATTER_ADD));
        /* a 0-d scatter: one element onto one (index 0) */
        tgl_tensor i0 = tgl_tensor_contiguous(pa, TGL_DTYPE_I32, 0, NULL);
        tgl_tensor s0 = tgl_tensor_contiguous(pa + 256, TGL_DTYPE_F32, 0, NULL);
        TGT_OK(b, tgl_scatter(b, &s0, 0, &i0, &scalar, TGL_SCATTER_MAX));
        TGT_OK(b, tgl_free(b, pa));
        TGT_OK(b, tgl_free(b, pb));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_values),
        cmocka_unit_test(test_exact_sums),
        cmocka_unit_test(test_bad_index),
        cmocka_unit_test(test_random_calls),
        cmocka_unit_test(test_large),
        cmocka_unit_test(test_small_ssbo_limit),
        cmocka_unit_test(test_temp_windows),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
