/* tgl_reduce and tgl_argmax/argmin on GL compared with the CPU oracle: random shapes of 1..4
 * dims reduced over every axis (sizes 1, primes, empty), long axes that take the two-pass path,
 * strided axes, a 16M-element sum against a double-precision reference, ties and NaN for the
 * arg ops, sums and means of finite values whose f32 running sums overflow, lines longer than
 * the SSBO block limit (a shrunk limit: piece by piece), poisoned
 * outputs with guards on both sides, and the error cases. */
#include "testing.h"
#include "gl/gl_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FRONT 3
#define GUARD 8
enum { ARGMAX = -1, ARGMIN = -2 };

typedef tgt_pair pair;

static int setup(void **state)
{
    return tgt_pair_setup(state, 0x5EDCE);
}

static int teardown(void **state)
{
    return tgt_pair_teardown(state);
}

static const char *op_name(int op)
{
    return op == ARGMAX ? "argmax" : op == ARGMIN ? "argmin" : tgl_reduce_name(op);
}

static tgl_status call(tgl_backend *b, int op, tgl_ptr in, tgl_ptr out, const size_t *shape, size_t ndim,
                       size_t axis)
{
    if (op == ARGMAX)
        return tgl_argmax(b, in, out, shape, ndim, axis);
    if (op == ARGMIN)
        return tgl_argmin(b, in, out, shape, ndim, axis);
    return tgl_reduce(b, op, in, out, shape, ndim, axis);
}

/* Runs the op with the input in_front floats into its allocation and the output between
 * poisoned guards;
 * returns FRONT + outputs + GUARD 4-byte elements. */
static float *run_on(tgl_backend *b, int op, const float *x, size_t total, const size_t *shape, size_t ndim,
                     size_t axis, size_t outputs, size_t in_front)
{
    tgl_ptr in, out;
    TGT_OK(b, tgl_alloc(b, (total + in_front) * sizeof(float), &in));
    in += in_front * sizeof(float);
    TGT_OK(b, tgl_copy_htod(b, in, x, total * sizeof(float)));
    size_t n_out = FRONT + outputs + GUARD;
    float *host = malloc(n_out * sizeof(float));
    tgt_poison(host, n_out);
    TGT_OK(b, tgl_alloc(b, n_out * sizeof(float), &out));
    TGT_OK(b, tgl_copy_htod(b, out, host, n_out * sizeof(float)));
    TGT_OK(b, call(b, op, in, out + FRONT * sizeof(float), shape, ndim, axis));
    TGT_OK(b, tgl_copy_dtoh(b, host, out, n_out * sizeof(float)));
    TGT_OK(b, tgl_free(b, in - in_front * sizeof(float)));
    TGT_OK(b, tgl_free(b, out));
    return host;
}

static double threshold(int op)
{
    return op == TGL_REDUCE_PROD ? 1e-9 : 1e-10;
}

/* A float sum's error grows with the magnitudes summed, not with the result: a sum that cancels
 * to near zero can be 1e-4 off relatively however well it is summed (seed 1882581594284147:
 * 65536 uniform values in [-10, 10] summing to a small number, NMSE 2.8e-8 from an exact pairwise
 * order). So sums and means pass per output when within 1e-5 relative (NMSE 1e-10) or within
 * the pairwise bound u (log2(len) + 1) sum|x| (u = 2^-24), whichever is larger. */
