/* tgl_open: backend selection through options and environment, the auto fallback and its
 * reason, explicit GL failures that name the step, device info, status strings, logging, and
 * several backends in one process, the driver checks and the self-test at open, buffer textures
 * where offered. */
#include "testing.h"
#include "gl/gl_internal.h"

#include <epoxy/gl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int tgl_egl_display_exists(void);
void tgl_gl_test_driver_check(int mode);

/* TGL_DEVICE_PROFILE: a named profile and trait overrides land in the GL backend's traits with
 * their source; an unknown profile, trait or value fails tgl_open on every backend, and an
 * override the device cannot honour fails the GL open rather than being dropped. */
static void test_device_profile(void **state)
{
    (void)state;
    static const char *const bad[] = {"bogus", "generic-gpu,nope=1", "generic-gpu,reduce_groups=-3",
                                      "generic-gpu,texel_inputs=2", "generic-gpu,pool=sometimes",
                                      "generic-gpu,gemm=tiled:64,64", "llvmpipe,reduce_groups"};
    tgl_backend *b = NULL;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tgt_setenv("TGL_DEVICE_PROFILE", bad[i]);
        tgl_options cpu = {.kind = TGL_BACKEND_CPU};
        TGT_EXPECT(NULL, tgl_open(&cpu, &b), TGL_ERR_INVALID_ARGUMENT);
        assert_null(b);
        assert_non_null(strstr(tgl_last_error(NULL), "TGL_DEVICE_PROFILE"));
    }
    /* A GEMM value, commas and all, at the end of the text as in the middle. */
    tgt_setenv("TGL_DEVICE_PROFILE", "generic-gpu,gemm=tiled:32,32,8,4,4,double");
    tgl_options cpu = {.kind = TGL_BACKEND_CPU};
    assert_int_equal(tgl_open(&cpu, &b), TGL_OK);
    tgl_close(b);
    if (tgt_cpu_only() || !tgl_egl_display_exists())
        skip();
    tgt_setenv("TGL_DEVICE_PROFILE", "generic-gpu,reduce_groups=300,gemm=tiled:32,32,8,4,4,double,flash_block_keys=16");
    tgl_options gl = {.kind = TGL_BACKEND_GL};
    assert_int_equal(tgl_open(&gl, &b), TGL_OK);
    const tgl_gl_limits *l = &tgl_gl_of(b)->limits;
    assert_string_equal(l->profile, "generic-gpu");
    assert_int_equal(l->reduce_groups, 300);
    assert_int_equal(l->flash_block_keys, 16);
    assert_true(l->gemm.tiled && l->gemm.bm == 32 && l->gemm.bk == 8 && l->gemm.double_slab && !l->gemm.unroll);
    assert_false(l->texel_inputs); /* the GPU kernels, whatever the device */
    assert_false(l->attention_reg);
    assert_true(l->compute_units >= 1);
    assert_true(l->transfer_threads >= 1);
    /* The traits still compute right: a product through the overridden tile. */
    float a[6] = {1, 2, 3, 4, 5, 6}, x[2] = {1, -1}, c[3] = {0};
    tgl_ptr pa, pb, pc;
    assert_int_equal(tgl_alloc(b, sizeof a, &pa), TGL_OK);
    assert_int_equal(tgl_alloc(b, sizeof x, &pb), TGL_OK);
    assert_int_equal(tgl_alloc(b, sizeof c, &pc), TGL_OK);
    assert_int_equal(tgl_copy_htod(b, pa, a, sizeof a), TGL_OK);
    assert_int_equal(tgl_copy_htod(b, pb, x, sizeof x), TGL_OK);
    assert_int_equal(tgl_gemm(b, TGL_NO_TRANS, TGL_NO_TRANS, 3, 1, 2, 1.0f, pa, 2, pb, 1, 0.0f, pc, 1), TGL_OK);
    assert_int_equal(tgl_copy_dtoh(b, c, pc, sizeof c), TGL_OK);
    assert_true(c[0] == -1.0f && c[1] == -1.0f && c[2] == -1.0f);
    tgl_close(b);
    /* A tile past the device's shared memory or invocations is refused by name. */
    tgt_setenv("TGL_DEVICE_PROFILE", "generic-gpu,gemm=tiled:1024,1024,64,4,4");
    TGT_EXPECT(NULL, tgl_open(&gl, &b), TGL_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(tgl_last_error(NULL), "gemm"));
    /* ES has no doubles: paired dvec4 stores cannot be asked for there. */
    tgt_setenv("TGL_DEVICE_PROFILE", "wide_stores=1");
    tgt_setenv("TGL_API", "gles");
    if (tgl_open(&gl, &b) == TGL_OK) { /* a device without ES runs none of this */
        tgl_close(b);
        fail_msg("wide_stores=1 accepted on an ES context");
    }
    assert_non_null(strstr(tgl_last_error(NULL), "wide_stores"));
    tgt_setenv("TGL_API", NULL);
    tgt_setenv("TGL_DEVICE_PROFILE", NULL);
}

static void test_status_strings(void **state)
{
    (void)state;
    const tgl_status all[] = {TGL_OK, TGL_ERR_INVALID_ARGUMENT, TGL_ERR_INVALID_POINTER,
                              TGL_ERR_OUT_OF_MEMORY, TGL_ERR_UNSUPPORTED, TGL_ERR_NO_DEVICE,
                              TGL_ERR_SHADER, TGL_ERR_DEVICE_LOST, TGL_ERR_TIMEOUT, TGL_ERR_IO,
                              TGL_ERR_INTERNAL};
    for (int i = 0; i < 11; i++) {
        assert_int_equal(all[i], -i); /* contract order */
        assert_string_not_equal(tgl_status_string(all[i]), "unknown status");
        for (int j = 0; j < i; j++)
            assert_string_not_equal(tgl_status_string(all[i]), tgl_status_string(all[j]));
    }
    assert_string_equal(tgl_status_string((tgl_status)7), "unknown status");
    assert_string_equal(tgl_unary_name(TGL_UNARY_GELU), "gelu");
    assert_string_equal(tgl_binary_name(TGL_BINARY_POW), "pow");
    assert_null(tgl_unary_name((tgl_unary_op)TGL_UNARY_COUNT));
    assert_string_equal(tgl_backend_name(NULL), "");
}

