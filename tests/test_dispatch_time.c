/* Heavy ops split by time (TGL_MAX_DISPATCH_MS): with the device's rate estimate shrunk to
 * 1 MFLOP/s, a dispatch may hold ~100K flops, so gemm, batched gemm, attention and conv2d run
 * as several dispatches (down to a tile of C, a slice of k, a (batch, head) block, an image;
 * counted by the backend's dispatch sequence) and still match the CPU oracle; with the bound
 * off (0) the same gemm is one dispatch. */
#include "testing.h"
#include "gl/gl_internal.h"

#include <stdlib.h>

typedef tgt_pair pair;

static int setup(void **state)
{
    return tgt_pair_setup(state, 0xD15);
}

static int teardown(void **state)
{
    return tgt_pair_teardown(state);
}

static float *randoms(tgt_rng *r, size_t n)
{
    float *x = malloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++)
        x[i] = tgt_uniform(r, -1, 1);
    return x;
}

/* The op's inputs uploaded to both backends, its output read back from both. */
typedef struct operands {
    size_t n[4];  /* floats per operand; the last one is the output (also read: gemm's C) */
    float *host[4];
    tgl_ptr gl[4], cpu[4];
} operands;

static void make(pair *p, operands *o, size_t n0, size_t n1, size_t n2, size_t n3)
{
    size_t n[4] = {n0, n1, n2, n3};
    for (int i = 0; i < 4; i++) {
        o->n[i] = n[i];
        o->host[i] = n[i] ? randoms(&p->rng, n[i]) : NULL;
        o->gl[i] = n[i] ? tgt_upload(p->gl, o->host[i], n[i], 0) : 0;
        o->cpu[i] = n[i] ? tgt_upload(p->cpu, o->host[i], n[i], 0) : 0;
    }
}

/* Compares the output (operand `out`) and frees everything. */
static void check(pair *p, operands *o, int out, const char *what, uint64_t dispatches, uint64_t at_least)
{
    size_t n = o->n[out];
    float *g = malloc(n * sizeof(float)), *w = malloc(n * sizeof(float));
    TGT_OK(p->gl, tgl_copy_dtoh(p->gl, g, o->gl[out], n * sizeof(float)));
    TGT_OK(p->cpu, tgl_copy_dtoh(p->cpu, w, o->cpu[out], n * sizeof(float)));
    double e = tgt_nmse(g, w, n);
    print_message("%s: %llu dispatches, NMSE %.3g\n", what, (unsigned long long)dispatches, e);
    if (!(e <= 1e-9))
        fail_msg("%s: NMSE %.3g against the CPU (seed %llu)", what, e, (unsigned long long)tgt_seed());
    if (dispatches < at_least)
        fail_msg("%s: %llu dispatches, expected at least %llu", what, (unsigned long long)dispatches,
                 (unsigned long long)at_least);
    for (int i = 0; i < 4; i++) {
        free(o->host[i]);
        if (o->n[i]) {
            TGT_OK(p->gl, tgl_free(p->gl, o->gl[i]));
            TGT_OK(p->cpu, tgl_free(p->cpu, o->cpu[i]));
        }
    }
    free(g), free(w);
}

/* Shrinks the GL backend's rate estimate (ms: TGL_MAX_DISPATCH_MS's value; 0 turns it off). */
static void set_bound(pair *p, unsigned ms)
{
    p->gl->config.max_dispatch_ms = ms;
    tgl_gl_of(p->gl)->limits.gflops_floor = 0.001;
}

static uint64_t seq(pair *p)
{
    return tgl_gl_of(p->gl)->seq;
}

