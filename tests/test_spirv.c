/* TGL_SHADER=spirv: GL kernels from the SPIR-V modules `make spirv` builds (gl_spirv.c).
 * Ops run from modules agree with the CPU backend on random inputs, including kernels whose
 * workgroup size or item count differs from the modules' defaults (the specialization
 * constants); tgl_map's kernels, which have no module, come from GLSL; damaged modules are
 * refused and the ops stay right; a missing directory, an ES context and a bad TGL_SHADER fail
 * tgl_open with the reason. The modules are found through TGL_SPIRV_DIR when it is set (as
 * scripts/run-tests.sh does), else in build/tensorgl-spirv above this binary's BUILD/tests
 * (BUILD is build or build/sanitize). Skipped without a GL context or where
 * the driver has no GL_ARB_gl_spirv. */
#include "testing.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void tgl_gl_test_spirv_stats(tgl_backend *b, unsigned long stats[4]);
void tgl_gl_test_force_attention(tgl_backend *b, int path);
enum { ATTENTION_REG = 0, ATTENTION_DECODE = 2 }; /* TGL_GL_ATTENTION_* */
enum { LOADED, MISSING, REJECTED, EXCLUDED };

static char modules[4200];

/* A GL backend with kernels from `dir`'s modules and no program cache (so every program really
 * comes from a module or the compiler); skips where GL or ARB_gl_spirv is missing. */
static tgl_backend *open_spirv(const char *dir)
{
    tgt_setenv("TGL_SHADER", "spirv");
    tgt_setenv("TGL_SPIRV_DIR", dir);
    tgt_setenv("TGL_API", "gl");
    tgt_setenv("TGL_CACHE_DIR", "");
    tgl_options o = {.kind = TGL_BACKEND_GL};
    tgl_backend *b = NULL;
    tgl_status st = tgl_open(&o, &b);
    if (st == TGL_ERR_NO_DEVICE || (st == TGL_ERR_UNSUPPORTED && strstr(tgl_last_error(NULL), "GL_ARB_gl_spirv"))) {
        print_message("skipped: %s\n", tgl_last_error(NULL));
        skip();
    }
    if (st)
        fail_msg("tgl_open with TGL_SHADER=spirv, TGL_SPIRV_DIR=%s: %s: %s", dir, tgl_status_string(st),
                 tgl_last_error(NULL));
    /* Attention through the decode kernels (a 128-wide workgroup and a 64-wide merge) on every
     * device: llvmpipe's own path, flash_reg, has no module. */
    tgl_gl_test_force_attention(b, ATTENTION_DECODE);
    return b;
}

/* The ops both backends run; what they write is read back into out (OUT_FLOATS floats). Softmax
 * rows are longer than llvmpipe's norm/softmax_lanes takes (1024), a kernel without a module. */
enum { N_ADD = 100003, RED_ROWS = 37, RED_COLS = 5000, SM_ROWS = 33, SM_COLS = 2000, GM = 67, GN = 45, GK = 39,
       HEADS = 2, KV = 300, HD = 64 };
#define OUT_FLOATS (N_ADD + RED_ROWS + SM_ROWS * SM_COLS + GM * GN + HEADS * HD)

typedef struct inputs {
    float *a, *b, *red, *sm, *ga, *gb, *q, *k, *v;
} inputs;

static float *random_floats(tgt_rng *r, size_t n)
{
    float *p = malloc(n * sizeof *p);
    assert_non_null(p);
    for (size_t i = 0; i < n; i++)
        p[i] = tgt_uniform(r, -2.0f, 2.0f);
    return p;
}

static void free_inputs(inputs *in)
{
    float **all[] = {&in->a, &in->b, &in->red, &in->sm, &in->ga, &in->gb, &in->q, &in->k, &in->v};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        free(*all[i]);
}

/* Element-wise add (vec4 body and scalar tail, items per invocation as the device picks), a row
 * sum of long rows (the reduction's wider workgroups), softmax, a GEMM and a decode attention
 * (a 128-wide workgroup) into `out`. */
