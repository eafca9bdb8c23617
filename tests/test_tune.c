/* tgl_tune and its file: a tuning run saves the winners under TGL_CACHE_DIR, a later backend on
 * the same device reads them and computes right with them, a damaged or foreign file is
 * ignored (and logged), TGL_GEMM and bad sizes are refused, the CPU backend has nothing to
 * tune, and without a cache directory nothing is written. Products are checked against the CPU
 * backend on random data in every case. */
#include "testing.h"
#include "gl/gl_internal.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { M = 67, N = 45, K = 70 };

static int restore_env(void **state)
{
    (void)state;
    tgt_env_restore();
    tgl_set_log_callback(NULL, NULL);
    return 0;
}

static char logged[4096];
static void capture(void *user, int level, const char *msg)
{
    (void)user, (void)level;
    size_t len = strlen(logged);
    snprintf(logged + len, sizeof logged - len, "%s\n", msg);
}

/* The tuning file in dir ("" when there is none). */
static void tune_file(const char *dir, char *out, size_t size)
{
    out[0] = '\0';
    DIR *d = opendir(dir);
    if (!d)
        return;
    for (struct dirent *e; (e = readdir(d));)
        if (!strncmp(e->d_name, "tune-", 5))
            snprintf(out, size, "%s/%s", dir, e->d_name);
    closedir(d);
}

/* A GL backend opened on dir (TGL_DEBUG on, its log captured) computes an f32 and an f16
 * product that match the CPU backend. */
static void products_right(const char *dir)
{
    tgt_setenv("TGL_CACHE_DIR", dir);
    tgt_setenv("TGL_DEBUG", "1");
    logged[0] = '\0';
    tgl_set_log_callback(capture, NULL);
    tgl_backend *gl = tgt_open(TGL_BACKEND_GL), *cpu = tgt_open(TGL_BACKEND_CPU);
    tgl_set_log_callback(NULL, NULL);
    tgt_rng rng;
    tgt_rng_init(&rng, tgt_seed() ^ 0x7475u);
    float *a = malloc(M * K * sizeof(float)), *bm = malloc(K * N * sizeof(float));
    float *c[2] = {malloc(M * N * sizeof(float)), malloc(M * N * sizeof(float))};
    assert_true(a && bm && c[0] && c[1]);
    for (size_t i = 0; i < M * K; i++)
        a[i] = tgt_uniform(&rng, -1, 1);
    for (size_t i = 0; i < K * N; i++)
        bm[i] = tgt_uniform(&rng, -1, 1);
    tgl_backend *be[2] = {gl, cpu};
    for (int k = 0; k < 2; k++) {
        tgl_backend *b = be[k];
        tgl_ptr pa = tgt_upload(b, a, M * K, 0), pb = tgt_upload(b, bm, K * N, 0), pc;
        TGT_OK(b, tgl_alloc(b, M * N * sizeof(float), &pc));
        TGT_OK(b, tgl_gemm(b, TGL_NO_TRANS, TGL_NO_TRANS, M, N, K, 1.0f, pa, K, pb, N, 0.0f, pc, N));
        TGT_OK(b, tgl_copy_dtoh(b, c[k], pc, M * N * sizeof(float)));
        tgl_free(b, pa);
        tgl_free(b, pb);
        tgl_free(b, pc);
    }
    double e = tgt_nmse(c[0], c[1], M * N);
    if (e > 1e-9)
        fail_msg("gemm after tuning: NMSE %g (seed %llu)", e, (unsigned long long)tgt_seed());
    tgl_close(gl);
    tgl_close(cpu);
    free(a);
    free(bm);
    free(c[0]);
    free(c[1]);
}

