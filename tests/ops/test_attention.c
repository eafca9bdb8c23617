/* tgl_attention, tgl_attention_kv and tgl_attention_gqa on GL compared with the CPU oracle
 * (and grouped attention on the CPU with k and v repeated per head): causal and not, the
 * issue's grid of seq_q x seq_kv x head_dim x scale, scores of +-100, KV caches with spare
 * capacity, unaligned operands, rows that see no key, slabs forced by a small SSBO limit,
 * poisoned outputs with guards; and the error cases. */
#include "testing.h"
#include "gl/gl_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GUARD 8

typedef tgt_pair pair;

/* Paths that run the same kernel as "flash", which the loops check anyway: "flash without
 * subgroup shuffles" without subgroup shuffles (llvmpipe), flash_reg without buffer textures
 * (ES contexts on llvmpipe). */
static int repeats_flash(tgl_backend *gl, int path)
{
    const tgl_gl_limits *l = &tgl_gl_of(gl)->limits;
    return (path == TGL_GL_ATTENTION_FLASH_NO_SUBGROUPS && !l->subgroup_shuffle) ||
           (path == TGL_GL_ATTENTION_REG && !l->texture_buffer_texels);
}

static int setup(void **state)
{
    return tgt_pair_setup(state, 0xA77E);
}

static int teardown(void **state)
{
    return tgt_pair_teardown(state);
}

typedef struct acase {
    size_t batch, heads, seq_q, seq_kv, cap, d;
    float scale;
    int causal;
    size_t front; /* floats before each operand: 1 makes every window unaligned */
    size_t heads_kv; /* 0: heads (tgl_attention_kv); else tgl_attention_gqa's key/value heads */
} acase;

static size_t kv_heads(const acase *c)
{
    return c->heads_kv ? c->heads_kv : c->heads;
}

typedef struct inputs {
    float *q, *k, *v;
    size_t nq, nkv;
} inputs;

/* q, k, v uniform in [-1, 1]. With `magnitude`, each key row is a query row of its head (sign
 * alternating) plus noise, and q is rescaled so that the largest |scale * q.k| is exactly
 * `magnitude`: scores of that size really occur, with both signs. */
static inputs make_inputs(tgt_rng *r, const acase *c, float magnitude)
{
    inputs in;
    in.nq = c->batch * c->heads * c->seq_q * c->d;
    in.nkv = c->batch * kv_heads(c) * c->cap * c->d;
    in.q = malloc((in.nq + 1) * sizeof(float));
    in.k = malloc((in.nkv + 1) * sizeof(float));
    in.v = malloc((in.nkv + 1) * sizeof(float));
    for (size_t i = 0; i < in.nq; i++)
        in.q[i] = tgt_uniform(r, -1, 1);
    for (size_t i = 0; i < in.nkv; i++) {
        in.k[i] = tgt_uniform(r, -1, 1);
        in.v[i] = tgt_uniform(r, -1, 1);
    }
    if (magnitude > 0) {
        double top = 0;
        size_t group = c->heads / kv_heads(c);
        for (size_t kv = 0; kv < c->batch * kv_heads(c); kv++) { /* keys from the group's first head */
            const float *q = in.q + kv * group * c->seq_q * c->d;
            float *k = in.k + kv * c->cap * c->d;
            for (size_t j = 0; j < c->seq_kv; j++)
                for (size_t e = 0; e < c->d; e++)
                    k[j * c->d + e] = (j % 2 ? -1.0f : 1.0f) * q[(j % c->seq_q) * c->d + e] + 0.1f * k[j * c->d + e];
        }
        for (size_t bh = 0; bh < c->batch * c->heads; bh++) {
            const float *q = in.q + bh * c->seq_q * c->d, *k = in.k + bh / group * c->cap * c->d;
            for (size_t i = 0; i < c->seq_q; i++)
                for (size_t j = 0; j < c->seq_kv; j++) {
                    double dot = 0;
                    for (size_t e = 0; e < c->d; e++)
                        dot += (double)q[i * c->d + e] * k[j * c->d + e];
                    if (fabs(dot * c->scale) > top)
                        top = fabs(dot * c->scale);
                }
        }
        float f = top > 0 ? (float)(magnitude / top) : 1.0f;
        for (size_t i = 0; i < in.nq; i++)
            in.q[i] *= f;
    }
    return in;
}

