/* The GL backend's error paths: a kernel that fails to build, a lost context (sticky, no hang),
 * a synchronize timeout, an unexpected GL error, an op a backend lacks, and the debug context's
 * messages reaching the log callback. Faults the driver will not produce on demand (reset,
 * timeout, stray GL error) are injected at the point where the driver would report them, so the
 * mapping and recovery code that follows is the real one. Each test checks the buffers it
 * touched afterwards. */
#include "testing.h"
#include "gl/gl_internal.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static const float data[8] = {1, 2, 3, 4, 5, 6, 7, 8};

/* A backend with one buffer holding `data`. */
static tgl_backend *open_with_buffer(tgl_ptr *p)
{
    tgl_backend *b = tgt_open(TGL_BACKEND_GL);
    TGT_OK(b, tgl_alloc(b, sizeof data, p));
    TGT_OK(b, tgl_copy_htod(b, *p, data, sizeof data));
    return b;
}

static void expect_data(tgl_backend *b, tgl_ptr p)
{
    float got[8];
    TGT_OK(b, tgl_copy_dtoh(b, got, p, sizeof got));
    assert_memory_equal(got, data, sizeof data);
}

static int log_count;
static char log_text[8192];
static void capture(void *user, int level, const char *msg)
{
    (void)user, (void)level;
    log_count++;
    size_t used = strlen(log_text);
    snprintf(log_text + used, sizeof log_text - used, "%s\n", msg);
}

/* A kernel the driver rejects (workgroup larger than the device allows) fails the op with
 * TGL_ERR_SHADER naming the kernel and quoting the driver's log; the output is untouched. */
