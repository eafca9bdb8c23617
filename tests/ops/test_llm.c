/* tgl_rope (both layouts, position offsets, long positions) and tgl_gather_rows on GL compared
 * with the CPU oracle, in place and with guards; bad ids rejected before anything is written;
 * tables past the SSBO block limit (a shrunk limit: bound window by window); the error cases. */
#include "testing.h"
#include "gl/gl_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GUARD 8

typedef tgt_pair pair;

static int setup(void **state)
{
    return tgt_pair_setup(state, 0x20BE);
}

static int teardown(void **state)
{
    return tgt_pair_teardown(state);
}

typedef struct rope_job {
    size_t batch, seq, heads, dim, pos;
    float theta;
    tgl_rope_mode mode;
    int in_place;
    int aligned; /* x and out on 16-byte boundaries (else 4 bytes past one) */
} rope_job;

static float *rope_on(tgl_backend *b, const rope_job *j, const float *x, size_t n)
{
    size_t front = j->aligned ? 4 : 1, total = front + n + GUARD, bytes = total * sizeof(float);
    float *host = malloc(bytes);
    tgl_ptr in, out;
    tgt_poison(host, total);
    TGT_OK(b, tgl_alloc(b, bytes, &out));
    TGT_OK(b, tgl_alloc(b, bytes, &in));
    if (j->in_place)
        memcpy(host + front, x, n * sizeof(float));
    TGT_OK(b, tgl_copy_htod(b, out, host, bytes));
    TGT_OK(b, tgl_copy_htod(b, in + 4 * front, x, n * sizeof(float)));
    tgl_ptr src = j->in_place ? out + 4 * front : in + 4 * front;
    TGT_OK(b, tgl_rope(b, src, out + 4 * front, j->batch, j->seq, j->heads, j->dim, j->pos, j->theta, j->mode));
    TGT_OK(b, tgl_copy_dtoh(b, host, out, bytes));
    TGT_OK(b, tgl_free(b, in));
    TGT_OK(b, tgl_free(b, out));
    return host;
}

/* Each job runs with and without buffer textures: on llvmpipe the first takes HEAD_LOOP (one
 * invocation per pair index, looping over the heads; in vec4s of pair indices for the aligned
 * jobs whose head_dim is a multiple of 8), the second one invocation per pair. */
static void rope_jobs(void *ctx)
{
    pair *p = ctx;
    const rope_job jobs[] = {
        {1, 1, 1, 2, 0, 10000.0f, TGL_ROPE_NEOX, 0, 0},       {2, 7, 3, 64, 0, 10000.0f, TGL_ROPE_NEOX, 0, 0},
        {2, 7, 3, 64, 0, 10000.0f, TGL_ROPE_INTERLEAVED, 1, 0}, {1, 33, 4, 128, 4000, 500000.0f, TGL_ROPE_NEOX, 1, 0},
        {3, 1, 8, 80, 4095, 10000.0f, TGL_ROPE_INTERLEAVED, 0, 0}, /* one decode token deep in the cache */
        {1, 300, 2, 16, 60000, 10000.0f, TGL_ROPE_NEOX, 0, 0},  /* long positions: angle reduction */
        {0, 5, 2, 8, 0, 10000.0f, TGL_ROPE_NEOX, 0, 0},
        {2, 9, 40, 6, 17, 10000.0f, TGL_ROPE_INTERLEAVED, 1, 0}, /* many heads, in place */
        {2, 7, 3, 64, 0, 10000.0f, TGL_ROPE_NEOX, 0, 1},       {2, 7, 3, 64, 9, 10000.0f, TGL_ROPE_INTERLEAVED, 1, 1},
        {1, 33, 4, 128, 4000, 500000.0f, TGL_ROPE_NEOX, 1, 1}, {3, 1, 8, 8, 4095, 10000.0f, TGL_ROPE_INTERLEAVED, 0, 1},
        {1, 5, 2, 12, 3, 10000.0f, TGL_ROPE_NEOX, 0, 1}, /* aligned, but 6 pair indices: one at a time */
    };
    for (size_t k = 0; k < sizeof jobs / sizeof jobs[0]; k++) {
        const rope_job *j = &jobs[k];
        size_t n = j->batch * j->seq * j->heads * j->dim;
        float *x = malloc((n + 1) * sizeof(float));
        for (size_t i = 0; i < n; i++)
            x[i] = tgt_uniform(&p->rng, -2.0f, 2.0f);
        float *got = rope_on(p->gl, j, x, n), *want = rope_on(p->cpu, j, x, n);
        size_t front = j->aligned ? 4 : 1;
        if (tgt_first_unpoisoned(got, front) != front || tgt_first_unpoisoned(got + front + n, GUARD) != GUARD)
            fail_msg("rope job %zu: a guard element was overwritten", k);
        /* The f32 part of the angle (token index within the call times the frequency) carries
         * rounding the double oracle does not: ~1e-12 at seq 300, ~1e-9 at a 4096-token call. */
        double e = tgt_nmse(got + front, want + front, n);
        print_message("rope pos %zu seq %zu dim %zu: NMSE %.3g\n", j->pos, j->seq, j->dim, e);
        if (!(e <= 1e-9))
            fail_msg("rope job %zu (pos %zu, dim %zu, mode %d): NMSE %.3g (seed %llu)", k, j->pos, j->dim,
                     (int)j->mode, e, (unsigned long long)tgt_seed());
        free(x), free(got), free(want);
    }
}

