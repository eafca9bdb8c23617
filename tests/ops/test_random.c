/* tgl_random and tgl_dropout on GL compared with the CPU oracle: Philox4x32-10's published known
 * answers; every kind x dtype over random layouts of awkward shapes (extents 1, primes, 2^k +- 1,
 * past a workgroup), seeds and offsets across the 2^32 carry, the bytes around out's elements
 * poisoned: uniform, bernoulli, randint and dropout bit for bit, normal within a few f32 ulps (the
 * drivers' ln, sqrt, cos and sin); the stream indexed by out's row-major index whatever its
 * strides, and an offset shifting it by blocks of four; the distributions at a fixed seed (Kolmogorov-Smirnov against the
 * exact CDF and two-sample against the CPU's next seed, deterministic); windows past a shrunk SSBO
 * limit (the index space in boxes); dropout against its bernoulli mask, p = 0 and p = 1; every
 * refusal, out untouched. */
#include "testing.h"
#include "tensors.h"
#include "cpu/cpu_convert.h"
#include "cpu/cpu_random.h"
#include "gl/gl_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef tgt_pair pair;

static int setup(void **state)
{
    return tgt_pair_setup(state, 0x4A7D);
}

static int teardown(void **state)
{
    return tgt_pair_teardown(state);
}

#define POISON 0xA5
#define DROPOUT (-1) /* a call's kind: tgl_dropout */

static const tgl_dtype dtypes[] = {TGL_DTYPE_F32, TGL_DTYPE_F16, TGL_DTYPE_BF16, TGL_DTYPE_I32, TGL_DTYPE_BOOL};

/* One call: tgl_random of a kind or tgl_dropout, into out (data a byte offset into an
 * allocation of out_bytes, filled with POISON first); dropout reads in (data an offset into an
 * allocation of in_bytes holding init). */
typedef struct call {
    int kind;
    double a, bb;
    uint64_t seed, offset;
    tgl_tensor out, in;
    size_t out_bytes, in_bytes;
    const uint8_t *init;
    int in_place; /* dropout: out is in's elements (in's allocation) */
} call;

static tgl_status run_on(tgl_backend *b, const call *c, uint8_t *got)
{
    tgl_ptr d, x = 0;
    tgl_tensor o = c->out, t = c->in;
    if (c->kind == DROPOUT) {
        TGT_OK(b, tgl_alloc(b, c->in_bytes, &x));
        TGT_OK(b, tgl_copy_htod(b, x, c->init, c->in_bytes));
        t.data += x;
    }
    if (c->in_place) {
        d = x;
    } else {
        TGT_OK(b, tgl_alloc(b, c->out_bytes, &d));
        memset(got, POISON, c->out_bytes);
        TGT_OK(b, tgl_copy_htod(b, d, got, c->out_bytes));
    }
    o.data += d;
    tgl_status st = c->kind == DROPOUT ? tgl_dropout(b, &t, &o, c->a, c->seed, c->offset)
                                       : tgl_random(b, (tgl_random_kind)c->kind, &o, c->a, c->bb, c->seed, c->offset);
    TGT_OK(b, tgl_copy_dtoh(b, got, d, c->out_bytes));
    if (x)
        TGT_OK(b, tgl_free(b, x));
    if (!c->in_place)
        TGT_OK(b, tgl_free(b, d));
    return st;
}

static const char *kind_name(int kind)
{
    static const char *const names[] = {"uniform", "normal", "bernoulli", "randint"};
    return kind == DROPOUT ? "dropout" : names[kind];
}

/* GL's and the CPU's elements agree: the same bytes, or (normal) within the drivers' accuracy of
 * ln, sqrt, cos and sin scaled by std, plus a unit of the dtype's rounding, or (dropout) both NaN
 * or both zero or subnormal (GLSL lets a device flush subnormal products: NVIDIA's does). */