static void test_shader_failure(void **state)
{
    (void)state;
    tgl_ptr p;
    tgl_backend *b = open_with_buffer(&p);
    tgl_gl *gl = tgl_gl_of(b);
    uint32_t saved = gl->limits.workgroup_size;
    /* past the driver's own limit (TGL_LIMITS may have cut the one the library keeps) */
    GLint driver_max = 0;
    glGetIntegeri_v(GL_MAX_COMPUTE_WORK_GROUP_SIZE, 0, &driver_max);
    assert_true(driver_max > 0);
    gl->limits.workgroup_size = (uint32_t)driver_max + 1;
    TGT_EXPECT(b, tgl_unary(b, TGL_UNARY_EXP, p, p, 8), TGL_ERR_SHADER);
    assert_non_null(strstr(tgl_last_error(b), "elementwise/unary"));
    gl->limits.workgroup_size = saved;
    expect_data(b, p);

    GLuint prog = 0;
    const char *broken = "#version 430\nlayout(local_size_x = 1) in;\nvoid main() { no_such_fn(); }\n";
    TGT_EXPECT(b, tgl_gl_program_from_source(b, "tests/broken", broken, &prog), TGL_ERR_SHADER);
    assert_non_null(strstr(tgl_last_error(b), "tests/broken: compile failed"));
    assert_true(strlen(tgl_last_error(b)) > strlen("kernel tests/broken: compile failed: ") + 4);
    /* The backend goes on working. */
    TGT_OK(b, tgl_unary(b, TGL_UNARY_NEG, p, p, 8));
    TGT_OK(b, tgl_unary(b, TGL_UNARY_NEG, p, p, 8));
    expect_data(b, p);
    tgl_close(b);
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* After a reset every call returns TGL_ERR_DEVICE_LOST at once and writes nothing. */
static void test_device_lost_is_sticky(void **state)
{
    (void)state;
    tgl_ptr p;
    tgl_backend *b = open_with_buffer(&p);
    tgl_gl_test_inject(b, TGL_GL_FAULT_RESET, 0);
    TGT_EXPECT(b, tgl_synchronize(b), TGL_ERR_DEVICE_LOST);
    double t0 = now_s();
    float host[8] = {0};
    tgl_ptr q = 0;
    TGT_EXPECT(b, tgl_copy_dtoh(b, host, p, sizeof host), TGL_ERR_DEVICE_LOST);
    TGT_EXPECT(b, tgl_alloc(b, 64, &q), TGL_ERR_DEVICE_LOST);
    TGT_EXPECT(b, tgl_unary(b, TGL_UNARY_EXP, p, p, 8), TGL_ERR_DEVICE_LOST);
    TGT_EXPECT(b, tgl_synchronize(b), TGL_ERR_DEVICE_LOST);
    assert_true(now_s() - t0 < 1.0);
    for (int i = 0; i < 8; i++)
        assert_true(host[i] == 0.0f);
    assert_int_equal(q, 0);
    TGT_OK(b, tgl_free(b, p)); /* releasing host-side state still works */
    tgl_close(b);

    /* GL_CONTEXT_LOST from glGetError is loss too. */
    b = open_with_buffer(&p);
    tgl_gl_test_inject(b, TGL_GL_FAULT_GL_ERROR, 0x0507);
    TGT_EXPECT(b, tgl_unary(b, TGL_UNARY_EXP, p, p, 8), TGL_ERR_DEVICE_LOST);
    TGT_EXPECT(b, tgl_copy_htod(b, p, data, 4), TGL_ERR_DEVICE_LOST);
    tgl_close(b);
}

/* A small model step: the calls a program makes, with their statuses. Returns the index of the
 * first call that failed (its status in *st), or -1. */
static int model_step(tgl_backend *b, tgl_ptr p[4], float *out, tgl_status *st)
{
    static float x[256];
    for (int i = 0; i < 256; i++)
        x[i] = (float)(i % 17) * 0.125f - 1.0f;
    tgl_status s[] = {
        tgl_alloc(b, sizeof x, &p[0]), tgl_alloc(b, sizeof x, &p[1]), tgl_alloc(b, sizeof x, &p[2]),
        tgl_copy_htod(b, p[0], x, sizeof x),
        tgl_gemm(b, TGL_NO_TRANS, TGL_TRANS, 16, 16, 16, 1.0f, p[0], 16, p[0], 16, 0.0f, p[1], 16),
        tgl_softmax(b, p[1], p[2], 16, 16),
        tgl_map(b, "a * b + 1", (tgl_ptr[]){p[1], p[2]}, 2, p[1], 256),
        tgl_rmsnorm(b, p[1], 0, p[2], 16, 16, 1e-5f),
        tgl_copy_dtod(b, p[1], p[2], sizeof x),
        tgl_copy_dtoh(b, out, p[1], sizeof x),
        tgl_synchronize(b),
    };
    for (int i = 0; i < (int)(sizeof s / sizeof s[0]); i++)
        if (s[i] != TGL_OK) {
            *st = s[i];
            return i;
        }
    return -1;
}

/* TGL_FAULT=lose-context-after:N for every N a model step reaches: the first failing call says
 * TGL_ERR_DEVICE_LOST, every later call returns it at once, tgl_free and tgl_close still work,
 * and a new backend then runs the step and gets the result of a clean run. */
static void test_device_lost_at_every_point(void **state)
{
    (void)state;
    float clean[256], got[256];
    tgl_ptr p[4] = {0};
    tgl_status st = TGL_OK;
    tgl_backend *b = tgt_open(TGL_BACKEND_GL);
    assert_int_equal(model_step(b, p, clean, &st), -1);
    tgl_close(b);
    int lost_points = 0;
    for (unsigned n = 1;; n++) {
        char fault[48];
        snprintf(fault, sizeof fault, "lose-context-after:%u", n);
        tgt_setenv("TGL_FAULT", fault);
        b = tgt_open(TGL_BACKEND_GL);
        tgt_env_restore();
        memset(p, 0, sizeof p);
        int at = model_step(b, p, got, &st);
        if (at < 0) { /* the step needs fewer checks than n: done */
            tgl_close(b);
            break;
        }
        lost_points++;
        if (st != TGL_ERR_DEVICE_LOST)
            fail_msg("lose after %u checks: call %d returned %s (%s)", n, at, tgl_status_string(st), tgl_last_error(b));
        double t0 = now_s();
        tgl_ptr q[4] = {0};
        TGT_EXPECT(b, tgl_alloc(b, 64, &q[0]), TGL_ERR_DEVICE_LOST);
        TGT_EXPECT(b, tgl_unary(b, TGL_UNARY_EXP, p[0], p[0], 8), TGL_ERR_DEVICE_LOST);
        TGT_EXPECT(b, tgl_copy_dtoh(b, got, p[0], 16), TGL_ERR_DEVICE_LOST);
        TGT_EXPECT(b, tgl_synchronize(b), TGL_ERR_DEVICE_LOST);
        assert_true(now_s() - t0 < 1.0);
        for (int i = 0; i < 3; i++)
            assert_int_equal(tgl_free(b, p[i]), TGL_OK);
        tgl_close(b);
        b = tgt_open(TGL_BACKEND_GL); /* a new backend works */
        memset(p, 0, sizeof p);
        assert_int_equal(model_step(b, p, got, &st), -1);
        assert_memory_equal(got, clean, sizeof got);
        tgl_close(b);
    }
    printf("context lost at %d different points of the step; each handled\n", lost_points);
    assert_true(lost_points >= 5); /* not vacuous: llvmpipe's step checks for errors 8 times */
}

/* A synchronize that runs out of time says so; the work and the data survive it. */
static void test_synchronize_timeout(void **state)
{
    (void)state;
    tgl_ptr p;
    tgl_backend *b = open_with_buffer(&p);
    tgl_gl_test_inject(b, TGL_GL_FAULT_TIMEOUT, 0);
    TGT_EXPECT(b, tgl_synchronize(b), TGL_ERR_TIMEOUT);
    assert_non_null(strstr(tgl_last_error(b), "TGL_SYNC_TIMEOUT_MS"));
    TGT_OK(b, tgl_synchronize(b));
    expect_data(b, p);
    tgl_close(b);
}

/* The same with real work: enough GEMMs queued for ~200 ms (sized from one timed first), then a
 * 1 ms limit: the synchronize times out, the work goes on, and a later one with the limit back
 * finds every result right (C = k * 0.5 * 0.25 = 128 exactly, each product overwriting C).
 * (At most 2000 products: on the H100 one takes ~0.1 ms.)
 * Skipped where the driver runs each dispatch before glDispatchCompute returns (llvmpipe). */
static void test_synchronize_timeout_real(void **state)
{
    (void)state;
    tgl_backend *b = tgt_open(TGL_BACKEND_GL);
    const size_t n = 1024;
    tgl_ptr a, m, c;
    TGT_OK(b, tgl_alloc(b, n * n * sizeof(float), &a));
    TGT_OK(b, tgl_alloc(b, n * n * sizeof(float), &m));
    TGT_OK(b, tgl_alloc(b, n * n * sizeof(float), &c));
    TGT_OK(b, tgl_fill(b, a, 0.5f, n * n));
    TGT_OK(b, tgl_fill(b, m, 0.25f, n * n));
    TGT_OK(b, tgl_gemm(b, TGL_NO_TRANS, TGL_NO_TRANS, n, n, n, 1.0f, a, n, m, n, 0.0f, c, n)); /* compiles */
    TGT_OK(b, tgl_synchronize(b));
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    TGT_OK(b, tgl_gemm(b, TGL_NO_TRANS, TGL_NO_TRANS, n, n, n, 1.0f, a, n, m, n, 0.0f, c, n));
    TGT_OK(b, tgl_synchronize(b));
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double one = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    int reps = one > 0 ? (int)(0.2 / one) + 1 : 2000;
    if (reps > 2000)
        reps = 2000;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int r = 0; r < reps; r++)
        TGT_OK(b, tgl_gemm(b, TGL_NO_TRANS, TGL_NO_TRANS, n, n, n, 1.0f, a, n, m, n, 0.0f, c, n));
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double queued = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    /* llvmpipe runs a compute dispatch inside glDispatchCompute: a fence issued after them is
     * signalled at once (asked directly: the timing above swings on a loaded machine). */
    GLsync fence = glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
    assert_non_null(fence);
    GLenum done = glClientWaitSync(fence, GL_SYNC_FLUSH_COMMANDS_BIT, 0);
    glDeleteSync(fence);
    if (done == GL_ALREADY_SIGNALED || done == GL_CONDITION_SATISFIED) {
        printf("%d gemms took %.0f ms to queue and were done when it returned: this driver runs dispatches as they "
               "are issued, nothing to time out\n", reps, queued * 1e3);
        tgl_close(b);
        skip();
    }
    unsigned keep = b->config.sync_timeout_ms;
    b->config.sync_timeout_ms = 1;
    tgl_status st = tgl_synchronize(b);
    b->config.sync_timeout_ms = keep;
    printf("%d gemms of 1024^3 (%.1f ms each) queued; a 1 ms synchronize: %s\n", reps, one * 1e3, tgl_status_string(st));
    assert_int_equal(st, TGL_ERR_TIMEOUT);
    TGT_OK(b, tgl_synchronize(b));
    float *host = malloc(n * n * sizeof(float));
    TGT_OK(b, tgl_copy_dtoh(b, host, c, n * n * sizeof(float)));
    for (size_t i = 0; i < n * n; i++)
        if (host[i] != 128.0f)
            fail_msg("C[%zu] = %g after the timeout, expected 128", i, (double)host[i]);
    free(host);
    tgl_close(b);
}