static void run_ops(tgl_backend *b, const inputs *in, float *out)
{
    const size_t red_shape[2] = {RED_ROWS, RED_COLS};
    tgl_ptr a = tgt_upload(b, in->a, N_ADD, 0), bb = tgt_upload(b, in->b, N_ADD, 0), sum = 0;
    tgl_ptr red = tgt_upload(b, in->red, RED_ROWS * RED_COLS, 0), red_out = 0, sm = tgt_upload(b, in->sm, SM_ROWS * SM_COLS, 0);
    tgl_ptr ga = tgt_upload(b, in->ga, GM * GK, 0), gb = tgt_upload(b, in->gb, GK * GN, 0), gc = 0;
    tgl_ptr q = tgt_upload(b, in->q, HEADS * HD, 0), k = tgt_upload(b, in->k, HEADS * KV * HD, 0);
    tgl_ptr v = tgt_upload(b, in->v, HEADS * KV * HD, 0), o = 0, sm_out = 0;
    TGT_OK(b, tgl_alloc(b, N_ADD * sizeof(float), &sum));
    TGT_OK(b, tgl_alloc(b, RED_ROWS * sizeof(float), &red_out));
    TGT_OK(b, tgl_alloc(b, SM_ROWS * SM_COLS * sizeof(float), &sm_out));
    TGT_OK(b, tgl_alloc(b, GM * GN * sizeof(float), &gc));
    TGT_OK(b, tgl_alloc(b, HEADS * HD * sizeof(float), &o));
    TGT_OK(b, tgl_binary(b, TGL_BINARY_ADD, a, bb, sum, N_ADD));
    TGT_OK(b, tgl_reduce(b, TGL_REDUCE_SUM, red, red_out, red_shape, 2, 1));
    TGT_OK(b, tgl_softmax(b, sm, sm_out, SM_ROWS, SM_COLS));
    TGT_OK(b, tgl_gemm(b, TGL_NO_TRANS, TGL_NO_TRANS, GM, GN, GK, 1.0f, ga, GK, gb, GN, 0.0f, gc, GN));
    TGT_OK(b, tgl_attention(b, q, k, v, o, 1, HEADS, 1, KV, HD, 0.125f, 0));
    tgt_poison(out, OUT_FLOATS);
    float *p = out;
    TGT_OK(b, tgl_copy_dtoh(b, p, sum, N_ADD * sizeof(float)));
    TGT_OK(b, tgl_copy_dtoh(b, p += N_ADD, red_out, RED_ROWS * sizeof(float)));
    TGT_OK(b, tgl_copy_dtoh(b, p += RED_ROWS, sm_out, SM_ROWS * SM_COLS * sizeof(float)));
    TGT_OK(b, tgl_copy_dtoh(b, p += SM_ROWS * SM_COLS, gc, GM * GN * sizeof(float)));
    TGT_OK(b, tgl_copy_dtoh(b, p += GM * GN, o, HEADS * HD * sizeof(float)));
    const tgl_ptr all[] = {a, bb, sum, red, red_out, sm, sm_out, ga, gb, gc, q, k, v, o};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        TGT_OK(b, tgl_free(b, all[i]));
}

/* Runs the ops on `gl` and on the CPU backend over fresh random inputs and compares. */
static void check_against_cpu(tgl_backend *gl)
{
    tgt_rng r;
    tgt_rng_init(&r, tgt_seed() ^ 0x5b1e);
    inputs in = {random_floats(&r, N_ADD), random_floats(&r, N_ADD), random_floats(&r, RED_ROWS * RED_COLS),
                 random_floats(&r, SM_ROWS * SM_COLS), random_floats(&r, GM * GK), random_floats(&r, GK * GN),
                 random_floats(&r, HEADS * HD), random_floats(&r, HEADS * KV * HD), random_floats(&r, HEADS * KV * HD)};
    float *got = malloc(OUT_FLOATS * sizeof *got), *want = malloc(OUT_FLOATS * sizeof *want);
    assert_non_null(got);
    assert_non_null(want);
    tgl_backend *cpu = tgt_open(TGL_BACKEND_CPU);
    run_ops(gl, &in, got);
    run_ops(cpu, &in, want);
    tgl_close(cpu);
    double nmse = tgt_nmse(got, want, OUT_FLOATS);
    if (!(nmse <= 1e-10))
        fail_msg("SPIR-V kernels vs the CPU backend: NMSE %g (seed %llu)", nmse, (unsigned long long)tgt_seed());
    free(got);
    free(want);
    free_inputs(&in);
}