static void check_sum(const char *desc, int op, const float *x, const float *got, const float *want,
                      const size_t *shape, size_t ndim, size_t axis)
{
    size_t outer = 1, len = shape[axis], inner = 1;
    for (size_t d = 0; d < ndim; d++) {
        if (d < axis)
            outer *= shape[d];
        if (d > axis)
            inner *= shape[d];
    }
    double levels = 1.0;
    for (size_t l = len; l > 1; l = (l + 1) / 2)
        levels += 1.0;
    for (size_t o = 0; o < outer; o++)
        for (size_t i = 0; i < inner; i++) {
            double abs_sum = 0.0;
            for (size_t k = 0; k < len; k++)
                abs_sum += fabs((double)x[(o * len + k) * inner + i]);
            if (op == TGL_REDUCE_MEAN && len)
                abs_sum /= (double)len;
            double g = got[o * inner + i], w = want[o * inner + i];
            double bound = fmax(1e-5 * fabs(w), ldexp(1.0, -24) * levels * abs_sum);
            if (!(fabs(g - w) <= bound))
                fail_msg("%s: output %zu: gl %.9g, cpu %.9g, off by %.3g > %.3g (seed %llu)", desc, o * inner + i, g, w,
                         fabs(g - w), bound, (unsigned long long)tgt_seed());
        }
}

static void compare(pair *p, int op, const float *x, const size_t *shape, size_t ndim, size_t axis)
{
    size_t total = 1, outputs = 1;
    for (size_t d = 0; d < ndim; d++) {
        total *= shape[d];
        outputs *= d == axis ? 1 : shape[d];
    }
    /* The input starts one float into its allocation or at its start, in turn: GL reads
     * contiguous lines as vec4s only when they start on a 16-byte boundary. */
    static unsigned turn;
    size_t in_front = turn++ % 2;
    float *got = run_on(p->gl, op, x, total, shape, ndim, axis, outputs, in_front);
    float *want = run_on(p->cpu, op, x, total, shape, ndim, axis, outputs, in_front);
    char desc[160];
    int n = snprintf(desc, sizeof desc, "%s over axis %zu of [", op_name(op), axis);
    for (size_t d = 0; d < ndim; d++)
        n += snprintf(desc + n, sizeof desc - (size_t)n, "%zu%s", shape[d], d + 1 < ndim ? "," : "]");
    if (tgt_first_unpoisoned(got, FRONT) != FRONT || tgt_first_unpoisoned(got + FRONT + outputs, GUARD) != GUARD)
        fail_msg("%s: a guard element was overwritten", desc);
    if (op < 0) {
        if (memcmp(got + FRONT, want + FRONT, outputs * sizeof(float))) {
            for (size_t i = 0; i < outputs; i++) {
                int32_t g, w;
                memcpy(&g, got + FRONT + i, 4);
                memcpy(&w, want + FRONT + i, 4);
                if (g != w)
                    fail_msg("%s: output %zu: gl %d, cpu %d (seed %llu)", desc, i, g, w,
                             (unsigned long long)tgt_seed());
            }
        }
    } else {
        for (size_t i = 0; i < outputs; i++) {
            float *g = &got[FRONT + i], *w = &want[FRONT + i];
            if (isnan(*w) != isnan(*g) || ((isinf(*w) || isinf(*g)) && *g != *w))
                fail_msg("%s: output %zu: gl %g, cpu %g", desc, i, (double)*g, (double)*w);
            if (isinf(*w)) /* equal: the error measures below take the finite ones */
                *g = *w = 0.0f;
        }
        double e = tgt_nmse(got + FRONT, want + FRONT, outputs);
        if ((op == TGL_REDUCE_SUM || op == TGL_REDUCE_MEAN) && !(e <= threshold(op)))
            check_sum(desc, op, x, got + FRONT, want + FRONT, shape, ndim, axis);
        else if (!(e <= threshold(op)))
            fail_msg("%s: NMSE %.3g > %.3g (seed %llu)", desc, e, threshold(op), (unsigned long long)tgt_seed());
    }
    free(got);
    free(want);
}

static float *random_input(tgt_rng *r, int op, size_t total)
{
    float *x = malloc((total ? total : 1) * sizeof(float));
    for (size_t i = 0; i < total; i++) {
        if (op == TGL_REDUCE_PROD)
            x[i] = tgt_uniform(r, 0.8f, 1.25f);
        else if (op < 0) /* few distinct values: ties are common */
            x[i] = (float)(int)tgt_uniform(r, -4.0f, 4.0f);
        else
            x[i] = tgt_uniform(r, -10.0f, 10.0f);
    }
    return x;
}

