/* Helpers shared by the cmocka suites: seeded random data, backends that skip cleanly when no
 * EGL display exists at all, NMSE, poisoned buffers with guard regions. */
#ifndef TGL_TESTING_H
#define TGL_TESTING_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tensorgl.h"

/* Fails the test with the status and the backend's message. */
#define TGT_OK(b, call)                                                                         \
    do {                                                                                        \
        tgl_status st_ = (call);                                                                \
        if (st_ != TGL_OK)                                                                      \
            fail_msg("%s -> %s: %s", #call, tgl_status_string(st_), tgl_last_error(b));         \
    } while (0)

/* Expects a specific status, and a non-empty message for errors. */
#define TGT_EXPECT(b, call, want)                                                               \
    do {                                                                                        \
        tgl_status st_ = (call);                                                                \
        if (st_ != (want))                                                                      \
            fail_msg("%s -> %s, expected %s (%s)", #call, tgl_status_string(st_),               \
                     tgl_status_string(want), tgl_last_error(b));                               \
        if ((want) != TGL_OK && !tgl_last_error(b)[0])                                          \
            fail_msg("%s: no tgl_last_error message", #call);                                   \
    } while (0)

typedef struct tgt_rng {
    uint64_t s;
} tgt_rng;

/* The run's seed: TGL_TEST_SEED if set, else fresh; printed so a failure can be replayed. */
uint64_t tgt_seed(void);
void tgt_rng_init(tgt_rng *r, uint64_t seed);
uint64_t tgt_next(tgt_rng *r);
float tgt_uniform(tgt_rng *r, float lo, float hi);
size_t tgt_below(tgt_rng *r, size_t n);

/* TGL_TEST_CPU_ONLY=1 (the valgrind run): GL backends are skipped, the CPU parts run. */
int tgt_cpu_only(void);

/* The program `name` built beside the tests ($(BUILD)/name, from this test's own path
 * $(BUILD)/tests/TEST) into out: 0, or -1 (with a message) when it is not built. */
int tgt_built_program(const char *name, char *out, size_t size);

/* TGL_TEST_SCALE (a number in (0, 1], default 1; anything else fails the test) thins the work
 * the suites repeat for coverage: make check runs at 0.25 to stay within minutes on two cores
 * with empty caches, make check-full (CI) at 1, and CI's softpipe run at 0.25 (each dispatch
 * costs milliseconds there).
 * tgt_count: a random-call count scaled so, at least 1. */
int tgt_count(int n);
/* tgt_pick: whether item i of a sweep (a kernel configuration, a head dimension, a case of an
 * exhaustive grid) runs: every round(1/scale)-th item, from an offset drawn from the run's seed,
 * so successive runs cover the whole sweep. Sweeps whose items each compile kernels pick at
 * that level, so a thinned run also compiles fewer. */
int tgt_pick(size_t i);

/* Output a test provokes on purpose (fault injection, damaged files, refused calls), marked
 * "[ EXPECTED ]" so a passing run's log does not read as trouble. Between tgt_expected_begin
 * and tgt_expected_end the library's log lines are printed so (through a log callback, which
 * also stops TGL_LOG from taking them); tgt_expected prints one message of the test's own. */
void tgt_expected_begin(void);
void tgt_expected_end(void);
void tgt_expected(const char *fmt, ...);

/* Opens a backend of `kind` into *state; a GL backend is skipped only when no EGL display
 * exists at all, and any other GL failure fails the test. */
tgl_backend *tgt_open(tgl_backend_kind kind);
int tgt_setup_gl(void **state);
int tgt_setup_cpu(void **state);
int tgt_teardown(void **state);

/* The fixture of the op suites: a GL and a CPU backend (every streaming op of which alternates
 * its direction, every cast of which takes its four-per-invocation variant where it can) and a
 * generator seeded from the run's seed and a per-suite salt. Use from a cmocka group
 * setup/teardown. */
typedef struct tgt_pair {
    tgl_backend *gl, *cpu;
    tgt_rng rng;
    int gl_textures, gl_images; /* gl's own element-wise reads (see tgt_with_and_without_textures) */
} tgt_pair;
int tgt_pair_setup(void **state, uint64_t salt);
int tgt_pair_teardown(void **state);

/* Σ(got-want)² / Σwant²; +inf when got has NaN/inf where want has none. */
double tgt_nmse(const float *got, const float *want, size_t n);
/* tgt_nmse with each reference element counted as at least `floor` in size in the denominator:
 * for outputs whose O(1) terms may cancel to near zero, where a few roundings of the terms are
 * a large error relative to the result. */
double tgt_nmse_floor(const float *got, const float *want, size_t n, double floor);

/* A distinctive NaN that no op produces: unwritten outputs and guard bytes keep it. */
#define TGT_POISON_BITS 0x7fbadbadu
void tgt_poison(float *p, size_t n);
/* Index of the first element that is not the poison, or n. */
size_t tgt_first_unpoisoned(const float *p, size_t n);

/* A fused epilogue's activation over n floats at y in place, unfused: its unary op or a tgl_map
 * expression (the reference chains of tgl_conv2d_fused and tgl_gemm_fused). */
void tgt_activate(tgl_backend *b, tgl_activation act, float slope, tgl_ptr y, size_t n);

/* n floats of x uploaded `front` floats into a fresh allocation of front + n floats. */
tgl_ptr tgt_upload(tgl_backend *b, const float *x, size_t n, size_t front);

/* Calls fn(ctx) with gl's element-wise kernels reading through SSBOs, then (where the device
 * has buffer textures) with texelFetch from buffer textures, then, where the device reads
 * those textures as images (llvmpipe), with imageLoad; and restores the device's own choice.
 * The texelFetch pass keeps the fallback for devices without image units tested there. */
void tgt_with_and_without_textures(tgl_backend *gl, void (*fn)(void *ctx), void *ctx);
/* cmocka teardown (cmocka_unit_test_teardown) for a test that calls it on a tgt_pair's GL
 * backend: a failed check jumps past the helper's own restore, and the file's later tests
 * would then run with the failing pass's reads; this puts the pair's GL device back to its own. */
int tgt_pair_restore_reads(void **state);

/* Environment changes for one test, undone by tgt_env_restore (tgt_env_teardown as a cmocka
 * teardown). */
void tgt_setenv(const char *name, const char *value);
void tgt_env_restore(void);
int tgt_env_teardown(void **state);

#endif
