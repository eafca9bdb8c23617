/* tgl_reduce_t, tgl_argmax_t and tgl_argmin_t on GL and on the CPU backend. The CPU backend is checked against a host
 * reference computed here from the input's bytes and strides (every op and dtype it takes,
 * random layouts with negative strides, gaps and 0 strides, keepdim or not, empty axes), the
 * whole out allocation included (bytes outside out's elements keep their poison); GL is then
 * checked against the CPU: bit for bit for i32, bool, MAX and MIN, within a relative 1e-5 (plus
 * one unit of f16/bf16 rounding) for the float sums, means and products, also where their
 * f32 running sums overflow over finite values. Then every refusal, with out unchanged. */
#include "testing.h"
#include "tensors.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define POISON 0xA5

static int setup(void **state)
{
    return tgt_pair_setup(state, 0x5ED7);
}

static int teardown(void **state)
{
    return tgt_pair_teardown(state);
}

static const tgl_dtype dtypes[] = {TGL_DTYPE_F32, TGL_DTYPE_F16, TGL_DTYPE_BF16, TGL_DTYPE_I32, TGL_DTYPE_BOOL};
#define N_DTYPES (sizeof dtypes / sizeof dtypes[0])

/* The ops: a tgl_reduce_op, or these two (tgl_argmax_t, tgl_argmin_t). */
#define ARGMAX ((int)TGL_REDUCE_COUNT)
#define ARGMIN ((int)TGL_REDUCE_COUNT + 1)
#define N_OPS (TGL_REDUCE_COUNT + 2)

static const char *op_name(int op)
{
    return op == ARGMAX ? "argmax" : op == ARGMIN ? "argmin" : tgl_reduce_name((tgl_reduce_op)op);
}

static int is_arg(int op)
{
    return op == ARGMAX || op == ARGMIN;
}

typedef struct rcase {
    int op;
    size_t axis;
    tgl_tensor in, out; /* data: byte offsets into their allocations */
    uint8_t *init;
    size_t in_bytes, out_bytes;
} rcase;

static int takes(int op, tgl_dtype dt)
{
    if (op == TGL_REDUCE_ANY || op == TGL_REDUCE_ALL)
        return 1;
    if (dt == TGL_DTYPE_BOOL)
        return 0;
    return !(op == TGL_REDUCE_MEAN && dt == TGL_DTYPE_I32);
}

static tgl_status run_on(tgl_backend *b, const rcase *c, uint8_t *got)
{
    tgl_ptr pi, po;
    TGT_OK(b, tgl_alloc(b, c->in_bytes, &pi));
    TGT_OK(b, tgl_copy_htod(b, pi, c->init, c->in_bytes));
    TGT_OK(b, tgl_alloc(b, c->out_bytes, &po));
    memset(got, POISON, c->out_bytes);
    TGT_OK(b, tgl_copy_htod(b, po, got, c->out_bytes));
    tgl_tensor in = c->in, out = c->out;
    in.data += pi;
    out.data += po;
    tgl_status st = c->op == ARGMAX   ? tgl_argmax_t(b, &in, c->axis, &out)
                    : c->op == ARGMIN ? tgl_argmin_t(b, &in, c->axis, &out)
                                      : tgl_reduce_t(b, (tgl_reduce_op)c->op, &in, c->axis, &out);
    TGT_OK(b, tgl_copy_dtoh(b, got, po, c->out_bytes));
    TGT_OK(b, tgl_free(b, pi));
    TGT_OK(b, tgl_free(b, po));
    return st;
}

static double load(tgl_dtype dt, const uint8_t *p)
{
    uint32_t u = 0;
    float f;
    int32_t i;
    switch (dt) {
    case TGL_DTYPE_I32: memcpy(&i, p, 4); return i;
    case TGL_DTYPE_BOOL: return p[0] != 0;
    case TGL_DTYPE_F32: memcpy(&f, p, 4); return f;
    case TGL_DTYPE_BF16: memcpy(&u, p, 2); u <<= 16; memcpy(&f, &u, 4); return f;
    default: { /* f16 */
        uint16_t h;
        memcpy(&h, p, 2);
        int e = (h >> 10) & 31, m = h & 1023;
        double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m + 1024, e - 25);
        return h & 0x8000 ? -v : v;
    }
    }
}