static void test_env_selects_backend(void **state)
{
    (void)state;
    tgl_backend *b;
    tgt_setenv("TGL_BACKEND", "cpu");
    TGT_OK(NULL, tgl_open(NULL, &b));
    assert_string_equal(tgl_backend_name(b), "cpu");
    tgl_close(b);
    /* An explicit kind wins over the environment. */
    tgl_options o = {.kind = TGL_BACKEND_GL};
    tgl_status st = tgl_open(&o, &b);
    if (st == TGL_ERR_NO_DEVICE && !tgl_egl_display_exists())
        skip();
    TGT_OK(NULL, st);
    assert_string_equal(tgl_backend_name(b), "gl");
    tgl_close(b);
    tgt_setenv("TGL_BACKEND", "gl");
    TGT_OK(NULL, tgl_open(NULL, &b));
    assert_string_equal(tgl_backend_name(b), "gl");
    tgl_close(b);
    /* A named device that matches nothing is an error for auto too, not the CPU backend. */
    tgt_setenv("TGL_BACKEND", "auto");
    tgt_setenv("TGL_DEVICE", "no-such-device-anywhere");
    b = (tgl_backend *)0x1;
    assert_int_equal(tgl_open(NULL, &b), TGL_ERR_NO_DEVICE);
    assert_null(b);
    assert_non_null(strstr(tgl_last_error(NULL), "TGL_DEVICE=no-such-device-anywhere"));
    tgt_setenv("TGL_DEVICE", "63");
    assert_int_equal(tgl_open(NULL, &b), TGL_ERR_NO_DEVICE);
    assert_non_null(strstr(tgl_last_error(NULL), "TGL_DEVICE"));
}