static int agree(const call *c, tgl_dtype dt, const uint8_t *g, const uint8_t *w)
{
    size_t es = tgl_dtype_size(dt);
    if (!memcmp(g, w, es))
        return 1;
    if (dt == TGL_DTYPE_I32 || dt == TGL_DTYPE_BOOL)
        return 0;
    double x = tgl_cpu_load_f32(dt, g), y = tgl_cpu_load_f32(dt, w);
    if (c->kind == DROPOUT) /* a dropped inf: NaN, its payload the driver's; subnormals: flushed or not */
        return (isnan(x) && isnan(y)) || (fabs(x) < 0x1p-126 && fabs(y) < 0x1p-126);
    if (c->kind != TGL_RANDOM_NORMAL)
        return 0;
    double unit = dt == TGL_DTYPE_F32 ? 0x1p-22 : dt == TGL_DTYPE_F16 ? 0x1p-10 : 0x1p-7;
    return fabs(x - y) <= 6e-5 * c->bb + unit * (fabs(c->a) + fabs(y)) + (dt == TGL_DTYPE_F16 ? 1e-7 : 0.0);
}

/* The call on gl and cpu: both succeed and every element slot of out's allocation agrees (the
 * slots out does not reach keep POISON on both). The CPU's bytes go to want when given. */
static void same_run(pair *p, const call *c, const char *what, uint8_t *want)
{
    uint8_t *g = malloc(c->out_bytes), *w = want ? want : malloc(c->out_bytes);
    tgl_dtype dt = c->out.dtype;
    size_t es = tgl_dtype_size(dt);
    TGT_OK(p->cpu, run_on(p->cpu, c, w));
    if (p->gl) {
        TGT_OK(p->gl, run_on(p->gl, c, g));
        for (size_t i = 0; i + es <= c->out_bytes; i += es)
            if (!agree(c, dt, g + i, w + i)) {
                uint32_t gb = 0, wb = 0;
                memcpy(&gb, g + i, es);
                memcpy(&wb, w + i, es);
                char layout[256];
                size_t len = (size_t)snprintf(layout, sizeof layout, "data %llu", (unsigned long long)c->out.data);
                for (size_t d = 0; d < c->out.ndim && len < sizeof layout; d++)
                    len += (size_t)snprintf(layout + len, sizeof layout - len, ", %zu x %lld", c->out.shape[d],
                                            (long long)c->out.strides[d]);
                fail_msg("%s: %s (%.9g, %.9g) into %s (%s; seed 0x%llx, offset 0x%llx): byte %zu is 0x%x on gl, 0x%x "
                         "on cpu",
                         what, kind_name(c->kind), c->a, c->bb, tgl_dtype_name(dt), layout, (unsigned long long)c->seed,
                         (unsigned long long)c->offset, i, gb, wb);
            }
    }
    free(g);
    if (!want)
        free(w);
}

/* Whether the kind writes dtype dt. */
static int writes(int kind, tgl_dtype dt)
{
    int is_float = dt != TGL_DTYPE_I32 && dt != TGL_DTYPE_BOOL;
    return kind == TGL_RANDOM_BERNOULLI || (kind == TGL_RANDOM_RANDINT && dt != TGL_DTYPE_BOOL) || is_float;
}

/* Parameters for the kind: random, sometimes at the edges of their ranges. */
static void params(tgt_rng *r, call *c)
{
    switch (c->kind) {
    case TGL_RANDOM_UNIFORM:
        c->a = tgt_below(r, 3) == 0 ? 0.0 : tgt_uniform(r, -100.0f, 100.0f);
        c->bb = c->a + (tgt_below(r, 3) == 0 ? 1.0 : tgt_uniform(r, 1e-3f, 1e3f));
        break;
    case TGL_RANDOM_NORMAL:
        c->a = tgt_below(r, 2) ? 0.0 : tgt_uniform(r, -5.0f, 5.0f);
        c->bb = tgt_below(r, 2) ? 1.0 : tgt_uniform(r, 0.0f, 3.0f);
        break;
    case TGL_RANDOM_BERNOULLI: c->a = tgt_below(r, 4) == 0 ? (double)tgt_below(r, 2) : tgt_uniform(r, 0.0f, 1.0f); break;
    case TGL_RANDOM_RANDINT:
        c->a = tgt_below(r, 4) == 0 ? -2147483648.0 : (double)tgt_below(r, 200) - 100.0;
        c->bb = tgt_below(r, 4) == 0 ? 2147483647.0 : c->a + 1.0 + (double)tgt_below(r, 1000);
        break;
    default: c->a = tgt_below(r, 5) == 0 ? (double)tgt_below(r, 2) : tgt_uniform(r, 0.0f, 0.9f); break;
    }
}