static void random_shapes(void *ctx)
{
    pair *p = ctx;
    static const size_t dims[] = {1, 2, 3, 7, 13, 33, 100};
    for (int op = ARGMIN; op <= TGL_REDUCE_PROD; op++) {
        for (int trial = 0; trial < tgt_count(12); trial++) { /* fewer in a thinned run (TGL_TEST_SCALE) */
            size_t ndim = 1 + tgt_below(&p->rng, 4), shape[4], total = 1;
            for (size_t d = 0; d < ndim; d++) {
                do /* at most ~100k elements, to keep the suite quick on llvmpipe */
                    shape[d] = dims[tgt_below(&p->rng, sizeof dims / sizeof dims[0])];
                while (total * shape[d] > 100000);
                total *= shape[d];
            }
            float *x = random_input(&p->rng, op, total);
            for (size_t axis = 0; axis < ndim; axis++)
                compare(p, op, x, shape, ndim, axis);
            free(x);
        }
    }
}

/* Every op, axis and shape with the input read through buffer textures (llvmpipe's choice)
 * and through SSBOs (GPUs'). */
static void test_random_shapes(void **state)
{
    pair *p = *state;
    tgt_with_and_without_textures(p->gl, random_shapes, p);
}

/* Long axes (two passes through the scratch buffer), strided axes (also in chunks), and empty
 * ones. */
static void long_strided_and_empty(void *ctx)
{
    pair *p = ctx;
    /* {1, 3000017, 1}: an arg-reduction line longer than llvmpipe's loop limit lets 8 invocations walk */
    /* {1, 5000, 40}, {3, 1000, 33}: strided lines in chunks, partials combined by a second pass */
    const size_t shapes[][3] = {{3, 200003, 1}, {1, 65536, 1}, {2, 50001, 3}, {1000, 3, 77}, {5, 0, 4}, {0, 9, 2},
                                {1, 3000017, 1}, {1, 5000, 40}, {3, 1000, 33}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        size_t total = shapes[s][0] * shapes[s][1] * shapes[s][2];
        for (int op = ARGMIN; op <= TGL_REDUCE_PROD; op++) {
            if (shapes[s][1] == 0 && op != TGL_REDUCE_SUM && op != TGL_REDUCE_MEAN && op != TGL_REDUCE_PROD)
                continue;
            if (op == TGL_REDUCE_PROD && shapes[s][1] > 1000)
                continue; /* long products leave f32 range */
            if (!tgt_pick(s * 8 + (size_t)(op - ARGMIN))) /* a thinned run (TGL_TEST_SCALE) takes some */
                continue;
            float *x = random_input(&p->rng, op, total);
            compare(p, op, x, shapes[s], 3, 1);
            free(x);
        }
    }
}

static void test_long_strided_and_empty(void **state)
{
    pair *p = *state;
    tgt_with_and_without_textures(p->gl, long_strided_and_empty, p);
}

/* Column sums (strided lines: reduce_cols.comp, four columns per invocation where 40 columns
 * allow, one where 33) of 2^24 (or -2^24), 4094 ones and the opposite of the first: one running
 * f32 sum stays at 2^24 while the ones come (up to 4094 off; at least the 63 of a chunk when
 * the column is cut into chunks of 64), a compensated one is within a unit or two, and
 * check_sum's pairwise bound is about 26. */