static void test_rope(void **state)
{
    pair *p = *state;
    tgt_with_and_without_textures(p->gl, rope_jobs, p);
}

/* GL keeps the last call's frequency table for the next call with the same head_dim, position
 * and theta: calls queued back to back (no synchronize between them) that repeat, change and
 * return to parameters, and grow the table, must each match the CPU backend. */
static void test_rope_table_reuse(void **state)
{
    pair *p = *state;
    if (!p->gl)
        skip();
    enum { JOBS = 8 };
    const rope_job jobs[JOBS] = {
        {1, 3, 2, 16, 5, 10000.0f, TGL_ROPE_NEOX, 0, 0},  {1, 3, 2, 16, 5, 10000.0f, TGL_ROPE_NEOX, 0, 0},
        {1, 3, 2, 16, 6, 10000.0f, TGL_ROPE_NEOX, 0, 0},  {1, 3, 2, 16, 5, 10000.0f, TGL_ROPE_INTERLEAVED, 0, 0},
        {1, 3, 2, 16, 5, 500000.0f, TGL_ROPE_NEOX, 0, 0}, {1, 3, 2, 128, 5, 10000.0f, TGL_ROPE_NEOX, 0, 0},
        {1, 3, 2, 32, 5, 10000.0f, TGL_ROPE_NEOX, 0, 0},  {1, 3, 2, 16, 5, 10000.0f, TGL_ROPE_NEOX, 0, 0},
    };
    float *x[JOBS];
    tgl_ptr in[JOBS], out[JOBS];
    size_t n[JOBS];
    for (size_t k = 0; k < JOBS; k++) {
        const rope_job *j = &jobs[k];
        n[k] = j->batch * j->seq * j->heads * j->dim;
        x[k] = malloc(n[k] * sizeof(float));
        for (size_t i = 0; i < n[k]; i++)
            x[k][i] = tgt_uniform(&p->rng, -2.0f, 2.0f);
        TGT_OK(p->gl, tgl_alloc(p->gl, n[k] * sizeof(float), &in[k]));
        TGT_OK(p->gl, tgl_alloc(p->gl, n[k] * sizeof(float), &out[k]));
        TGT_OK(p->gl, tgl_copy_htod(p->gl, in[k], x[k], n[k] * sizeof(float)));
        TGT_OK(p->gl, tgl_rope(p->gl, in[k], out[k], j->batch, j->seq, j->heads, j->dim, j->pos, j->theta, j->mode));
    }
    for (size_t k = 0; k < JOBS; k++) {
        float *got = malloc(n[k] * sizeof(float)), *want = rope_on(p->cpu, &jobs[k], x[k], n[k]);
        TGT_OK(p->gl, tgl_copy_dtoh(p->gl, got, out[k], n[k] * sizeof(float)));
        double e = tgt_nmse(got, want + 1, n[k]);
        if (!(e <= 1e-9))
            fail_msg("rope call %zu of a queued sequence: NMSE %.3g (seed %llu)", k, e, (unsigned long long)tgt_seed());
        TGT_OK(p->gl, tgl_free(p->gl, in[k]));
        TGT_OK(p->gl, tgl_free(p->gl, out[k]));
        free(got), free(want), free(x[k]);
    }
}

/* Table and output start `front` floats into their allocations: 1 keeps GL on scalar rows, 4
 * (16 bytes) lets it take vec4 rows when cols is a multiple of 4, 8 (32 bytes) also llvmpipe's
 * stores of vec4 pairs when cols is a multiple of 8. */
static size_t front = 1;
static const size_t fronts[3] = {1, 4, 8};