static void test_bad_options(void **state)
{
    (void)state;
    tgl_backend *b = (tgl_backend *)0x1;
    TGT_EXPECT(NULL, tgl_open(NULL, NULL), TGL_ERR_INVALID_ARGUMENT);
    tgt_setenv("TGL_BACKEND", "vulkan");
    TGT_EXPECT(NULL, tgl_open(NULL, &b), TGL_ERR_INVALID_ARGUMENT);
    assert_null(b);
    assert_non_null(strstr(tgl_last_error(NULL), "TGL_BACKEND"));
    tgt_setenv("TGL_BACKEND", "cpu");
    tgt_setenv("TGL_MAX_TASKS", "lots");
    TGT_EXPECT(NULL, tgl_open(NULL, &b), TGL_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(tgl_last_error(NULL), "TGL_MAX_TASKS"));
    tgt_setenv("TGL_MAX_TASKS", NULL);
    tgt_setenv("TGL_API", "vulkan");
    TGT_EXPECT(NULL, tgl_open(NULL, &b), TGL_ERR_INVALID_ARGUMENT);
    tgt_setenv("TGL_API", NULL);
    /* Every TGL_* variable is checked at open, even those only the GL backend reads. */
    static const char *const bad[][2] = {{"TGL_POOL", "carv"}, {"TGL_POOL", "1"}, {"TGL_PROFILE_TIMER", "yes"},
                                         {"TGL_PROFILE_TIMER", "2"}, {"TGL_MAX_MEMORY", " -1"},
                                         {"TGL_MAX_MEMORY", "-1"}, {"TGL_MAX_MEMORY", "+5"},
                                         {"TGL_MAX_TASKS", " 4"}, {"TGL_LIMITS", "es31"},
                                         {"TGL_LIMITS", "gl43-min,"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tgt_setenv(bad[i][0], bad[i][1]);
        TGT_EXPECT(NULL, tgl_open(NULL, &b), TGL_ERR_INVALID_ARGUMENT);
        assert_null(b);
        assert_non_null(strstr(tgl_last_error(NULL), bad[i][0]));
        tgt_setenv(bad[i][0], NULL);
    }
    tgt_setenv("TGL_POOL", "reuse");
    tgt_setenv("TGL_PROFILE_TIMER", "0");
    assert_int_equal(tgl_open(NULL, &b), TGL_OK);
    tgl_close(b);
    tgt_setenv("TGL_POOL", NULL);
    tgt_setenv("TGL_PROFILE_TIMER", NULL);
    tgl_options o = {.kind = (tgl_backend_kind)7};
    TGT_EXPECT(NULL, tgl_open(&o, &b), TGL_ERR_INVALID_ARGUMENT);
    o = (tgl_options){.flags = 0x80};
    TGT_EXPECT(NULL, tgl_open(&o, &b), TGL_ERR_INVALID_ARGUMENT);
    o = (tgl_options){.device = -1};
    TGT_EXPECT(NULL, tgl_open(&o, &b), TGL_ERR_INVALID_ARGUMENT);
    tgl_close(NULL);
}

/* An explicit GL request that cannot be met fails with TGL_ERR_NO_DEVICE naming the step. */
static void test_explicit_gl_failure_names_step(void **state)
{
    (void)state;
    tgl_backend *b = NULL;
    tgt_setenv("TGL_BACKEND", "gl");
    tgt_setenv("TGL_DEVICE", "99");
    TGT_EXPECT(NULL, tgl_open(NULL, &b), TGL_ERR_NO_DEVICE);
    assert_null(b);
    const char *why = tgl_last_error(NULL);
    if (!strstr(why, "EGL_EXT_platform_device") && !strstr(why, "no EGL"))
        fail_msg("message names no ladder step: %s", why);
}

static int logged;
static char last_log[1024];
static void capture_log(void *user, int level, const char *msg)
{
    (void)user, (void)level;
    logged++;
    snprintf(last_log, sizeof last_log, "%s", msg);
}

/* Auto falls back to the CPU backend and keeps the reason (GL refused here by the driver
 * check's test mode: a device found computing wrong results). */
static void test_auto_fallback_keeps_reason(void **state)
{
    (void)state;
    tgl_backend *b;
    tgt_setenv("TGL_BACKEND", "auto");
    logged = 0;
    tgl_set_log_callback(capture_log, NULL);
    tgl_gl_test_driver_check(2);
    tgl_status st = tgl_open(NULL, &b);
    tgl_gl_test_driver_check(0);
    TGT_OK(NULL, st);
    tgl_set_log_callback(NULL, NULL);
    assert_string_equal(tgl_backend_name(b), "cpu");
    assert_non_null(strstr(tgl_last_error(b), "GL unavailable"));
    assert_true(logged >= 1);
    assert_non_null(strstr(last_log, "GL unavailable"));
    struct tgl_device_info info;
    TGT_OK(b, tgl_device_info(b, &info));
    assert_string_equal(info.backend, "cpu");
    assert_true(info.fallback_reason[0] != '\0');
    tgl_close(b);
}

/* A callback that calls into tensorgl while it runs: replaces itself, and makes a call that logs
 * again. With the log lock held during callbacks this deadlocked (alarm() makes that a failure). */
static int reentered;
static void reentrant_log(void *user, int level, const char *msg)
{
    (void)user, (void)level, (void)msg;
    if (reentered++ == 0) {
        tgl_set_log_callback(reentrant_log, NULL);
        tgl_backend *b = NULL;
        tgl_gl_test_driver_check(2); /* still on: the nested open falls back and logs */
        if (tgl_open(NULL, &b) == TGL_OK)
            tgl_close(b);
    }
}

static void test_log_callback_reenters(void **state)
{
    (void)state;
    tgt_setenv("TGL_BACKEND", "auto");
    reentered = 0;
    tgl_set_log_callback(reentrant_log, NULL);
    tgl_gl_test_driver_check(2); /* GL refused: auto falls back and logs why */
    alarm(60);
    tgl_backend *b = NULL;
    tgl_status st = tgl_open(NULL, &b);
    alarm(0);
    tgl_gl_test_driver_check(0);
    tgl_set_log_callback(NULL, NULL);
    TGT_OK(NULL, st);
    tgl_close(b);
    if (tgl_egl_display_exists())
        assert_true(reentered >= 2); /* the callback, and the nested open's log inside it */
}

static void test_log_file_errors_are_io(void **state)
{
    (void)state;
    tgl_backend *b;
    tgt_setenv("TGL_BACKEND", "cpu");
    tgt_setenv("TGL_LOG", "/nonexistent-dir/tensorgl.log");
    TGT_EXPECT(NULL, tgl_open(NULL, &b), TGL_ERR_IO);
    assert_non_null(strstr(tgl_last_error(NULL), "/nonexistent-dir/tensorgl.log"));
    char path[] = "/tmp/tgl-log-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    tgt_setenv("TGL_LOG", path);
    tgt_setenv("TGL_BACKEND", "auto");
    tgl_gl_test_driver_check(2); /* forces the fallback, which logs its reason */
    tgl_status st = tgl_open(NULL, &b);
    tgl_gl_test_driver_check(0);
    TGT_OK(NULL, st);
    tgl_close(b);
    FILE *f = fopen(path, "r");
    char line[1024] = "";
    assert_non_null(fgets(line, sizeof line, f));
    fclose(f);
    remove(path);
    assert_non_null(strstr(line, "GL unavailable"));
}

static void test_gl_device_info(void **state)
{
    (void)state;
    tgl_backend *b = tgt_open(TGL_BACKEND_GL);
    struct tgl_device_info i;
    TGT_OK(b, tgl_device_info(b, &i));
    assert_string_equal(i.backend, "gl");
    assert_true(!strcmp(i.api, "OpenGL") || !strcmp(i.api, "OpenGL ES"));
    assert_true(i.version[0] && i.renderer[0] && i.vendor[0] && i.egl_path[0] && i.glsl_version[0]);
    assert_true(i.max_ssbo_block_size >= 1u << 24); /* GL 4.3's minimum is 16 MiB */
    assert_true(i.ssbo_offset_alignment >= 1 && i.ssbo_offset_alignment <= 256);
    assert_true(i.max_workgroup_invocations >= 128 && i.max_workgroup_count[0] >= 65535);
    assert_true(i.workgroup_size >= 1 && i.workgroup_size <= i.max_workgroup_size[0]);
    assert_true(i.max_shared_memory >= 16384);
    assert_string_equal(i.fallback_reason, "");
    TGT_EXPECT(b, tgl_device_info(b, NULL), TGL_ERR_INVALID_ARGUMENT);
    tgl_close(b);
}

/* TGL_LIMITS: the limits in force are the device's cut to the specification's minimums (on any
 * device that offers more, exactly those), the kernels' workgroups fit them, and ops whose
 * buffers pass the smaller SSBO block limit still agree with the CPU backend. */
static void test_spec_limits(void **state)
{
    (void)state;
    if (tgt_cpu_only() || !tgl_egl_display_exists())
        skip();
    static const struct {
        const char *name;
        uint64_t ssbo_block, shared;
        uint32_t blocks, invocations;
    } specs[] = {{"gl43-min", 16u << 20, 32768, 8, 1024}, {"es31-min", 128u << 20, 16384, 4, 128}};
    tgl_backend *cpu = tgt_open(TGL_BACKEND_CPU);
    for (size_t s = 0; s < 2; s++) {
        tgt_setenv("TGL_LIMITS", specs[s].name);
        tgl_backend *b = tgt_open(TGL_BACKEND_GL);
        struct tgl_device_info i;
        TGT_OK(b, tgl_device_info(b, &i));
        assert_true(i.max_ssbo_block_size <= specs[s].ssbo_block && i.max_shared_memory <= specs[s].shared);
        assert_true(i.max_storage_blocks <= specs[s].blocks && i.max_workgroup_invocations <= specs[s].invocations);
        assert_true(i.ssbo_offset_alignment >= 256); /* the coarsest a device may ask for */
        assert_true(i.workgroup_size <= i.max_workgroup_invocations && i.reduce_workgroup_size <= i.max_workgroup_invocations);
        /* an add whose buffers pass gl43-min's 16 MiB SSBO blocks, a GEMM, a softmax, a sum */
        enum { N = (5 << 20) + 3, M = 70, K = 90, C = 33 };
        float *x = malloc(N * sizeof *x), *got = malloc(N * sizeof *got), *want = malloc(N * sizeof *want);
        assert_true(x && got && want);
        tgt_rng r;
        tgt_rng_init(&r, tgt_seed() ^ (0x5bec + s));
        for (size_t k = 0; k < N; k++)
            x[k] = tgt_uniform(&r, -2.0f, 2.0f);
        tgl_backend *both[2] = {b, cpu};
        float *outs[2] = {got, want};
        for (int k = 0; k < 2; k++) {
            tgl_backend *be = both[k];
            tgl_ptr px = tgt_upload(be, x, N, 0), py = 0, g = 0, sm = 0, sum = 0;
            TGT_OK(be, tgl_alloc(be, N * sizeof(float), &py));
            TGT_OK(be, tgl_alloc(be, M * C * sizeof(float), &g));
            TGT_OK(be, tgl_alloc(be, M * K * sizeof(float), &sm));
            TGT_OK(be, tgl_alloc(be, sizeof(float), &sum));
            TGT_OK(be, tgl_binary(be, TGL_BINARY_ADD, px, px, py, N));
            TGT_OK(be, tgl_gemm(be, TGL_NO_TRANS, TGL_TRANS, M, C, K, 1.0f, px, K, px + 4 * M * K, K, 0.0f, g, C));
            TGT_OK(be, tgl_softmax(be, px, sm, M, K));
            const size_t shape[1] = {N};
            TGT_OK(be, tgl_reduce(be, TGL_REDUCE_SUM, px, sum, shape, 1, 0));
            float *o = outs[k];
            TGT_OK(be, tgl_copy_dtoh(be, o, py, N * sizeof(float)));
            TGT_OK(be, tgl_copy_dtoh(be, o + N - M * C - M * K - 1, g, M * C * sizeof(float)));
            TGT_OK(be, tgl_copy_dtoh(be, o + N - M * K - 1, sm, M * K * sizeof(float)));
            TGT_OK(be, tgl_copy_dtoh(be, o + N - 1, sum, sizeof(float)));
            const tgl_ptr all[] = {px, py, g, sm, sum};
            for (size_t a = 0; a < 5; a++)
                TGT_OK(be, tgl_free(be, all[a]));
        }
        double nmse = tgt_nmse(got, want, N);
        if (!(nmse <= 1e-10))
            fail_msg("TGL_LIMITS=%s: GL against the CPU backend, NMSE %g", specs[s].name, nmse);
        free(x);
        free(got);
        free(want);
        tgl_close(b);
    }
    tgl_close(cpu);
}

/* Buffer textures wherever the context offers them: desktop GL always, ES through
 * GL_EXT_texture_buffer or GL_OES_texture_buffer (llvmpipe's and NVIDIA's ES contexts list
 * both). Without them every op still runs, from SSBO loads, so only this test would notice
 * llvmpipe's ES context falling back to the paths that ran attention 25x slower there
 * (docs/performance.md, "OpenGL ES contexts with buffer textures"). Each API in turn; one the
 * machine cannot give is left out. */
static void test_buffer_textures_where_offered(void **state)
{
    (void)state;
    if (tgt_cpu_only())
        skip();
    const char *apis[] = {"gl", "gles"};
    int opened = 0;
    for (int a = 0; a < 2; a++) {
        tgt_setenv("TGL_API", apis[a]);
        tgl_options o = {.kind = TGL_BACKEND_GL};
        tgl_backend *b = NULL;
        if (tgl_open(&o, &b) != TGL_OK)
            continue;
        opened++;
        TGT_OK(b, tgl_synchronize(b)); /* a call makes the backend's context current */
        const tgl_gl *gl = tgl_gl_of(b);
        assert_int_equal(gl->egl.es, a == 1);
        int offered = !gl->egl.es || epoxy_has_gl_extension("GL_EXT_texture_buffer") ||
                      epoxy_has_gl_extension("GL_OES_texture_buffer");
        if (offered) {
            assert_true(gl->limits.texture_buffer_texels >= 65536); /* GL 4.3's and ES 3.2's minimum */
            assert_true(gl->limits.texture_align >= 1 && gl->limits.texture_align <= 256);
        } else {
            assert_int_equal(gl->limits.texture_buffer_texels, 0);
        }
        tgl_close(b);
    }
    if (!opened)
        skip();
}

/* Two GL backends on one thread take turns (each call makes its context current), and closing
 * one leaves the other working. */
static void test_two_gl_backends(void **state)
{
    (void)state;
    tgl_backend *x = tgt_open(TGL_BACKEND_GL), *y = tgt_open(TGL_BACKEND_GL);
    float in[5] = {1, 2, 3, 4, 5}, out[5];
    tgl_ptr px, py;
    TGT_OK(x, tgl_alloc(x, sizeof in, &px));
    TGT_OK(y, tgl_alloc(y, sizeof in, &py));
    TGT_OK(x, tgl_copy_htod(x, px, in, sizeof in));
    TGT_OK(y, tgl_copy_htod(y, py, in, sizeof in));
    TGT_OK(x, tgl_unary(x, TGL_UNARY_NEG, px, px, 5));
    TGT_OK(y, tgl_unary(y, TGL_UNARY_SQUARE, py, py, 5));
    tgl_close(x);
    TGT_OK(y, tgl_copy_dtoh(y, out, py, sizeof out));
    for (int i = 0; i < 5; i++)
        assert_true(out[i] == in[i] * in[i]);
    tgl_close(y);
}

/* tgl_list_devices describes every EGL device; a device can then be chosen by a part of its
 * name in any case, a text no device has fails an explicit GL request naming it, and a backend
 * that is open while devices are listed keeps working. */
static void test_list_and_choose_devices(void **state)
{
    (void)state;
    int n = -1;
    TGT_EXPECT(NULL, tgl_list_devices(NULL, 0, NULL), TGL_ERR_INVALID_ARGUMENT);
    TGT_EXPECT(NULL, tgl_list_devices(NULL, -1, &n), TGL_ERR_INVALID_ARGUMENT);
    TGT_EXPECT(NULL, tgl_list_devices(NULL, 1, &n), TGL_ERR_INVALID_ARGUMENT);
    tgl_backend *open_one = tgt_open(TGL_BACKEND_GL);
    tgl_ptr p;
    float v[2] = {3, -4}, out[2];
    TGT_OK(open_one, tgl_alloc(open_one, sizeof v, &p));
    TGT_OK(open_one, tgl_copy_htod(open_one, p, v, sizeof v));

    tgl_status st = tgl_list_devices(NULL, 0, &n);
    if (st == TGL_ERR_NO_DEVICE) { /* a driver without EGL device enumeration */
        assert_int_equal(n, 0);
        assert_non_null(strstr(tgl_last_error(NULL), "enumerat"));
        tgl_close(open_one);
        skip(); // NOLINT(clang-analyzer-unix.Malloc): cmocka's skip() ends the test
    }
    TGT_OK(NULL, st);
    assert_true(n >= 1);
    struct tgl_device_entry d[4];
    memset(d, 0x5a, sizeof d);
    int again = 0;
    TGT_OK(NULL, tgl_list_devices(d, 1, &again));
    assert_int_equal(again, n);
    assert_int_equal(d[0].index, 0);
    assert_true(d[1].index == 0x5a5a5a5a); /* capacity 1: nothing written past it */
    assert_true(d[0].api[0] ? d[0].problem[0] == '\0' && d[0].version[0] : d[0].problem[0] != '\0');

    /* The open backend still runs, on its own context. */
    TGT_OK(open_one, tgl_unary(open_one, TGL_UNARY_ABS, p, p, 2));
    TGT_OK(open_one, tgl_copy_dtoh(open_one, out, p, sizeof out));
    assert_true(out[0] == 3 && out[1] == 4);
    tgl_close(open_one);

    if (d[0].api[0]) {
        /* Device 0 by a part of its name, in other case. */
        char part[8] = {0};
        for (int i = 0; i < 6 && d[0].name[i]; i++)
            part[i] = (char)(d[0].name[i] >= 'a' && d[0].name[i] <= 'z' ? d[0].name[i] - 32 : d[0].name[i]);
        tgt_setenv("TGL_DEVICE", part);
        tgl_options o = {.kind = TGL_BACKEND_GL};
        tgl_backend *b = NULL;
        TGT_OK(NULL, tgl_open(&o, &b));
        struct tgl_device_info info;
        TGT_OK(b, tgl_device_info(b, &info));
        assert_string_equal(info.renderer, d[0].name);
        assert_non_null(strstr(info.egl_path, "EGL_EXT_platform_device"));
        tgl_close(b);
    }
    tgt_setenv("TGL_DEVICE", "no-such-device-anywhere");
    tgl_options o = {.kind = TGL_BACKEND_GL};
    tgl_backend *b = (tgl_backend *)0x1;
    TGT_EXPECT(NULL, tgl_open(&o, &b), TGL_ERR_NO_DEVICE);
    assert_null(b);
    assert_non_null(strstr(tgl_last_error(NULL), "TGL_DEVICE=no-such-device-anywhere"));
    char long_name[200];
    memset(long_name, 'x', sizeof long_name - 1);
    long_name[sizeof long_name - 1] = '\0';
    tgt_setenv("TGL_DEVICE", long_name);
    TGT_EXPECT(NULL, tgl_open(&o, &b), TGL_ERR_INVALID_ARGUMENT);
}

/* tgl_supports on both backends: every op in f32, f16 for GEMM, casts and the element-wise
 * descriptor ops (computed in f32), the other dtypes for those descriptor ops only, nothing for
 * out-of-range arguments; every op and type has a distinct name. */
/* fork(): the child's calls on the parent's GL backend fail with TGL_ERR_DEVICE_LOST naming the
 * fork (its context does not carry over; a child that used it hung or aborted in the driver), its tgl_close
 * returns, the CPU backend it inherited keeps working, and the parent's GL backend and data are
 * untouched. */
static void test_fork_child(void **state)
{
    (void)state;
    if (tgt_cpu_only() || !tgl_egl_display_exists())
        skip();
    tgl_options glo = {.kind = TGL_BACKEND_GL}, cpuo = {.kind = TGL_BACKEND_CPU};
    tgl_backend *gl = NULL, *cpu = NULL;
    assert_int_equal(tgl_open(&glo, &gl), TGL_OK);
    assert_int_equal(tgl_open(&cpuo, &cpu), TGL_OK);
    const float v[4] = {1.0f, 2.0f, 3.0f, 4.0f};
    float w[4] = {0};
    tgl_ptr a;
    TGT_OK(gl, tgl_alloc(gl, sizeof v, &a));
    TGT_OK(gl, tgl_copy_htod(gl, a, v, sizeof v));
    TGT_OK(gl, tgl_synchronize(gl));
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) { /* the child: no cmocka assertions (they would unwind into the parent's runner) */
        int bad = 0;
        tgl_ptr c = 0, d = 0;
        bad |= tgl_alloc(gl, 16, &c) != TGL_ERR_DEVICE_LOST;
        bad |= (strstr(tgl_last_error(gl), "fork()") == NULL) << 1;
        bad |= (tgl_copy_dtoh(gl, w, a, sizeof w) != TGL_ERR_DEVICE_LOST) << 2;
        bad |= (tgl_synchronize(gl) != TGL_ERR_DEVICE_LOST) << 3;
        tgl_close(gl);
        bad |= (tgl_alloc(cpu, 16, &d) != TGL_OK) << 4;
        bad |= (tgl_fill(cpu, d, 2.0f, 4) != TGL_OK || tgl_copy_dtoh(cpu, w, d, sizeof w) != TGL_OK || w[3] != 2.0f) << 5;
        tgl_free(cpu, d);
        tgl_close(cpu);
        _exit(bad);
    }
    int status = 0;
    pid_t got = 0;
    for (int waited = 0; (got = waitpid(pid, &status, WNOHANG)) == 0 && waited < 600; waited++)
        nanosleep(&(struct timespec){0, 100000000}, NULL); /* a child that reaches into the parent's context deadlocks in the driver */
    if (got == 0) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        fail_msg("the forked child hung for 60 s (it used the parent's GL context)");
    }
    assert_int_equal(got, pid);
    if (!WIFEXITED(status) || WEXITSTATUS(status))
        fail_msg("the forked child %s (status 0x%x; bits of the exit code: 1 alloc not refused, 2 no fork() in the "
                 "message, 4 download not refused, 8 synchronize not refused, 16/32 its CPU backend failed)",
                 WIFEXITED(status) ? "found a wrong answer" : "died", status);
    TGT_OK(gl, tgl_copy_dtoh(gl, w, a, sizeof w));
    assert_memory_equal(v, w, sizeof v);
    TGT_OK(gl, tgl_free(gl, a));
    tgl_close(gl);
    tgl_close(cpu);
}