/* An unexpected GL error is TGL_ERR_INTERNAL; the failed allocation leaves nothing behind.
 * (1 MiB: larger than what the pool carves from shared blocks, so it creates a GL buffer.) */
static void test_unexpected_gl_error(void **state)
{
    (void)state;
    tgl_ptr p, q = 0;
    tgl_backend *b = open_with_buffer(&p);
    tgl_gl_test_inject(b, TGL_GL_FAULT_GL_ERROR, GL_INVALID_OPERATION);
    TGT_EXPECT(b, tgl_alloc(b, 1 << 20, &q), TGL_ERR_INTERNAL);
    assert_non_null(strstr(tgl_last_error(b), "GL_INVALID_OPERATION"));
    assert_int_equal(q, 0);
    expect_data(b, p);
    TGT_OK(b, tgl_alloc(b, 1 << 20, &q));
    TGT_OK(b, tgl_free(b, q));
    tgl_close(b);
}

/* A backend without an op answers TGL_ERR_UNSUPPORTED before touching anything. */
static void test_unsupported_op(void **state)
{
    (void)state;
    tgl_ptr p;
    tgl_backend *b = open_with_buffer(&p);
    const tgl__vtable *real = b->vt;
    tgl__vtable lacking = *real;
    lacking.unary = NULL;
    b->vt = &lacking;
    TGT_EXPECT(b, tgl_unary(b, TGL_UNARY_EXP, p, p, 8), TGL_ERR_UNSUPPORTED);
    assert_int_equal(tgl_supports(b, TGL_OP_UNARY, TGL_DTYPE_F32), TGL_SUPPORT_NONE); /* said before the call */
    assert_int_equal(tgl_supports(b, TGL_OP_BINARY, TGL_DTYPE_F32), TGL_SUPPORT_NATIVE);
    b->vt = real;
    expect_data(b, p);
    tgl_close(b);
}

