/* Checks at tgl_open for driver bugs that give wrong results without any GL error, so a device
 * that would compute wrong answers is refused (TGL_BACKEND_AUTO then falls back to the CPU
 * backend, with the reason) instead of used.
 *
 * zink on a CPU Vulkan device (lavapipe) compiles the values of uniforms that bound loops or
 * branches into a shader variant per value. Mesa 25.0.7 (Debian 12 bookworm-backports) then runs
 * a stale variant: a program used with count 3, then 3, then 1, then 1, each time after another
 * program ran, runs with 3 on the fourth dispatch (measured; tensorgl's attention
 * merged three chunks where one was valid and test_attention failed). The check replays that
 * sequence on glsl/check/inlined_uniform.comp. It runs only on zink: elsewhere it would add a
 * compile to every open for a bug that driver alone has shown. */
#include "gl_internal.h"

#include <string.h>

/* 0: on zink only; 1: on every renderer; 2: report the bug without running (tests). */
static int check_mode;

void tgl_gl_test_driver_check(int mode)
{
    check_mode = mode;
}

#define STALE_VARIANT_MESSAGE                                                                        \
    "the driver ran a stale shader variant (a compute program's loop-bound uniform changed from "     \
    "3 to 1 read 3 again after another program ran; a bug of Mesa's zink on CPU Vulkan devices, "     \
    "seen in Mesa 25.0.7): its results cannot be trusted. Use another driver (llvmpipe: without "      \
    "GALLIUM_DRIVER=zink)"

/* The two programs of the stale-variant check (SLOT 0 and 1); tgl_gl_check_variants lists the
 * same plans, so `make spirv` builds a module for each. */
typedef struct check_flags {
    uint32_t slot;
} check_flags;
static const tgl_gl_def check_defs[] = {TGL_GL_UINT(check_flags, slot, "SLOT")};

static tgl_gl_plan check_plan(int slot)
{
    check_flags f = {(uint32_t)slot};
    tgl_gl_plan p = {.op = "tgl_open (driver check)", .wg = 1, .groups = 1,
                     .why = "zink: a loop-bound uniform must not run a stale variant"};
    tgl_gl_plan_kernel(&p, "check/inlined_uniform", TGL_GL_DEFS(check_defs), &f);
    return p;
}

/* Runs the two programs in turn, SLOT 1 with counts 3, 3, 1, 1; *ok is 1 when both sums are
 * what the counts add up to. */
static tgl_status run_sequence(tgl_backend *b, tgl_gl_buffer *sums, int *ok)
{
    static const GLuint counts[4] = {3, 3, 1, 1};
    GLuint prog[2];
    tgl_status st = TGL_OK;
    for (int i = 0; i < 2 && !st; i++) {
        tgl_gl_plan plan = check_plan(i);
        st = tgl_gl_plan_program(b, &plan, &prog[i]);
    }
    const uint32_t zero[2] = {0, 0};
    if (!st)
        st = tgl_gl_upload(b, (tgl__view){sums, 0}, zero, sizeof zero);
    const tgl_gl_binding bind = {.buf = sums, .bytes = sizeof zero, .writes = 1};
    for (int round = 0; round < 4 && !st; round++) {
        tgl_gl_uniform_ui(b, prog[0], LOC_CHECK_COUNT, 5);
        if (!(st = tgl_gl_dispatch(b, prog[0], &bind, 1, 1))) {
            tgl_gl_uniform_ui(b, prog[1], LOC_CHECK_COUNT, counts[round]);
            st = tgl_gl_dispatch(b, prog[1], &bind, 1, 1);
        }
    }
    uint32_t got[2] = {0, 0};
    if (!st)
        st = tgl_gl_download(b, got, (tgl__view){sums, 0}, sizeof got);
    if (st)
        return st;
    *ok = got[0] == 20 && got[1] == 8;
    if (!*ok)
        tgl__log(b, TGL__LOG_WARN, "driver check: loop-bound uniforms gave sums %u and %u, want 20 and 8", got[0],
                 got[1]);
    return TGL_OK;
}

tgl_status tgl_gl_driver_check(tgl_backend *b)
{
    const tgl_gl *gl = tgl_gl_of(b);
    if (check_mode == 2)
        return tgl__fail(b, TGL_ERR_NO_DEVICE, "%s: " STALE_VARIANT_MESSAGE " (test hook)", gl->renderer);
    if (check_mode == 0 && strncmp(gl->renderer, "zink", 4) != 0)
        return TGL_OK;
    void *sums;
    tgl_status st = tgl_gl_buffer_create(b, 2 * sizeof(uint32_t), &sums);
    if (st)
        return st;
    int ok = 0;
    st = run_sequence(b, sums, &ok);
    tgl_gl_buffer_destroy(b, sums);
    if (!st && !ok)
        st = tgl__fail(b, TGL_ERR_NO_DEVICE, "%s: " STALE_VARIANT_MESSAGE, gl->renderer);
    return st;
}

void tgl_gl_check_variants(void (*fn)(void *ctx, const char *kernel, const char *defines), void *ctx)
{
    for (int i = 0; i < 2; i++) {
        tgl_gl_plan p = check_plan(i);
        fn(ctx, p.kernel, p.defines);
    }
}