static void test_supports(void **state)
{
    (void)state;
    tgl_backend *gl = tgt_open(TGL_BACKEND_GL); /* first: it skips the test where GL is missing */
    tgl_backend *be[2] = {tgt_open(TGL_BACKEND_CPU), gl};
    for (int k = 0; k < 2; k++) {
        tgl_backend *b = be[k];
        for (int op = 0; op < TGL_OP_COUNT; op++) {
            assert_int_equal(tgl_supports(b, (tgl_op)op, TGL_DTYPE_F32), TGL_SUPPORT_NATIVE);
            int descriptor = op == TGL_OP_COPY || op == TGL_OP_COMPARE || op == TGL_OP_WHERE || op == TGL_OP_UNARY_T ||
                             op == TGL_OP_BINARY_T || op == TGL_OP_CLAMP || op == TGL_OP_FILL_T ||
                             op == TGL_OP_ARANGE || op == TGL_OP_CAT || op == TGL_OP_REDUCE_T ||
                             op == TGL_OP_MAP /* tgl_map_t */ || op == TGL_OP_RANDOM || op == TGL_OP_DROPOUT ||
                             op == TGL_OP_TRIANGLE || op == TGL_OP_FLIP || op == TGL_OP_ROLL || op == TGL_OP_REPEAT ||
                             op == TGL_OP_PAD || op == TGL_OP_ONE_HOT ||
                             op == TGL_OP_MASKED_FILL || op == TGL_OP_GATHER || op == TGL_OP_INDEX_SELECT || op == TGL_OP_SCAN ||
                             op == TGL_OP_MASKED_SELECT || op == TGL_OP_NONZERO || op == TGL_OP_SCATTER || op == TGL_OP_SORT;
            int floats_only = op == TGL_OP_DROPOUT;
            int numbers_only = op == TGL_OP_CLAMP || op == TGL_OP_ARANGE || op == TGL_OP_ARG_REDUCE || floats_only;
            descriptor |= op == TGL_OP_ARG_REDUCE; /* tgl_argmax_t, tgl_argmin_t */
            /* tgl_softmax_t, tgl_log_softmax_t, tgl_rmsnorm_t, tgl_layernorm_t: the half types */
            int rows = op == TGL_OP_SOFTMAX || op == TGL_OP_LOG_SOFTMAX || op == TGL_OP_RMSNORM || op == TGL_OP_LAYERNORM;
            /* the weight formats: tgl_matvec_t's W, tgl_quantize, tgl_dequantize, tgl_gather_rows_t */
            int weights = op == TGL_OP_MATVEC || op == TGL_OP_QUANTIZE || op == TGL_OP_GATHER_ROWS;
            int f16 = op == TGL_OP_GEMM || op == TGL_OP_CAST || op == TGL_OP_ATTENTION /* tgl_attention_t's k, v */ ||
                      descriptor || rows || weights;
            assert_int_equal(tgl_supports(b, (tgl_op)op, TGL_DTYPE_F16),
                             f16 ? TGL_SUPPORT_CONVERTED : TGL_SUPPORT_NONE);
            assert_int_equal(tgl_supports(b, (tgl_op)op, TGL_DTYPE_BF16),
                             descriptor || rows || weights ? TGL_SUPPORT_CONVERTED : TGL_SUPPORT_NONE);
            assert_int_equal(tgl_supports(b, (tgl_op)op, TGL_DTYPE_I32),
                             descriptor && !floats_only ? TGL_SUPPORT_NATIVE : TGL_SUPPORT_NONE);
            assert_int_equal(tgl_supports(b, (tgl_op)op, TGL_DTYPE_BOOL),
                             descriptor && !numbers_only ? TGL_SUPPORT_NATIVE : TGL_SUPPORT_NONE);
            assert_int_equal(tgl_supports(b, (tgl_op)op, TGL_DTYPE_Q8_0),
                             weights ? TGL_SUPPORT_CONVERTED : TGL_SUPPORT_NONE);
            assert_int_equal(tgl_supports(b, (tgl_op)op, TGL_DTYPE_Q4_0),
                             weights ? TGL_SUPPORT_CONVERTED : TGL_SUPPORT_NONE);
            assert_non_null(tgl_op_name((tgl_op)op));
            for (int other = 0; other < op; other++)
                assert_string_not_equal(tgl_op_name((tgl_op)op), tgl_op_name((tgl_op)other));
        }
        assert_int_equal(tgl_supports(b, TGL_OP_COUNT, TGL_DTYPE_F32), TGL_SUPPORT_NONE);
        assert_int_equal(tgl_supports(b, (tgl_op)-1, TGL_DTYPE_F32), TGL_SUPPORT_NONE);
        assert_int_equal(tgl_supports(b, TGL_OP_GEMM, TGL_DTYPE_COUNT), TGL_SUPPORT_NONE);
    }
    assert_int_equal(tgl_supports(NULL, TGL_OP_GEMM, TGL_DTYPE_F32), TGL_SUPPORT_NONE);
    /* tgl_warmup runs the same calls on both (the GL side, with its cache: test_program_cache). */
    unsigned calls = 0;
    TGT_OK(be[0], tgl_warmup(be[0], &calls));
    assert_true(calls >= 100);
    assert_null(tgl_op_name(TGL_OP_COUNT));
    assert_string_equal(tgl_dtype_name(TGL_DTYPE_F16), "f16");
    assert_null(tgl_dtype_name(TGL_DTYPE_COUNT));
    /* What it says f16 GEMM does, it does: a product of halves, in f32, stored as halves. */
    tgl_backend *b = be[1];
    uint16_t h[3] = {0x3c00, 0x4000, 0}; /* 1.0, 2.0 */
    tgl_ptr a, x, c;
    TGT_OK(b, tgl_alloc(b, 2, &a));
    TGT_OK(b, tgl_alloc(b, 2, &x));
    TGT_OK(b, tgl_alloc(b, 2, &c));
    TGT_OK(b, tgl_copy_htod(b, a, &h[0], 2));
    TGT_OK(b, tgl_copy_htod(b, x, &h[1], 2));
    TGT_OK(b, tgl_gemm_f16(b, TGL_NO_TRANS, TGL_NO_TRANS, 1, 1, 1, 1.0f, a, 1, x, 1, 0.0f, c, 1));
    TGT_OK(b, tgl_copy_dtoh(b, &h[2], c, 2));
    assert_int_equal(h[2], 0x4000);
    tgl_close(be[0]);
    tgl_close(be[1]);
}

