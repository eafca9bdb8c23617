/* tgl_softmax, tgl_log_softmax, tgl_rmsnorm and tgl_layernorm on GL compared with the CPU oracle
 * over awkward shapes, in place, with and without weight/bias, on rows of +-1e4 (stability),
 * layernorm of rows far from zero, with poisoned outputs and guards; and their error cases. */
#include "testing.h"
#include "gl/gl_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Operands start `front` floats into their allocations: 1 (windows start unaligned) or 4 (whole
 * vec4s, which rows whose length is a multiple of 4 then read as vec4s); the front of the
 * output is poisoned, a guard. */
#define GUARD 8
enum { SOFTMAX, LOG_SOFTMAX, RMSNORM, LAYERNORM, KINDS };
static const char *const names[KINDS] = {"softmax", "log_softmax", "rmsnorm", "layernorm"};

typedef tgt_pair pair;

static int setup(void **state)
{
    return tgt_pair_setup(state, 0x40C);
}

static int teardown(void **state)
{
    return tgt_pair_teardown(state);
}

typedef struct job {
    int kind, in_place, with_w, with_b;
    size_t rows, cols, front;
    float eps;
    const float *x, *w, *bias;
} job;

static tgl_status call(tgl_backend *b, const job *j, tgl_ptr in, tgl_ptr w, tgl_ptr bias, tgl_ptr out)
{
    switch (j->kind) {
    case SOFTMAX: return tgl_softmax(b, in, out, j->rows, j->cols);
    case LOG_SOFTMAX: return tgl_log_softmax(b, in, out, j->rows, j->cols);
    case RMSNORM: return tgl_rmsnorm(b, in, w, out, j->rows, j->cols, j->eps);
    default: return tgl_layernorm(b, in, w, bias, out, j->rows, j->cols, j->eps);
    }
}

static tgl_ptr upload(tgl_backend *b, const float *x, size_t n, size_t front)
{
    tgl_ptr p;
    TGT_OK(b, tgl_alloc(b, (n + front) * sizeof(float), &p));
    TGT_OK(b, tgl_copy_htod(b, p + front * sizeof(float), x, n * sizeof(float)));
    return p;
}

/* Returns front + rows*cols + GUARD floats of the output allocation. */
static float *run_on(tgl_backend *b, const job *j)
{
    const size_t front = j->front, n = j->rows * j->cols, total = front + n + GUARD;
    const size_t f = front * sizeof(float);
    float *host = malloc(total * sizeof(float));
    tgl_ptr in = 0, w = 0, bias = 0, out;
    TGT_OK(b, tgl_alloc(b, total * sizeof(float), &out));
    tgt_poison(host, total);
    if (j->in_place)
        memcpy(host + front, j->x, n * sizeof(float));
    TGT_OK(b, tgl_copy_htod(b, out, host, total * sizeof(float)));
    if (!j->in_place)
        in = upload(b, j->x, n, front);
    if (j->with_w)
        w = upload(b, j->w, j->cols, front);
    if (j->with_b)
        bias = upload(b, j->bias, j->cols, front);
    TGT_OK(b, call(b, j, j->in_place ? out + f : in + f, w ? w + f : 0, bias ? bias + f : 0, out + f));
    TGT_OK(b, tgl_copy_dtoh(b, host, out, total * sizeof(float)));
    TGT_OK(b, tgl_free(b, in));
    TGT_OK(b, tgl_free(b, w));
    TGT_OK(b, tgl_free(b, bias));
    TGT_OK(b, tgl_free(b, out));
    return host;
}