static void strided_sum_accuracy(void *ctx)
{
    pair *p = ctx;
    static const size_t shapes[][2] = {{4096, 40}, {4096, 33}};
    for (size_t s = 0; s < 2; s++) {
        size_t rows = shapes[s][0], cols = shapes[s][1];
        float *x = malloc(rows * cols * sizeof(float));
        for (size_t i = 0; i < rows * cols; i++)
            x[i] = i < cols ? (i % 2 ? -16777216.0f : 16777216.0f)
                 : i >= (rows - 1) * cols ? x[i % cols] * -1.0f : 1.0f;
        compare(p, TGL_REDUCE_SUM, x, shapes[s], 2, 0);
        free(x);
    }
}

static void test_strided_sum_accuracy(void **state)
{
    pair *p = *state;
    tgt_with_and_without_textures(p->gl, strided_sum_accuracy, p);
}

/* The sum of 16M elements stays accurate against a double-precision reference (on the vec4 path
 * that aligned rows take; the random shapes cover both). */
static void test_long_sum_accuracy(void **state)
{
    pair *p = *state;
    size_t n = (size_t)16 << 20;
    float *x = malloc(n * sizeof(float));
    double ref = 0;
    for (size_t i = 0; i < n; i++) {
        x[i] = tgt_uniform(&p->rng, 0.0f, 1.0f); /* same sign: no cancellation to hide errors */
        ref += x[i];
    }
    float *got = run_on(p->gl, TGL_REDUCE_SUM, x, n, &n, 1, 0, 1, 0); /* aligned: the vec4 path */
    double e = ((double)got[FRONT] - ref) * ((double)got[FRONT] - ref) / (ref * ref);
    if (!(e <= 1e-10))
        fail_msg("sum of 16M: gl %.9g, double %.9g, NMSE %.3g", (double)got[FRONT], ref, e);
    print_message("sum of 16M floats: NMSE %.3g against double\n", e);
    free(got);
    free(x);
}

static void test_nan_and_ties(void **state)
{
    pair *p = *state;
    const float nan = NAN;
    const float x[] = {1, 5, 5, 2, nan, 3, nan, -1, -1, 0, 5, -1};
    size_t shape[2] = {2, 6};
    for (int op = ARGMIN; op <= TGL_REDUCE_PROD; op++)
        for (size_t axis = 0; axis < 2; axis++)
            compare(p, op, x, shape, 2, axis);
    /* Rows of whole vec4s (GL on llvmpipe keeps the best per component, then of the four): the
     * first extreme sits in a later component than a tie (7 at 1, 2, 4), NaN in the second
     * vec4's third lane, and long rows of small integers are full of ties; each twice, at
     * both input alignments. */
    const float y[] = {3, 7, 7, 1, 7, 0, 0, 0, -2, 4, nan, 4, -2, 9, 9, -2};
    size_t ys[2] = {2, 8};
    size_t long_shape[2] = {3, 4096}, n = 3 * 4096;
    float *z = malloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++)
        z[i] = (float)tgt_below(&p->rng, 7);
    z[4096 + 3001] = z[4096 + 4000] = nan;
    for (int twice = 0; twice < 2; twice++)
        for (int op = ARGMIN; op <= ARGMAX; op++) {
            compare(p, op, y, ys, 2, 1);
            compare(p, op, z, long_shape, 2, 1);
        }
    free(z);
}

/* Lines of finite values near the f32 range limit, whose f32 running sums overflow where the
 * CPU's double does not: the mean of 3e38s is 3e38 and 3e38 + 3e38 - 3e38 is 3e38 on both
 * backends, a sum past FLT_MAX is inf on both, and a NaN or an infinite element gives the plain
 * result. Each line of [lines, len] takes one pattern; rows (a workgroup per line, chunks in
 * parallel past 8192), columns ([len, lines]: reduce_cols, in chunks when long) and the
 * descriptor reduce's shapes; with and without vec4 loads (len a multiple of 4 or not). */
