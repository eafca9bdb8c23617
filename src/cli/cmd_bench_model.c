/* `tensorgl bench attention` and `tensorgl bench conv2d`: the composite ops on the default
 * backend (TGL_BACKEND picks it) against references measured in the same run:
 *  - attention: the fused op against the same attention built from tgl_gemm_batched +
 *    tgl_softmax + tgl_gemm_batched on the same backend (non-causal, since the unfused chain
 *    has no mask), then the causal fused op, then a decode step (one query over a KV cache);
 *  - conv2d: against OpenBLAS running the same convolution as host im2col + sgemm (all cores),
 *    the CPU's own limit, when libopenblas0 is installed.
 * Device figures are the best of 3 runs of back-to-back calls closed by one tgl_synchronize,
 * after a warm-up call; the fused and unfused attention take turns over 5 runs each. */
#include "bench_blas.h"
#include "bench_clock.h"
#include "commands.h"
#include "tensorgl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef tgl_status (*issue_fn)(tgl_backend *b, const void *ctx);

/* Warm-up call, then one timed call: *sec gets its time and *iters how many calls fill ~0.25 s
 * (1 to 100). */
static tgl_status calibrate(tgl_backend *b, issue_fn fn, const void *ctx, double *sec, int *iters)
{
    tgl_status st;
    if ((st = fn(b, ctx)) || (st = tgl_synchronize(b)))
        return st;
    double t0 = tgl_bench_now();
    if ((st = fn(b, ctx)) || (st = tgl_synchronize(b)))
        return st;
    *sec = tgl_bench_now() - t0;
    int n = *sec > 0 ? (int)(0.25 / *sec) : 100;
    *iters = n < 1 ? 1 : n > 100 ? 100 : n;
    return TGL_OK;
}

/* One run of iters back-to-back calls closed by one tgl_synchronize; *best keeps the least
 * seconds per call seen. */
static tgl_status timed_run(tgl_backend *b, issue_fn fn, const void *ctx, int iters, double *best)
{
    tgl_status st;
    double t0 = tgl_bench_now();
    for (int i = 0; i < iters; i++)
        if ((st = fn(b, ctx)))
            return st;
    if ((st = tgl_synchronize(b)))
        return st;
    double t = (tgl_bench_now() - t0) / iters;
    *best = t < *best ? t : *best;
    return TGL_OK;
}

/* Seconds per call: warm-up, then the best of 3 runs of as many calls as fit in ~0.25 s. */
static tgl_status time_calls(tgl_backend *b, issue_fn fn, const void *ctx, double *sec)
{
    int iters;
    tgl_status st = calibrate(b, fn, ctx, sec, &iters);
    for (int r = 0; !st && r < 3; r++)
        st = timed_run(b, fn, ctx, iters, sec);
    return st;
}

/* time_calls for two ways of doing the same work, their timed runs alternated (5 rounds, the
 * best of each), so a slow stretch of a shared machine falls on both and not on one side of the
 * ratio. */
static tgl_status time_pair(tgl_backend *b, issue_fn fa, issue_fn fb, const void *ctx, double *ta, double *tb)
{
    int na, nb;
    tgl_status st = calibrate(b, fa, ctx, ta, &na);
    if (!st)
        st = calibrate(b, fb, ctx, tb, &nb);
    for (int r = 0; !st && r < 5; r++)
        if (!(st = timed_run(b, fa, ctx, na, ta)))
            st = timed_run(b, fb, ctx, nb, tb);
    return st;
}

/* Allocates n floats holding a fixed pattern in [-0.5, 0.5). */
static tgl_status alloc_pattern(tgl_backend *b, size_t n, unsigned salt, tgl_ptr *out)
{
    float *h = malloc(n * sizeof *h);
    if (!h)
        return TGL_ERR_OUT_OF_MEMORY;
    for (size_t i = 0; i < n; i++)
        h[i] = (float)((i * 2654435761u + salt) % 1000) / 1000.0f - 0.5f;
    tgl_status st = tgl_alloc(b, n * sizeof *h, out);
    if (!st)
        st = tgl_copy_htod(b, *out, h, n * sizeof *h);
    free(h);
    return st;
}