/* Seeds and offsets: random, or where the 64-bit counter carries out of its low word. */
static void stream(tgt_rng *r, call *c)
{
    c->seed = tgt_below(r, 3) == 0 ? tgt_below(r, 4) : tgt_next(r);
    c->offset = tgt_below(r, 3) == 0 ? 0xFFFFFFFFull - tgt_below(r, 64) : tgt_below(r, 2) ? 0 : tgt_next(r);
}

/* count calls of every kind (and dropout) on random layouts of up to max_ndim dims, through gl. */
static void random_calls(pair *p, tgl_backend *gl, int count, size_t max_elems, const char *what)
{
    tgt_rng *r = &p->rng;
    for (int i = 0; i < count; i++) {
        call c = {.kind = (int)tgt_below(r, 5) - 1};
        tgl_dtype dt = dtypes[tgt_below(r, 5)];
        if ((c.kind == DROPOUT && (dt == TGL_DTYPE_I32 || dt == TGL_DTYPE_BOOL)) || (c.kind != DROPOUT && !writes(c.kind, dt)))
            dt = TGL_DTYPE_F32;
        size_t ndim = tgt_below(r, 5), shape[TGL_MAX_DIMS], n = 1;
        for (size_t d = 0; d < ndim; d++) {
            shape[d] = n * 257 <= max_elems ? tgt_awkward_extent(r, 257) : 1;
            n *= shape[d];
        }
        if (tgt_below(r, 10) == 0 && ndim)
            shape[tgt_below(r, ndim)] = 0; /* empty */
        params(r, &c);
        stream(r, &c);
        c.out = tgt_below(r, 2) ? tgt_random_layout(r, dt, ndim, shape, &c.out_bytes)
                                : tgt_dense_layout(r, dt, ndim, shape, &c.out_bytes);
        uint8_t *init = NULL;
        if (c.kind == DROPOUT) {
            c.in_place = tgt_below(r, 4) == 0;
            if (c.in_place) {
                c.in = c.out;
                c.in_bytes = c.out_bytes;
            } else { /* in broadcast to out's shape now and then */
                size_t in_ndim, in_shape[1][TGL_MAX_DIMS];
                tgt_broadcast_shapes(r, 1, ndim, shape, &in_ndim, in_shape);
                c.in = tgt_random_layout(r, dt, in_ndim, in_shape[0], &c.in_bytes);
            }
            init = malloc(c.in_bytes);
            tgt_pool_fill(r, dt, init, c.in_bytes);
            c.init = init;
        }
        pair q = *p;
        q.gl = gl;
        same_run(&q, &c, what, NULL);
        free(init);
    }
}

static void test_known_answers(void **state)
{
    (void)state;
    static const uint32_t kat[3][10] = {
        {0, 0, 0, 0, 0, 0, 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8},
        {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0x408f276d, 0x41c83b0e, 0xa20bc7c6,
         0x6d5451fd},
        {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0, 0xd16cfe09, 0x94fdcceb, 0x5001e420,
         0x24126ea1},
    };
    for (int k = 0; k < 3; k++) {
        uint32_t got[4];
        tgl_philox4x32_10(kat[k], kat[k] + 4, got);
        for (int j = 0; j < 4; j++)
            assert_int_equal(got[j], kat[k][6 + j]);
    }
}

static void test_random_layouts(void **state)
{
    pair *p = *state;
    random_calls(p, p->gl, 160, 20000, "random layouts");
}