static void free_inputs(inputs *in)
{
    free(in->q);
    free(in->k);
    free(in->v);
}

/* Runs c on b; returns front + nq + GUARD floats of the (poisoned beforehand) output. */
static float *run_on(tgl_backend *b, const acase *c, const inputs *in)
{
    size_t f = c->front * sizeof(float), total = c->front + in->nq + GUARD;
    tgl_ptr q = tgt_upload(b, in->q, in->nq, c->front), k = tgt_upload(b, in->k, in->nkv, c->front),
            v = tgt_upload(b, in->v, in->nkv, c->front), o;
    float *host = malloc(total * sizeof(float));
    tgt_poison(host, total);
    TGT_OK(b, tgl_alloc(b, total * sizeof(float), &o));
    TGT_OK(b, tgl_copy_htod(b, o, host, total * sizeof(float)));
    if (c->heads_kv)
        TGT_OK(b, tgl_attention_gqa(b, q + f, k + f, v + f, o + f, c->batch, c->heads, c->heads_kv, c->seq_q,
                                    c->seq_kv, c->cap, c->d, c->scale, c->causal));
    else
        TGT_OK(b, tgl_attention_kv(b, q + f, k + f, v + f, o + f, c->batch, c->heads, c->seq_q, c->seq_kv, c->cap,
                                   c->d, c->scale, c->causal));
    TGT_OK(b, tgl_copy_dtoh(b, host, o, total * sizeof(float)));
    TGT_OK(b, tgl_free(b, q));
    TGT_OK(b, tgl_free(b, k));
    TGT_OK(b, tgl_free(b, v));
    TGT_OK(b, tgl_free(b, o));
    return host;
}

static double check_case(pair *p, tgl_backend *gl, const acase *c, float magnitude, double tol)
{
    inputs in = make_inputs(&p->rng, c, magnitude);
    float *got = run_on(gl, c, &in), *want = run_on(p->cpu, c, &in);
    char what[200];
    snprintf(what, sizeof what,
             "b=%zu h=%zu h_kv=%zu seq_q=%zu seq_kv=%zu cap=%zu d=%zu scale=%g causal=%d front=%zu mag=%g", c->batch,
             c->heads, kv_heads(c), c->seq_q, c->seq_kv, c->cap, c->d, (double)c->scale, c->causal, c->front,
             (double)magnitude);
    size_t total = c->front + in.nq + GUARD;
    for (size_t e = 0; e < total; e++)
        if ((e < c->front || e >= c->front + in.nq) && tgt_first_unpoisoned(got + e, 1) == 0)
            fail_msg("%s: element %zd outside o was written", what, (ptrdiff_t)e - (ptrdiff_t)c->front);
    /* Each output is a weighted mean of v's rows (|v| <= 1): one that cancels to near 0 is held
     * to the error its O(1) terms carry (counted as at least 0.25 in size). With scores of +-100
     * the f32 scores round by ~8e-6, which a head_dim-1 decode whose two outputs cancel turned
     * into NMSE 4.4e-7 (TGL_TEST_SEED=1883203658865658, generic-gpu, flash_block_keys=8). */
    double nmse = tgt_nmse_floor(got + c->front, want + c->front, in.nq, 0.25);
    if (!(nmse <= tol))
        fail_msg("%s: NMSE %.3g > %.3g", what, nmse, tol);
    free(got);
    free(want);
    free_inputs(&in);
    return nmse;
}

/* The grid: causal or not x seq_q {1, 7, 128} x seq_kv {1, 33, 600} x head_dim {1, 64,
 * 80, 256} x scale {1/sqrt(d), 1}; ordinary inputs, then scores of about +-100. */