/* TGL_MAX_TASKS=1 flushes after every dispatch; results do not depend on the policy. */
static void test_flush_every_dispatch(void **state)
{
    (void)state;
    tgt_setenv("TGL_MAX_TASKS", "1");
    tgl_backend *b = tgt_open(TGL_BACKEND_GL);
    float v[3] = {1, 2, 3}, out[3];
    tgl_ptr p;
    TGT_OK(b, tgl_alloc(b, sizeof v, &p));
    TGT_OK(b, tgl_copy_htod(b, p, v, sizeof v));
    for (int i = 0; i < 10; i++)
        TGT_OK(b, tgl_binary(b, TGL_BINARY_ADD, p, p, p, 3)); /* doubles, in place, chained */
    TGT_OK(b, tgl_copy_dtoh(b, out, p, sizeof out));
    for (int i = 0; i < 3; i++)
        assert_true(out[i] == v[i] * 1024.0f);
    tgl_close(b);
}

/* The driver checks at open (src/gl/gl_driver_check.c) pass on a driver that computes right,
 * wherever they are made to run. */
static void test_driver_check_passes_on_sound_driver(void **state)
{
    (void)state;
    tgl_gl_test_driver_check(1);
    tgl_backend *b = tgt_open(TGL_BACKEND_GL);
    float v[2] = {1, 2}, out[2];
    tgl_ptr p;
    TGT_OK(b, tgl_alloc(b, sizeof v, &p));
    TGT_OK(b, tgl_copy_htod(b, p, v, sizeof v));
    TGT_OK(b, tgl_binary(b, TGL_BINARY_MUL, p, p, p, 2));
    TGT_OK(b, tgl_copy_dtoh(b, out, p, sizeof out));
    assert_true(out[0] == 1.0f && out[1] == 4.0f);
    tgl_close(b);
}