/* A GL backend opened with TGL_DEBUG=1, its log going to log_text (undo with
 * tgl_set_log_callback(NULL, NULL) and tgt_env_restore()). */
static tgl_backend *open_debug_capturing_log(void)
{
    tgt_setenv("TGL_DEBUG", "1");
    log_count = 0;
    log_text[0] = '\0';
    tgl_set_log_callback(capture, NULL);
    return tgt_open(TGL_BACKEND_GL);
}

/* TGL_DEBUG=1 gives a debug context whose KHR_debug messages reach the log callback. */
static void test_debug_context_messages(void **state)
{
    (void)state;
    tgl_backend *b = open_debug_capturing_log();
    struct tgl_device_info info;
    TGT_OK(b, tgl_device_info(b, &info));
    if (!info.debug) {
        tgl_set_log_callback(NULL, NULL);
        tgl_close(b);
        tgt_env_restore();
        skip(); /* the driver has no KHR_debug; the warning was logged */
    }
    glDebugMessageInsert(GL_DEBUG_SOURCE_APPLICATION, GL_DEBUG_TYPE_MARKER, 42,
                         GL_DEBUG_SEVERITY_NOTIFICATION, -1, "tensorgl-debug-probe");
    /* With debug on, a failed kernel's full source goes to the log too. */
    GLuint prog;
    tgl_gl_program_from_source(b, "tests/broken", "#version 430\nvoid main() { nope(); }\n", &prog);
    tgl_set_log_callback(NULL, NULL);
    tgl_close(b);
    tgt_env_restore();
    assert_non_null(strstr(log_text, "tensorgl-debug-probe"));
    assert_non_null(strstr(log_text, "void main() { nope(); }"));
}

