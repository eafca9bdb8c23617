/* Threads (docs/api.md, "Threads"): several threads, each with its own GL and CPU backends, run
 * ops at the same time and each gets the CPU oracle's results; and one GL backend handed from
 * thread to thread (each thread done with it before the next starts, as the rules say) keeps
 * its buffers and works in each. */
#include "testing.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { THREADS = 4, ROUNDS = 6, M = 37, K = 29, N = 41 };

typedef struct worker {
    uint64_t seed;
    int rounds_ok;
    char error[256];
} worker;

/* C = A B, then softmax over C's rows and a fused expression, on backend b; the host copy of
 * the result in out (M * N floats). */
static int pipeline(tgl_backend *b, const float *a, const float *bm, float *out)
{
    tgl_ptr pa = 0, pb = 0, pc = 0, pd = 0;
    int bad = tgl_alloc(b, M * K * sizeof(float), &pa) || tgl_alloc(b, K * N * sizeof(float), &pb) ||
              tgl_alloc(b, M * N * sizeof(float), &pc) || tgl_alloc(b, M * N * sizeof(float), &pd) ||
              tgl_copy_htod(b, pa, a, M * K * sizeof(float)) || tgl_copy_htod(b, pb, bm, K * N * sizeof(float)) ||
              tgl_gemm(b, TGL_NO_TRANS, TGL_NO_TRANS, M, N, K, 1.0f, pa, K, pb, N, 0.0f, pc, N) ||
              tgl_softmax(b, pc, pd, M, N) || tgl_map(b, "a * 3 + exp(-b)", (tgl_ptr[]){pd, pc}, 2, pc, M * N) ||
              tgl_copy_dtoh(b, out, pc, M * N * sizeof(float));
    tgl_free(b, pa);
    tgl_free(b, pb);
    tgl_free(b, pc);
    tgl_free(b, pd);
    return bad;
}

static void *work(void *arg)
{
    worker *w = arg;
    tgl_options og = {.kind = TGL_BACKEND_GL}, oc = {.kind = TGL_BACKEND_CPU};
    tgl_backend *gl = NULL, *cpu = NULL;
    if (tgl_open(&og, &gl) || tgl_open(&oc, &cpu)) {
        snprintf(w->error, sizeof w->error, "open: %s", tgl_last_error(NULL));
        tgl_close(gl);
        return NULL;
    }
    tgt_rng r;
    tgt_rng_init(&r, w->seed);
    static _Thread_local float a[M * K], bm[K * N], got[M * N], want[M * N];
    for (int round = 0; round < ROUNDS; round++) {
        for (int i = 0; i < M * K; i++)
            a[i] = tgt_uniform(&r, -1.0f, 1.0f);
        for (int i = 0; i < K * N; i++)
            bm[i] = tgt_uniform(&r, -1.0f, 1.0f);
        if (pipeline(gl, a, bm, got) || pipeline(cpu, a, bm, want)) {
            snprintf(w->error, sizeof w->error, "round %d: %s / %s", round, tgl_last_error(gl), tgl_last_error(cpu));
            break;
        }
        double e = tgt_nmse(got, want, M * N);
        if (!(e <= 1e-9)) {
            snprintf(w->error, sizeof w->error, "round %d: NMSE %.3g", round, e);
            break;
        }
        w->rounds_ok++;
    }
    tgl_close(gl);
    tgl_close(cpu);
    return NULL;
}

static void test_backend_per_thread(void **state)
{
    (void)state;
    tgl_close(tgt_open(TGL_BACKEND_GL)); /* skips without a display */
    pthread_t t[THREADS];
    worker w[THREADS];
    for (int i = 0; i < THREADS; i++) {
        w[i] = (worker){.seed = tgt_seed() + (uint64_t)i * 7919};
        assert_int_equal(pthread_create(&t[i], NULL, work, &w[i]), 0);
    }
    for (int i = 0; i < THREADS; i++) {
        assert_int_equal(pthread_join(t[i], NULL), 0);
        if (w[i].error[0])
            fail_msg("thread %d: %s (seed %llu)", i, w[i].error, (unsigned long long)tgt_seed());
        assert_int_equal(w[i].rounds_ok, ROUNDS);
    }
}

/* One backend, three threads in turn: the first opens it and uploads, the second runs an op
 * in place, the third reads the result back and closes it. */
typedef struct relay {
    tgl_backend *b;
    tgl_ptr p;
    float x[100], y[100];
    int stage_ok[3];
} relay;

static void *relay_open(void *arg)
{
    relay *r = arg;
    tgl_options o = {.kind = TGL_BACKEND_GL};
    r->stage_ok[0] = !tgl_open(&o, &r->b) && !tgl_alloc(r->b, sizeof r->x, &r->p) &&
                     !tgl_copy_htod(r->b, r->p, r->x, sizeof r->x);
    return NULL;
}

static void *relay_op(void *arg)
{
    relay *r = arg;
    r->stage_ok[1] = !tgl_unary(r->b, TGL_UNARY_SQUARE, r->p, r->p, 100);
    return NULL;
}

static void *relay_read(void *arg)
{
    relay *r = arg;
    r->stage_ok[2] = !tgl_copy_dtoh(r->b, r->y, r->p, sizeof r->y);
    if (r->stage_ok[2]) {
        tgl_close(r->b);
        r->b = NULL;
    }
    return NULL;
}

static void test_backend_handed_between_threads(void **state)
{
    (void)state;
    tgl_close(tgt_open(TGL_BACKEND_GL));
    static relay r;
    for (int i = 0; i < 100; i++)
        r.x[i] = (float)i * 0.25f - 10.0f;
    void *(*stage[3])(void *) = {relay_open, relay_op, relay_read};
    for (int s = 0; s < 3; s++) {
        pthread_t t; /* each thread ends (and so lets go of the context) before the next begins */
        assert_int_equal(pthread_create(&t, NULL, stage[s], &r), 0);
        assert_int_equal(pthread_join(t, NULL), 0);
        if (!r.stage_ok[s])
            fail_msg("stage %d failed: %s", s, r.b ? tgl_last_error(r.b) : tgl_last_error(NULL));
    }
    for (int i = 0; i < 100; i++)
        assert_float_equal(r.y[i], r.x[i] * r.x[i], 0.0f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_backend_per_thread),
        cmocka_unit_test(test_backend_handed_between_threads),
    };
    return cmocka_run_group_tests_name("threads", tests, NULL, NULL);
}