/* A long 1-D run past a workgroup and a VEC4 tail, each kind, each dtype it writes. */
static void test_long_runs(void **state)
{
    pair *p = *state;
    for (int kind = DROPOUT; kind < TGL_RANDOM_COUNT; kind++)
        for (size_t k = 0; k < 5; k++) {
            if ((kind == DROPOUT && k >= 3) || (kind != DROPOUT && !writes(kind, dtypes[k])))
                continue;
            size_t n = 70001;
            call c = {.kind = kind};
            params(&p->rng, &c);
            stream(&p->rng, &c);
            c.out = tgt_dense_layout(&p->rng, dtypes[k], 1, &n, &c.out_bytes);
            uint8_t *init = NULL;
            if (kind == DROPOUT) {
                c.in = c.out;
                c.in_bytes = c.out_bytes;
                init = malloc(c.in_bytes);
                tgt_pool_fill(&p->rng, dtypes[k], init, c.in_bytes);
                c.init = init;
            }
            same_run(p, &c, "long run", NULL);
            free(init);
        }
}

/* out's element at coordinates idx of layout t in a host image of its allocation. */
static const uint8_t *element_at(const uint8_t *image, const tgl_tensor *t, const size_t *idx)
{
    size_t es = tgl_dtype_size(t->dtype);
    int64_t at = (int64_t)(t->data / es);
    for (size_t d = 0; d < t->ndim && d < TGL_MAX_DIMS; d++)
        at += (int64_t)idx[d] * t->strides[d];
    return image + at * (int64_t)es;
}

/* The stream follows out's row-major index, not its memory: a random layout's elements equal a
 * dense call's, index by index; and offset + k (blocks) starts 4k elements into offset's. */
static void test_index_not_memory(void **state)
{
    pair *p = *state;
    tgl_backend *bs[2] = {p->cpu, p->gl};
    for (int j = 0; j < 2; j++) {
        if (!bs[j])
            continue;
        for (int round = 0; round < 6; round++) {
            call dense = {.kind = round % 4, .seed = tgt_next(&p->rng), .offset = 0xFFFFFF00ull + (uint64_t)round};
            params(&p->rng, &dense);
            size_t shape[3] = {tgt_awkward_extent(&p->rng, 257), tgt_awkward_extent(&p->rng, 257), 3};
            size_t idx[TGL_MAX_DIMS] = {0};
            call strided = dense;
            dense.out = tgl_tensor_contiguous(0, TGL_DTYPE_F32, 3, shape);
            dense.out_bytes = shape[0] * shape[1] * shape[2] * 4;
            strided.out = tgt_random_layout(&p->rng, TGL_DTYPE_F32, 3, shape, &strided.out_bytes);
            uint8_t *a = malloc(dense.out_bytes), *s = malloc(strided.out_bytes);
            TGT_OK(bs[j], run_on(bs[j], &dense, a));
            TGT_OK(bs[j], run_on(bs[j], &strided, s));
            for (idx[0] = 0; idx[0] < shape[0]; idx[0]++)
                for (idx[1] = 0; idx[1] < shape[1]; idx[1]++)
                    for (idx[2] = 0; idx[2] < shape[2]; idx[2]++)
                        assert_memory_equal(element_at(a, &dense.out, idx), element_at(s, &strided.out, idx), 4);
            /* offset + k blocks: the dense stream from its element 4k on (n is a multiple of 3,
               at least 3, so a block starts before its end) */
            size_t n = dense.out_bytes / 4, k = tgt_below(&p->rng, (n + 3) / 4);
            call later = dense;
            later.offset += k;
            size_t rest = n - 4 * k;
            later.out = tgl_tensor_contiguous(0, TGL_DTYPE_F32, 1, &rest);
            later.out_bytes = rest * 4;
            uint8_t *l = malloc(later.out_bytes);
            TGT_OK(bs[j], run_on(bs[j], &later, l));
            assert_memory_equal(l, a + 16 * k, rest * 4);
            free(a);
            free(s);
            free(l);
        }
    }
}