/* The expected value of out element `o` (its coordinates over in's dims but the axis) as a
 * double, whether it is an exact (integer or chosen-element) result, and the magnitude a sum's
 * or mean's rounding scales with (the sum of |x|; otherwise |result|). */
static double expect(const rcase *c, const size_t *o, int *exact, double *scale)
{
    const tgl_tensor *t = &c->in;
    size_t es = tgl_dtype_size(t->dtype), n = t->shape[c->axis];
    int64_t base = (int64_t)(t->data / es);
    for (size_t d = 0, k = 0; d < t->ndim; d++)
        if (d != c->axis)
            base += (int64_t)o[k++] * t->strides[d];
    double acc = c->op == TGL_REDUCE_PROD ? 1.0 : 0.0, mag = 0.0;
    uint32_t iacc = c->op == TGL_REDUCE_PROD ? 1u : 0u;
    int any = 0, all = 1;
    size_t at = 0; /* the index ops: the first NaN, else the first best (-0 and +0 tie) */
    double best = NAN;
    *exact = t->dtype == TGL_DTYPE_I32 || c->op == TGL_REDUCE_MAX || c->op == TGL_REDUCE_MIN ||
             c->op == TGL_REDUCE_ANY || c->op == TGL_REDUCE_ALL || is_arg(c->op);
    for (size_t k = 0; k < n; k++) {
        const uint8_t *p = c->init + (base + (int64_t)k * t->strides[c->axis]) * (int64_t)es;
        double v = load(t->dtype, p);
        any |= v != 0.0;
        all &= v != 0.0;
        if (is_arg(c->op) && (k == 0 || (!isnan(best) && (isnan(v) || (c->op == ARGMAX ? v > best : v < best))))) {
            best = v;
            at = k;
        }
        if (t->dtype == TGL_DTYPE_I32) {
            int32_t i = (int32_t)v;
            if (c->op == TGL_REDUCE_SUM)
                iacc += (uint32_t)i;
            else if (c->op == TGL_REDUCE_PROD)
                iacc *= (uint32_t)i;
        }
        switch (c->op) {
        case TGL_REDUCE_SUM: case TGL_REDUCE_MEAN: acc += v; mag += fabs(v); break;
        case TGL_REDUCE_PROD: acc *= v; break;
        case TGL_REDUCE_MAX: acc = k == 0 || isnan(v) || (!isnan(acc) && v > acc) ? v : acc; break;
        case TGL_REDUCE_MIN: acc = k == 0 || isnan(v) || (!isnan(acc) && v < acc) ? v : acc; break;
        default: break;
        }
    }
    if (c->op == TGL_REDUCE_ANY || c->op == TGL_REDUCE_ALL)
        return c->op == TGL_REDUCE_ANY ? any : all;
    if (is_arg(c->op))
        return (double)at;
    if (t->dtype == TGL_DTYPE_I32 && (c->op == TGL_REDUCE_SUM || c->op == TGL_REDUCE_PROD))
        return (int32_t)iacc;
    if (c->op == TGL_REDUCE_SUM || c->op == TGL_REDUCE_MEAN)
        *scale = c->op == TGL_REDUCE_MEAN && n ? mag / (double)n : mag;
    return c->op == TGL_REDUCE_MEAN ? (n ? acc / (double)n : NAN) : acc;
}

/* Checks got (out's whole allocation) against the host reference: poison outside out's
 * elements, exact results bit for bit (as out's dtype), the rest within tol relative. */