/* A failed check refuses GL with its reason; auto then serves from the CPU backend and keeps it. */
static void test_driver_check_refuses_device(void **state)
{
    (void)state;
    if (tgt_cpu_only() || !tgl_egl_display_exists())
        skip();
    tgl_gl_test_driver_check(2);
    tgl_backend *b = NULL;
    tgl_options o = {.kind = TGL_BACKEND_GL};
    TGT_EXPECT(NULL, tgl_open(&o, &b), TGL_ERR_NO_DEVICE);
    assert_null(b);
    if (!strstr(tgl_last_error(NULL), "stale shader variant"))
        fail_msg("refusal without its reason: %s", tgl_last_error(NULL));
    o.kind = TGL_BACKEND_AUTO;
    tgt_expected_begin(); /* the fallback is logged with the check's reason */
    TGT_OK(NULL, tgl_open(&o, &b));
    tgt_expected_end();
    assert_string_equal(tgl_backend_name(b), "cpu");
    struct tgl_device_info info;
    TGT_OK(b, tgl_device_info(b, &info));
    if (!strstr(info.fallback_reason, "stale shader variant"))
        fail_msg("fallback without the check's reason: %s", info.fallback_reason);
    tgl_close(b);
}

/* TGL_FLAG_SELF_TEST (src/core/self_test.c): passes on a device that computes right, by the flag
 * and by TGL_SELF_TEST=1; a device that gets one op wrong (the test hook puts one element of
 * tgl_map's result off) is refused with the op named, and auto falls back to the CPU backend
 * with that reason; a bad TGL_SELF_TEST value is an argument error. */