static int by_value(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static double normal_cdf(double x)
{
    return 0.5 * erfc(-x / sqrt(2.0));
}

/* sup |F_n - F| of the sorted sample against the CDF (uniform on [0, 1) when normal is 0). */
static double ks_one(const double *v, size_t n, int normal)
{
    double worst = 0.0;
    for (size_t i = 0; i < n; i++) {
        double f = normal ? normal_cdf(v[i]) : v[i];
        double lo = f - (double)i / (double)n, hi = (double)(i + 1) / (double)n - f;
        worst = fmax(worst, fmax(lo, hi));
    }
    return worst;
}

/* sup |F_a - F_b| of two sorted samples of n each. */
static double ks_two(const double *a, const double *b, size_t n)
{
    size_t i = 0, j = 0;
    double worst = 0.0;
    while (i < n && j < n) {
        double x = a[i] < b[j] ? a[i] : b[j];
        while (i < n && a[i] <= x)
            i++;
        while (j < n && b[j] <= x)
            j++;
        worst = fmax(worst, fabs((double)i - (double)j) / (double)n);
    }
    return worst;
}

/* n f32 values of kind (standard parameters) on b at seed. */
static double *sample(tgl_backend *b, int kind, size_t n, uint64_t seed)
{
    call c = {.kind = kind, .a = 0.0, .bb = 1.0, .seed = seed, .offset = 7};
    c.out = tgl_tensor_contiguous(0, TGL_DTYPE_F32, 1, &n);
    c.out_bytes = n * 4;
    float *f = malloc(c.out_bytes);
    double *v = malloc(n * sizeof *v);
    TGT_OK(b, run_on(b, &c, (uint8_t *)f));
    for (size_t i = 0; i < n; i++)
        v[i] = f[i];
    free(f);
    qsort(v, n, sizeof *v, by_value);
    return v;
}

/* The distributions at a fixed seed (deterministic: the numbers never change): each backend's
 * uniform and normal against the exact CDF, and GL's against the CPU's at another seed, by
 * Kolmogorov-Smirnov at the 0.1% level; bernoulli's and randint's frequencies within 5 sigma. */
static void test_distributions(void **state)
{
    pair *p = *state;
    const size_t n = 100000;
    const double one = 1.95 / sqrt((double)n), two = 1.95 * sqrt(2.0 / (double)n); /* c(0.001) = 1.95 */
    tgl_backend *bs[2] = {p->cpu, p->gl};
    for (int kind = 0; kind < 2; kind++) {
        double *cpu_next = sample(p->cpu, kind, n, 0x5EED + 1);
        for (int j = 0; j < 2; j++) {
            if (!bs[j])
                continue;
            double *v = sample(bs[j], kind, n, 0x5EED);
            double d1 = ks_one(v, n, kind), d2 = ks_two(v, cpu_next, n);
            if (d1 > one || d2 > two)
                fail_msg("%s on %s: KS %.5f against the CDF (limit %.5f), %.5f against the cpu's next seed (%.5f)",
                         kind_name(kind), j ? "gl" : "cpu", d1, one, d2, two);
            free(v);
        }
        free(cpu_next);
    }
    for (int j = 0; j < 2; j++) {
        if (!bs[j])
            continue;
        call c = {.kind = TGL_RANDOM_BERNOULLI, .a = 0.3, .seed = 0x5EED};
        c.out = tgl_tensor_contiguous(0, TGL_DTYPE_I32, 1, &n);
        c.out_bytes = n * 4;
        int32_t *v = malloc(c.out_bytes);
        TGT_OK(bs[j], run_on(bs[j], &c, (uint8_t *)v));
        double ones = 0;
        for (size_t i = 0; i < n; i++)
            ones += v[i];
        assert_true(fabs(ones - 0.3 * (double)n) < 5.0 * sqrt((double)n * 0.3 * 0.7));
        c.kind = TGL_RANDOM_RANDINT;
        c.a = -3.0;
        c.bb = 4.0;
        TGT_OK(bs[j], run_on(bs[j], &c, (uint8_t *)v));
        double counts[7] = {0};
        for (size_t i = 0; i < n; i++) {
            assert_true(v[i] >= -3 && v[i] < 4);
            counts[v[i] + 3]++;
        }
        for (int k = 0; k < 7; k++)
            assert_true(fabs(counts[k] - (double)n / 7.0) < 5.0 * sqrt((double)n / 7.0 * 6.0 / 7.0));
        free(v);
    }
}

/* Windows past a shrunk SSBO block limit: out's index space cut into boxes on GL, each box's
 * counters starting at its origin. */
static void test_small_ssbo_limit(void **state)
{
    pair *p = *state;
    if (!p->gl)
        skip();
    tgl_backend *gl = tgt_open(TGL_BACKEND_GL);
    tgl_gl_test_set_limits(gl, 256 + 64, NULL);
    random_calls(p, gl, tgt_count(40), 20000, "small SSBO limit");
    tgl_close(gl);
}

/* Dropout's kept elements are bernoulli(p)'s zeros at the same seed and offset, scaled by
 * 1 / (1 - p) in f32; p = 0 copies, p = 1 gives in * 0 (NaN for infinities, as PyTorch). */
static void test_dropout_rules(void **state)
{
    pair *p = *state;
    tgl_backend *bs[2] = {p->cpu, p->gl};
    const size_t n = 4099;
    float *x = malloc(n * 4), *got = malloc(n * 4);
    int32_t *mask = malloc(n * 4);
    for (size_t i = 0; i < n; i++)
        x[i] = i % 97 == 0 ? INFINITY : tgt_uniform(&p->rng, -4.0f, 4.0f);
    for (int j = 0; j < 2; j++) {
        if (!bs[j])
            continue;
        tgl_backend *b = bs[j];
        const double ps[3] = {0.0, 0.375, 1.0};
        for (int k = 0; k < 3; k++) {
            call d = {.kind = DROPOUT, .a = ps[k], .seed = 99, .offset = 1234, .init = (const uint8_t *)x};
            d.in = d.out = tgl_tensor_contiguous(0, TGL_DTYPE_F32, 1, &n);
            d.in_bytes = d.out_bytes = n * 4;
            call m = {.kind = TGL_RANDOM_BERNOULLI, .a = ps[k], .seed = 99, .offset = 1234};
            m.out = tgl_tensor_contiguous(0, TGL_DTYPE_I32, 1, &n);
            m.out_bytes = n * 4;
            TGT_OK(b, run_on(b, &d, (uint8_t *)got));
            TGT_OK(b, run_on(b, &m, (uint8_t *)mask));
            float scale = ps[k] == 1.0 ? 0.0f : (float)(1.0 / (1.0 - ps[k]));
            for (size_t i = 0; i < n; i++) {
                float masked = x[i] * (mask[i] ? 0.0f : 1.0f);
                float want = masked * scale;
                uint32_t wb, gb;
                memcpy(&wb, &want, 4);
                memcpy(&gb, &got[i], 4);
                if (wb != gb && !(isnan(want) && isnan(got[i])))
                    fail_msg("dropout p=%g on %s: element %zu is %.9g, want %.9g", ps[k], j ? "gl" : "cpu", i,
                             (double)got[i], (double)want);
            }
        }
    }
    free(x);
    free(got);
    free(mask);
}

/* Every refusal on both backends, out untouched. */
static void test_refusals(void **state)
{
    pair *p = *state;
    tgl_backend *bs[2] = {p->cpu, p->gl};
    for (int j = 0; j < 2; j++) {
        if (!bs[j])
            continue;
        tgl_backend *b = bs[j];
        tgl_ptr d;
        const size_t n = 8;
        uint8_t before[32], after[32];
        memset(before, POISON, sizeof before);
        TGT_OK(b, tgl_alloc(b, sizeof before, &d));
        TGT_OK(b, tgl_copy_htod(b, d, before, sizeof before));
        tgl_tensor f = tgl_tensor_contiguous(d, TGL_DTYPE_F32, 1, &n), i = f, o = f, twice = f;
        i.dtype = TGL_DTYPE_I32;
        tgl_tensor bl = tgl_tensor_contiguous(d, TGL_DTYPE_BOOL, 1, &n), h = tgl_tensor_contiguous(d, TGL_DTYPE_F16, 1, &n);
        twice.strides[0] = 0;
        const tgl_status A = TGL_ERR_INVALID_ARGUMENT, U = TGL_ERR_UNSUPPORTED;
        TGT_EXPECT(b, tgl_random(b, (tgl_random_kind)4, &f, 0, 1, 0, 0), A);
        TGT_EXPECT(b, tgl_random(b, (tgl_random_kind)-1, &f, 0, 1, 0, 0), A);
        TGT_EXPECT(b, tgl_random(b, TGL_RANDOM_UNIFORM, NULL, 0, 1, 0, 0), A);
        TGT_EXPECT(b, tgl_random(b, TGL_RANDOM_UNIFORM, &f, 1, 1, 0, 0), A);
        TGT_EXPECT(b, tgl_random(b, TGL_RANDOM_UNIFORM, &f, 2, 1, 0, 0), A);
        TGT_EXPECT(b, tgl_random(b, TGL_RANDOM_UNIFORM, &f, NAN, 1, 0, 0), A);
        TGT_EXPECT(b, tgl_random(b, TGL_RANDOM_UNIFORM, &f, 0, INFINITY, 0, 0), A);
        TGT_EXPECT(b, tgl_random(b, TGL_RANDOM_UNIFORM, &f, -3e38, 3e38, 0, 0), A);   /* bb - a past f32 */
        TGT_EXPECT(b, tgl_random(b, TGL_RANDOM_UNIFORM, &f, 1.0 - 1e-12, 1.0, 0, 0), A); /* no f32 in it */
        TGT_EXPECT(b, tgl_random(b, TGL_RANDOM_UNIFORM, &i, 0, 1, 0, 0), U);
        TGT_EXPECT(b, tgl_random(b, TGL_RANDOM_NORMAL, &f, 0, -1, 0, 0), A);
        TGT_EXPECT(b, tgl_random(b, TGL_RANDOM_NORMAL, &f, 1e39, 1, 0, 0), A);
        TGT_EXPECT(b, tgl_random(b, TGL_RANDOM_NORMAL, &bl, 0, 1, 0, 0), U);
        TGT_EXPECT(b, tgl_random(b, TGL_RANDOM_BERNOULLI, &f, 1.5, 0, 0, 0), A);
        TGT_EXPECT(b, tgl_random(b, TGL_RANDOM_BERNOULLI, &f, -0.1, 0, 0, 0), A);
        TGT_EXPECT(b, tgl_random(b, TGL_RANDOM_BERNOULLI, &f, NAN, 0, 0, 0), A);
        TGT_EXPECT(b, tgl_random(b, TGL_RANDOM_RANDINT, &i, 0.5, 3, 0, 0), A);
        TGT_EXPECT(b, tgl_random(b, TGL_RANDOM_RANDINT, &i, 3, 3, 0, 0), A);
        TGT_EXPECT(b, tgl_random(b, TGL_RANDOM_RANDINT, &i, 0, 3e9, 0, 0), A);
        TGT_EXPECT(b, tgl_random(b, TGL_RANDOM_RANDINT, &bl, 0, 2, 0, 0), U);
        TGT_EXPECT(b, tgl_random(b, TGL_RANDOM_BERNOULLI, &twice, 0.5, 0, 0, 0), A); /* an element twice */
        TGT_EXPECT(b, tgl_dropout(b, &f, &o, 1.5, 0, 0), A);
        TGT_EXPECT(b, tgl_dropout(b, &f, &o, NAN, 0, 0), A);
        TGT_EXPECT(b, tgl_dropout(b, NULL, &o, 0.5, 0, 0), A);
        TGT_EXPECT(b, tgl_dropout(b, &f, &h, 0.5, 0, 0), A); /* dtypes differ (and overlap) */
        TGT_EXPECT(b, tgl_dropout(b, &i, &i, 0.5, 0, 0), U);
        tgl_tensor part = f; /* a partial overlap: out one element past in */
        part.data += 4;
        part.shape[0] = n - 1;
        tgl_tensor in_part = f;
        in_part.shape[0] = n - 1;
        TGT_EXPECT(b, tgl_dropout(b, &in_part, &part, 0.5, 0, 0), A);
        TGT_OK(b, tgl_copy_dtoh(b, after, d, sizeof after));
        assert_memory_equal(before, after, sizeof after);
        TGT_OK(b, tgl_free(b, d));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_answers),
        cmocka_unit_test(test_random_layouts),
        cmocka_unit_test(test_long_runs),
        cmocka_unit_test(test_index_not_memory),
        cmocka_unit_test(test_distributions),
        cmocka_unit_test(test_small_ssbo_limit),
        cmocka_unit_test(test_dropout_rules),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests_name("ops/random (gl vs cpu)", tests, setup, teardown);
}