/* ---- attention ---- */

typedef struct attn {
    size_t batch, heads, seq_q, seq_kv, d;
    int causal;
    size_t window; /* with softcap: tgl_attention_t's sliding window and soft-capping (0: off) */
    float softcap;
    tgl_ptr q, k, v, o, scores; /* scores: the unfused chain's [b*h, seq_q, seq_kv] */
} attn;

static tgl_status fused(tgl_backend *b, const void *ctx)
{
    const attn *a = ctx;
    if (!a->window && a->softcap == 0.0f)
        return tgl_attention(b, a->q, a->k, a->v, a->o, a->batch, a->heads, a->seq_q, a->seq_kv, a->d,
                             1.0f / sqrtf((float)a->d), a->causal);
    size_t qs[4] = {a->batch, a->heads, a->seq_q, a->d}, ks[4] = {a->batch, a->heads, a->seq_kv, a->d};
    tgl_tensor q = tgl_tensor_contiguous(a->q, TGL_DTYPE_F32, 4, qs), o = tgl_tensor_contiguous(a->o, TGL_DTYPE_F32, 4, qs);
    tgl_tensor k = tgl_tensor_contiguous(a->k, TGL_DTYPE_F32, 4, ks), v = tgl_tensor_contiguous(a->v, TGL_DTYPE_F32, 4, ks);
    tgl_attention_desc desc = {.causal = a->causal, .window = a->window, .softcap = a->softcap};
    return tgl_attention_t(b, &q, &k, &v, NULL, &o, &desc);
}

static tgl_status unfused(tgl_backend *b, const void *ctx)
{
    const attn *a = ctx;
    size_t bh = a->batch * a->heads, sq = a->seq_q, skv = a->seq_kv, d = a->d;
    tgl_status st = tgl_gemm_batched(b, TGL_NO_TRANS, TGL_TRANS, sq, skv, d, 1.0f / sqrtf((float)d), a->q, d, sq * d,
                                     a->k, d, skv * d, 0.0f, a->scores, skv, sq * skv, bh);
    if (!st)
        st = tgl_softmax(b, a->scores, a->scores, bh * sq, skv);
    if (!st)
        st = tgl_gemm_batched(b, TGL_NO_TRANS, TGL_NO_TRANS, sq, d, skv, 1.0f, a->scores, skv, sq * skv, a->v, d,
                              skv * d, 0.0f, a->o, d, sq * d, bh);
    return st;
}

static tgl_status attn_alloc(tgl_backend *b, attn *a, int with_scores)
{
    size_t nq = a->batch * a->heads * a->seq_q * a->d, nkv = a->batch * a->heads * a->seq_kv * a->d;
    tgl_status st;
    if ((st = alloc_pattern(b, nq, 1, &a->q)) || (st = alloc_pattern(b, nkv, 2, &a->k)) ||
        (st = alloc_pattern(b, nkv, 3, &a->v)) || (st = tgl_alloc(b, nq * sizeof(float), &a->o)))
        return st;
    if (with_scores)
        st = tgl_alloc(b, a->batch * a->heads * a->seq_q * a->seq_kv * sizeof(float), &a->scores);
    return st;
}

static void attn_free(tgl_backend *b, attn *a)
{
    tgl_free(b, a->q);
    tgl_free(b, a->k);
    tgl_free(b, a->v);
    tgl_free(b, a->o);
    tgl_free(b, a->scores);
}