static void compare(pair *p, const job *j)
{
    const size_t n = j->rows * j->cols, front = j->front;
    float *got = run_on(p->gl, j), *want = run_on(p->cpu, j);
    if (tgt_first_unpoisoned(got, front) != front || tgt_first_unpoisoned(got + front + n, GUARD) != GUARD)
        fail_msg("%s %zux%zu: a guard element was overwritten", names[j->kind], j->rows, j->cols);
    for (size_t i = 0; i < n; i++) /* both NaN is agreement: layernorm of one column with eps 0 */
        if (isfinite(got[front + i]) != isfinite(want[front + i]))
            fail_msg("%s %zux%zu: element %zu not finite: gl %g, cpu %g", names[j->kind], j->rows, j->cols, i,
                     (double)got[front + i], (double)want[front + i]);
    double e = tgt_nmse(got + front, want + front, n);
    if (!(e <= 1e-9))
        fail_msg("%s %zux%zu front=%zu in_place=%d w=%d b=%d: NMSE %.3g (seed %llu)", names[j->kind], j->rows,
                 j->cols, front, j->in_place, j->with_w, j->with_b, e, (unsigned long long)tgt_seed());
    free(got);
    free(want);
}

static float *randoms(tgt_rng *r, size_t n, float lo, float hi)
{
    float *x = malloc((n ? n : 1) * sizeof(float));
    for (size_t i = 0; i < n; i++)
        x[i] = tgt_uniform(r, lo, hi);
    return x;
}

/* Every shape and op, once with the rows read through buffer textures (llvmpipe's choice) and
 * once through SSBOs (GPUs'). */
static void shapes_cases(void *ctx)
{
    pair *p = ctx;
    /* {1, 300007}: longer than llvmpipe's loop limit lets 8 invocations walk; rows of a multiple
     * of 4 ({7, 8} ... {3, 8196}) take the vec4 path when their operands start aligned */
    static const size_t shapes[][2] = {{1, 1}, {1, 7}, {3, 1}, {5, 4099}, {1000, 33}, {2, 100003}, {64, 1024}, {0, 5},
                                       {4, 0}, {1, 300007}, {7, 8}, {9, 100}, {3, 8196}, {2, 100004}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        size_t rows = shapes[s][0], cols = shapes[s][1];
        float *x = randoms(&p->rng, rows * cols, -6.0f, 6.0f);
        float *w = randoms(&p->rng, cols, -2.0f, 2.0f), *bias = randoms(&p->rng, cols, -1.0f, 1.0f);
        for (int kind = 0; kind < KINDS; kind++) {
            for (int v = 0; v < 4; v++) {
                int with_w = kind >= RMSNORM && (v & 1), with_b = kind == LAYERNORM && (v & 2);
                if (kind < RMSNORM && v > 1)
                    break;
                for (size_t front = 1; front <= 4; front += 3) {
                    job j = {kind, v == 1 || v == 2, with_w, with_b, rows, cols, front, v == 3 ? 0.0f : 1e-5f,
                             x, w, bias};
                    compare(p, &j);
                }
            }
        }
        free(x);
        free(w);
        free(bias);
    }
}

static void test_shapes(void **state)
{
    pair *p = *state;
    tgt_with_and_without_textures(p->gl, shapes_cases, p);
}

/* Softmax and log-softmax at row lengths around each size of llvmpipe's lanes kernel
 * (norm/softmax_lanes.comp: 2 to 32 vec4s per invocation, whole or with a masked tail) and past
 * its longest row (1024 at 8 lanes), in place and not, operands 32-byte aligned (the kernel
 * stores pairs of vec4s) and not. */
static void test_row_lengths(void **state)
{
    pair *p = *state;
    static const size_t lengths[] = {8, 56, 64, 72, 128, 136, 248, 256, 264, 504, 512, 520, 1016, 1024, 1032, 2048};
    for (size_t s = 0; s < sizeof lengths / sizeof lengths[0]; s++) {
        size_t rows = 5, cols = lengths[s];
        float *x = randoms(&p->rng, rows * cols, -30.0f, 30.0f);
        for (int kind = SOFTMAX; kind <= LOG_SOFTMAX; kind++)
            for (int in_place = 0; in_place < 2; in_place++)
                for (size_t front = 4; front <= 8; front += 4) {
                    job j = {kind, in_place, 0, 0, rows, cols, front, 0.0f, x, NULL, NULL};
                    compare(p, &j);
                }
        free(x);
    }
}

