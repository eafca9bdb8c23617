/* Threads (docs/api.md, "Threads"): several threads, each with its own GL and CPU backends, run
 * ops at the same time and each gets the CPU oracle's results; the same with each thread's GL
 * backend on another EGL device (where there are two GPUs); and one GL backend handed from
 * thread to thread (each thread done with it before the next starts, as the rules say) keeps
 * its buffers and works in each: after the thread before it ended (with another EGL thread
 * alive), or let go of it with tgl_detach while it lives on; and tgl_close from a thread that
 * cannot reach the context returns. */
#include "testing.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { THREADS = 4, ROUNDS = 6, M = 37, K = 29, N = 41 };

typedef struct worker {
    uint64_t seed;
    int device; /* tgl_options.device of its GL backend (0: TGL_DEVICE's, the first by default) */
    int rounds_ok;
    char error[256];
    char egl_path[64]; /* its GL backend's, e.g. "EGL_EXT_platform_device #1 of 2" */
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
    tgl_options og = {.kind = TGL_BACKEND_GL, .device = w->device}, oc = {.kind = TGL_BACKEND_CPU};
    tgl_backend *gl = NULL, *cpu = NULL;
    if (tgl_open(&og, &gl) || tgl_open(&oc, &cpu)) {
        snprintf(w->error, sizeof w->error, "open: %s", tgl_last_error(NULL));
        tgl_close(gl);
        return NULL;
    }
    struct tgl_device_info info;
    if (!tgl_device_info(gl, &info))
        snprintf(w->egl_path, sizeof w->egl_path, "%s", info.egl_path);
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

/* Two GPUs at once: a thread per EGL device that makes a hardware context, each running the
 * pipeline on its own backend against the CPU oracle while the other does. Skipped (saying
 * why) where fewer than two such devices exist, as on a machine with llvmpipe only. */
static void test_two_devices(void **state)
{
    (void)state;
    struct tgl_device_entry d[16];
    int count = 0, use[2], found = 0;
    if (tgl_list_devices(d, 16, &count)) {
        print_message("no EGL device list (%s): skipped\n", tgl_last_error(NULL));
        skip();
        return;
    }
    for (int i = 0; i < count && i < 16 && found < 2; i++)
        if (d[i].api[0] && !d[i].software)
            use[found++] = i;
    if (found < 2) {
        print_message("%d hardware device(s) with a context among %d EGL devices: two are needed, skipped\n", found,
                      count);
        skip();
        return;
    }
    pthread_t t[2];
    worker w[2];
    for (int i = 0; i < 2; i++) {
        w[i] = (worker){.seed = tgt_seed() + (uint64_t)i * 104729, .device = d[use[i]].index};
        assert_int_equal(pthread_create(&t[i], NULL, work, &w[i]), 0);
    }
    for (int i = 0; i < 2; i++) {
        assert_int_equal(pthread_join(t[i], NULL), 0);
        if (w[i].error[0])
            fail_msg("device %d (%s): %s (seed %llu)", d[use[i]].index, d[use[i]].name, w[i].error,
                     (unsigned long long)tgt_seed());
        assert_int_equal(w[i].rounds_ok, ROUNDS);
        print_message("device %d: %s, %s, %d rounds checked\n", d[use[i]].index, d[use[i]].name, w[i].egl_path,
                      ROUNDS);
    }
    if (!strcmp(w[0].egl_path, w[1].egl_path))
        fail_msg("both backends report the EGL path \"%s\": not two devices", w[0].egl_path);
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

/* The hand-off when the first thread has ended and another thread that uses EGL lives on: Mesa
 * left the context bound to the ended thread's freed EGL state, so the next thread's
 * eglMakeCurrent failed with EGL_BAD_ACCESS (test_backend_handed_between_threads passed because
 * malloc gave each new thread's EGL state the freed one's address; a living bystander thread
 * takes that address first) and its tgl_close aborted in libepoxy. The library now releases a
 * thread's context when the thread ends. */
static pthread_mutex_t bystander_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t bystander_cond = PTHREAD_COND_INITIALIZER;
static int bystander_phase;

static void bystander_wait_for(int phase)
{
    pthread_mutex_lock(&bystander_lock);
    while (bystander_phase < phase)
        pthread_cond_wait(&bystander_cond, &bystander_lock);
    pthread_mutex_unlock(&bystander_lock);
}

static void bystander_move_to(int phase)
{
    pthread_mutex_lock(&bystander_lock);
    bystander_phase = phase;
    pthread_cond_broadcast(&bystander_cond);
    pthread_mutex_unlock(&bystander_lock);
}

static void *bystander(void *arg)
{
    tgl_backend **own = arg;
    tgl_options o = {.kind = TGL_BACKEND_GL};
    if (tgl_open(&o, own))
        *own = NULL;
    bystander_move_to(1); /* its EGL state exists now, and stays until phase 2 */
    bystander_wait_for(2);
    tgl_close(*own);
    return NULL;
}

static void *relay_op_read_close(void *arg)
{
    relay_op(arg);
    if (((relay *)arg)->stage_ok[1])
        relay_read(arg);
    return NULL;
}

static void test_handoff_after_thread_exit(void **state)
{
    (void)state;
    static relay r;
    memset(&r, 0, sizeof r);
    for (int i = 0; i < 100; i++)
        r.x[i] = (float)i * 0.5f - 7.0f;
    pthread_t t, c;
    tgl_backend *other = NULL;
    assert_int_equal(pthread_create(&t, NULL, relay_open, &r), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    if (!r.stage_ok[0])
        fail_msg("open: %s", r.b ? tgl_last_error(r.b) : tgl_last_error(NULL));
    bystander_phase = 0;
    assert_int_equal(pthread_create(&c, NULL, bystander, &other), 0);
    bystander_wait_for(1);
    assert_int_equal(pthread_create(&t, NULL, relay_op_read_close, &r), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    bystander_move_to(2);
    assert_int_equal(pthread_join(c, NULL), 0);
    if (!other)
        fail_msg("the bystander's backend did not open: %s", tgl_last_error(NULL));
    for (int s = 1; s < 3; s++)
        if (!r.stage_ok[s])
            fail_msg("stage %d on the second thread failed: %s", s, r.b ? tgl_last_error(r.b) : "?");
    assert_null(r.b); /* closed on the second thread */
    for (int i = 0; i < 100; i++)
        assert_float_equal(r.y[i], r.x[i] * r.x[i], 0.0f);
}

/* tgl_close from a thread while the backend's context is current on another thread that is
 * still alive (against the rule in docs/api.md "Threads"): the close frees the host side and
 * returns, where it once aborted in libepoxy (GL calls with no current context). */
static void *hold_open(void *arg)
{
    tgl_backend **own = arg;
    tgl_options o = {.kind = TGL_BACKEND_GL};
    if (tgl_open(&o, own))
        *own = NULL;
    bystander_move_to(1);
    bystander_wait_for(2); /* the context stays current here until the main thread closed it */
    return NULL;
}

static void test_close_while_current_elsewhere(void **state)
{
    (void)state;
    tgl_backend *b = NULL;
    pthread_t t;
    bystander_phase = 0;
    assert_int_equal(pthread_create(&t, NULL, hold_open, &b), 0);
    bystander_wait_for(1);
    tgt_expected_begin(); /* the close warns that the context is current on the other thread */
    if (b)
        tgl_close(b);
    tgt_expected_end();
    bystander_move_to(2);
    assert_int_equal(pthread_join(t, NULL), 0);
    if (!b)
        fail_msg("open: %s", tgl_last_error(NULL));
}

/* tgl_detach: a thread that lives on hands the backend over (without it, the other thread's
 * calls failed with EGL_BAD_ACCESS while the first thread lived). */
static void *use_then_detach(void *arg)
{
    relay *r = arg;
    relay_open(arg);
    r->stage_ok[1] = r->stage_ok[0] && !tgl_detach(r->b);
    bystander_move_to(1);
    bystander_wait_for(2); /* alive while the main thread uses the backend */
    return NULL;
}

static void test_detach_hands_over(void **state)
{
    (void)state;
    static relay r;
    memset(&r, 0, sizeof r);
    for (int i = 0; i < 100; i++)
        r.x[i] = (float)i - 50.0f;
    pthread_t t;
    bystander_phase = 0;
    assert_int_equal(pthread_create(&t, NULL, use_then_detach, &r), 0);
    bystander_wait_for(1);
    int ok = r.stage_ok[0] && r.stage_ok[1] && !tgl_unary(r.b, TGL_UNARY_SQUARE, r.p, r.p, 100);
    char why[512] = "";
    if (!ok)
        snprintf(why, sizeof why, "%s", r.b ? tgl_last_error(r.b) : tgl_last_error(NULL));
    if (ok)
        relay_read(&r);
    bystander_move_to(2);
    assert_int_equal(pthread_join(t, NULL), 0);
    if (!ok || !r.stage_ok[2])
        fail_msg("hand-over while the first thread lives: %s", why);
    for (int i = 0; i < 100; i++)
        assert_float_equal(r.y[i], r.x[i] * r.x[i], 0.0f);
    assert_int_equal(tgl_detach(NULL), TGL_ERR_INVALID_ARGUMENT);
    tgl_backend *cpu = tgt_open(TGL_BACKEND_CPU);
    assert_int_equal(tgl_detach(cpu), TGL_OK);
    tgl_close(cpu);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_backend_per_thread),
        cmocka_unit_test(test_backend_handed_between_threads),
        cmocka_unit_test(test_handoff_after_thread_exit),
        cmocka_unit_test(test_close_while_current_elsewhere),
        cmocka_unit_test(test_detach_hands_over),
        cmocka_unit_test(test_two_devices),
    };
    return cmocka_run_group_tests_name("threads", tests, NULL, NULL);
}