static void test_self_test(void **state)
{
    (void)state;
    if (tgt_cpu_only() || !tgl_egl_display_exists())
        skip();
    tgl_backend *b = NULL;
    tgl_options o = {.kind = TGL_BACKEND_GL, .flags = TGL_FLAG_SELF_TEST};
    TGT_OK(NULL, tgl_open(&o, &b));
    struct tgl_memory_info m;
    TGT_OK(b, tgl_memory_info(b, &m));
    assert_int_equal(m.in_use, 0); /* the self-test's buffers are gone */
    tgl_close(b);
    tgt_setenv("TGL_SELF_TEST", "1");
    o.flags = 0;
    TGT_OK(NULL, tgl_open(&o, &b));
    tgl_close(b);
    tgl__test_self_test_fault(3); /* tgl_map */
    TGT_EXPECT(NULL, tgl_open(&o, &b), TGL_ERR_NO_DEVICE);
    assert_null(b);
    if (!strstr(tgl_last_error(NULL), "self-test") || !strstr(tgl_last_error(NULL), "tgl_map computes wrong"))
        fail_msg("refusal without its reason: %s", tgl_last_error(NULL));
    o.kind = TGL_BACKEND_AUTO;
    tgt_expected_begin(); /* the fallback is logged with the self-test's reason */
    TGT_OK(NULL, tgl_open(&o, &b));
    tgt_expected_end();
    assert_string_equal(tgl_backend_name(b), "cpu");
    struct tgl_device_info info;
    TGT_OK(b, tgl_device_info(b, &info));
    if (!strstr(info.fallback_reason, "tgl_map computes wrong"))
        fail_msg("fallback without the self-test's reason: %s", info.fallback_reason);
    tgl_close(b);
    tgl__test_self_test_fault(0);
    tgt_setenv("TGL_SELF_TEST", "yes");
    TGT_EXPECT(NULL, tgl_open(&o, &b), TGL_ERR_INVALID_ARGUMENT);
}