static void check_host(const rcase *c, const uint8_t *got, double tol, const char *who, int i)
{
    const tgl_tensor *o = &c->out;
    size_t es = tgl_dtype_size(o->dtype), n = tgl_tensor_numel(o);
    uint8_t *seen = calloc(c->out_bytes, 1);
    size_t idx[TGL_MAX_DIMS] = {0}, coord[TGL_MAX_DIMS] = {0};
    int keep = o->ndim == c->in.ndim;
    for (size_t e = 0; e < n; e++) {
        size_t rem = e;
        for (size_t d = o->ndim; d-- > 0;) {
            idx[d] = rem % o->shape[d];
            rem /= o->shape[d];
        }
        int64_t off = (int64_t)(o->data / es);
        for (size_t d = 0, k = 0; d < o->ndim; d++) {
            off += (int64_t)idx[d] * o->strides[d];
            if (!(keep && d == c->axis))
                coord[k++] = idx[d];
        }
        int exact;
        double scale = -1.0;
        double want = expect(c, coord, &exact, &scale), have = load(o->dtype, got + off * (int64_t)es);
        memset(seen + off * (int64_t)es, 1, es);
        int ok;
        if (o->dtype == TGL_DTYPE_BOOL)
            ok = got[off] == (want != 0.0);
        else if (isnan(want))
            ok = isnan(have);
        else if (o->dtype == TGL_DTYPE_I32)
            ok = have == want;
        else {
            double w = (double)(float)want; /* the f32 rounding; f16 overflows past 65520 */
            if (o->dtype == TGL_DTYPE_F16 && fabs(w) >= 65520.0)
                w = w > 0 ? INFINITY : -INFINITY;
            double unit = o->dtype == TGL_DTYPE_F16 ? 1.0 / 1024 : o->dtype == TGL_DTYPE_BF16 ? 1.0 / 128 : 0.0;
            double floor = o->dtype == TGL_DTYPE_F16 ? ldexp(1.0, -24) : 1e-30; /* f16's subnormal step */
            double mag = scale >= 0.0 ? scale : fabs(w);
            ok = exact ? have == want : isinf(w) ? have == w : fabs(have - w) <= mag * tol + fabs(w) * unit + floor;
        }
        if (!ok)
            fail_msg("%s case %d: %s over axis %zu of %s, out element %zu: %.9g where %.9g is expected", who, i,
                     op_name(c->op), c->axis, tgl_dtype_name(c->in.dtype), e, have, want);
    }
    for (size_t k = 0; k < c->out_bytes; k++)
        if (!seen[k] && got[k] != POISON)
            fail_msg("%s case %d: byte %zu outside out's elements changed", who, i, k);
    free(seen);
}

/* A random case: in of 1-4 dims (1-2 for long dims; a dim sometimes 0 or 1), a random axis, op and dtype it takes,
 * random layouts (an in dim sometimes repeated by a 0 stride), keepdim half the time. */
static void random_case(tgt_rng *r, rcase *c, size_t max_dim)
{
    size_t ndim = 1 + tgt_below(r, max_dim > 10 ? 2 : 4), shape[TGL_MAX_DIMS]; /* long dims: at most 2 */
    for (size_t d = 0; d < ndim; d++)
        shape[d] = tgt_below(r, 12) == 0 ? 0 : 1 + tgt_below(r, max_dim);
    c->axis = tgt_below(r, ndim);
    tgl_dtype dt;
    do {
        c->op = (int)tgt_below(r, N_OPS);
        dt = dtypes[tgt_below(r, N_DTYPES)];
    } while (!takes(c->op, dt) ||
             ((c->op == TGL_REDUCE_MAX || c->op == TGL_REDUCE_MIN || is_arg(c->op)) && shape[c->axis] == 0));
    c->in = tgt_random_layout(r, dt, ndim, shape, &c->in_bytes);
    size_t d0 = tgt_below(r, ndim);
    if (tgt_below(r, 6) == 0)
        c->in.strides[d0] = 0;
    c->init = malloc(c->in_bytes);
    tgt_pool_fill(r, dt, c->init, c->in_bytes);
    if (c->op == TGL_REDUCE_PROD || c->op == TGL_REDUCE_SUM || c->op == TGL_REDUCE_MEAN) {
        /* sums and products of edge values are mostly inf and NaN: plain numbers instead */
        for (size_t k = 0; k + tgl_dtype_size(dt) <= c->in_bytes; k += tgl_dtype_size(dt)) {
            float v = tgt_uniform(r, 0.5f, 1.5f) * (tgt_below(r, 2) ? 1.0f : -1.0f);
            if (dt == TGL_DTYPE_I32) {
                int32_t i = (int32_t)(tgt_next(r) >> (tgt_below(r, 2) ? 33 : 0));
                memcpy(c->init + k, &i, 4);
            } else if (c->op == TGL_REDUCE_PROD || tgt_below(r, 40) != 0) {
                /* products only of plain numbers: f32 partial products of edge values overflow
                 * and underflow where a double's do not */
                uint8_t buf[4];
                memcpy(buf, &v, 4);
                if (dt == TGL_DTYPE_F32)
                    memcpy(c->init + k, buf, 4);
                else if (dt == TGL_DTYPE_BF16)
                    memcpy(c->init + k, buf + 2, 2); /* truncated: a bf16 value */
                else {
                    uint16_t h = (uint16_t)(0x3800 + tgt_below(r, 0x800)) | (uint16_t)(tgt_below(r, 2) << 15);
                    memcpy(c->init + k, &h, 2);
                }
            }
        }
    }
    if (dt == TGL_DTYPE_F32 || dt == TGL_DTYPE_BF16) /* GL may flush f32 subnormals in arithmetic (docs/ops.md) */
        for (size_t k = 0, es = tgl_dtype_size(dt); k + es <= c->in_bytes; k += es) {
            double v = load(dt, c->init + k);
            if (v != 0.0 && fabs(v) < FLT_MIN && c->op != TGL_REDUCE_MAX && c->op != TGL_REDUCE_MIN && !is_arg(c->op))
                memset(c->init + k, 0, es);
        }
    size_t oshape[TGL_MAX_DIMS], ondim = 0;
    int keep = tgt_below(r, 2);
    for (size_t d = 0; d < ndim; d++)
        if (d != c->axis || keep)
            oshape[ondim++] = d == c->axis ? 1 : shape[d];
    tgl_dtype odt = c->op == TGL_REDUCE_ANY || c->op == TGL_REDUCE_ALL ? TGL_DTYPE_BOOL : is_arg(c->op) ? TGL_DTYPE_I32 : dt;
    c->out = tgt_random_layout(r, odt, ondim, oshape, &c->out_bytes);
}