/* Multiply-adds of QK^T and PV counted as 2 flops each, over the keys each query sees. */
static double attn_flops(const attn *a)
{
    double pairs = 0;
    for (size_t i = 0; i < a->seq_q; i++) {
        size_t p = i + a->seq_kv - a->seq_q, end = a->causal ? p + 1 : a->seq_kv;
        size_t first = a->window && p + 1 > a->window ? p + 1 - a->window : 0;
        pairs += (double)(end - (first < end ? first : end));
    }
    return 4.0 * a->batch * a->heads * pairs * a->d;
}

static int parse4(const char *s, size_t v[4])
{
    return sscanf(s, "%zu,%zu,%zu,%zu", &v[0], &v[1], &v[2], &v[3]) == 4 && v[0] && v[1] && v[2] && v[3];
}

static int bench_attention(tgl_backend *dev, int argc, char **argv)
{
    size_t s[4] = {1, 8, 512, 64}, c[4] = {1, 8, 512, 64}, dec[4] = {1, 32, 4096, 128}, window = 0;
    float softcap = 0.0f;
    char *end;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--shape") && i + 1 < argc && parse4(argv[i + 1], s))
            i++;
        else if (!strcmp(argv[i], "--causal") && i + 1 < argc && parse4(argv[i + 1], c))
            i++;
        else if (!strcmp(argv[i], "--decode") && i + 1 < argc && parse4(argv[i + 1], dec))
            i++;
        else if (!strcmp(argv[i], "--window") && i + 1 < argc && argv[i + 1][0] >= '1' && argv[i + 1][0] <= '9' &&
                 (window = strtoul(argv[i + 1], &end, 10)) > 0 && !*end)
            i++;
        else if (!strcmp(argv[i], "--softcap") && i + 1 < argc && (softcap = strtof(argv[i + 1], &end)) > 0.0f &&
                 !*end && isfinite(softcap))
            i++;
        else {
            fprintf(stderr, "usage: tensorgl bench attention [--shape B,H,S,D] [--causal B,H,S,D] [--decode "
                            "B,H,KV,D] [--window N] [--softcap X]\n");
            return 2;
        }
    }
    printf("%-34s %12s %12s %12s\n", "attention (f32)", "ms", "GFLOP/s", "vs unfused");
    attn a = {.batch = s[0], .heads = s[1], .seq_q = s[2], .seq_kv = s[2], .d = s[3]};
    attn ac = {.batch = c[0], .heads = c[1], .seq_q = c[2], .seq_kv = c[2], .d = c[3], .causal = 1, .window = window,
               .softcap = softcap};
    attn ad = {.batch = dec[0], .heads = dec[1], .seq_q = 1, .seq_kv = dec[2], .d = dec[3], .causal = 1};
    double t_f = 0, t_u = 0, t_c = 0, t_d = 0;
    tgl_status st;
    if ((st = attn_alloc(dev, &a, 1)) || (st = time_pair(dev, fused, unfused, &a, &t_f, &t_u)))
        goto fail;
    char what[64];
    snprintf(what, sizeof what, "fused %zux%zu seq %zu d %zu", a.batch, a.heads, a.seq_q, a.d);
    printf("%-34s %12.3f %12.1f %11.2fx\n", what, t_f * 1e3, attn_flops(&a) / t_f / 1e9, t_u / t_f);
    snprintf(what, sizeof what, "unfused (gemm+softmax+gemm)");
    printf("%-34s %12.3f %12.1f %11.2fx\n", what, t_u * 1e3, attn_flops(&a) / t_u / 1e9, 1.0);
    attn_free(dev, &a);
    if ((st = attn_alloc(dev, &ac, 0)) || (st = time_calls(dev, fused, &ac, &t_c)))
        goto fail;
    int n = snprintf(what, sizeof what, "causal %zux%zu seq %zu d %zu", ac.batch, ac.heads, ac.seq_q, ac.d);
    if (ac.window && n > 0 && (size_t)n < sizeof what)
        n += snprintf(what + n, sizeof what - (size_t)n, " win %zu", ac.window);
    if (ac.softcap != 0.0f && n > 0 && (size_t)n < sizeof what)
        snprintf(what + n, sizeof what - (size_t)n, " cap %g", (double)ac.softcap);
    printf("%-34s %12.3f %12.1f %12s\n", what, t_c * 1e3, attn_flops(&ac) / t_c / 1e9, "");
    attn_free(dev, &ac);
    if ((st = attn_alloc(dev, &ad, 0)) || (st = time_calls(dev, fused, &ad, &t_d)))
        goto fail;
    snprintf(what, sizeof what, "decode %zux%zu cache %zu d %zu", ad.batch, ad.heads, ad.seq_kv, ad.d);
    printf("%-34s %12.3f %12.1f %12s   (%.1f GB/s of K and V)\n", what, t_d * 1e3, attn_flops(&ad) / t_d / 1e9, "",
           2.0 * ad.batch * ad.heads * ad.seq_kv * ad.d * 4 / t_d / 1e9);
    attn_free(dev, &ad);
    return 0;
