/* tgl_softmax_t, tgl_log_softmax_t, tgl_rmsnorm_t and tgl_layernorm_t on GL and on the CPU
 * backend, each checked against a host reference computed here in double from the stored bytes:
 * random layouts (negative strides, gaps, 0 strides in the dims around the line), every float
 * dtype for in, out and the 1-D operands, the whole out allocation (bytes outside out's elements
 * keep their poison); in place; lines with NaN, -inf (masked) and +inf; long lines; refusals. */
#include "testing.h"
#include "tensors.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define POISON 0xA5

static int setup(void **state)
{
    return tgt_pair_setup(state, 0x50F7);
}

static int teardown(void **state)
{
    return tgt_pair_teardown(state);
}

enum { SOFTMAX, LOG_SOFTMAX, RMSNORM, LAYERNORM, N_OPS };
static const char *const names[N_OPS] = {"softmax_t", "log_softmax_t", "rmsnorm_t", "layernorm_t"};
static const tgl_dtype floats[] = {TGL_DTYPE_F32, TGL_DTYPE_F16, TGL_DTYPE_BF16};

typedef struct rcase {
    int op;
    size_t axis;
    float eps;
    tgl_tensor in, out, w, bias; /* data: byte offsets into their allocations */
    int has_w, has_bias, in_place;
    uint8_t *init, *winit, *binit;
    size_t in_bytes, out_bytes, w_bytes, b_bytes;
} rcase;

static double load(tgl_dtype dt, const uint8_t *p)
{
    uint32_t u = 0;
    float f;
    if (dt == TGL_DTYPE_F32) {
        memcpy(&f, p, 4);
        return f;
    }
    if (dt == TGL_DTYPE_BF16) {
        memcpy(&u, p, 2);
        u <<= 16;
        memcpy(&f, &u, 4);
        return f;
    }
    uint16_t h;
    memcpy(&h, p, 2);
    int e = (h >> 10) & 31, m = h & 1023;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m + 1024, e - 25);
    return h & 0x8000 ? -v : v;
}

/* v stored as dt at p (round to nearest even through the backend-independent f32 -> half
 * rules is not needed here: test inputs are made by truncating an f32, which is a dt value). */
static void store_trunc(tgl_dtype dt, float v, uint8_t *p)
{
    uint32_t u;
    memcpy(&u, &v, 4);
    if (dt == TGL_DTYPE_F32)
        memcpy(p, &u, 4);
    else if (dt == TGL_DTYPE_BF16) {
        uint16_t h = (uint16_t)(u >> 16);
        memcpy(p, &h, 2);
    } else { /* f16 of |v| < 8: sign, exponent rebiased, 10 mantissa bits (truncated) */
        uint16_t h;
        if (isnan(v))
            h = 0x7E00;
        else if (isinf(v))
            h = v > 0 ? 0x7C00 : 0xFC00;
        else {
            int e;
            double m = frexp(fabs((double)v), &e); /* |v| = m 2^e, m in [0.5, 1) */
            if (v == 0.0f || e < -13)
                h = 0;
            else
                h = (uint16_t)(((e + 14) << 10) | ((uint16_t)(m * 2048.0) & 1023));
            if (v < 0)
                h |= 0x8000;
        }
        memcpy(p, &h, 2);
    }
}

static size_t at_of(const tgl_tensor *t, const size_t *idx)
{
    int64_t off = (int64_t)(t->data / tgl_dtype_size(t->dtype));
    for (size_t d = 0; d < t->ndim; d++)
        off += (int64_t)idx[d] * t->strides[d];
    return (size_t)off * tgl_dtype_size(t->dtype);
}