static void test_random(void **state)
{
    tgt_pair *p = *state;
    for (int i = 0; i < 500; i++) {
        rcase c;
        random_case(&p->rng, &c, i % 10 == 9 ? 300 : 7);
        uint8_t *cpu = malloc(c.out_bytes), *gl = malloc(c.out_bytes);
        TGT_OK(p->cpu, run_on(p->cpu, &c, cpu));
        check_host(&c, cpu, 1e-6, "cpu", i);
        if (p->gl && tgl_supports(p->gl, TGL_OP_REDUCE_T, TGL_DTYPE_F32)) {
            TGT_OK(p->gl, run_on(p->gl, &c, gl));
            check_host(&c, gl, 2e-5, "gl", i);
        }
        free(cpu);
        free(gl);
        free(c.init);
    }
}

/* Hand-worked values on both backends: i32 wrap, NaN in max/min, -0 and NaN in any/all,
 * empty axes. */
static void test_known(void **state)
{
    tgt_pair *p = *state;
    tgl_backend *bs[2] = {p->cpu, p->gl};
    for (int k = 0; k < 2; k++) {
        tgl_backend *b = bs[k];
        if (!b || !tgl_supports(b, TGL_OP_REDUCE_T, TGL_DTYPE_F32))
            continue;
        tgl_ptr pi, po;
        TGT_OK(b, tgl_alloc(b, 64, &pi));
        TGT_OK(b, tgl_alloc(b, 16, &po));
        const int32_t big[3] = {INT32_MAX, 1, 5};
        TGT_OK(b, tgl_copy_htod(b, pi, big, sizeof big));
        tgl_tensor in = tgl_tensor_contiguous(pi, TGL_DTYPE_I32, 1, (size_t[]){3});
        tgl_tensor out = tgl_tensor_contiguous(po, TGL_DTYPE_I32, 0, NULL);
        int32_t got;
        TGT_OK(b, tgl_reduce_t(b, TGL_REDUCE_SUM, &in, 0, &out));
        TGT_OK(b, tgl_copy_dtoh(b, &got, po, 4));
        assert_int_equal(got, INT32_MIN + 5); /* wraps */
        TGT_OK(b, tgl_reduce_t(b, TGL_REDUCE_PROD, &in, 0, &out));
        TGT_OK(b, tgl_copy_dtoh(b, &got, po, 4));
        assert_int_equal(got, (int32_t)((uint32_t)INT32_MAX * 5u));
        const float f[4] = {1.0f, NAN, 3.0f, -0.0f};
        TGT_OK(b, tgl_copy_htod(b, pi, f, sizeof f));
        tgl_tensor fin = tgl_tensor_contiguous(pi, TGL_DTYPE_F32, 1, (size_t[]){4});
        tgl_tensor fout = tgl_tensor_contiguous(po, TGL_DTYPE_F32, 0, NULL);
        float g;
        TGT_OK(b, tgl_reduce_t(b, TGL_REDUCE_MAX, &fin, 0, &fout));
        TGT_OK(b, tgl_copy_dtoh(b, &g, po, 4));
        assert_true(isnan(g));
        tgl_tensor bout = tgl_tensor_contiguous(po, TGL_DTYPE_BOOL, 0, NULL);
        uint8_t t;
        fin.shape[0] = 1;
        fin.data = pi + 12; /* -0 alone: false */
        TGT_OK(b, tgl_reduce_t(b, TGL_REDUCE_ANY, &fin, 0, &bout));
        TGT_OK(b, tgl_copy_dtoh(b, &t, po, 1));
        assert_int_equal(t, 0);
        fin.data = pi + 4; /* NaN alone: true */
        TGT_OK(b, tgl_reduce_t(b, TGL_REDUCE_ALL, &fin, 0, &bout));
        TGT_OK(b, tgl_copy_dtoh(b, &t, po, 1));
        assert_int_equal(t, 1);
        fin.shape[0] = 0; /* empty: all is true, any false, sum 0, prod 1, mean NaN */
        TGT_OK(b, tgl_reduce_t(b, TGL_REDUCE_ALL, &fin, 0, &bout));
        TGT_OK(b, tgl_copy_dtoh(b, &t, po, 1));
        assert_int_equal(t, 1);
        TGT_OK(b, tgl_reduce_t(b, TGL_REDUCE_ANY, &fin, 0, &bout));
        TGT_OK(b, tgl_copy_dtoh(b, &t, po, 1));
        assert_int_equal(t, 0);
        TGT_OK(b, tgl_reduce_t(b, TGL_REDUCE_PROD, &fin, 0, &fout));
        TGT_OK(b, tgl_copy_dtoh(b, &g, po, 4));
        assert_true(g == 1.0f);
        TGT_OK(b, tgl_reduce_t(b, TGL_REDUCE_MEAN, &fin, 0, &fout));
        TGT_OK(b, tgl_copy_dtoh(b, &g, po, 4));
        assert_true(isnan(g));
        TGT_OK(b, tgl_free(b, pi));
        TGT_OK(b, tgl_free(b, po));
    }
}