/* Rows of +-1e4 stay finite: the max is subtracted before exp. */
static void test_large_magnitudes(void **state)
{
    pair *p = *state;
    for (size_t cols = 512; cols <= 513; cols++) { /* vec4 rows and scalar ones */
        size_t rows = 7;
        float *x = randoms(&p->rng, rows * cols, -1e4f, 1e4f);
        for (size_t i = 0; i < cols; i++)
            x[i] = 1e4f; /* a row of equal huge values */
        for (int kind = 0; kind < KINDS; kind++) {
            job j = {kind, 0, 0, 0, rows, cols, 4, 1e-5f, x, NULL, NULL};
            compare(p, &j);
        }
        free(x);
    }
}

/* Layernorm of rows far from zero: a large mean and a spread of about 1, the case where a mean
 * of x itself in f32 is off by up to half a unit in its last place (0.001 at 1e4) and every
 * output with it. Row 1 starts with an outlier 60 away from the rest (the shift the kernel
 * takes, the row's first element, is then far from the mean), row 2 is one value repeated.
 * 512 and 513 columns take llvmpipe's one-pass row-per-invocation kernel (vec4 and scalar),
 * 9001 the workgroup kernel. */
static void test_offset_rows(void **state)
{
    pair *p = *state;
    static const size_t col_counts[] = {512, 513, 9001};
    static const float offsets[] = {1e3f, -2.5e4f};
    for (size_t c = 0; c < sizeof col_counts / sizeof col_counts[0]; c++) {
        for (size_t o = 0; o < sizeof offsets / sizeof offsets[0]; o++) {
            size_t rows = 5, cols = col_counts[c];
            float *x = randoms(&p->rng, rows * cols, -1.0f, 1.0f);
            for (size_t i = 0; i < rows * cols; i++)
                x[i] += offsets[o];
            x[cols] = offsets[o] + 60.0f;
            for (size_t i = 0; i < cols; i++)
                x[2 * cols + i] = offsets[o] + 0.5f;
            float *w = randoms(&p->rng, cols, -2.0f, 2.0f), *bias = randoms(&p->rng, cols, -1.0f, 1.0f);
            for (int v = 0; v < 2; v++) {
                job j = {LAYERNORM, v, v, v, rows, cols, 4, 1e-5f, x, w, bias};
                compare(p, &j);
            }
            free(x);
            free(w);
            free(bias);
        }
    }
}

/* Softmax rows with -inf entries (attention masks): a leading run of -inf longer than the four
 * vec4s llvmpipe's kernel takes per step (its running max starts at the lowest finite float), -inf
 * scattered through a row, one finite element, and values that grow along the row (the running
 * sum is rescaled at every step). Masked positions must come out exactly 0 (softmax) and -inf
 * (log_softmax), the rest as the CPU's; a row of only -inf (row 4) gives NaN on both. */