static void test_tune_saves_and_later_backends_use_it(void **state)
{
    (void)state;
    char dir[] = "/tmp/tgl-tune-test-XXXXXX", path[512];
    assert_non_null(mkdtemp(dir));
    tgt_setenv("TGL_CACHE_DIR", dir);
    tgl_backend *b = tgt_open(TGL_BACKEND_GL);
    FILE *report = tmpfile();
    assert_non_null(report);
    TGT_OK(b, tgl_tune(b, 64, report));
    assert_true(ftell(report) > 0); /* every candidate reported */
    fclose(report);
    tgl_close(b);
    tune_file(dir, path, sizeof path);
    assert_true(path[0]);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char text[1024] = "";
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    assert_non_null(strstr(text, "\ngemm="));
    assert_non_null(strstr(text, "\ngemm_f16="));

    products_right(dir);
    assert_non_null(strstr(logged, "GEMM shapes from"));

    /* A shape no device runs (TM 7): the file is ignored with a warning, the table's shape runs. */
    f = fopen(path, "w");
    assert_non_null(f);
    fputs("gemm=tiled:64,64,16,7,4\n", f);
    fclose(f);
    products_right(dir);
    assert_non_null(strstr(logged, "ignoring"));
    assert_null(strstr(logged, "GEMM shapes from"));
    /* Shapes that once crashed tgl_open or passed by 32-bit wrap-around: no invocations
     * (0 x 0 tiles: a division by zero), and thread counts or tiles whose products wrap. Each
     * file is ignored, the table's shape runs. */
    static const char *const hostile[] = {
        "gemm=tiled:0,0,4,4,4\n", "gemm=tiled:4,0,4,4,4\n", "gemm=reg:65536,65536,4,4\n",
        "gemm=tiled:2147483648,64,16,4,4\n", "gemm=tiled:64,64,1073741824,4,4\n",
        "gemm=tiled:4294967292,4294967292,4,4294967292,4294967292\n",
    };
    for (size_t i = 0; i < sizeof hostile / sizeof hostile[0]; i++) {
        f = fopen(path, "w");
        assert_non_null(f);
        fputs(hostile[i], f);
        fclose(f);
        products_right(dir);
        if (!strstr(logged, "ignoring"))
            fail_msg("tune file %s: not ignored", hostile[i]);
    }
    /* Garbage of another kind, and an oversized file. */
    f = fopen(path, "w");
    assert_non_null(f);
    for (int i = 0; i < 600; i++)
        fputs("# padding\n", f);
    fclose(f);
    products_right(dir);
    assert_non_null(strstr(logged, "ignoring"));
    remove(path);
    remove(dir);
}

static void test_tune_refusals(void **state)
{
    (void)state;
    tgl_backend *cpu = tgt_open(TGL_BACKEND_CPU);
    TGT_EXPECT(cpu, tgl_tune(cpu, 0, NULL), TGL_ERR_UNSUPPORTED);
    tgl_close(cpu);
    TGT_EXPECT(NULL, tgl_tune(NULL, 0, NULL), TGL_ERR_INVALID_ARGUMENT);
    tgt_setenv("TGL_CACHE_DIR", ""); /* no directory: tuning works, nothing is saved */
    tgl_backend *gl = tgt_open(TGL_BACKEND_GL);
    TGT_EXPECT(gl, tgl_tune(gl, 10, NULL), TGL_ERR_INVALID_ARGUMENT);
    TGT_OK(gl, tgl_tune(gl, 64, NULL));
    tgl_close(gl);
    /* TGL_GEMM with no invocations or wrapping products is refused at open, not a crash */
    static const char *const hostile[] = {"tiled:0,0,4,4,4", "reg:65536,65536,4,4", "tiled:2147483648,64,16,4,4",
                                          "reg:16,4,4,4,row", "reg:16,4,4,4,rows,rows", "tiled:64,64,16,4,4,rows"};
    for (size_t i = 0; i < sizeof hostile / sizeof hostile[0]; i++) {
        tgt_setenv("TGL_GEMM", hostile[i]);
        tgl_backend *refused = NULL;
        const tgl_options o = {.kind = TGL_BACKEND_GL};
        assert_int_equal(tgl_open(&o, &refused), TGL_ERR_INVALID_ARGUMENT);
        assert_null(refused);
        assert_non_null(strstr(tgl_last_error(NULL), "TGL_GEMM"));
    }
    /* the register kernel with its invocations' x along C's rows: accepted, and every product
     * (thin ones too) takes it, as `tensorgl info --profile` shows */
    tgt_setenv("TGL_GEMM", "reg:16,4,4,4,rows");
    gl = tgt_open(TGL_BACKEND_GL);
    assert_int_equal(tgl_gl_of(gl)->limits.gemm.rows_x, 1);
    assert_int_equal(tgl_gl_of(gl)->limits.gemm_thin.rows_x, 1);
    tgl_close(gl);
    tgt_setenv("TGL_GEMM", "reg:8,8,4,4");
    gl = tgt_open(TGL_BACKEND_GL);
    TGT_EXPECT(gl, tgl_tune(gl, 64, NULL), TGL_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(tgl_last_error(gl), "TGL_GEMM"));
    tgl_close(gl);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_tune_saves_and_later_backends_use_it, restore_env),
        cmocka_unit_test_teardown(test_tune_refusals, restore_env),
    };
    unsetenv("TGL_GEMM");
    return cmocka_run_group_tests_name("GEMM tuning", tests, NULL, NULL);
}