static void test_gemm_split_by_time(void **state)
{
    pair *p = *state;
    if (!p->gl) {
        skip();
        return; /* not reached: skip() leaves the test */
    }
    /* 7.6 MFLOP: cut in whole tiles of C (32 x 128 on llvmpipe, 128 x 128 on NVIDIA) and in
     * slices of k down to 256 or less: 3 x 4 dispatches on llvmpipe, 4 on NVIDIA */
    const size_t m = 70, n = 90, k = 600;
    for (unsigned ms = 0; ms <= 100; ms += 100) {
        set_bound(p, ms);
        operands o;
        make(p, &o, m * k, k * n, 0, m * n);
        tgl_backend *bk[2] = {p->gl, p->cpu};
        uint64_t s0 = seq(p);
        for (int i = 0; i < 2; i++) {
            operands *q = &o;
            tgl_ptr *v = i ? q->cpu : q->gl;
            TGT_OK(bk[i], tgl_gemm(bk[i], TGL_NO_TRANS, TGL_TRANS, m, n, k, 1.5f, v[0], k, v[1], k, 0.5f, v[3], n));
        }
        uint64_t used = seq(p) - s0;
        if (ms == 0 && used != 1)
            fail_msg("gemm with the bound off: %llu dispatches, expected 1", (unsigned long long)used);
        check(p, &o, 3, ms ? "gemm 70x90x600, 100 KFLOP per dispatch" : "gemm 70x90x600, no bound", used, ms ? 4 : 1);
    }
    set_bound(p, 100);
    operands o; /* 5 products of 33x40x50, B shared (stride 0) */
    make(p, &o, 5 * 33 * 50, 50 * 40, 0, 5 * 33 * 40);
    uint64_t s0 = seq(p);
    TGT_OK(p->gl, tgl_gemm_batched(p->gl, TGL_NO_TRANS, TGL_NO_TRANS, 33, 40, 50, 1.0f, o.gl[0], 50, 33 * 50, o.gl[1],
                                   40, 0, 0.0f, o.gl[3], 40, 33 * 40, 5));
    uint64_t used = seq(p) - s0;
    TGT_OK(p->cpu, tgl_gemm_batched(p->cpu, TGL_NO_TRANS, TGL_NO_TRANS, 33, 40, 50, 1.0f, o.cpu[0], 50, 33 * 50,
                                    o.cpu[1], 40, 0, 0.0f, o.cpu[3], 40, 33 * 40, 5));
    check(p, &o, 3, "gemm_batched 5 x 33x40x50", used, 5);
}

static void test_attention_split_by_time(void **state)
{
    pair *p = *state;
    if (!p->gl) {
        skip();
        return; /* not reached: skip() leaves the test */
    }
    set_bound(p, 100);
    /* 6 (batch, head) blocks of 4 x 17 x 40 x 16 = 43.5K flops: two per dispatch */
    const size_t B = 2, H = 3, sq = 17, skv = 40, d = 16;
    operands o;
    make(p, &o, B * H * sq * d, B * H * skv * d, B * H * skv * d, B * H * sq * d);
    uint64_t s0 = seq(p);
    TGT_OK(p->gl, tgl_attention(p->gl, o.gl[0], o.gl[1], o.gl[2], o.gl[3], B, H, sq, skv, d, 0.25f, 1));
    uint64_t used = seq(p) - s0;
    TGT_OK(p->cpu, tgl_attention(p->cpu, o.cpu[0], o.cpu[1], o.cpu[2], o.cpu[3], B, H, sq, skv, d, 0.25f, 1));
    check(p, &o, 3, "attention 2x3 heads, 17 x 40 x 16, causal", used, 3);
}

static void test_conv2d_split_by_time(void **state)
{
    pair *p = *state;
    if (!p->gl) {
        skip();
        return; /* not reached: skip() leaves the test */
    }
    set_bound(p, 100);
    /* 5 images of 2 x 27 x 8 x 8 x 8 = 27.6K flops: three per dispatch */
    tgl_conv2d_desc d = {.batch = 5, .in_channels = 3, .in_h = 10, .in_w = 10, .out_channels = 8, .kernel_h = 3,
                         .kernel_w = 3};
    operands o;
    make(p, &o, 5 * 3 * 10 * 10, 8 * 3 * 3 * 3, 8, 5 * 8 * 8 * 8);
    uint64_t s0 = seq(p);
    TGT_OK(p->gl, tgl_conv2d(p->gl, &d, o.gl[0], o.gl[1], o.gl[2], o.gl[3]));
    uint64_t used = seq(p) - s0;
    TGT_OK(p->cpu, tgl_conv2d(p->cpu, &d, o.cpu[0], o.cpu[1], o.cpu[2], o.cpu[3]));
    check(p, &o, 3, "conv2d 5 x 3->8 x 10x10, 3x3", used, 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gemm_split_by_time),
        cmocka_unit_test(test_attention_split_by_time),
        cmocka_unit_test(test_conv2d_split_by_time),
    };
    return cmocka_run_group_tests_name("dispatches bounded in time (gl vs cpu)", tests, setup, teardown);
}