static float *near_range_lines(size_t lines, size_t len)
{
    float *x = malloc(lines * len * sizeof(float));
    for (size_t l = 0; l < lines; l++)
        for (size_t k = 0; k < len; k++) {
            float v;
            switch (l % 7) {
            case 0: v = 3e38f; break;                                      /* mean 3e38, sum inf */
            case 1: v = k == 0 ? 3e38f : k == 1 ? 3e38f : k == 2 ? -3e38f : 0.0f; break;
            case 2: v = (k % 2 ? -1.0f : 1.0f) * 3.3e38f; break;           /* cancels */
            case 3: v = k == len / 2 ? NAN : 3e38f; break;                 /* NaN */
            case 4: v = k == len - 1 ? INFINITY : 3e38f; break;            /* inf */
            case 5: v = k == 0 ? INFINITY : k == len - 1 ? -INFINITY : 2e38f; break;
            default: v = (float)(k % 13) - 6.0f; break;                    /* ordinary */
            }
            x[l * len + k] = v;
        }
    return x;
}

static void near_range(void *ctx)
{
    pair *p = ctx;
    static const size_t lens[] = {1, 2, 3, 7, 64, 1001, 9000};
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        size_t len = lens[i], lines = len > 1000 ? 7 : 14;
        float *x = near_range_lines(lines, len);
        size_t rows[2] = {lines, len};
        for (int op = TGL_REDUCE_SUM; op <= TGL_REDUCE_MEAN; op++)
            compare(p, op, x, rows, 2, 1);
        /* the same lines as columns: x transposed */
        float *t = malloc(lines * len * sizeof(float));
        for (size_t l = 0; l < lines; l++)
            for (size_t k = 0; k < len; k++)
                t[k * lines + l] = x[l * len + k];
        size_t cols[3] = {1, len, lines};
        for (size_t wide = 0; wide < 2; wide++) { /* 32+ columns: reduce_cols */
            size_t n = wide ? 40 : lines, w = n;
            float *u = malloc(len * n * sizeof(float));
            for (size_t k = 0; k < len; k++)
                for (size_t c = 0; c < n; c++)
                    u[k * w + c] = t[k * lines + c % lines];
            cols[2] = n;
            for (int op = TGL_REDUCE_SUM; op <= TGL_REDUCE_MEAN; op++)
                compare(p, op, u, cols, 3, 1);
            free(u);
        }
        free(t);
        free(x);
    }
}

static void test_near_f32_range(void **state)
{
    pair *p = *state;
    if (!p->gl)
        skip();
    tgt_with_and_without_textures(p->gl, near_range, p);
    /* lines in pieces past a shrunk block limit */
    pair small = *p;
    small.gl = tgt_open(TGL_BACKEND_GL);
    tgl_gl_test_set_limits(small.gl, 4096, NULL);
    near_range(&small);
    tgl_close(small.gl);
    p->rng = small.rng;
}

/* Slabs past a 4 KiB SSBO limit (1016 floats here): lines taken in pieces of whole rows
 * ([1, 5000, 1], [2, 700, 3], [1, 3000, 300]) or, when one row of `inner` does not fit
 * ([3, 4, 2000]), one index at a time over column blocks; arg ops over ties and NaN that land
 * in later pieces. */
static void small_limit(void *ctx)
{
    pair *p = ctx;
    const size_t shapes[][3] = {{1, 5000, 1}, {2, 700, 3}, {3, 4, 2000}, {1, 3000, 300}, {2, 1017, 1}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        size_t total = shapes[s][0] * shapes[s][1] * shapes[s][2];
        for (int op = ARGMIN; op <= TGL_REDUCE_PROD; op++) {
            if (!tgt_pick(s * 8 + (size_t)(op - ARGMIN))) /* a thinned run (TGL_TEST_SCALE) takes some */
                continue;
            float *x = random_input(&p->rng, op, total);
            if (op == TGL_REDUCE_PROD) /* keep long products inside f32 range */
                for (size_t i = 0; i < total; i++)
                    x[i] = 1.0f + (x[i] - 1.0f) / 64.0f;
            compare(p, op, x, shapes[s], 3, 1);
            free(x);
        }
    }
    /* NaN first in the second piece and again later: argmax and argmin give its first index. */
    size_t n = 3000;
    float *x = random_input(&p->rng, ARGMAX, n);
    x[1500] = x[2500] = NAN;
    compare(p, ARGMAX, x, &n, 1, 0);
    compare(p, ARGMIN, x, &n, 1, 0);
    compare(p, TGL_REDUCE_MAX, x, &n, 1, 0);
    free(x);
}