/* Sums and means of finite f32 and bf16 values near the range limit, whose f32 running sums
 * overflow where the CPU's double does not (the GL kernel takes such a line again, scaled):
 * both backends give the same result, in its dtype, to a rounding of it. Lines as rows (short:
 * an invocation each; long: a workgroup each) and as columns (strided); patterns as
 * test_reduce's: all 3e38 (mean 3e38, sum inf), 3e38 + 3e38 - 3e38, +-3.3e38 cancelling, a NaN,
 * an inf, inf and -inf, ordinary. */
static void test_near_f32_range(void **state)
{
    tgt_pair *p = *state;
    if (!p->gl)
        skip();
    static const size_t lens[] = {1, 2, 3, 7, 300, 5000};
    const size_t lines = 7;
    for (size_t di = 0; di < 2; di++) {
        tgl_dtype dt = di ? TGL_DTYPE_BF16 : TGL_DTYPE_F32;
        size_t es = tgl_dtype_size(dt);
        for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
            size_t len = lens[li];
            uint8_t *x = malloc(lines * len * es);
            for (size_t l = 0; l < lines; l++)
                for (size_t k = 0; k < len; k++) {
                    float v;
                    switch (l) {
                    case 0: v = 3e38f; break;
                    case 1: v = k < 2 ? 3e38f : k == 2 ? -3e38f : 0.0f; break;
                    case 2: v = (k % 2 ? -1.0f : 1.0f) * 3.3e38f; break;
                    case 3: v = k == len / 2 ? NAN : 3e38f; break;
                    case 4: v = k == len - 1 ? INFINITY : 3e38f; break;
                    case 5: v = k == 0 ? INFINITY : k == len - 1 ? -INFINITY : 2e38f; break;
                    default: v = (float)(k % 13) - 6.0f; break;
                    }
                    uint32_t u;
                    memcpy(&u, &v, 4);
                    u >>= di ? 16 : 0; /* bf16: truncated, still finite */
                    memcpy(x + (l * len + k) * es, &u, es);
                }
            for (int op = TGL_REDUCE_SUM; op <= TGL_REDUCE_MEAN; op++)
                for (int as_cols = 0; as_cols < 2; as_cols++) {
                    /* rows: [lines, len] over axis 1; columns: the same memory read as
                     * [len, lines] with strides (1, len), over axis 0 */
                    rcase c = {.op = op, .axis = as_cols ? 0u : 1u, .init = x, .in_bytes = lines * len * es,
                               .out_bytes = lines * es};
                    size_t shape[2] = {as_cols ? len : lines, as_cols ? lines : len};
                    c.in = tgl_tensor_contiguous(0, dt, 2, shape);
                    if (as_cols) {
                        c.in.strides[0] = 1;
                        c.in.strides[1] = (int64_t)len;
                    }
                    c.out = tgl_tensor_contiguous(0, dt, 1, (size_t[]){lines});
                    uint8_t *g = malloc(c.out_bytes), *w = malloc(c.out_bytes);
                    TGT_OK(p->gl, run_on(p->gl, &c, g));
                    TGT_OK(p->cpu, run_on(p->cpu, &c, w));
                    for (size_t l = 0; l < lines; l++) {
                        double gv = load(dt, g + l * es), wv = load(dt, w + l * es);
                        double tol = (di ? 0x1p-7 : 0x1p-22) * fabs(wv);
                        int same = isnan(wv) ? isnan(gv) : isinf(wv) ? gv == wv : fabs(gv - wv) <= tol;
                        if (!same)
                            fail_msg("%s of %s line %zu of %zu (%s): gl %.9g, cpu %.9g", op_name(op),
                                     tgl_dtype_name(dt), l, len, as_cols ? "a column" : "a row", gv, wv);
                    }
                    free(g);
                    free(w);
                }
            free(x);
        }
    }
}