/* The reference of every element of the line through idx (idx[axis] ignored), into want (len). */
static void reference(const rcase *c, const uint8_t *in_bytes, size_t *idx, double *want)
{
    size_t n = c->in.shape[c->axis];
    double *v = malloc(n * sizeof *v);
    for (size_t k = 0; k < n; k++) {
        idx[c->axis] = k;
        v[k] = load(c->in.dtype, in_bytes + at_of(&c->in, idx));
    }
    int nan = 0;
    for (size_t k = 0; k < n; k++)
        nan |= isnan(v[k]);
    if (c->op == SOFTMAX || c->op == LOG_SOFTMAX) {
        double m = -INFINITY, s = 0.0;
        for (size_t k = 0; k < n; k++)
            m = v[k] > m ? v[k] : m;
        nan |= isinf(m);
        for (size_t k = 0; k < n; k++)
            s += exp(v[k] - m);
        for (size_t k = 0; k < n; k++)
            want[k] = nan ? NAN : c->op == SOFTMAX ? exp(v[k] - m) / s : v[k] - m - log(s);
    } else {
        double mean = 0.0, sq = 0.0;
        if (c->op == LAYERNORM) {
            for (size_t k = 0; k < n; k++)
                mean += v[k];
            mean /= (double)n;
        }
        for (size_t k = 0; k < n; k++)
            sq += (v[k] - mean) * (v[k] - mean);
        double r = 1.0 / sqrt(sq / (double)n + (double)c->eps);
        for (size_t k = 0; k < n; k++) {
            double y = (v[k] - mean) * r;
            if (c->has_w)
                y *= load(c->w.dtype, c->winit + (size_t)((int64_t)(c->w.data / tgl_dtype_size(c->w.dtype)) +
                                                          (int64_t)k * c->w.strides[0]) *
                                                         tgl_dtype_size(c->w.dtype));
            if (c->has_bias)
                y += load(c->bias.dtype, c->binit + (size_t)((int64_t)(c->bias.data / tgl_dtype_size(c->bias.dtype)) +
                                                             (int64_t)k * c->bias.strides[0]) *
                                                            tgl_dtype_size(c->bias.dtype));
            want[k] = nan ? NAN : y;
        }
    }
    free(v);
}

static tgl_status run_on(tgl_backend *b, const rcase *c, uint8_t *got)
{
    tgl_ptr pi, po = 0, pw = 0, pb = 0;
    TGT_OK(b, tgl_alloc(b, c->in_bytes, &pi));
    TGT_OK(b, tgl_copy_htod(b, pi, c->init, c->in_bytes));
    if (!c->in_place) {
        TGT_OK(b, tgl_alloc(b, c->out_bytes, &po));
        memset(got, POISON, c->out_bytes);
        TGT_OK(b, tgl_copy_htod(b, po, got, c->out_bytes));
    }
    if (c->has_w) {
        TGT_OK(b, tgl_alloc(b, c->w_bytes, &pw));
        TGT_OK(b, tgl_copy_htod(b, pw, c->winit, c->w_bytes));
    }
    if (c->has_bias) {
        TGT_OK(b, tgl_alloc(b, c->b_bytes, &pb));
        TGT_OK(b, tgl_copy_htod(b, pb, c->binit, c->b_bytes));
    }
    tgl_tensor in = c->in, out = c->out, w = c->w, bias = c->bias;
    in.data += pi;
    out.data += c->in_place ? pi : po;
    w.data += pw;
    bias.data += pb;
    const tgl_tensor *wp = c->has_w ? &w : NULL, *bp = c->has_bias ? &bias : NULL;
    tgl_status st = c->op == SOFTMAX       ? tgl_softmax_t(b, &in, c->axis, &out)
                    : c->op == LOG_SOFTMAX ? tgl_log_softmax_t(b, &in, c->axis, &out)
                    : c->op == RMSNORM     ? tgl_rmsnorm_t(b, &in, wp, &out, c->eps)
                                           : tgl_layernorm_t(b, &in, wp, bp, &out, c->eps);
    TGT_OK(b, tgl_copy_dtoh(b, got, c->in_place ? pi : po, c->out_bytes));
    TGT_OK(b, tgl_free(b, pi));
    if (po)
        TGT_OK(b, tgl_free(b, po));
    if (pw)
        TGT_OK(b, tgl_free(b, pw));
    if (pb)
        TGT_OK(b, tgl_free(b, pb));
    return st;
}

/* got (out's whole allocation) against the reference: out's elements within tol relative (of
 * 1 + |want|) plus one unit of out's rounding, NaN where NaN is wanted, the rest untouched (its
 * poison, or in's bytes when in place). */