static void test_ops_from_modules(void **state)
{
    (void)state;
    tgl_backend *b = open_spirv(modules);
    struct tgl_device_info info;
    TGT_OK(b, tgl_device_info(b, &info));
    assert_string_equal(info.shaders, "SPIR-V");
    check_against_cpu(b);
    unsigned long st[4];
    tgl_gl_test_spirv_stats(b, st);
    /* add (two variants), sum, softmax, GEMM, the decode pass and its combine */
    assert_true(st[LOADED] >= 6);
    /* every variant make spirv builds is found; those built from GLSL by design (such as
     * softmax_lanes, which llvmpipe takes for these rows at 512 bits) are counted apart */
    assert_int_equal(st[MISSING], 0);
    assert_int_equal(st[REJECTED], 0);

    /* tgl_map's kernel is generated from the expression: GLSL, and right. */
    float x[9], y[9];
    for (int i = 0; i < 9; i++)
        x[i] = (float)i - 4.0f;
    tgl_ptr p = tgt_upload(b, x, 9, 0), out = 0;
    TGT_OK(b, tgl_alloc(b, sizeof y, &out));
    TGT_OK(b, tgl_map(b, "a * a + 1", &p, 1, out, 9));
    TGT_OK(b, tgl_copy_dtoh(b, y, out, sizeof y));
    for (int i = 0; i < 9; i++)
        assert_true(y[i] == x[i] * x[i] + 1.0f);
    unsigned long after[4];
    tgl_gl_test_spirv_stats(b, after);
    assert_true(after[MISSING] >= 1);
    assert_int_equal(after[LOADED], st[LOADED]);

    /* flash_reg has no module (gl_spirv.c says why): GLSL, and right. */
    tgl_gl_test_force_attention(b, ATTENTION_REG);
    check_against_cpu(b);
    unsigned long reg[4];
    tgl_gl_test_spirv_stats(b, reg);
    assert_true(reg[EXCLUDED] > after[EXCLUDED]);
    assert_int_equal(reg[REJECTED], 0);
    tgl_close(b);
}

/* Copies the module directory to a fresh one and damages every module in it, three ways in
 * turn: bytes that are not SPIR-V, the first half of the module, an empty file. */
static char *damaged_copy(void)
{
    char *dir = strdup("/tmp/tgl-spirv-test-XXXXXX"), cmd[2 * sizeof modules + 512];
    assert_non_null(dir);
    assert_non_null(mkdtemp(dir));
    snprintf(cmd, sizeof cmd,
             "cp '%s'/*.spv '%s'/tensorgl-spirv.txt '%s'/ && cd '%s' && i=0 && for f in *.spv; do "
             "case $((i %% 3)) in 0) printf 'not a SPIR-V module' > \"$f\";; "
             "1) truncate -s $(( $(stat -c %%s \"$f\") / 8 * 4 )) \"$f\";; 2) : > \"$f\";; esac; i=$((i + 1)); done",
             modules, modules, dir, dir);
    assert_int_equal(system(cmd), 0);
    return dir;
}

static void test_damaged_modules(void **state)
{
    (void)state;
    char *dir = damaged_copy();
    tgl_backend *b = open_spirv(dir);
    tgt_expected_begin(); /* each damaged module is refused with a warning */
    check_against_cpu(b);
    tgt_expected_end();
    unsigned long st[4];
    tgl_gl_test_spirv_stats(b, st);
    tgl_close(b);
    /* the copy goes before the checks, so a failing run leaves nothing behind */
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    int removed = system(cmd);
    free(dir);
    assert_int_equal(removed, 0);
    assert_int_equal(st[LOADED], 0);
    assert_true(st[REJECTED] >= 6); /* add (2), sum, softmax, GEMM, decode (2) */
}

/* A directory without modules fails tgl_open naming it, AUTO included: SPIR-V was asked for
 * explicitly, so running on the CPU instead would hide a broken installation. */