/* The index of one hand-made line on b: argmax (or argmin) of n values of dt from host bytes. */
static int32_t arg_of(tgl_backend *b, int op, tgl_dtype dt, const void *host, size_t n)
{
    tgl_ptr pi, po;
    int32_t got = -7;
    TGT_OK(b, tgl_alloc(b, n * tgl_dtype_size(dt), &pi));
    TGT_OK(b, tgl_alloc(b, 4, &po));
    TGT_OK(b, tgl_copy_htod(b, pi, host, n * tgl_dtype_size(dt)));
    tgl_tensor in = tgl_tensor_contiguous(pi, dt, 1, &n), out = tgl_tensor_contiguous(po, TGL_DTYPE_I32, 0, NULL);
    TGT_OK(b, op == ARGMAX ? tgl_argmax_t(b, &in, 0, &out) : tgl_argmin_t(b, &in, 0, &out));
    TGT_OK(b, tgl_copy_dtoh(b, &got, po, 4));
    TGT_OK(b, tgl_free(b, pi));
    TGT_OK(b, tgl_free(b, po));
    return got;
}

/* argmax / argmin by hand on both backends: the first NaN wins both, -0 and +0 tie, the first of
 * equal values, i32 extremes, bf16; and long lines (a workgroup each on GL) whose best value
 * repeats in many lanes, the first at a high index or a NaN late. */