static void check(const rcase *c, const uint8_t *got, double tol, const char *who, int i)
{
    const tgl_tensor *o = &c->out;
    size_t n = c->in.shape[c->axis], total = tgl_tensor_numel(o), es = tgl_dtype_size(o->dtype);
    uint8_t *seen = calloc(c->out_bytes, 1);
    double *want = malloc((n ? n : 1) * sizeof *want);
    double unit = o->dtype == TGL_DTYPE_F16 ? 1.0 / 1024 : o->dtype == TGL_DTYPE_BF16 ? 1.0 / 128 : 0.0;
    size_t idx[TGL_MAX_DIMS] = {0};
    for (size_t e = 0; e < total; e++) {
        size_t rem = e;
        for (size_t d = o->ndim; d-- > 0;) {
            idx[d] = rem % o->shape[d];
            rem /= o->shape[d];
        }
        if (idx[c->axis] != 0)
            continue; /* a line at a time, from its first element */
        reference(c, c->init, idx, want);
        for (size_t k = 0; k < n; k++) {
            idx[c->axis] = k;
            size_t off = at_of(o, idx);
            double have = load(o->dtype, got + off), w = want[k];
            memset(seen + off, 1, es);
            int ok = isnan(w) ? isnan(have)
                     : isinf(w) ? have == w
                                : fabs(have - w) <= tol * (1.0 + fabs(w)) + unit * fabs(w) + (unit ? 1e-4 : 0.0);
            if (!ok)
                fail_msg("%s case %d: %s of %s into %s over axis %zu (len %zu), element %zu of a line: %.9g where %.9g "
                         "is expected",
                         who, i, names[c->op], tgl_dtype_name(c->in.dtype), tgl_dtype_name(o->dtype), c->axis, n, k, have,
                         w);
        }
        idx[c->axis] = 0;
    }
    for (size_t k = 0; k < c->out_bytes; k++)
        if (!seen[k] && got[k] != (c->in_place ? c->init[k] : POISON))
            fail_msg("%s case %d: byte %zu outside out's elements changed", who, i, k);
    free(seen);
    free(want);
}

/* A 1-D operand of len elements (a random dtype, a stride of +-1..3) filled with values near 1. */
static tgl_tensor param_of(tgt_rng *r, tgl_dtype dt, size_t len, uint8_t **init, size_t *bytes)
{
    tgl_tensor t = tgt_random_layout(r, dt, 1, &len, bytes);
    *init = malloc(*bytes);
    memset(*init, 0, *bytes);
    for (size_t k = 0; k + tgl_dtype_size(dt) <= *bytes; k += tgl_dtype_size(dt))
        store_trunc(dt, tgt_uniform(r, -2.0f, 2.0f), *init + k);
    return t;
}

static void random_case(tgt_rng *r, rcase *c, size_t max_len)
{
    size_t ndim = 1 + tgt_below(r, 3), shape[TGL_MAX_DIMS];
    for (size_t d = 0; d < ndim; d++)
        shape[d] = tgt_below(r, 15) == 0 ? 0 : 1 + tgt_below(r, 5);
    memset(c, 0, sizeof *c);
    c->op = (int)tgt_below(r, N_OPS);
    c->axis = c->op >= RMSNORM ? ndim - 1 : tgt_below(r, ndim);
    shape[c->axis] = 1 + tgt_below(r, max_len);
    c->eps = tgt_below(r, 4) == 0 ? 0.0f : 1e-5f;
    tgl_dtype dt = floats[tgt_below(r, 3)], odt = tgt_below(r, 2) ? dt : floats[tgt_below(r, 3)];
    c->in = tgt_random_layout(r, dt, ndim, shape, &c->in_bytes);
    size_t d0 = tgt_below(r, ndim);
    if (d0 != c->axis && tgt_below(r, 5) == 0) /* a repeated line (the out lines stay distinct) */
        c->in.strides[d0] = 0;
    c->init = malloc(c->in_bytes);
    memset(c->init, 0, c->in_bytes);
    int edgy = tgt_below(r, 6) == 0;
    for (size_t k = 0, es = tgl_dtype_size(dt); k + es <= c->in_bytes; k += es) {
        float v = tgt_uniform(r, -4.0f, 4.0f);
        if (edgy) { /* masked entries, and now and then an infinity or a NaN */
            unsigned pick = tgt_below(r, 40);
            v = pick < 6 ? -INFINITY : pick == 6 ? INFINITY : pick == 7 ? NAN : v;
        }
        store_trunc(dt, v, c->init + k);
    }
    c->in_place = odt == dt && c->in.strides[d0] != 0 && tgt_below(r, 4) == 0;
    if (c->in_place) {
        c->out = c->in;
        c->out_bytes = c->in_bytes;
    } else
        c->out = tgt_random_layout(r, odt, ndim, shape, &c->out_bytes);
    if (c->op >= RMSNORM) {
        tgl_dtype wdt = floats[tgt_below(r, 3)];
        c->has_w = tgt_below(r, 4) != 0;
        c->has_bias = c->op == LAYERNORM && tgt_below(r, 3) != 0;
        if (c->has_w)
            c->w = param_of(r, wdt, shape[c->axis], &c->winit, &c->w_bytes);
        if (c->has_bias)
            c->bias = param_of(r, wdt, shape[c->axis], &c->binit, &c->b_bytes);
    }
}