static int self_test_teardown(void **state)
{
    tgl__test_self_test_fault(0);
    return tgt_env_teardown(state);
}

static int driver_check_teardown(void **state)
{
    tgl_gl_test_driver_check(0);
    return tgt_env_teardown(state);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_status_strings),
        cmocka_unit_test_teardown(test_device_profile, tgt_env_teardown),
        cmocka_unit_test_teardown(test_env_selects_backend, tgt_env_teardown),
        cmocka_unit_test_teardown(test_log_callback_reenters, tgt_env_teardown),
        cmocka_unit_test_teardown(test_bad_options, tgt_env_teardown),
        cmocka_unit_test_teardown(test_explicit_gl_failure_names_step, tgt_env_teardown),
        cmocka_unit_test_teardown(test_auto_fallback_keeps_reason, tgt_env_teardown),
        cmocka_unit_test_teardown(test_log_file_errors_are_io, tgt_env_teardown),
        cmocka_unit_test(test_gl_device_info),
        cmocka_unit_test_teardown(test_buffer_textures_where_offered, tgt_env_teardown),
        cmocka_unit_test(test_two_gl_backends),
        cmocka_unit_test_teardown(test_flush_every_dispatch, tgt_env_teardown),
        cmocka_unit_test_teardown(test_list_and_choose_devices, tgt_env_teardown),
        cmocka_unit_test(test_supports),
        cmocka_unit_test(test_fork_child),
        cmocka_unit_test_teardown(test_driver_check_passes_on_sound_driver, driver_check_teardown),
        cmocka_unit_test_teardown(test_driver_check_refuses_device, driver_check_teardown),
        cmocka_unit_test_teardown(test_self_test, self_test_teardown),
        cmocka_unit_test_teardown(test_spec_limits, tgt_env_teardown),
    };
    /* The tests set their own variables; start from none. */
    const char *vars[] = {"TGL_BACKEND", "TGL_DEVICE", "TGL_API", "TGL_LOG", "TGL_MAX_TASKS", "TGL_DEBUG",
                          "TGL_SELF_TEST"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        unsetenv(vars[i]);
    return cmocka_run_group_tests_name("open and backend selection", tests, NULL, NULL);
}