static void test_arg_known(void **state)
{
    tgt_pair *p = *state;
    tgl_backend *bs[2] = {p->cpu, p->gl};
    for (int k = 0; k < 2; k++) {
        tgl_backend *b = bs[k];
        if (!b || !tgl_supports(b, TGL_OP_ARG_REDUCE, TGL_DTYPE_I32))
            continue;
        const float nan_line[5] = {1.0f, 7.0f, NAN, 9.0f, NAN};
        assert_int_equal(arg_of(b, ARGMAX, TGL_DTYPE_F32, nan_line, 5), 2);
        assert_int_equal(arg_of(b, ARGMIN, TGL_DTYPE_F32, nan_line, 5), 2);
        const float zeros[4] = {-0.0f, 0.0f, -0.0f, 0.0f};
        assert_int_equal(arg_of(b, ARGMAX, TGL_DTYPE_F32, zeros, 4), 0);
        assert_int_equal(arg_of(b, ARGMIN, TGL_DTYPE_F32, zeros, 4), 0);
        const float ties[6] = {-INFINITY, 2.0f, -INFINITY, 2.0f, 1e-45f, -1e-45f};
        assert_int_equal(arg_of(b, ARGMAX, TGL_DTYPE_F32, ties, 6), 1);
        assert_int_equal(arg_of(b, ARGMIN, TGL_DTYPE_F32, ties, 6), 0);
        assert_int_equal(arg_of(b, ARGMAX, TGL_DTYPE_F32, ties + 4, 2), 0); /* subnormals, not flushed */
        assert_int_equal(arg_of(b, ARGMIN, TGL_DTYPE_F32, ties + 4, 2), 1);
        const int32_t ints[5] = {5, INT32_MIN, INT32_MAX, INT32_MIN, INT32_MAX};
        assert_int_equal(arg_of(b, ARGMAX, TGL_DTYPE_I32, ints, 5), 2);
        assert_int_equal(arg_of(b, ARGMIN, TGL_DTYPE_I32, ints, 5), 1);
        const uint16_t bf[4] = {0x3F80, 0x4000, 0xC000, 0x4000}; /* 1, 2, -2, 2 */
        assert_int_equal(arg_of(b, ARGMAX, TGL_DTYPE_BF16, bf, 4), 1);
        assert_int_equal(arg_of(b, ARGMIN, TGL_DTYPE_BF16, bf, 4), 2);
        enum { LONG = 5000 };
        float *line = malloc(LONG * sizeof *line);
        for (size_t i = 0; i < LONG; i++)
            line[i] = i >= 3001 && i % 7 == 3 ? 5.0f : (float)(i % 5);
        assert_int_equal(arg_of(b, ARGMAX, TGL_DTYPE_F32, line, LONG), 3006); /* first 5 past 3000 (3006 % 7 == 3) */
        assert_int_equal(arg_of(b, ARGMIN, TGL_DTYPE_F32, line, LONG), 0);
        for (size_t i = 0; i < LONG; i++)
            line[i] = 1.0f;
        line[4321] = NAN;
        line[4999] = NAN;
        assert_int_equal(arg_of(b, ARGMAX, TGL_DTYPE_F32, line, LONG), 4321);
        assert_int_equal(arg_of(b, ARGMIN, TGL_DTYPE_F32, line, LONG), 4321);
        free(line);
    }
}