static void free_case(rcase *c)
{
    free(c->init);
    free(c->winit);
    free(c->binit);
}

static void test_random(void **state)
{
    tgt_pair *p = *state;
    for (int i = 0; i < 300; i++) {
        rcase c;
        random_case(&p->rng, &c, i % 10 == 9 ? 700 : 40);
        uint8_t *cpu = malloc(c.out_bytes), *gl = malloc(c.out_bytes);
        if (c.in_place) {
            memcpy(cpu, c.init, c.out_bytes);
            memcpy(gl, c.init, c.out_bytes);
        }
        TGT_OK(p->cpu, run_on(p->cpu, &c, cpu));
        check(&c, cpu, 1e-6, "cpu", i);
        if (p->gl) {
            TGT_OK(p->gl, run_on(p->gl, &c, gl));
            check(&c, gl, 1e-4, "gl", i);
        }
        free(cpu);
        free(gl);
        free_case(&c);
    }
}

/* By hand on both backends: a masked softmax row, a row of only -inf (NaN), a NaN in a norm's
 * line, lines near the f32 range limit, a 3000-element line, and in place on a strided f16 view. */
static void test_known(void **state)
{
    tgt_pair *p = *state;
    tgl_backend *bs[2] = {p->cpu, p->gl};
    for (int k = 0; k < 2; k++) {
        tgl_backend *b = bs[k];
        if (!b)
            continue;
        tgl_ptr pi, po;
        enum { LONG = 3000 };
        TGT_OK(b, tgl_alloc(b, LONG * 4, &pi));
        TGT_OK(b, tgl_alloc(b, LONG * 4, &po));
        const float masked[2][4] = {{1.0f, -INFINITY, 1.0f, -INFINITY}, {-INFINITY, -INFINITY, -INFINITY, -INFINITY}};
        TGT_OK(b, tgl_copy_htod(b, pi, masked, sizeof masked));
        tgl_tensor in = tgl_tensor_contiguous(pi, TGL_DTYPE_F32, 2, (size_t[]){2, 4});
        tgl_tensor out = tgl_tensor_contiguous(po, TGL_DTYPE_F32, 2, (size_t[]){2, 4});
        float got[8];
        TGT_OK(b, tgl_softmax_t(b, &in, 1, &out));
        TGT_OK(b, tgl_copy_dtoh(b, got, po, sizeof got));
        assert_true(got[0] == 0.5f && got[1] == 0.0f && got[2] == 0.5f && got[3] == 0.0f);
        for (int j = 4; j < 8; j++)
            assert_true(isnan(got[j]));
        TGT_OK(b, tgl_log_softmax_t(b, &in, 1, &out));
        TGT_OK(b, tgl_copy_dtoh(b, got, po, sizeof got));
        assert_true(fabsf(got[0] + logf(2.0f)) < 1e-6f && got[1] == -INFINITY);
        const float with_nan[4] = {1.0f, 2.0f, NAN, 3.0f};
        TGT_OK(b, tgl_copy_htod(b, pi, with_nan, sizeof with_nan));
        tgl_tensor row = tgl_tensor_contiguous(pi, TGL_DTYPE_F32, 1, (size_t[]){4});
        tgl_tensor orow = tgl_tensor_contiguous(po, TGL_DTYPE_F32, 1, (size_t[]){4});
        TGT_OK(b, tgl_rmsnorm_t(b, &row, NULL, &orow, 1e-5f));
        TGT_OK(b, tgl_copy_dtoh(b, got, po, 16));
        for (int j = 0; j < 4; j++)
            assert_true(isnan(got[j]));
        /* near the f32 range limit, where sums and squares overflow f32 but not the CPU's double:
         * rmsnorm of 3e38s is 1, layernorm of +-3e38 is +-1; an infinite element keeps the plain
         * result (NaN for it, 0 for the finite ones) */
        const float huge[3][4] = {{3e38f, 3e38f, 3e38f, 3e38f}, {3e38f, -3e38f, 3e38f, -3e38f},
                                  {INFINITY, 1.0f, 2.0f, 3.0f}};
        const float want_huge[3][4] = {{1, 1, 1, 1}, {1, -1, 1, -1}, {NAN, 0, 0, 0}};
        for (int h = 0; h < 3; h++) {
            TGT_OK(b, tgl_copy_htod(b, pi, huge[h], sizeof huge[h]));
            if (h == 1)
                TGT_OK(b, tgl_layernorm_t(b, &row, NULL, NULL, &orow, 1e-5f));
            else
                TGT_OK(b, tgl_rmsnorm_t(b, &row, NULL, &orow, 1e-5f));
            TGT_OK(b, tgl_copy_dtoh(b, got, po, 16));
            for (int j = 0; j < 4; j++)
                if (isnan(want_huge[h][j]) ? !isnan(got[j]) : fabsf(got[j] - want_huge[h][j]) > 1e-6f)
                    fail_msg("%s: %s of line %d near the f32 limit, element %d: %.9g where %.9g is expected",
                             tgl_backend_name(b), h == 1 ? "layernorm" : "rmsnorm", h, j, got[j], want_huge[h][j]);
        }
        /* a long f32 line: layernorm of 0, 1, ..., LONG-1 */
        float *line = malloc(LONG * sizeof *line);
        for (int j = 0; j < LONG; j++)
            line[j] = (float)j;
        TGT_OK(b, tgl_copy_htod(b, pi, line, LONG * 4));
        tgl_tensor lin = tgl_tensor_contiguous(pi, TGL_DTYPE_F32, 1, (size_t[]){LONG});
        tgl_tensor lout = tgl_tensor_contiguous(po, TGL_DTYPE_F32, 1, (size_t[]){LONG});
        TGT_OK(b, tgl_layernorm_t(b, &lin, NULL, NULL, &lout, 0.0f));
        TGT_OK(b, tgl_copy_dtoh(b, line, po, LONG * 4));
        double sd = sqrt(((double)LONG * LONG - 1.0) / 12.0); /* of 0..LONG-1 */
        for (int j = 0; j < LONG; j += 499)
            assert_true(fabs(line[j] - (j - (LONG - 1) / 2.0) / sd) < 1e-4);
        /* a line far from zero (mean about 1e4, spread about 1): the f32 mean of x itself is
         * off by up to half a unit in its last place (0.0005), and every output with it */
        double mean = 0.0, var = 0.0;
        for (int j = 0; j < 64; j++) {
            line[j] = 12345.678f + 0.0917f * (float)((j * 37) % 11);
            mean += line[j];
        }
        mean /= 64;
        for (int j = 0; j < 64; j++)
            var += (line[j] - mean) * (line[j] - mean);
        var /= 64;
        TGT_OK(b, tgl_copy_htod(b, pi, line, 64 * 4));
        lin.shape[0] = lout.shape[0] = 64;
        TGT_OK(b, tgl_layernorm_t(b, &lin, NULL, NULL, &lout, 0.0f));
        float far[64];
        TGT_OK(b, tgl_copy_dtoh(b, far, po, sizeof far));
        for (int j = 0; j < 64; j++)
            if (fabs(far[j] - (line[j] - mean) / sqrt(var)) > 1e-4)
                fail_msg("%s: layernorm of a line near 1e4, element %d: %.7g where %.7g is expected", tgl_backend_name(b),
                         j, far[j], (line[j] - mean) / sqrt(var));
        free(line);
        /* in place: softmax over the columns of a transposed f16 view (strides 1, 3) */
        const uint16_t h[6] = {0x3C00, 0x0000, 0x3C00, 0x0000, 0x3C00, 0x0000}; /* rows (1,0,1), (0,1,0) */
        TGT_OK(b, tgl_copy_htod(b, pi, h, sizeof h));
        tgl_tensor t = {.data = pi, .dtype = TGL_DTYPE_F16, .ndim = 2, .shape = {3, 2}, .strides = {1, 3}};
        TGT_OK(b, tgl_softmax_t(b, &t, 0, &t));
        uint16_t g[6];
        TGT_OK(b, tgl_copy_dtoh(b, g, pi, sizeof g));
        /* column 0 is (1, 0, 1): e/(2e+1) = 0.4223 (f16 0x36C2), 1/(2e+1) = 0.1554 (0x30F9) */
        assert_true(abs((int)g[0] - 0x36C2) <= 1 && abs((int)g[1] - 0x30F9) <= 1 && abs((int)g[2] - 0x36C2) <= 1);
        TGT_OK(b, tgl_free(b, pi));
        TGT_OK(b, tgl_free(b, po));
    }
}