/* TGL_DEBUG=1's barrier audit: quiet on correct ordering, and a dispatch that reads what the
 * previous one touched with the barrier withheld (test hook) fails with TGL_ERR_INTERNAL and an
 * error in the log; so does a download of what a dispatch wrote. */
static void test_debug_barrier_audit(void **state)
{
    (void)state;
    tgl_backend *b = open_debug_capturing_log();
    float x[64], y[64];
    for (int i = 0; i < 64; i++)
        x[i] = (float)i;
    tgl_ptr p = 0, q = 0;
    TGT_OK(b, tgl_alloc(b, sizeof x, &p));
    TGT_OK(b, tgl_alloc(b, sizeof x, &q));
    TGT_OK(b, tgl_copy_htod(b, p, x, sizeof x));
    TGT_OK(b, tgl_unary(b, TGL_UNARY_NEG, p, q, 64));
    TGT_OK(b, tgl_unary(b, TGL_UNARY_ABS, q, p, 64)); /* reads q: the barrier goes out */
    TGT_OK(b, tgl_copy_dtoh(b, y, p, sizeof y));
    assert_float_equal(y[5], 5.0f, 0.0f);
    /* (GPUs that stage downloads read small ones with the copy kernel, whose barrier would
     * cover the hazard below: read q once more after it.) */
    TGT_OK(b, tgl_unary(b, TGL_UNARY_ABS, q, p, 64));
    /* q was read by the last dispatch: writing it again needs the barrier (write after read). */
    tgl_gl_test_skip_barriers(b, 1);
    TGT_EXPECT(b, tgl_unary(b, TGL_UNARY_NEG, p, q, 64), TGL_ERR_INTERNAL);
    assert_non_null(strstr(tgl_last_error(b), "barrier audit"));
    /* A download of what a dispatch just wrote needs the buffer-update barrier. */
    tgl_gl_test_skip_barriers(b, 0);
    TGT_OK(b, tgl_unary(b, TGL_UNARY_NEG, p, q, 64));
    tgl_gl_test_skip_barriers(b, 1);
    TGT_EXPECT(b, tgl_copy_dtoh(b, y, q, sizeof y), TGL_ERR_INTERNAL);
    tgl_gl_test_skip_barriers(b, 0);
    TGT_OK(b, tgl_copy_dtoh(b, y, q, sizeof y));
    assert_float_equal(y[5], -5.0f, 0.0f);
    /* Image loads (llvmpipe's element-wise inputs) have their own bit: q is written, read by the
     * copy kernel (which issues only the storage barrier), then read as an image with the
     * barriers withheld. */
    tgl_ptr r = 0;
    TGT_OK(b, tgl_alloc(b, sizeof x, &r));
    tgl_gl_test_force_copy_kernel(b, 1);
    TGT_OK(b, tgl_unary(b, TGL_UNARY_NEG, p, q, 64));
    TGT_OK(b, tgl_copy_dtod(b, r, q, sizeof x));
    tgl_gl_test_skip_barriers(b, 1);
    if (tgl_gl_of(b)->limits.image_inputs) {
        TGT_EXPECT(b, tgl_unary(b, TGL_UNARY_ABS, q, r, 64), TGL_ERR_INTERNAL);
        assert_non_null(strstr(tgl_last_error(b), "GL_SHADER_IMAGE_ACCESS_BARRIER_BIT"));
    }
    tgl_gl_test_skip_barriers(b, 0);
    TGT_OK(b, tgl_synchronize(b));
    tgl_set_log_callback(NULL, NULL);
    tgl_close(b);
    tgt_env_restore();
    assert_non_null(strstr(log_text, "barrier audit"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shader_failure),        cmocka_unit_test(test_device_lost_is_sticky),
        cmocka_unit_test(test_synchronize_timeout),   cmocka_unit_test(test_synchronize_timeout_real),
        cmocka_unit_test(test_unexpected_gl_error),
        cmocka_unit_test(test_unsupported_op),        cmocka_unit_test(test_debug_context_messages),
        cmocka_unit_test(test_debug_barrier_audit),   cmocka_unit_test(test_device_lost_at_every_point),
    };
    unsetenv("TGL_DEBUG");
    return cmocka_run_group_tests_name("gl error paths", tests, NULL, NULL);
}