/* Every refusal on the CPU backend (and GL where it runs the op), out unchanged. */
static void test_refusals(void **state)
{
    tgt_pair *p = *state;
    tgl_backend *bs[2] = {p->cpu, p->gl};
    for (int k = 0; k < 2; k++) {
        tgl_backend *b = bs[k];
        if (!b || !tgl_supports(b, TGL_OP_REDUCE_T, TGL_DTYPE_F32))
            continue;
        tgl_ptr pi, po;
        uint8_t poison[64], after[64];
        memset(poison, POISON, sizeof poison);
        TGT_OK(b, tgl_alloc(b, 256, &pi));
        TGT_OK(b, tgl_alloc(b, 64, &po));
        TGT_OK(b, tgl_copy_htod(b, po, poison, sizeof poison));
        const size_t s[2] = {4, 6};
        tgl_tensor in = tgl_tensor_contiguous(pi, TGL_DTYPE_F32, 2, s), x;
        tgl_tensor out = tgl_tensor_contiguous(po, TGL_DTYPE_F32, 1, (size_t[]){4}), o;
        TGT_EXPECT(b, tgl_reduce_t(b, (tgl_reduce_op)TGL_REDUCE_COUNT, &in, 1, &out), TGL_ERR_INVALID_ARGUMENT);
        TGT_EXPECT(b, tgl_reduce_t(b, TGL_REDUCE_SUM, NULL, 1, &out), TGL_ERR_INVALID_ARGUMENT);
        TGT_EXPECT(b, tgl_reduce_t(b, TGL_REDUCE_SUM, &in, 2, &out), TGL_ERR_INVALID_ARGUMENT);
        TGT_EXPECT(b, tgl_reduce_t(b, TGL_REDUCE_SUM, &in, 0, &out), TGL_ERR_INVALID_ARGUMENT); /* out 4, want 6 */
        x = in;
        x.ndim = 0;
        TGT_EXPECT(b, tgl_reduce_t(b, TGL_REDUCE_SUM, &x, 0, &out), TGL_ERR_INVALID_ARGUMENT);
        o = out;
        o.dtype = TGL_DTYPE_F16;
        TGT_EXPECT(b, tgl_reduce_t(b, TGL_REDUCE_SUM, &in, 1, &o), TGL_ERR_INVALID_ARGUMENT);
        TGT_EXPECT(b, tgl_reduce_t(b, TGL_REDUCE_ANY, &in, 1, &out), TGL_ERR_INVALID_ARGUMENT); /* out not bool */
        x = in;
        x.dtype = TGL_DTYPE_BOOL;
        o = out;
        o.dtype = TGL_DTYPE_BOOL;
        TGT_EXPECT(b, tgl_reduce_t(b, TGL_REDUCE_SUM, &x, 1, &o), TGL_ERR_UNSUPPORTED);
        x.dtype = TGL_DTYPE_I32;
        o.dtype = TGL_DTYPE_I32;
        TGT_EXPECT(b, tgl_reduce_t(b, TGL_REDUCE_MEAN, &x, 1, &o), TGL_ERR_UNSUPPORTED);
        x.dtype = TGL_DTYPE_Q8_0;
        TGT_EXPECT(b, tgl_reduce_t(b, TGL_REDUCE_SUM, &x, 1, &o), TGL_ERR_UNSUPPORTED);
        x = in;
        x.shape[1] = 0;
        TGT_EXPECT(b, tgl_reduce_t(b, TGL_REDUCE_MAX, &x, 1, &out), TGL_ERR_INVALID_ARGUMENT); /* empty axis */
        o = out;
        o.strides[0] = 0; /* reaches an element twice */
        TGT_EXPECT(b, tgl_reduce_t(b, TGL_REDUCE_SUM, &in, 1, &o), TGL_ERR_INVALID_ARGUMENT);
        o = out;
        o.data = pi + 8; /* inside in */
        TGT_EXPECT(b, tgl_reduce_t(b, TGL_REDUCE_SUM, &in, 1, &o), TGL_ERR_INVALID_ARGUMENT);
        x = in;
        x.strides[0] = 20; /* past in's allocation */
        TGT_EXPECT(b, tgl_reduce_t(b, TGL_REDUCE_SUM, &x, 1, &out), TGL_ERR_INVALID_POINTER);
        /* the index ops: out not i32, bool and block formats, an empty axis, 0-d */
        TGT_EXPECT(b, tgl_argmax_t(b, &in, 1, &out), TGL_ERR_INVALID_ARGUMENT);
        o = out;
        o.dtype = TGL_DTYPE_I32;
        x = in;
        x.dtype = TGL_DTYPE_BOOL;
        TGT_EXPECT(b, tgl_argmin_t(b, &x, 1, &o), TGL_ERR_UNSUPPORTED);
        x.dtype = TGL_DTYPE_Q4_0;
        TGT_EXPECT(b, tgl_argmax_t(b, &x, 1, &o), TGL_ERR_UNSUPPORTED);
        x = in;
        x.shape[1] = 0;
        TGT_EXPECT(b, tgl_argmax_t(b, &x, 1, &o), TGL_ERR_INVALID_ARGUMENT);
        x.ndim = 0;
        TGT_EXPECT(b, tgl_argmin_t(b, &x, 0, &o), TGL_ERR_INVALID_ARGUMENT);
        TGT_EXPECT(b, tgl_argmin_t(b, &in, 1, NULL), TGL_ERR_INVALID_ARGUMENT);
        o.data = pi + 8; /* inside in */
        TGT_EXPECT(b, tgl_argmax_t(b, &in, 1, &o), TGL_ERR_INVALID_ARGUMENT);
        TGT_OK(b, tgl_copy_dtoh(b, after, po, sizeof after));
        assert_memory_equal(after, poison, sizeof after);
        TGT_OK(b, tgl_free(b, pi));
        TGT_OK(b, tgl_free(b, po));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known),
        cmocka_unit_test(test_arg_known),
        cmocka_unit_test(test_near_f32_range),
        cmocka_unit_test(test_random),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
