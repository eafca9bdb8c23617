/* A driver below GL 4.3, simulated on Mesa with MESA_GL_VERSION_OVERRIDE=4.2 and
 * MESA_GLSL_VERSION_OVERRIDE=420 (set before the first context: Mesa reads them once per
 * process): the automatic choice falls back to OpenGL ES 3.1 and logs why, and an op runs there;
 * with TGL_API=gl an explicit GL request fails with TGL_ERR_NO_DEVICE naming 4.3, and
 * TGL_BACKEND_AUTO falls back to the CPU backend with the reason. Skipped on drivers that ignore
 * Mesa's variables (the context comes out desktop GL anyway). */
#include "testing.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char logged[2048];

static void capture(void *user, int level, const char *message)
{
    (void)user, (void)level;
    size_t len = strlen(logged);
    snprintf(logged + len, sizeof logged - len, "%s\n", message);
}

static tgl_status open_kind(tgl_backend_kind kind, tgl_backend **b)
{
    tgl_options o = {.kind = kind};
    logged[0] = '\0';
    return tgl_open(&o, b);
}

static void test_auto_falls_back_to_es(void **state)
{
    (void)state;
    if (tgt_cpu_only())
        skip();
    tgl_backend *b;
    TGT_OK(NULL, open_kind(TGL_BACKEND_GL, &b));
    struct tgl_device_info info;
    TGT_OK(b, tgl_device_info(b, &info));
    if (strcmp(info.api, "OpenGL ES")) {
        printf("%s (%s) ignores MESA_GL_VERSION_OVERRIDE: nothing to test\n", info.renderer, info.vendor);
        tgl_close(b);
        skip();
    }
    if (!strstr(logged, "4.3") || !strstr(logged, "OpenGL ES 3.1"))
        fail_msg("the fallback to ES did not say why; logged: '%s'", logged);
    printf("auto on a GL 4.2 driver: %s; logged: %s", info.version, logged);
    /* an op runs there and matches the obvious result */
    float x[5] = {1, 2, 3, 4, 5}, y[5];
    tgl_ptr p;
    TGT_OK(b, tgl_alloc(b, sizeof x, &p));
    TGT_OK(b, tgl_copy_htod(b, p, x, sizeof x));
    TGT_OK(b, tgl_unary(b, TGL_UNARY_SQUARE, p, p, 5));
    TGT_OK(b, tgl_copy_dtoh(b, y, p, sizeof y));
    for (int i = 0; i < 5; i++)
        assert_true(y[i] == x[i] * x[i]);
    TGT_OK(b, tgl_free(b, p));
    tgl_close(b);
}

static void test_explicit_gl_fails(void **state)
{
    (void)state;
    if (tgt_cpu_only())
        skip();
    tgl_backend *b = NULL;
    /* Only where the fallback above happened does the GL-only request fail. */
    TGT_OK(NULL, open_kind(TGL_BACKEND_GL, &b));
    struct tgl_device_info info;
    TGT_OK(b, tgl_device_info(b, &info));
    tgl_close(b);
    if (strcmp(info.api, "OpenGL ES"))
        skip();
    tgt_setenv("TGL_API", "gl");
    b = NULL;
    tgl_status st = open_kind(TGL_BACKEND_GL, &b);
    assert_int_equal(st, TGL_ERR_NO_DEVICE);
    assert_null(b);
    const char *why = tgl_last_error(NULL);
    if (!strstr(why, "4.3"))
        fail_msg("TGL_API=gl on a GL 4.2 driver: the error does not name 4.3: '%s'", why);
    printf("TGL_API=gl, kind GL: %s\n", why);
    /* TGL_BACKEND_AUTO: the CPU backend, with the reason kept */
    TGT_OK(NULL, open_kind(TGL_BACKEND_AUTO, &b));
    TGT_OK(b, tgl_device_info(b, &info));
    assert_string_equal(info.api, "C");
    if (!strstr(info.fallback_reason, "4.3"))
        fail_msg("auto fell back to the CPU without naming 4.3: '%s'", info.fallback_reason);
    tgl_close(b);
    tgt_env_restore();
}

int main(void)
{
    /* Before any context exists in this process. */
    setenv("MESA_GL_VERSION_OVERRIDE", "4.2", 1);
    setenv("MESA_GLSL_VERSION_OVERRIDE", "420", 1);
    unsetenv("TGL_API"); /* the ladder's own choice is under test (CI also runs the suite with gles) */
    /* The ladder lands on ES, which takes no SPIR-V (CI also runs the suite with TGL_SHADER=spirv). */
    setenv("TGL_SHADER", "glsl", 1);
    tgl_set_log_callback(capture, NULL);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_auto_falls_back_to_es),
        cmocka_unit_test(test_explicit_gl_fails),
    };
    return cmocka_run_group_tests_name("old drivers: GL 4.2 falls back (Mesa's version override)", tests, NULL, NULL);
}