static void test_attention_grid(void **state)
{
    pair *p = *state;
    if (!p->gl)
        skip();
    static const size_t sq[] = {1, 7, 128}, skv[] = {1, 33, 600}, dims[] = {1, 64, 80, 256};
    static const char *const paths[] = {"flash_reg", "flash", "decode", "flash without subgroup shuffles"};
    double worst[2] = {0, 0};
    tgl_backend *gl = tgt_open(TGL_BACKEND_GL);
    for (int path = 0; path < 4; path++) {
    if (repeats_flash(gl, path))
        continue;
    tgl_gl_test_force_attention(gl, path);
    for (int causal = 0; causal < 2; causal++)
        for (size_t a = 0; a < 3; a++)
            for (size_t bkv = 0; bkv < 3; bkv++)
                for (size_t dd = 0; dd < 4; dd++)
                    for (int unit = 0; unit < 2; unit++)
                        for (int large = 0; large < 2; large++) {
                            size_t d = dims[dd];
                            if (path == 3 && d == 1) /* flash.comp either way */
                                continue;
                            if (!tgt_pick((size_t)path * 4 + dd)) /* each head dim compiles its kernels */
                                continue;
                            acase c = {1, 2, sq[a], skv[bkv], skv[bkv], d,
                                       unit ? 1.0f : 1.0f / sqrtf((float)d), causal, 0, 0};
                            double e = check_case(p, gl, &c, large ? 100.0f : 0.0f, large ? 1e-7 : 1e-9);
                            if (e > worst[large])
                                worst[large] = e;
                        }
    print_message("attention grid, %s: worst NMSE %.3g (ordinary), %.3g (scores +-100)\n", paths[path],
                  worst[0], worst[1]);
    worst[0] = worst[1] = 0;
    }
    tgl_close(gl);
}

/* Several batches and heads, KV caches with spare capacity, odd head dims and unaligned
 * windows (the element-by-element kernels), prefill and decode. */
static void test_attention_layouts(void **state)
{
    pair *p = *state;
    if (!p->gl)
        skip();
    static const acase cases[] = {
        {3, 5, 9, 20, 20, 24, 0.2f, 1, 0, 0},   {2, 3, 1, 300, 512, 64, 0.125f, 1, 0, 0},
        {2, 3, 4, 300, 301, 64, 0.125f, 1, 1, 0}, {2, 2, 17, 17, 40, 33, 0.3f, 1, 1, 0},
        {1, 4, 64, 64, 64, 128, 0.09f, 0, 1, 0}, {2, 1, 3, 1000, 1000, 7, 0.5f, 0, 0, 0},
        {1, 2, 70, 130, 160, 16, 0.25f, 1, 0, 0}, {1, 1, 2, 2049, 2049, 256, 0.0625f, 1, 0, 0},
    };
    tgl_backend *gl = tgt_open(TGL_BACKEND_GL);
    for (int path = -1; path <= TGL_GL_ATTENTION_DECODE_COMBINE; path++) { /* the device's choice, then each kernel */
        if (repeats_flash(gl, path))
            continue;
        tgl_gl_test_force_attention(gl, path);
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
            if (tgt_pick((size_t)(path + 1) * 8 + i))
                check_case(p, gl, &cases[i], 0, 1e-9);
    }
    tgl_close(gl);
}

/* Causal with seq_kv < seq_q: the first seq_q - seq_kv rows see no key and are exactly zero;
 * seq_kv == 0 makes every row zero. */