/* Every refusal on both backends, out unchanged. */
static void test_refusals(void **state)
{
    tgt_pair *p = *state;
    tgl_backend *bs[2] = {p->cpu, p->gl};
    for (int k = 0; k < 2; k++) {
        tgl_backend *b = bs[k];
        if (!b)
            continue;
        tgl_ptr pi, po;
        uint8_t poison[96], after[96];
        memset(poison, POISON, sizeof poison);
        TGT_OK(b, tgl_alloc(b, 128, &pi));
        TGT_OK(b, tgl_alloc(b, 96, &po));
        TGT_OK(b, tgl_copy_htod(b, po, poison, sizeof poison));
        const size_t s[2] = {4, 6};
        tgl_tensor in = tgl_tensor_contiguous(pi, TGL_DTYPE_F32, 2, s), x, o;
        tgl_tensor out = tgl_tensor_contiguous(po, TGL_DTYPE_F32, 2, s);
        tgl_tensor w = tgl_tensor_contiguous(pi, TGL_DTYPE_F32, 1, (size_t[]){6}), wb;
        TGT_EXPECT(b, tgl_softmax_t(b, NULL, 1, &out), TGL_ERR_INVALID_ARGUMENT);
        TGT_EXPECT(b, tgl_softmax_t(b, &in, 1, NULL), TGL_ERR_INVALID_ARGUMENT);
        TGT_EXPECT(b, tgl_softmax_t(b, &in, 2, &out), TGL_ERR_INVALID_ARGUMENT);
        x = in;
        x.ndim = 0;
        TGT_EXPECT(b, tgl_log_softmax_t(b, &x, 0, &out), TGL_ERR_INVALID_ARGUMENT);
        o = out;
        o.shape[1] = 5;
        TGT_EXPECT(b, tgl_softmax_t(b, &in, 1, &o), TGL_ERR_INVALID_ARGUMENT);
        x = in;
        x.dtype = TGL_DTYPE_I32;
        TGT_EXPECT(b, tgl_softmax_t(b, &x, 1, &out), TGL_ERR_UNSUPPORTED);
        x.dtype = TGL_DTYPE_BOOL;
        TGT_EXPECT(b, tgl_rmsnorm_t(b, &x, NULL, &out, 1e-5f), TGL_ERR_UNSUPPORTED);
        TGT_EXPECT(b, tgl_rmsnorm_t(b, &in, NULL, &out, -1.0f), TGL_ERR_INVALID_ARGUMENT);
        TGT_EXPECT(b, tgl_layernorm_t(b, &in, NULL, NULL, &out, NAN), TGL_ERR_INVALID_ARGUMENT);
        wb = w;
        wb.shape[0] = 4; /* not the last dim's length */
        TGT_EXPECT(b, tgl_rmsnorm_t(b, &in, &wb, &out, 1e-5f), TGL_ERR_INVALID_ARGUMENT);
        wb = w;
        wb.dtype = TGL_DTYPE_I32;
        TGT_EXPECT(b, tgl_rmsnorm_t(b, &in, &wb, &out, 1e-5f), TGL_ERR_UNSUPPORTED);
        wb = w;
        wb.dtype = TGL_DTYPE_F16;
        TGT_EXPECT(b, tgl_layernorm_t(b, &in, &w, &wb, &out, 1e-5f), TGL_ERR_INVALID_ARGUMENT); /* two dtypes */
        wb = w;
        wb.data = po + 8; /* inside out */
        TGT_EXPECT(b, tgl_rmsnorm_t(b, &in, &wb, &out, 1e-5f), TGL_ERR_INVALID_ARGUMENT);
        o = out;
        o.strides[0] = 0; /* reaches elements twice */
        TGT_EXPECT(b, tgl_softmax_t(b, &in, 1, &o), TGL_ERR_INVALID_ARGUMENT);
        o = in;
        o.data = pi + 4; /* overlaps in without being it */
        TGT_EXPECT(b, tgl_softmax_t(b, &in, 1, &o), TGL_ERR_INVALID_ARGUMENT);
        x = in;
        x.strides[0] = 20; /* past in's allocation */
        TGT_EXPECT(b, tgl_softmax_t(b, &x, 1, &out), TGL_ERR_INVALID_POINTER);
        TGT_OK(b, tgl_copy_dtoh(b, after, po, sizeof after));
        assert_memory_equal(after, poison, sizeof after);
        x = in;
        x.shape[0] = 0; /* empty: nothing to do */
        o = out;
        o.shape[0] = 0;
        TGT_OK(b, tgl_softmax_t(b, &x, 1, &o));
        TGT_OK(b, tgl_free(b, pi));
        TGT_OK(b, tgl_free(b, po));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known),
        cmocka_unit_test(test_random),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