static void test_masked_rows(void **state)
{
    pair *p = *state;
    static const size_t lengths[] = {64, 1000, 1027}; /* vec4 rows (llvmpipe: the lanes kernel, whole and
                                                         with a masked tail) and scalar ones */
    for (size_t s = 0; s < sizeof lengths / sizeof lengths[0]; s++) {
        const size_t rows = 5, cols = lengths[s];
        float *x = randoms(&p->rng, rows * cols, -6.0f, 6.0f);
        for (size_t c = 0; c < cols; c++) {
            if (c < cols / 2 + 3)
                x[c] = -INFINITY; /* row 0: the first half and more */
            if (tgt_uniform(&p->rng, 0.0f, 1.0f) < 0.3f)
                x[cols + c] = -INFINITY; /* row 1: scattered */
            if (c != cols - 2)
                x[2 * cols + c] = -INFINITY; /* row 2: one finite element near the end */
            x[3 * cols + c] = -20.0f + 40.0f * (float)c / (float)cols; /* row 3: growing */
            x[4 * cols + c] = -INFINITY;
        }
        for (int kind = SOFTMAX; kind <= LOG_SOFTMAX; kind++) {
            job j = {kind, 0, 0, 0, rows, cols, 4, 0.0f, x, NULL, NULL};
            float *got = run_on(p->gl, &j), *want = run_on(p->cpu, &j);
            for (size_t i = 4 * cols; i < rows * cols; i++)
                if (!isnan(got[4 + i]) || !isnan(want[4 + i]))
                    fail_msg("%s %zux%zu: a row of -inf: element %zu: gl %g, cpu %g", names[kind], rows, cols, i,
                             (double)got[4 + i], (double)want[4 + i]);
            for (size_t i = 0; i < 4 * cols; i++)
                if (x[i] == -INFINITY && !(got[4 + i] == want[4 + i] && want[4 + i] == (kind == SOFTMAX ? 0.0f : -INFINITY)))
                    fail_msg("%s %zux%zu: masked element %zu: gl %g, cpu %g", names[kind], rows, cols, i,
                             (double)got[4 + i], (double)want[4 + i]);
            double e = tgt_nmse(got + 4, want + 4, 4 * cols);
            if (!(e <= 1e-9))
                fail_msg("%s %zux%zu masked rows: NMSE %.3g (seed %llu)", names[kind], rows, cols, e,
                         (unsigned long long)tgt_seed());
            free(got);
            free(want);
        }
        free(x);
    }
}

/* Rows are walked in either direction (glsl/common/sweep.glsl; the fixture makes every op turn
 * round), each row computed the same way: both directions give the same bits. */
static void test_directions_agree(void **state)
{
    pair *p = *state;
    if (!p->gl) {
        skip();
        return;
    }
    tgl_gl *gl = tgl_gl_of(p->gl);
    const size_t rows = 513, cols = 1000;
    float *x = randoms(&p->rng, rows * cols, -8.0f, 8.0f), *w = randoms(&p->rng, cols, 0.5f, 2.0f);
    float *bias = randoms(&p->rng, cols, -1.0f, 1.0f);
    for (int kind = 0; kind < KINDS; kind++) {
        job j = {kind, 0, kind >= RMSNORM, kind == LAYERNORM, rows, cols, 4, 1e-5f, x, w, bias};
        float *out[2];
        for (unsigned backward = 0; backward < 2; backward++) {
            gl->sweep_backward = backward;
            out[backward] = run_on(p->gl, &j);
        }
        if (memcmp(out[0], out[1], (j.front + rows * cols + GUARD) * sizeof(float)))
            fail_msg("%s %zux%zu: the two directions differ", names[kind], rows, cols);
        free(out[0]);
        free(out[1]);
    }
    free(x);
    free(w);
    free(bias);
}

/* Near the f32 range limit, where a row's sums and squares overflow f32 but not the CPU's
 * double: rmsnorm of 3e38s is 1, layernorm of +-3e38 about +-1, and an infinite element keeps
 * the plain result (NaN for it, 0 for the finite ones). Rows of 4 (vec4s), 5 and 9001 floats
 * (llvmpipe: a row per invocation, then the workgroup kernel), each row against its value in
 * double within 1e-4 (f32 sums: the 9001 +-1s' layernorm is off by 2e-5 on llvmpipe at any
 * scale), on both backends. */