static void test_past_block_limit(void **state)
{
    pair *p = *state, small = *p;
    if (!p->gl)
        skip();
    small.gl = tgt_open(TGL_BACKEND_GL);
    tgl_gl_test_set_limits(small.gl, 4096, NULL);
    tgt_with_and_without_textures(small.gl, small_limit, &small);
    tgl_close(small.gl);
    /* A loop limit of 16 iterations per invocation (llvmpipe's is 65535): arg lines longer than
     * the widest group can walk (6 x 1024 here) go in pieces too, at any block limit. */
    small.gl = tgt_open(TGL_BACKEND_GL);
    tgl_gl_of(small.gl)->limits.loop_limit = 16;
    const size_t shapes[][3] = {{1, 20000, 1}, {2, 7000, 3}};
    for (size_t s = 0; s < 2; s++) {
        size_t total = shapes[s][0] * shapes[s][1] * shapes[s][2];
        float *x = random_input(&small.rng, ARGMAX, total);
        x[total - 5] = NAN;
        compare(&small, ARGMAX, x, shapes[s], 3, 1);
        compare(&small, ARGMIN, x, shapes[s], 3, 1);
        free(x);
    }
    tgl_close(small.gl);
    p->rng = small.rng;
}

/* Lines, chunks and rows are walked in either direction (glsl/common/sweep.glsl; the fixture
 * makes every op turn round), never split or summed differently: both directions give the
 * same bits, so a result does not depend on how many ops ran before it. */
static void test_directions_agree(void **state)
{
    pair *p = *state;
    if (!p->gl) {
        skip();
        return;
    }
    tgl_gl *gl = tgl_gl_of(p->gl);
    static const struct {
        int op;
        size_t shape[2], axis;
    } cases[] = {
        {TGL_REDUCE_SUM, {3, 300007}, 1},  /* lines in chunks, then their partials */
        {TGL_REDUCE_SUM, {4099, 257}, 0},  /* a strided axis in chunks */
        {TGL_REDUCE_MAX, {1031, 515}, 1},  /* a workgroup per line */
        {TGL_REDUCE_MEAN, {65, 1027}, 0},
        {ARGMAX, {257, 1031}, 1},
        {ARGMIN, {129, 33}, 0},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        int op = cases[c].op;
        size_t total = cases[c].shape[0] * cases[c].shape[1], outputs = cases[c].shape[1 - cases[c].axis];
        float *x = random_input(&p->rng, op, total), *out[2];
        for (unsigned backward = 0; backward < 2; backward++) {
            gl->sweep_backward = backward;
            out[backward] = run_on(p->gl, op, x, total, cases[c].shape, 2, cases[c].axis, outputs, 0);
        }
        if (memcmp(out[0], out[1], (FRONT + outputs + GUARD) * sizeof(float)))
            fail_msg("%s of %zux%zu over axis %zu: the two directions differ", op_name(op), cases[c].shape[0],
                     cases[c].shape[1], cases[c].axis);
        free(x);
        free(out[0]);
        free(out[1]);
    }
}