static void test_missing_directory(void **state)
{
    (void)state;
    tgl_close(open_spirv(modules)); /* skips where SPIR-V cannot run at all */
    tgt_setenv("TGL_SPIRV_DIR", "/nonexistent/tensorgl-spirv");
    for (int kind = TGL_BACKEND_AUTO; kind <= TGL_BACKEND_GL; kind++) {
        tgl_options o = {.kind = (tgl_backend_kind)kind};
        tgl_backend *b = NULL;
        TGT_EXPECT(NULL, tgl_open(&o, &b), TGL_ERR_IO);
        assert_null(b);
        assert_non_null(strstr(tgl_last_error(NULL), "/nonexistent/tensorgl-spirv"));
    }
    /* The CPU backend has no kernels to build and ignores TGL_SHADER. */
    tgl_options o = {.kind = TGL_BACKEND_CPU};
    tgl_backend *b = NULL;
    TGT_OK(NULL, tgl_open(&o, &b));
    tgl_close(b);
}

/* SPIR-V shaders are desktop GL only: on an ES context the request fails and says so. */
static void test_es_context(void **state)
{
    (void)state;
    tgt_setenv("TGL_SHADER", "spirv");
    tgt_setenv("TGL_SPIRV_DIR", modules);
    tgt_setenv("TGL_API", "gles");
    tgl_options o = {.kind = TGL_BACKEND_GL};
    tgl_backend *b = NULL;
    tgl_status st = tgl_open(&o, &b);
    if (st == TGL_ERR_NO_DEVICE)
        skip(); /* no ES 3.1 context here */
    TGT_EXPECT(NULL, st, TGL_ERR_UNSUPPORTED);
    assert_non_null(strstr(tgl_last_error(NULL), "OpenGL ES"));
}

static void test_bad_values(void **state)
{
    (void)state;
    tgl_options o = {.kind = TGL_BACKEND_CPU};
    tgl_backend *b = NULL;
    tgt_setenv("TGL_SHADER", "hlsl");
    TGT_EXPECT(NULL, tgl_open(&o, &b), TGL_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(tgl_last_error(NULL), "TGL_SHADER"));
    tgt_setenv("TGL_SHADER", "glsl");
    char long_dir[1100];
    memset(long_dir, 'd', sizeof long_dir - 1);
    long_dir[sizeof long_dir - 1] = '\0';
    tgt_setenv("TGL_SPIRV_DIR", long_dir);
    TGT_EXPECT(NULL, tgl_open(&o, &b), TGL_ERR_INVALID_ARGUMENT);
    tgt_setenv("TGL_SPIRV_DIR", "");
    TGT_OK(NULL, tgl_open(&o, &b));
    tgl_close(b);
}

int main(int argc, char **argv)
{
    (void)argc;
    const char *env = getenv("TGL_SPIRV_DIR");
    if (env && *env) {
        snprintf(modules, sizeof modules, "%s", env);
    } else {
        /* BUILD/tests/test_spirv -> BUILD/tensorgl-spirv */
        char self[4096];
        ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
        self[n > 0 ? n : 0] = '\0';
        char *slash = strrchr(self, '/');
        if (slash)
            *slash = '\0';
        slash = strrchr(self, '/');
        if (slash)
            *slash = '\0';
        snprintf(modules, sizeof modules, "%s/tensorgl-spirv", n > 0 ? self : ".");
        char manifest[sizeof modules + 32];
        snprintf(manifest, sizeof manifest, "%s/tensorgl-spirv.txt", modules);
        if (access(manifest, R_OK) && n > 0) /* build/sanitize/tests -> build/tensorgl-spirv */
            snprintf(modules, sizeof modules, "%s/../tensorgl-spirv", self);
    }
    (void)argv;
    if (tgt_cpu_only()) {
        const struct CMUnitTest cpu_tests[] = {cmocka_unit_test_teardown(test_bad_values, tgt_env_teardown)};
        return cmocka_run_group_tests(cpu_tests, NULL, NULL);
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_ops_from_modules, tgt_env_teardown),
        cmocka_unit_test_teardown(test_damaged_modules, tgt_env_teardown),
        cmocka_unit_test_teardown(test_missing_directory, tgt_env_teardown),
        cmocka_unit_test_teardown(test_es_context, tgt_env_teardown),
        cmocka_unit_test_teardown(test_bad_values, tgt_env_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