static void test_near_f32_limit(void **state)
{
    pair *p = *state;
    tgl_backend *bk[2] = {p->cpu, p->gl};
    static const size_t lengths[3] = {4, 5, 9001};
    for (int k = 0; k < 2; k++)
        for (size_t l = 0; l < 3; l++)
            for (int c = 0; c < 3; c++) {
                if (!bk[k])
                    continue;
                size_t cols = lengths[l];
                int kind = c == 1 ? LAYERNORM : RMSNORM;
                float *x = malloc(cols * sizeof *x), *want = malloc(cols * sizeof *want);
                double mean = 0.0, sq = 0.0;
                for (size_t i = 0; i < cols; i++) {
                    x[i] = c == 0 ? 3e38f : c == 1 ? (i % 2 ? -3e38f : 3e38f) : (float)(i % 7) - 3.0f;
                    mean += x[i] / (double)cols;
                }
                if (c == 2)
                    x[cols / 2] = INFINITY;
                for (size_t i = 0; i < cols; i++) {
                    double d = kind == LAYERNORM ? x[i] - mean : x[i];
                    sq += d * d / (double)cols;
                }
                for (size_t i = 0; i < cols; i++)
                    want[i] = c == 2 ? (i == cols / 2 ? NAN : 0.0f)
                                     : (float)((kind == LAYERNORM ? x[i] - mean : x[i]) / sqrt(sq + 1e-5));
                job j = {kind, 0, 0, 0, 1, cols, 4, 1e-5f, x, NULL, NULL};
                float *got = run_on(bk[k], &j);
                for (size_t i = 0; i < cols; i++)
                    if (isnan(want[i]) ? !isnan(got[4 + i]) : !(fabsf(got[4 + i] - want[i]) <= 1e-4f))
                        fail_msg("%s: %s of %zu near the f32 limit (row %d), element %zu: %.9g where %.9g is expected",
                                 tgl_backend_name(bk[k]), names[kind], cols, c, i, (double)got[4 + i],
                                 (double)want[i]);
                free(got);
                free(x);
                free(want);
            }
}

static void test_errors(void **state)
{
    pair *p = *state;
    tgl_backend *bk[2] = {p->gl, p->cpu};
    for (int k = 0; k < 2; k++) {
        tgl_backend *b = bk[k];
        float data[64], back[64];
        for (int i = 0; i < 64; i++)
            data[i] = (float)i;
        tgl_ptr x, w;
        TGT_OK(b, tgl_alloc(b, sizeof data, &x));
        TGT_OK(b, tgl_copy_htod(b, x, data, sizeof data));
        TGT_OK(b, tgl_alloc(b, 64, &w));
        TGT_EXPECT(b, tgl_rmsnorm(b, x, 0, x, 4, 16, NAN), TGL_ERR_INVALID_ARGUMENT);
        TGT_EXPECT(b, tgl_layernorm(b, x, 0, 0, x, 4, 16, -1.0f), TGL_ERR_INVALID_ARGUMENT);
        TGT_EXPECT(b, tgl_softmax(b, x, x + 4, 4, 8), TGL_ERR_INVALID_ARGUMENT);       /* partial overlap */
        TGT_EXPECT(b, tgl_rmsnorm(b, x, x + 192, x, 4, 16, 1e-5f), TGL_ERR_INVALID_ARGUMENT); /* out overlaps weight */
        TGT_EXPECT(b, tgl_log_softmax(b, x, x, 5, 16), TGL_ERR_INVALID_POINTER);       /* past the end */
        TGT_EXPECT(b, tgl_layernorm(b, x, w, w + 32, x, 4, 16, 1e-5f), TGL_ERR_INVALID_POINTER); /* beta too short */
        TGT_EXPECT(b, tgl_softmax(b, x, x, SIZE_MAX / 2, 4), TGL_ERR_INVALID_ARGUMENT);
        TGT_EXPECT(b, tgl_softmax(b, x + 2, x + 2, 1, 4), TGL_ERR_INVALID_ARGUMENT);   /* misaligned */
        TGT_OK(b, tgl_copy_dtoh(b, back, x, sizeof back));
        assert_memory_equal(back, data, sizeof data);
        TGT_OK(b, tgl_free(b, x));
        TGT_OK(b, tgl_free(b, w));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_shapes, tgt_pair_restore_reads),
        cmocka_unit_test(test_row_lengths),
        cmocka_unit_test(test_large_magnitudes),
        cmocka_unit_test(test_offset_rows),
        cmocka_unit_test(test_masked_rows),
        cmocka_unit_test(test_directions_agree),
        cmocka_unit_test(test_near_f32_limit),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests_name("ops/norm (gl vs cpu)", tests, setup, teardown);
}