static float *gather_on(tgl_backend *b, const float *table, size_t rows, size_t cols, const int32_t *ids,
                        size_t n_ids, tgl_status *st)
{
    size_t total = front + n_ids * cols + GUARD, bytes = total * sizeof(float), f = front * sizeof(float);
    float *host = malloc(bytes); // NOLINT(clang-analyzer-optin.portability.UnixAPI): bytes >= GUARD floats
    tgl_ptr t, i, o;
    tgt_poison(host, total);
    TGT_OK(b, tgl_alloc(b, rows * cols * sizeof(float) + f, &t));
    TGT_OK(b, tgl_alloc(b, n_ids * 4 + 8, &i));
    TGT_OK(b, tgl_alloc(b, bytes, &o));
    TGT_OK(b, tgl_copy_htod(b, t + f, table, rows * cols * sizeof(float)));
    TGT_OK(b, tgl_copy_htod(b, i + 4, ids, n_ids * 4));
    TGT_OK(b, tgl_copy_htod(b, o, host, bytes));
    *st = tgl_gather_rows(b, t + f, i + 4, o + f, rows, cols, n_ids);
    TGT_OK(b, tgl_copy_dtoh(b, host, o, bytes));
    TGT_OK(b, tgl_free(b, t));
    TGT_OK(b, tgl_free(b, i));
    TGT_OK(b, tgl_free(b, o));
    return host;
}

/* A table of rows x cols in [-1, 1] and n_ids ids below rows (the first one the last row). */
static void random_gather(tgt_rng *r, size_t rows, size_t cols, size_t n_ids, float **table, int32_t **ids)
{
    *table = malloc(rows * cols * sizeof(float));
    *ids = malloc(n_ids * 4);
    for (size_t i = 0; i < rows * cols; i++)
        (*table)[i] = tgt_uniform(r, -1, 1);
    for (size_t k = 0; k < n_ids; k++)
        (*ids)[k] = (int32_t)tgt_below(r, rows);
    (*ids)[0] = (int32_t)rows - 1;
}

/* The gather on gl and on the CPU oracle: both succeed and agree bit for bit, guards included. */
static void expect_gather_agrees(pair *p, tgl_backend *gl, const float *table, size_t rows, size_t cols,
                                 const int32_t *ids, size_t n_ids, const char *label)
{
    tgl_status sg, sc;
    float *got = gather_on(gl, table, rows, cols, ids, n_ids, &sg);
    float *want = gather_on(p->cpu, table, rows, cols, ids, n_ids, &sc);
    assert_int_equal(sg, TGL_OK);
    assert_int_equal(sc, TGL_OK);
    if (memcmp(got, want, (front + n_ids * cols + GUARD) * sizeof(float)))
        fail_msg("gather %zux%zu, %zu ids%s: gl differs from cpu (guards included)", rows, cols, n_ids, label);
    free(got), free(want);
}

static void gather_cases(void *ctx)
{
    pair *p = ctx;
    const size_t shapes[][3] = {{1, 1, 1}, {50, 7, 13}, {1000, 64, 300}, {3, 4099, 5}, {8, 1024, 33}, {5, 4, 70001}};
    for (size_t s = 0; s < 3 * sizeof shapes / sizeof shapes[0]; s++) {
        front = fronts[s % 3];
        size_t rows = shapes[s / 3][0], cols = shapes[s / 3][1], n_ids = shapes[s / 3][2];
        float *table;
        int32_t *ids;
        random_gather(&p->rng, rows, cols, n_ids, &table, &ids);
        expect_gather_agrees(p, p->gl, table, rows, cols, ids, n_ids, "");

        /* A bad id (negative, or one past the end) fails the call and writes nothing. */
        size_t bad_at = n_ids / 2;
        for (int kind = 0; kind < 2; kind++) {
            ids[bad_at] = kind ? (int32_t)rows : -3;
            tgl_backend *bk[2] = {p->gl, p->cpu};
            for (int k = 0; k < 2; k++) {
                tgl_status sg;
                float *out = gather_on(bk[k], table, rows, cols, ids, n_ids, &sg);
                assert_int_equal(sg, TGL_ERR_INVALID_ARGUMENT);
                char want_msg[64];
                snprintf(want_msg, sizeof want_msg, "ids[%zu] = %d", bad_at, (int)ids[bad_at]);
                if (!strstr(tgl_last_error(bk[k]), want_msg))
                    fail_msg("%s: message '%s' does not name %s", tgl_backend_name(bk[k]), tgl_last_error(bk[k]),
                             want_msg);
                assert_int_equal(tgt_first_unpoisoned(out, front + n_ids * cols + GUARD), front + n_ids * cols + GUARD);
                free(out);
            }
            ids[bad_at] = 0;
        }
        free(table), free(ids);
    }
}

/* Under a 4 KiB SSBO limit (1016 floats) tables are bound as windows of whole rows: scalar and
 * vec4 rows, ids spread over every window, guards intact; a single row past the limit is
 * TGL_ERR_UNSUPPORTED. */
/* With and without buffer textures: on llvmpipe the first walks each row in one invocation
 * (ROW_LOOP; storing pairs of vec4s where the output is 32-byte aligned), the second runs the
 * 2-D grid. */