static void test_errors(void **state)
{
    pair *p = *state;
    tgl_backend *bk[2] = {p->gl, p->cpu};
    for (int k = 0; k < 2; k++) {
        tgl_backend *b = bk[k];
        tgl_ptr in, out;
        float ones[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, back[16];
        TGT_OK(b, tgl_alloc(b, sizeof ones, &in));
        TGT_OK(b, tgl_copy_htod(b, in, ones, sizeof ones));
        TGT_OK(b, tgl_alloc(b, sizeof ones, &out));
        size_t shape[9] = {2, 8, 1, 1, 1, 1, 1, 1, 1}, empty[2] = {4, 0};
        TGT_EXPECT(b, tgl_reduce(b, TGL_REDUCE_SUM, in, out, NULL, 2, 0), TGL_ERR_INVALID_ARGUMENT);
        TGT_EXPECT(b, tgl_reduce(b, TGL_REDUCE_SUM, in, out, shape, 0, 0), TGL_ERR_INVALID_ARGUMENT);
        TGT_EXPECT(b, tgl_reduce(b, TGL_REDUCE_SUM, in, out, shape, 9, 0), TGL_ERR_INVALID_ARGUMENT);
        TGT_EXPECT(b, tgl_reduce(b, TGL_REDUCE_SUM, in, out, shape, 2, 2), TGL_ERR_INVALID_ARGUMENT);
        TGT_EXPECT(b, tgl_reduce(b, (tgl_reduce_op)TGL_REDUCE_COUNT, in, out, shape, 2, 0), TGL_ERR_INVALID_ARGUMENT);
        TGT_EXPECT(b, tgl_reduce(b, TGL_REDUCE_ANY, in, out, shape, 2, 0), TGL_ERR_UNSUPPORTED); /* tgl_reduce_t's */
        TGT_EXPECT(b, tgl_reduce(b, TGL_REDUCE_MAX, in, out, empty, 2, 1), TGL_ERR_INVALID_ARGUMENT);
        TGT_EXPECT(b, tgl_argmax(b, in, out, empty, 2, 1), TGL_ERR_INVALID_ARGUMENT);
        TGT_EXPECT(b, tgl_reduce(b, TGL_REDUCE_SUM, in, in + 8, shape, 2, 1), TGL_ERR_INVALID_ARGUMENT); /* overlap */
        TGT_EXPECT(b, tgl_reduce(b, TGL_REDUCE_SUM, in, out + 2, shape, 2, 1), TGL_ERR_INVALID_ARGUMENT); /* misaligned */
        TGT_EXPECT(b, tgl_argmin(b, in + 4, out, shape, 2, 1), TGL_ERR_INVALID_POINTER); /* past the end */
        TGT_EXPECT(b, tgl_reduce(b, TGL_REDUCE_SUM, in, out + 60, shape, 2, 1), TGL_ERR_INVALID_POINTER);
        size_t huge[2] = {SIZE_MAX / 2, 4};
        TGT_EXPECT(b, tgl_reduce(b, TGL_REDUCE_SUM, in, out, huge, 2, 1), TGL_ERR_INVALID_ARGUMENT);
        TGT_OK(b, tgl_copy_dtoh(b, back, in, sizeof back));
        assert_memory_equal(back, ones, sizeof ones);
        /* Zero outputs is a no-op, whatever the pointers. */
        size_t none[2] = {0, 5};
        TGT_OK(b, tgl_reduce(b, TGL_REDUCE_MAX, 0, 0, none, 2, 1));
        TGT_OK(b, tgl_free(b, in));
        TGT_OK(b, tgl_free(b, out));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_random_shapes, tgt_pair_restore_reads),
        cmocka_unit_test_teardown(test_long_strided_and_empty, tgt_pair_restore_reads),
        cmocka_unit_test(test_long_sum_accuracy),
        cmocka_unit_test_teardown(test_strided_sum_accuracy, tgt_pair_restore_reads),
        cmocka_unit_test(test_nan_and_ties),
        cmocka_unit_test(test_past_block_limit), cmocka_unit_test(test_directions_agree),
        cmocka_unit_test_teardown(test_near_f32_range, tgt_pair_restore_reads),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests_name("ops/reduce (gl vs cpu)", tests, setup, teardown);
}