fail:
    fprintf(stderr, "tensorgl bench attention: %s: %s\n", tgl_status_string(st), tgl_last_error(dev));
    return 1;
}

/* ---- conv2d ---- */

typedef struct conv {
    tgl_conv2d_desc d;
    tgl_ptr in, f, bias, out;
} conv;

static tgl_status conv_issue(tgl_backend *b, const void *ctx)
{
    const conv *c = ctx;
    return tgl_conv2d(b, &c->d, c->in, c->f, c->bias, c->out);
}

/* The same convolution through OpenBLAS: host im2col per image, then one sgemm (groups == 1). */
static double conv_blas(const tgl_blas *o, const tgl_conv2d_desc *d, size_t oh, size_t ow)
{
    if (!o->sgemm || d->groups > 1)
        return 0;
    size_t k = d->in_channels * d->kernel_h * d->kernel_w, cols = oh * ow;
    float *in = malloc(d->in_channels * d->in_h * d->in_w * sizeof(float)), *col = malloc(k * cols * sizeof(float));
    float *f = malloc(d->out_channels * k * sizeof(float)), *out = malloc(d->out_channels * cols * sizeof(float));
    double best = 0;
    for (size_t i = 0; in && i < d->in_channels * d->in_h * d->in_w; i++)
        in[i] = (float)(i % 97) / 97.0f;
    for (size_t i = 0; f && i < d->out_channels * k; i++)
        f[i] = (float)(i % 89) / 89.0f;
    for (int r = 0; in && col && f && out && r < 3; r++) {
        double t0 = tgl_bench_now();
        for (size_t n = 0; n < d->batch; n++) { /* every image: the same input, the same work */
            for (size_t row = 0; row < k; row++) {
                size_t ic = row / (d->kernel_h * d->kernel_w), ky = row / d->kernel_w % d->kernel_h,
                       kx = row % d->kernel_w;
                for (size_t y = 0; y < oh; y++)
                    for (size_t x = 0; x < ow; x++) {
                        long iy = (long)(y * d->stride_h + ky * d->dilation_h) - (long)d->pad_h;
                        long ix = (long)(x * d->stride_w + kx * d->dilation_w) - (long)d->pad_w;
                        col[row * cols + y * ow + x] = iy < 0 || ix < 0 || iy >= (long)d->in_h || ix >= (long)d->in_w
                                                           ? 0.0f
                                                           : in[(ic * d->in_h + (size_t)iy) * d->in_w + (size_t)ix];
                    }
            }
            o->sgemm(TGL_CBLAS_ROW_MAJOR, TGL_CBLAS_NO_TRANS, TGL_CBLAS_NO_TRANS, (int)d->out_channels, (int)cols,
                     (int)k, 1, f, (int)k, col, (int)cols, 0, out, (int)cols);
        }
        double t = tgl_bench_now() - t0;
        if (r > 0) /* run 0 warms the thread pool */
            best = best == 0 || t < best ? t : best;
    }
    free(in);
    free(col);
    free(f);
    free(out);
    return best;
}