static void test_gather_rows(void **state)
{
    pair *p = *state;
    tgt_with_and_without_textures(p->gl, gather_cases, p);
}

static void test_gather_past_block_limit(void **state)
{
    pair *p = *state;
    if (!p->gl)
        skip();
    tgl_backend *gl = tgt_open(TGL_BACKEND_GL);
    tgl_gl_test_set_limits(gl, 4096, NULL);
    const size_t shapes[][3] = {{600, 7, 500}, {300, 16, 400}, {2000, 1, 3000}, {127, 8, 1}};
    for (size_t s = 0; s < 3 * sizeof shapes / sizeof shapes[0]; s++) {
        front = fronts[s % 3];
        size_t rows = shapes[s / 3][0], cols = shapes[s / 3][1], n_ids = shapes[s / 3][2];
        float *table;
        int32_t *ids;
        random_gather(&p->rng, rows, cols, n_ids, &table, &ids);
        expect_gather_agrees(p, gl, table, rows, cols, ids, n_ids, ", 4 KiB limit");
        free(table), free(ids);
    }
    float row[1100] = {0};
    int32_t id = 0;
    tgl_status st;
    free(gather_on(gl, row, 1, 1100, &id, 1, &st));
    assert_int_equal(st, TGL_ERR_UNSUPPORTED);
    tgl_close(gl);
}

static void test_errors(void **state)
{
    pair *p = *state;
    tgl_backend *bk[2] = {p->gl, p->cpu};
    for (int k = 0; k < 2; k++) {
        tgl_backend *b = bk[k];
        tgl_ptr a;
        float data[32] = {0}, back[32];
        for (int i = 0; i < 32; i++)
            data[i] = (float)i;
        TGT_OK(b, tgl_alloc(b, sizeof data, &a));
        TGT_OK(b, tgl_copy_htod(b, a, data, sizeof data));
        TGT_EXPECT(b, tgl_rope(b, a, a, 1, 1, 1, 3, 0, 10000.0f, TGL_ROPE_NEOX), TGL_ERR_INVALID_ARGUMENT);
        TGT_EXPECT(b, tgl_rope(b, a, a, 1, 1, 1, 4, 0, 1.0f, TGL_ROPE_NEOX), TGL_ERR_INVALID_ARGUMENT);
        TGT_EXPECT(b, tgl_rope(b, a, a, 1, 1, 1, 4, 0, NAN, TGL_ROPE_NEOX), TGL_ERR_INVALID_ARGUMENT);
        TGT_EXPECT(b, tgl_rope(b, a, a, 1, 1, 1, 4, 0, 1e4f, (tgl_rope_mode)2), TGL_ERR_INVALID_ARGUMENT);
        TGT_EXPECT(b, tgl_rope(b, a, a + 4, 1, 2, 1, 4, 0, 1e4f, TGL_ROPE_NEOX), TGL_ERR_INVALID_ARGUMENT);
        TGT_EXPECT(b, tgl_rope(b, a, a, 1, 3, 3, 4, 0, 1e4f, TGL_ROPE_NEOX), TGL_ERR_INVALID_POINTER);
        TGT_EXPECT(b, tgl_rope(b, a, a, 1, 2, 1, 4, (size_t)1 << 24, 1e4f, TGL_ROPE_NEOX), TGL_ERR_INVALID_ARGUMENT);
        TGT_EXPECT(b, tgl_gather_rows(b, a, a + 64, a, 4, 4, 4), TGL_ERR_INVALID_ARGUMENT);   /* out overlaps */
        TGT_EXPECT(b, tgl_gather_rows(b, a, a + 2, a + 64, 4, 4, 2), TGL_ERR_INVALID_ARGUMENT); /* misaligned ids */
        TGT_EXPECT(b, tgl_gather_rows(b, a, a + 64, a + 96, 0, 4, 1), TGL_ERR_INVALID_ARGUMENT); /* empty table */
        TGT_EXPECT(b, tgl_gather_rows(b, a, a + 64, a + 96, 8, 8, 1), TGL_ERR_INVALID_POINTER);  /* table too big */
        TGT_OK(b, tgl_copy_dtoh(b, back, a, sizeof back));
        assert_memory_equal(back, data, sizeof data);
        TGT_OK(b, tgl_free(b, a));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_rope, tgt_pair_restore_reads),
        cmocka_unit_test(test_rope_table_reuse),
        cmocka_unit_test_teardown(test_gather_rows, tgt_pair_restore_reads),
        cmocka_unit_test(test_gather_past_block_limit),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests_name("ops/llm: rope, gather_rows (gl vs cpu)", tests, setup, teardown);
}