static void test_attention_rows_without_keys(void **state)
{
    pair *p = *state;
    tgl_backend *backends[2] = {p->cpu, p->gl};
    for (int bi = 0; bi < 2; bi++) {
        tgl_backend *b = backends[bi];
        if (!b)
            continue;
        for (size_t seq_kv = 0; seq_kv <= 3; seq_kv += 3) {
            acase c = {1, 2, 7, seq_kv, seq_kv, 8, 0.5f, 1, 0, 0};
            inputs in = make_inputs(&p->rng, &c, 0);
            float *o = run_on(b, &c, &in);
            for (size_t h = 0; h < 2; h++)
                for (size_t i = 0; i < 7; i++)
                    for (size_t e = 0; e < 8; e++) {
                        float x = o[(h * 7 + i) * 8 + e];
                        int blind = i < 7 - seq_kv;
                        if (blind ? x != 0.0f : !(fabsf(x) > 0.0f && fabsf(x) <= 1.0f))
                            fail_msg("%s seq_kv=%zu: head %zu row %zu dim %zu is %g", tgl_backend_name(b), seq_kv,
                                     h, i, e, (double)x);
                    }
            free(o);
            free_inputs(&in);
        }
    }
}

/* A tiny SSBO limit cuts the (batch, head) blocks into several slabs on both paths. */
static void test_attention_slabs(void **state)
{
    pair *p = *state;
    if (!p->gl)
        skip();
    tgl_backend *gl = tgt_open(TGL_BACKEND_GL);
    tgl_gl_test_set_limits(gl, 16384, NULL);
    static const acase cases[] = {{3, 4, 9, 40, 40, 16, 0.3f, 1, 1, 0}, {2, 5, 1, 300, 310, 8, 0.3f, 0, 0, 0}};
    for (int path = 0; path < 4; path++) {
        tgl_gl_test_force_attention(gl, path);
        for (size_t i = 0; i < 2; i++)
            check_case(p, gl, &cases[i], 0, 1e-9);
    }
    tgl_gl_test_force_attention(gl, TGL_GL_ATTENTION_REG); /* flash_reg's keys in chunks too */
    tgl_gl_test_attention_chunk_keys(gl, 16);
    for (size_t i = 0; i < 2; i++)
        check_case(p, gl, &cases[i], 0, 1e-9);
    tgl_gl_test_attention_chunk_keys(gl, 0);
    tgl_gl_test_force_attention(gl, -1);
    /* One block's keys longer than a window: walked a window at a time (below); one block's
     * query rows longer than a window cannot be cut further. */
    acase big = {1, 1, 4096, 4, 4, 16, 0.3f, 0, 0, 0};
    inputs in = make_inputs(&p->rng, &big, 0);
    tgl_ptr q = tgt_upload(gl, in.q, in.nq, 0), k = tgt_upload(gl, in.k, in.nkv, 0), v = tgt_upload(gl, in.v, in.nkv, 0), o;
    TGT_OK(gl, tgl_alloc(gl, in.nq * sizeof(float), &o));
    TGT_EXPECT(gl, tgl_attention(gl, q, k, v, o, 1, 1, 4096, 4, 16, 0.3f, 0), TGL_ERR_UNSUPPORTED);
    free_inputs(&in);
    tgl_close(gl);
}

/* One (batch, head) block's keys longer than an SSBO window (a limit of 40000 bytes: windows of
 * one or two decode chunks of 256 keys): walked a window at a time, whatever path the call would
 * take, with a cache longer than the keys, causal or not, rows that see a window in part, and
 * every window unaligned. */