static int bench_conv2d(tgl_backend *dev, int argc, char **argv)
{
    size_t v[7] = {4, 64, 56, 56, 64, 3, 1}; /* N, C, H, W, O, K, pad */
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--shape") && i + 1 < argc &&
            sscanf(argv[i + 1], "%zu,%zu,%zu,%zu,%zu,%zu,%zu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6]) == 7)
            i++;
        else {
            fprintf(stderr, "usage: tensorgl bench conv2d [--shape N,C,H,W,O,K,PAD]\n");
            return 2;
        }
    }
    conv c = {{v[0], v[1], v[2], v[3], v[4], v[5], v[5], 1, 1, v[6], v[6], 1, 1, 1}, 0, 0, 0, 0};
    conv dw = c; /* its depthwise counterpart (as in MobileNets) */
    dw.d.out_channels = dw.d.groups = c.d.in_channels;
    tgl_blas o = tgl_blas_load();
    printf("%-34s %12s %12s %12s %10s\n", "conv2d (f32)", "ms", "GFLOP/s", "OpenBLAS", "vs BLAS");
    int rc = 0;
    for (int which = 0; which < 2 && !rc; which++) {
        conv *x = which ? &dw : &c;
        size_t oh, ow;
        tgl_status st = tgl_conv2d_output_size(&x->d, &oh, &ow);
        size_t n_in = x->d.batch * x->d.in_channels * x->d.in_h * x->d.in_w;
        size_t n_f = x->d.out_channels * (x->d.in_channels / x->d.groups) * x->d.kernel_h * x->d.kernel_w;
        double t = 0, flops = 2.0 * x->d.batch * x->d.out_channels * oh * ow * n_f / x->d.out_channels;
        if (st || (st = alloc_pattern(dev, n_in, 1, &x->in)) || (st = alloc_pattern(dev, n_f, 2, &x->f)) ||
            (st = alloc_pattern(dev, x->d.out_channels, 3, &x->bias)) ||
            (st = tgl_alloc(dev, x->d.batch * x->d.out_channels * oh * ow * sizeof(float), &x->out)) ||
            (st = time_calls(dev, conv_issue, x, &t))) {
            fprintf(stderr, "tensorgl bench conv2d: %s: %s\n", tgl_status_string(st), tgl_last_error(dev));
            rc = 1;
        } else {
            double tb = conv_blas(&o, &x->d, oh, ow);
            char what[64];
            snprintf(what, sizeof what, "%s %zux%zux%zux%zu->%zu k%zu", which ? "depthwise" : "dense", x->d.batch,
                     x->d.in_channels, x->d.in_h, x->d.in_w, x->d.out_channels, x->d.kernel_h);
            printf("%-34s %12.3f %12.1f", what, t * 1e3, flops / t / 1e9);
            if (tb > 0)
                printf(" %12.1f %9.2fx\n", flops / tb / 1e9, tb / t);
            else
                printf(" %12s %10s\n", "-", "-");
        }
        tgl_free(dev, x->in);
        tgl_free(dev, x->f);
        tgl_free(dev, x->bias);
        tgl_free(dev, x->out);
    }
    tgl_blas_unload(&o);
    return rc;
}

int tgl_cmd_bench_model(int argc, char **argv)
{
    tgl_backend *dev = NULL;
    if (tgl_open(NULL, &dev)) {
        fprintf(stderr, "tensorgl bench: cannot open a backend: %s\n", tgl_last_error(NULL));
        return 1;
    }
    struct tgl_device_info info;
    tgl_device_info(dev, &info);
    printf("tensorgl bench %s: %s (%s, %s)\n", argv[1], info.backend, info.renderer, info.version);
    int rc = !strcmp(argv[1], "attention") ? bench_attention(dev, argc, argv) : bench_conv2d(dev, argc, argv);
    tgl_close(dev);
    return rc;
}