static void test_attention_key_windows(void **state)
{
    pair *p = *state;
    if (!p->gl)
        skip();
    tgl_backend *gl = tgt_open(TGL_BACKEND_GL);
    tgl_gl_test_set_limits(gl, 40000, NULL);
    static const acase cases[] = {
        {1, 1, 1, 4096, 4096, 16, 0.3f, 0, 0, 0}, {1, 2, 3, 1000, 1031, 16, 0.25f, 1, 1, 0},
        {2, 1, 7, 777, 777, 8, 0.5f, 1, 0, 0},    {1, 1, 2, 513, 2000, 33, 0.2f, 0, 1, 0},
        {1, 1, 1, 300, 300, 32, 0.125f, 0, 0, 0}, {1, 3, 20, 2500, 2500, 4, 0.7f, 1, 0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_case(p, gl, &cases[i], 0, 1e-9);
    tgl_close(gl);
}

static void test_attention_errors(void **state)
{
    pair *p = *state;
    tgl_backend *backends[2] = {p->cpu, p->gl};
    for (int bi = 0; bi < 2; bi++) {
        tgl_backend *b = backends[bi];
        if (!b)
            continue;
        tgl_ptr q, k, v, o, big;
        const size_t n = 2 * 3 * 4 * 8; /* batch 2, heads 3, seq 4, d 8 */
        TGT_OK(b, tgl_alloc(b, n * sizeof(float), &q));
        TGT_OK(b, tgl_alloc(b, n * sizeof(float), &k));
        TGT_OK(b, tgl_alloc(b, n * sizeof(float), &v));
        TGT_OK(b, tgl_alloc(b, n * sizeof(float), &o));
        TGT_OK(b, tgl_alloc(b, 2 * 257 * sizeof(float), &big));
        TGT_OK(b, tgl_fill(b, o, 3.0f, n));
        TGT_EXPECT(b, tgl_attention(b, q, k, v, o, 2, 3, 4, 4, 8, NAN, 1), TGL_ERR_INVALID_ARGUMENT);
        TGT_EXPECT(b, tgl_attention(b, q, k, v, o, 2, 3, 4, 4, 8, INFINITY, 1), TGL_ERR_INVALID_ARGUMENT);
        TGT_EXPECT(b, tgl_attention_kv(b, q, k, v, o, 2, 3, 4, 4, 3, 8, 1.0f, 1), TGL_ERR_INVALID_ARGUMENT);
        TGT_EXPECT(b, tgl_attention(b, q, k, v, q, 2, 3, 4, 4, 8, 1.0f, 1), TGL_ERR_INVALID_ARGUMENT);
        TGT_EXPECT(b, tgl_attention(b, q, k, v, k + 4, 2, 3, 4, 4, 4, 1.0f, 1), TGL_ERR_INVALID_ARGUMENT);
        TGT_EXPECT(b, tgl_attention(b, q, k, v, o, 2, 3, 4, 5, 8, 1.0f, 1), TGL_ERR_INVALID_POINTER);
        TGT_EXPECT(b, tgl_attention_kv(b, q, k, v, o, 2, 3, 4, 4, 5, 8, 1.0f, 0), TGL_ERR_INVALID_POINTER);
        TGT_EXPECT(b, tgl_attention(b, q + 2, k, v, o, 2, 3, 3, 4, 8, 1.0f, 0), TGL_ERR_INVALID_ARGUMENT);
        TGT_EXPECT(b, tgl_attention(b, q, k, v, 12345, 2, 3, 4, 4, 8, 1.0f, 0), TGL_ERR_INVALID_POINTER);
        TGT_EXPECT(b, tgl_attention(b, q, k, v, o, SIZE_MAX / 2, 3, 4, 4, 8, 1.0f, 0), TGL_ERR_INVALID_ARGUMENT);
        TGT_EXPECT(NULL, tgl_attention(NULL, q, k, v, o, 2, 3, 4, 4, 8, 1.0f, 0), TGL_ERR_INVALID_ARGUMENT);
        /* Size 0 is a no-op that touches nothing, even with pointers that are not checked. */
        TGT_OK(b, tgl_attention(b, 0, 0, 0, 0, 0, 3, 4, 4, 8, 1.0f, 0));
        TGT_OK(b, tgl_attention(b, 0, 0, 0, 0, 2, 3, 4, 4, 0, 1.0f, 0));
        if (b == p->gl)
            TGT_EXPECT(b, tgl_attention(b, big, big, big, big + 257 * sizeof(float), 1, 1, 1, 1, 257, 1.0f, 0),
                       TGL_ERR_UNSUPPORTED);
        float host[2 * 3 * 4 * 8];
        TGT_OK(b, tgl_copy_dtoh(b, host, o, sizeof host));
        for (size_t i = 0; i < n; i++)
            if (host[i] != 3.0f)
                fail_msg("%s: a failed call changed o[%zu] to %g", tgl_backend_name(b), i, (double)host[i]);
        TGT_OK(b, tgl_free(b, q));
        TGT_OK(b, tgl_free(b, k));
        TGT_OK(b, tgl_free(b, v));
        TGT_OK(b, tgl_free(b, o));
        TGT_OK(b, tgl_free(b, big));
    }
}

/* llvmpipe ends an invocation's loops after 65535 iterations; flash_reg walks at most 7680 keys
 * at head_dim 256 (16383 up to 128) in one invocation and cuts longer sequences into chunks,
 * merged by a second pass: right at the edge and past it, with rows per invocation 1, 8 and 16.
 * On llvmpipe's ES context (flash.comp, wrong at 1M keys of 16 dims when it walked them) the
 * same cases take the decode kernels. Elsewhere nothing to check. */
static void test_attention_loop_limit(void **state)
{
    pair *p = *state;
    if (!tgl_gl_of(p->gl)->limits.loop_limit)
        skip();
    static const acase cases[] = {
        {1, 1, 2, 7680, 7680, 256, 0.0625f, 0, 0, 0},  {1, 1, 16, 7680, 7680, 256, 0.0625f, 0, 0, 0},
        {1, 1, 2, 7681, 7681, 256, 0.0625f, 0, 0, 0},  {1, 2, 16, 9000, 9100, 256, 0.0625f, 1, 0, 0},
        {1, 1, 1, 16384, 16384, 64, 0.125f, 0, 0, 0},  {1, 1, 20, 17000, 17000, 80, 0.1f, 1, 1, 0},
        {1, 1, 20, 1000000, 1000000, 16, 0.25f, 0, 0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_case(p, p->gl, &cases[i], 0, 1e-9);
}

/* The keys cut into chunks of 32 (a test hook; flash_reg does it on llvmpipe past its loop
 * limit and where one row per (batch, head) would leave cores idle, the flash kernels where a
 * grid would leave multiprocessors idle), on flash_reg, flash (flash_shuffle where subgroups
 * shuffle) and flash.comp without shuffles: chunks that rows see whole, in part or not at all
 * (causal), a last chunk cut short, every head-dim variant, aligned and not, and scores of
 * +-100. */
static void test_attention_split_keys(void **state)
{
    pair *p = *state;
    if (!p->gl)
        skip();
    static const size_t sq[] = {1, 7, 20}, skv[] = {33, 600}, dims[] = {1, 64, 80, 256};
    static const int paths[] = {TGL_GL_ATTENTION_REG, TGL_GL_ATTENTION_FLASH, TGL_GL_ATTENTION_FLASH_NO_SUBGROUPS};
    static const char *const names[] = {"flash_reg", "flash", "flash without subgroup shuffles"};
    tgl_backend *gl = tgt_open(TGL_BACKEND_GL);
    tgl_gl_test_attention_chunk_keys(gl, 32);
    for (int pi = 0; pi < 3; pi++) {
        if (repeats_flash(gl, paths[pi]))
            continue;
        tgl_gl_test_force_attention(gl, paths[pi]);
        double worst = 0;
        for (int causal = 0; causal < 2; causal++)
            for (size_t a = 0; a < 3; a++)
                for (size_t bkv = 0; bkv < 2; bkv++)
                    for (size_t dd = 0; dd < 4; dd++) {
                        if (!tgt_pick((size_t)pi * 4 + dd)) /* each head dim compiles its kernels */
                            continue;
                        size_t d = dims[dd];
                        int large = (a + dd + bkv) % 2;
                        acase c = {1, 2, sq[a], skv[bkv], skv[bkv] + 3, d, 1.0f / sqrtf((float)d), causal,
                                   (dd + causal) % 2, 0};
                        double e = check_case(p, gl, &c, large ? 100.0f : 0.0f, large ? 1e-7 : 1e-9);
                        worst = e > worst ? e : worst;
                    }
        print_message("%s over chunks of keys: worst NMSE %.3g\n", names[pi], worst);
    }
    tgl_close(gl);
}

/* Grouped-query and multi-query attention (tgl_attention_gqa): on the CPU backend equal, bit for
 * bit, to tgl_attention_kv over k and v repeated per query head; on GL against the CPU on every
 * path, prefill and decode, causal or not, with slabs that start inside a group (a small SSBO
 * limit) and a block's keys walked a window at a time. */
static void test_attention_gqa(void **state)
{
    pair *p = *state;
    acase c = {2, 6, 5, 37, 40, 16, 0.3f, 1, 0, 2};
    inputs in = make_inputs(&p->rng, &c, 0);
    size_t group = c.heads / c.heads_kv, rep_kv = c.batch * c.heads * c.cap * c.d;
    float *rk = malloc(rep_kv * sizeof(float)), *rv = malloc(rep_kv * sizeof(float));
    for (size_t bh = 0; bh < c.batch * c.heads; bh++) {
        memcpy(rk + bh * c.cap * c.d, in.k + bh / group * c.cap * c.d, c.cap * c.d * sizeof(float));
        memcpy(rv + bh * c.cap * c.d, in.v + bh / group * c.cap * c.d, c.cap * c.d * sizeof(float));
    }
    float *grouped = run_on(p->cpu, &c, &in);
    inputs rep = {in.q, rk, rv, in.nq, rep_kv};
    acase plain = c;
    plain.heads_kv = 0;
    float *repeated = run_on(p->cpu, &plain, &rep);
    assert_memory_equal(grouped, repeated, (in.nq + GUARD) * sizeof(float));
    free(grouped);
    free(repeated);
    free(rk);
    free(rv);
    free_inputs(&in);
    if (!p->gl)
        skip();
    static const acase cases[] = {
        {2, 8, 1, 300, 310, 64, 0.125f, 1, 0, 2},  {1, 6, 9, 40, 40, 16, 0.3f, 1, 1, 3},
        {1, 4, 33, 33, 33, 80, 0.11f, 0, 0, 1},    {2, 3, 1, 600, 600, 128, 0.09f, 0, 1, 1},
        {3, 4, 7, 129, 130, 32, 0.2f, 1, 0, 2},
    };
    tgl_backend *gl = tgt_open(TGL_BACKEND_GL);
    for (int path = 0; path < 4; path++) {
        if (repeats_flash(gl, path))
            continue;
        tgl_gl_test_force_attention(gl, path);
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
            check_case(p, gl, &cases[i], i % 2 ? 100.0f : 0.0f, i % 2 ? 1e-7 : 1e-9);
    }
    tgl_gl_test_force_attention(gl, -1);
    /* slabs of blocks that start inside a group, then a block's keys a window at a time */
    tgl_gl_test_set_limits(gl, 16384, NULL);
    static const acase small[] = {{3, 6, 9, 40, 40, 16, 0.3f, 1, 1, 2}, {2, 6, 1, 300, 310, 8, 0.3f, 0, 0, 3}};
    for (int path = 0; path < 4; path++) {
        tgl_gl_test_force_attention(gl, path);
        for (size_t i = 0; i < 2; i++)
            check_case(p, gl, &small[i], 0, 1e-9);
    }
    tgl_gl_test_force_attention(gl, -1);
    tgl_gl_test_set_limits(gl, 40000, NULL);
    acase windows = {1, 4, 2, 1000, 1031, 16, 0.25f, 1, 1, 2};
    check_case(p, gl, &windows, 0, 1e-9);
    tgl_close(gl);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_attention_grid),  cmocka_unit_test(test_attention_layouts),
        cmocka_unit_test(test_attention_rows_without_keys), cmocka_unit_test(test_attention_slabs),
        cmocka_unit_test(test_attention_errors), cmocka_unit_test(test_attention_loop_limit),
        cmocka_unit_test(test_attention_split_keys), cmocka_unit_test(test_attention_key_windows),
        cmocka_unit_test(test_attention_gqa),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
