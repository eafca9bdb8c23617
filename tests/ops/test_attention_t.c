/* tgl_attention_t: the CPU backend against a reference written out here (double, BLOOM's ALiBi
 * slopes computed as BLOOM's code does, f16 caches through their rounded values); GL against
 * the CPU on every kernel path (flash_reg, flash, decode, flash without shuffles) for random
 * calls mixing grouped heads, f16 and f32 caches with spare capacity, causal masks, sliding
 * windows, soft-capping, ALiBi and per-item key lengths, and under a small SSBO limit (slabs
 * whose first block is not head 0), caches that do not start their buffers; the zero
 * descriptor against tgl_attention_gqa; rows that see no key; refusals, which leave the output
 * untouched. */
#include "testing.h"
#include "cpu/cpu_half.h"
#include "gl/gl_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef tgt_pair pair;

static int setup(void **state)
{
    return tgt_pair_setup(state, 0xA77F);
}

static int teardown(void **state)
{
    return tgt_pair_teardown(state);
}

typedef struct tcase {
    size_t batch, heads, heads_kv, seq_q, cap, d;
    int f16;
    tgl_attention_desc desc;
    size_t lens[4]; /* with use_lens: the first batch entries */
    int use_lens;
    int mask_b, mask_h; /* a mask over batch items, heads (0: that dim is 1, broadcast); */
    int masked;         /* no mask without this */
    size_t mask_pad;    /* floats past each mask row (its row stride is seq_kv + mask_pad) */
    size_t chunk_keys;  /* GL: keys per chunk forced on the prefill kernels (0: by device and shape) */
    size_t kv_skip[2];  /* elements of k's and v's buffers before their first element */
} tcase;

/* The keys a call uses (its mask's last dim). */
static size_t keys_used(const tcase *c)
{
    return c->desc.seq_kv ? c->desc.seq_kv : c->cap;
}

/* The mask's shape and strides (row-major over [mb, mh, seq_q, seq_kv + pad]). */
static void mask_layout(const tcase *c, size_t shape[4], int64_t strides[4])
{
    shape[0] = c->mask_b ? c->batch : 1;
    shape[1] = c->mask_h ? c->heads : 1;
    shape[2] = c->seq_q;
    shape[3] = keys_used(c);
    strides[3] = 1;
    strides[2] = (int64_t)(shape[3] + c->mask_pad);
    strides[1] = strides[2] * (int64_t)shape[2];
    strides[0] = strides[1] * (int64_t)shape[1];
}

/* Host data of a case: q, k, v (k and v as f32 values, already rounded to f16 where f16), and
 * the mask's elements (nm of them, laid out as mask_layout says). */
typedef struct data {
    float *q, *k, *v, *mask;
    size_t nq, nkv, nm;
} data;

static float round_half(float x)
{
    uint32_t bits;
    memcpy(&bits, &x, sizeof bits);
    bits = tgl_f16_to_f32_bits(tgl_f32_to_f16_bits(bits));
    memcpy(&x, &bits, sizeof x);
    return x;
}

static data make_data(tgt_rng *r, const tcase *c)
{
    data x;
    x.nq = c->batch * c->heads * c->seq_q * c->d;
    x.nkv = c->batch * c->heads_kv * c->cap * c->d;
    x.q = malloc(x.nq * sizeof(float));
    x.k = malloc(x.nkv * sizeof(float));
    x.v = malloc(x.nkv * sizeof(float));
    for (size_t i = 0; i < x.nq; i++)
        x.q[i] = tgt_uniform(r, -1.5f, 1.5f);
    for (size_t i = 0; i < x.nkv; i++) {
        x.k[i] = tgt_uniform(r, -1.5f, 1.5f);
        x.v[i] = tgt_uniform(r, -1, 1);
        if (c->f16) {
            x.k[i] = round_half(x.k[i]);
            x.v[i] = round_half(x.v[i]);
        }
    }
    size_t shape[4];
    int64_t strides[4];
    mask_layout(c, shape, strides);
    x.nm = c->masked ? shape[0] * (size_t)strides[0] : 0;
    x.mask = malloc((x.nm + 1) * sizeof(float));
    for (size_t i = 0; i < x.nm; i++) /* biases of a few units, a key hidden now and then (-inf) */
        x.mask[i] = tgt_below(r, 6) == 0 ? -INFINITY : tgt_uniform(r, -3, 2);
    return x;
}

static void free_data(data *x)
{
    free(x->q);
    free(x->k);
    free(x->v);
    free(x->mask);
}

/* BLOOM's get_slopes (modeling_bloom.build_alibi_tensor) as written there, scaled to max_bias
 * (8 in BLOOM: its base 2^(-2^-(log2(n) - 3)) is 2^(-8 / n)). */
static double bloom_slope(size_t heads, double max_bias, size_t h)
{
    size_t n = 1;
    while (n * 2 <= heads)
        n *= 2;
    if (h < n)
        return pow(pow(2.0, -max_bias / (double)n), (double)(h + 1));
    double extra_base = pow(2.0, -max_bias / (double)(2 * n));
    return pow(extra_base, (double)(1 + 2 * (h - n)));
}

/* The reference: per row, every key it may see by the descriptor's rules, in double. */
static float *reference(const tcase *c, const data *x)
{
    float *o = malloc(x->nq ? x->nq * sizeof(float) : sizeof(float));
    const tgl_attention_desc *d = &c->desc;
    double scale = d->scale != 0.0f ? d->scale : 1.0 / sqrt((double)c->d);
    size_t seq_kv_all = d->seq_kv ? d->seq_kv : c->cap;
    double *s = malloc((seq_kv_all + 1) * sizeof(double));
    for (size_t bi = 0; bi < c->batch; bi++) {
        size_t seq_kv = c->use_lens ? c->lens[bi] : seq_kv_all;
        for (size_t h = 0; h < c->heads; h++) {
            size_t kvh = h / (c->heads / c->heads_kv);
            const float *k = x->k + (bi * c->heads_kv + kvh) * c->cap * c->d;
            const float *v = x->v + (bi * c->heads_kv + kvh) * c->cap * c->d;
            double slope = d->alibi_max_bias > 0 ? bloom_slope(c->heads, d->alibi_max_bias, h) : 0.0;
            for (size_t i = 0; i < c->seq_q; i++) {
                size_t ms[4];
                int64_t mt[4];
                mask_layout(c, ms, mt);
                const float *mrow = c->masked ? x->mask + (c->mask_b ? bi : 0) * (size_t)mt[0] +
                                                    (c->mask_h ? h : 0) * (size_t)mt[1] + i * (size_t)mt[2]
                                              : NULL;
                const float *q = x->q + ((bi * c->heads + h) * c->seq_q + i) * c->d;
                float *out = o + ((bi * c->heads + h) * c->seq_q + i) * c->d;
                double p = (double)i + (double)seq_kv - (double)c->seq_q, mx = -INFINITY, sum = 0;
                int seen = 0;
                for (size_t j = 0; j < seq_kv; j++) {
                    int sees = (!d->causal || (double)j <= p) && (!d->window || (double)j > p - (double)d->window);
                    s[j] = NAN;
                    if (!sees)
                        continue;
                    double dot = 0;
                    for (size_t e = 0; e < c->d; e++)
                        dot += (double)q[e] * k[j * c->d + e];
                    double sc = dot * scale;
                    if (d->softcap > 0)
                        sc = d->softcap * tanh(sc / d->softcap);
                    s[j] = sc - slope * fabs(p - (double)j) + (mrow ? mrow[j] : 0.0);
                    if (s[j] == -INFINITY) /* masked out */
                        continue;
                    mx = fmax(mx, s[j]);
                    seen = 1;
                }
                for (size_t e = 0; e < c->d; e++)
                    out[e] = 0.0f;
                if (!seen)
                    continue;
                double *acc = calloc(c->d, sizeof(double));
                for (size_t j = 0; j < seq_kv; j++) {
                    if (isnan(s[j]) || s[j] == -INFINITY)
                        continue;
                    double w = exp(s[j] - mx);
                    sum += w;
                    for (size_t e = 0; e < c->d; e++)
                        acc[e] += w * v[j * c->d + e];
                }
                for (size_t e = 0; e < c->d; e++)
                    out[e] = (float)(acc[e] / sum);
                free(acc);
            }
        }
    }
    free(s);
    return o;
}

/* Whether b runs masks: the CPU backend does, GL where it has buffer textures. */
static int runs_masks(tgl_backend *b)
{
    return strcmp(tgl_backend_name(b), "gl") != 0 || tgl_gl_of(b)->limits.texture_buffer_texels > 0;
}

/* Runs c on b (k and v uploaded as f16 where c->f16); the output, poisoned beforehand (NULL
 * where b refuses the mask, as a device without buffer textures must). */
static float *run_on(tgl_backend *b, const tcase *c, const data *x)
{
    tgl_dtype kt = c->f16 ? TGL_DTYPE_F16 : TGL_DTYPE_F32;
    size_t es = c->f16 ? 2 : 4;
    tgl_ptr q = tgt_upload(b, x->q, x->nq, 0), o, k, v;
    float *host = malloc(x->nq * sizeof(float));
    tgt_poison(host, x->nq);
    TGT_OK(b, tgl_alloc(b, x->nq * sizeof(float), &o));
    TGT_OK(b, tgl_copy_htod(b, o, host, x->nq * sizeof(float)));
    TGT_OK(b, tgl_alloc(b, (c->kv_skip[0] + x->nkv) * es, &k));
    TGT_OK(b, tgl_alloc(b, (c->kv_skip[1] + x->nkv) * es, &v));
    tgl_ptr k_at = k + c->kv_skip[0] * es, v_at = v + c->kv_skip[1] * es;
    if (c->f16) {
        uint16_t *h = malloc(x->nkv * 2);
        for (int which = 0; which < 2; which++) {
            const float *src = which ? x->v : x->k;
            for (size_t i = 0; i < x->nkv; i++) {
                uint32_t bits;
                memcpy(&bits, &src[i], sizeof bits);
                h[i] = tgl_f32_to_f16_bits(bits);
            }
            TGT_OK(b, tgl_copy_htod(b, which ? v_at : k_at, h, x->nkv * 2));
        }
        free(h);
    } else {
        TGT_OK(b, tgl_copy_htod(b, k_at, x->k, x->nkv * 4));
        TGT_OK(b, tgl_copy_htod(b, v_at, x->v, x->nkv * 4));
    }
    tgl_tensor tq = tgl_tensor_contiguous(q, TGL_DTYPE_F32, 4, (size_t[]){c->batch, c->heads, c->seq_q, c->d});
    tgl_tensor to = tq;
    to.data = o;
    tgl_tensor tk = tgl_tensor_contiguous(k_at, kt, 4, (size_t[]){c->batch, c->heads_kv, c->cap, c->d}), tv = tk;
    tv.data = v_at;
    tgl_attention_desc d = c->desc;
    if (c->use_lens)
        d.seq_lens = c->lens;
    tgl_tensor tm = {0};
    tgl_ptr m = 0;
    if (c->masked) {
        m = tgt_upload(b, x->mask, x->nm, 0);
        tm.data = m;
        tm.dtype = TGL_DTYPE_F32;
        tm.ndim = 4;
        mask_layout(c, tm.shape, tm.strides);
    }
    int refused = c->masked && !runs_masks(b);
    TGT_EXPECT(b, tgl_attention_t(b, &tq, &tk, &tv, c->masked ? &tm : NULL, &to, &d),
               refused ? TGL_ERR_UNSUPPORTED : TGL_OK);
    if (m)
        TGT_OK(b, tgl_free(b, m));
    TGT_OK(b, tgl_copy_dtoh(b, host, o, x->nq * sizeof(float)));
    TGT_OK(b, tgl_free(b, q));
    TGT_OK(b, tgl_free(b, k));
    TGT_OK(b, tgl_free(b, v));
    TGT_OK(b, tgl_free(b, o));
    if (refused) {
        free(host);
        return NULL;
    }
    return host;
}

static void describe(const tcase *c, char *buf, size_t size)
{
    const tgl_attention_desc *d = &c->desc;
    snprintf(buf, size,
             "b=%zu h=%zu h_kv=%zu seq_q=%zu cap=%zu d=%zu %s scale=%g causal=%d seq_kv=%zu window=%zu softcap=%g "
             "alibi=%g lens=%s mask=%s%s%s pad %zu chunk_keys=%zu",
             c->batch, c->heads, c->heads_kv, c->seq_q, c->cap, c->d, c->f16 ? "f16" : "f32", (double)d->scale,
             d->causal, d->seq_kv, d->window, (double)d->softcap, (double)d->alibi_max_bias, c->use_lens ? "yes" : "no",
             c->masked ? "[" : "none", c->masked ? (c->mask_b ? "b," : "1,") : "", c->masked ? (c->mask_h ? "h,q,k]" : "1,q,k]") : "",
             c->mask_pad, c->chunk_keys);
}

static void expect_close(const tcase *c, const float *got, const float *want, size_t n, double tol, const char *who)
{
    char what[300];
    describe(c, what, sizeof what);
    double nmse = tgt_nmse_floor(got, want, n, 0.25);
    if (!(nmse <= tol))
        fail_msg("%s: %s: NMSE %.3g > %.3g", who, what, nmse, tol);
}

/* A random case; d up to 72 (flash_reg's unrolled variants past 64 compile slowly on llvmpipe). */
static tcase random_case(tgt_rng *r)
{
    static const size_t dims[] = {1, 4, 16, 33, 64, 72};
    tcase c = {0};
    c.batch = 1 + tgt_below(r, 3);
    c.heads_kv = 1 + tgt_below(r, 3);
    c.heads = c.heads_kv * (1 + tgt_below(r, 4)); /* groups of 4 and 2 share decode workgroups */
    c.seq_q = tgt_below(r, 3) == 0 ? 1 + tgt_below(r, 4) : 1 + tgt_below(r, 70);
    c.cap = 1 + tgt_below(r, 300);
    c.d = dims[tgt_below(r, 6)];
    c.f16 = (int)tgt_below(r, 2);
    c.desc.scale = tgt_below(r, 2) ? 0.0f : tgt_uniform(r, 0.05f, 1.0f);
    c.desc.causal = (int)tgt_below(r, 2);
    c.desc.seq_kv = tgt_below(r, 2) ? 0 : 1 + tgt_below(r, c.cap);
    c.desc.window = tgt_below(r, 2) ? 0 : 1 + tgt_below(r, 80);
    c.desc.softcap = tgt_below(r, 2) ? 0.0f : tgt_uniform(r, 0.5f, 30.0f);
    c.desc.alibi_max_bias = tgt_below(r, 2) ? 0.0f : tgt_uniform(r, 0.5f, 8.0f);
    c.use_lens = tgt_below(r, 3) == 0;
    c.masked = tgt_below(r, 2) == 0;
    c.mask_b = (int)tgt_below(r, 2);
    c.mask_h = (int)tgt_below(r, 2);
    c.mask_pad = tgt_below(r, 2) ? 0 : tgt_below(r, 9);
    size_t seq_kv = c.desc.seq_kv ? c.desc.seq_kv : c.cap;
    for (size_t i = 0; i < c.batch; i++)
        c.lens[i] = tgt_below(r, 4) == 0 ? 0 : tgt_below(r, seq_kv + 1);
    return c;
}

/* The CPU backend against the reference above, random cases and BLOOM's head counts. */
static void test_cpu_matches_reference(void **state)
{
    pair *p = *state;
    for (int i = 0; i < 120; i++) {
        tcase c = random_case(&p->rng);
        if (i < 6) { /* ALiBi at head counts of real models, powers of 2 and not */
            static const size_t heads[] = {8, 12, 16, 32, 40, 71};
            c.heads = heads[i];
            c.heads_kv = 1;
            c.batch = 1;
            c.desc.alibi_max_bias = 8.0f;
            c.use_lens = 0;
        }
        data x = make_data(&p->rng, &c);
        float *want = reference(&c, &x), *got = run_on(p->cpu, &c, &x);
        expect_close(&c, got, want, x.nq, 1e-12, "cpu");
        free(want);
        free(got);
        free_data(&x);
    }
}

/* The kernel paths tgl_gl_test_force_attention takes (TGL_GL_ATTENTION_*), by name. */
static const char *const paths[] = {"flash_reg", "flash", "decode", "flash without subgroup shuffles",
                                    "decode merging its own chunks", "decode and the combine pass"};
#define PATHS 6

/* c on gl against the CPU backend, fresh random data: written whole and close at 1e-8 (gl may
 * refuse a mask it has no buffer textures for: run_on says so). */
static void gl_against_cpu(pair *p, tgl_backend *gl, const tcase *c, const char *who)
{
    data x = make_data(&p->rng, c);
    float *want = run_on(p->cpu, c, &x), *got = run_on(gl, c, &x);
    if (got && tgt_first_unpoisoned(got, x.nq) != 0 && x.nq)
        fail_msg("%s: output left unwritten", who);
    if (got)
        expect_close(c, got, want, x.nq, 1e-8, who);
    free(want);
    free(got);
    free_data(&x);
}

/* GL on each kernel path against the CPU, random cases. */
static void gl_random(pair *p, tgl_backend *gl, int calls, const char *what)
{
    for (int path = -1; path < PATHS; path++) {
        tgl_gl_test_force_attention(gl, path);
        for (int i = 0; i < calls; i++) {
            tcase c = random_case(&p->rng);
            /* Keys cut into 2 to 4 chunks merged by a second pass, as GPUs cut long or few-row
             * calls: lengths off the kernels' key steps, windows that start between steps. (The
             * chunks' partial results, past the small SSBO limit of test_gl_slabs, make the
             * backend take fewer, longer chunks.) */
            if (tgt_below(&p->rng, 3) == 0) {
                size_t keys = keys_used(&c), parts = 2 + tgt_below(&p->rng, 3);
                c.chunk_keys = (keys + parts - 1) / parts + tgt_below(&p->rng, 4);
            }
            tgl_gl_test_attention_chunk_keys(gl, c.chunk_keys);
            char who[120];
            snprintf(who, sizeof who, "%s, %s", what, path < 0 ? "the device's choice" : paths[path]);
            gl_against_cpu(p, gl, &c, who);
        }
    }
    tgl_gl_test_force_attention(gl, -1);
    tgl_gl_test_attention_chunk_keys(gl, 0);
}

static void test_gl_matches_cpu(void **state)
{
    pair *p = *state;
    if (!p->gl)
        skip();
    tgl_backend *gl = tgt_open(TGL_BACKEND_GL);
    gl_random(p, gl, tgt_count(24), "random calls");
    tgl_close(gl);
}

/* Caches that do not start their buffers: k and v each 0, 1, 4 or 8 elements in (an f16 cache's
 * rows then on 16 bytes, on 8 only, or off vec4s: the decode kernels' K8 and V8 loads, their
 * vec4 loads and their scalar ones), decode rows over grouped heads, on the device's path and
 * the decode kernels (merging their chunks themselves, and through the combine pass). */
static void test_cache_offsets(void **state)
{
    pair *p = *state;
    if (!p->gl)
        skip();
    tgl_backend *gl = tgt_open(TGL_BACKEND_GL);
    static const size_t skips[4] = {0, 1, 4, 8};
    static const int cache_paths[3] = {-1, TGL_GL_ATTENTION_DECODE_MERGE, TGL_GL_ATTENTION_DECODE_COMBINE};
    for (int pi = 0; pi < 3; pi++) {
        int path = cache_paths[pi];
        tgl_gl_test_force_attention(gl, path);
        for (size_t i = 0; i < 32; i++) {
            if (!tgt_pick(i))
                continue;
            tcase c = {.batch = 2, .heads = 8, .heads_kv = 2, .seq_q = 1 + i % 3, .cap = 300 + 37 * ((i / 8) % 2),
                       .d = i < 16 ? 64 : 128, .f16 = i % 8 != 7, .kv_skip = {skips[i % 4], skips[(i / 4) % 4]}};
            c.desc.causal = i % 5 == 0;
            char who[120];
            snprintf(who, sizeof who, "k %zu and v %zu elements in, %s, %s", c.kv_skip[0], c.kv_skip[1],
                     c.f16 ? "f16" : "f32", path < 0 ? "the device's choice" : paths[path]);
            gl_against_cpu(p, gl, &c, who);
        }
    }
    tgl_gl_test_force_attention(gl, -1);
    tgl_close(gl);
}

/* A small SSBO limit: (batch, head) blocks in slabs of one or a few, so a dispatch's first
 * block is rarely head 0 (ALiBi's slope per head must follow), and long caches walked a window
 * of keys at a time. */
static void test_gl_slabs(void **state)
{
    pair *p = *state;
    if (!p->gl)
        skip();
    tgl_backend *gl = tgt_open(TGL_BACKEND_GL);
    tgl_gl_test_set_limits(gl, 128 * 1024, NULL); /* 256 keys of 72 dims (the decode kernels' chunk) and a bit */
    gl_random(p, gl, tgt_count(8), "small SSBO limit");
    /* Chunks whose partial results do not fit one window (63 rows x 4 chunks x (128 + 4) floats
     * > 32K): each prefill path takes longer chunks (or none) and runs. */
    static const size_t forced[3] = {56, 23, 1};
    for (int path = 0; path < 4; path++) {
        if (path == 2) /* the decode kernels take no forced chunks */
            continue;
        tgl_gl_test_force_attention(gl, path);
        for (int i = 0; i < 3; i++) {
            tcase c = {.batch = 1, .heads = 2, .heads_kv = 1, .seq_q = 63, .cap = 222, .d = 72, .chunk_keys = forced[i]};
            c.desc.causal = i == 1;
            tgl_gl_test_attention_chunk_keys(gl, c.chunk_keys);
            gl_against_cpu(p, gl, &c, paths[path]);
        }
    }
    tgl_gl_test_force_attention(gl, -1);
    tgl_gl_test_attention_chunk_keys(gl, 0);
    tgl_close(gl);
}

/* The head sizes of real models (128 and 256; the random calls stop at 72) over an f16 cache
 * with a mask and every other setting, on each path, GL against the CPU. */
static void test_large_heads(void **state)
{
    pair *p = *state;
    if (!p->gl)
        skip();
    tgl_backend *gl = tgt_open(TGL_BACKEND_GL);
    static const size_t dims[2] = {128, 256}, rows[2] = {1, 9};
    for (int path = 0; path < PATHS; path++) {
        tgl_gl_test_force_attention(gl, path);
        for (int i = 0; i < 4; i++) {
            if (!tgt_pick((size_t)path * 4 + (size_t)i)) /* each compiles its own kernels */
                continue;
            tcase c = {.batch = 2, .heads = 4, .heads_kv = 2, .seq_q = rows[i & 1], .cap = 300, .d = dims[i >> 1],
                       .f16 = 1, .masked = 1, .mask_b = 1, .use_lens = 1, .lens = {300, 41}};
            c.desc = (tgl_attention_desc){.causal = 1, .window = 100, .softcap = 20.0f, .alibi_max_bias = 8.0f};
            gl_against_cpu(p, gl, &c, paths[path]);
        }
    }
    tgl_close(gl);
}

/* A device whose buffer textures hold 3000 texels (ES 3.1 guarantees 65536): masks whose part of
 * a slab is larger go in smaller slabs (per item and head, per head over every item: slabs that
 * cross items), on each path; a block whose own part is larger is refused, o untouched. */
static void test_mask_texture_limit(void **state)
{
    pair *p = *state;
    if (!p->gl)
        skip();
    tgl_backend *gl = tgt_open(TGL_BACKEND_GL);
    if (!runs_masks(gl)) {
        tgl_close(gl);
        skip();
    }
    tgl_gl_of(gl)->limits.texture_buffer_texels = 3000;
    for (int path = -1; path < PATHS; path++) {
        tgl_gl_test_force_attention(gl, path);
        for (int per_item = 0; per_item < 2; per_item++) {
            /* rows of 40 keys 100 apart: a block's part 440 floats, an item's 2000 */
            tcase c = {.batch = 3, .heads = 5, .heads_kv = 1, .seq_q = 5, .cap = 40, .d = 8, .f16 = per_item,
                       .masked = 1, .mask_b = per_item, .mask_h = 1, .mask_pad = 60};
            c.desc.causal = 1;
            data x = make_data(&p->rng, &c);
            float *want = run_on(p->cpu, &c, &x), *got = run_on(gl, &c, &x);
            expect_close(&c, got, want, x.nq, 1e-8, "3000 texels");
            free(want);
            free(got);
            free_data(&x);
        }
    }
    tgl_gl_test_force_attention(gl, -1);
    tgl_ptr m;
    TGT_OK(gl, tgl_alloc(gl, (64 + 32 * 100) * sizeof(float), &m));
    tgl_tensor q = tgl_tensor_contiguous(m, TGL_DTYPE_F32, 4, (size_t[]){1, 1, 32, 1}), o = q, k = q, v = q;
    k.data = m + 32 * sizeof(float);
    k.shape[2] = 1;
    v = k;
    o.data = m + 64 * sizeof(float); /* o's 32 floats, then the mask */
    tgl_tensor mask = tgl_tensor_contiguous(m + 96 * sizeof(float), TGL_DTYPE_F32, 4, (size_t[]){1, 1, 32, 1});
    mask.strides[2] = 100; /* 31 * 100 + 1 floats of mask for one block: past 3000 */
    float before[32], after[32];
    TGT_OK(gl, tgl_copy_dtoh(gl, before, o.data, sizeof before));
    TGT_EXPECT(gl, tgl_attention_t(gl, &q, &k, &v, &mask, &o, &(tgl_attention_desc){0}), TGL_ERR_UNSUPPORTED);
    TGT_OK(gl, tgl_copy_dtoh(gl, after, o.data, sizeof after));
    assert_memory_equal(before, after, sizeof after);
    TGT_OK(gl, tgl_free(gl, m));
    tgl_close(gl);
}

/* The zero descriptor (but seq_kv) is tgl_attention_gqa: the same kernels, the same bits. */
static void test_zero_desc_is_gqa(void **state)
{
    pair *p = *state;
    tgl_backend *bs[2] = {p->cpu, p->gl};
    for (int j = 0; j < 2; j++) {
        tgl_backend *b = bs[j];
        if (!b)
            continue;
        tcase c = {.batch = 2, .heads = 6, .heads_kv = 2, .seq_q = 5, .cap = 40, .d = 32};
        c.desc.seq_kv = 37;
        c.desc.causal = 1;
        c.desc.scale = 0.2f;
        data x = make_data(&p->rng, &c);
        float *got = run_on(b, &c, &x);
        tgl_ptr q = tgt_upload(b, x.q, x.nq, 0), k = tgt_upload(b, x.k, x.nkv, 0), v = tgt_upload(b, x.v, x.nkv, 0), o;
        TGT_OK(b, tgl_alloc(b, x.nq * sizeof(float), &o));
        TGT_OK(b, tgl_attention_gqa(b, q, k, v, o, 2, 6, 2, 5, 37, 40, 32, 0.2f, 1));
        float *want = malloc(x.nq * sizeof(float));
        TGT_OK(b, tgl_copy_dtoh(b, want, o, x.nq * sizeof(float)));
        if (memcmp(got, want, x.nq * sizeof(float)) != 0)
            fail_msg("%s: tgl_attention_t with a zero descriptor differs from tgl_attention_gqa", tgl_backend_name(b));
        TGT_OK(b, tgl_free(b, q));
        TGT_OK(b, tgl_free(b, k));
        TGT_OK(b, tgl_free(b, v));
        TGT_OK(b, tgl_free(b, o));
        free(want);
        free(got);
        free_data(&x);
    }
}

/* Rows that see no key are zeros: an item whose key length is 0 (with bottom-right aligned
 * positions every row of an item with keys sees its last key, window or not); the other item's
 * rows see windows of 1 or 2 keys, non-causal. */
static void test_rows_without_keys(void **state)
{
    pair *p = *state;
    tgl_backend *bs[2] = {p->cpu, p->gl};
    for (int j = 0; j < 2; j++) {
        tgl_backend *b = bs[j];
        if (!b)
            continue;
        tcase c = {.batch = 2, .heads = 2, .heads_kv = 1, .seq_q = 3, .cap = 8, .d = 8, .f16 = j};
        c.desc.window = 1;
        c.desc.seq_kv = 8;
        c.use_lens = 1;
        c.lens[0] = 0; /* item 0: no keys at all */
        c.lens[1] = 2; /* item 1: rows at p = -1, 0, 1 see keys j > p - 1 of 0, 1: both, both, key 1 */
        data x = make_data(&p->rng, &c);
        float *got = run_on(b, &c, &x), *want = reference(&c, &x);
        for (size_t e = 0; e < 2 * 3 * 8; e++) /* item 0 */
            if (got[e] != 0.0f)
                fail_msg("%s: output %zu (a row without keys) is %g", tgl_backend_name(b), e, (double)got[e]);
        expect_close(&c, got, want, x.nq, 1e-8, tgl_backend_name(b));
        free(got);
        free(want);
        free_data(&x);
    }
}

/* A padding mask (-inf past each item's length; the other entries 0) gives what per-item key
 * lengths give, on both backends, and on GL through each path; rows whose every key is masked
 * are zeros. */
static void test_padding_mask_is_lengths(void **state)
{
    pair *p = *state;
    tgl_backend *gl = p->gl ? tgt_open(TGL_BACKEND_GL) : NULL;
    tgl_backend *bs[2] = {p->cpu, gl};
    for (int j = 0; j < 2; j++) {
        tgl_backend *b = bs[j];
        if (!b || !runs_masks(b))
            continue;
        for (int path = j ? -1 : 0; path < (j ? PATHS : 1); path++) {
            if (j)
                tgl_gl_test_force_attention(b, path);
            tcase lens = {.batch = 3, .heads = 4, .heads_kv = 2, .seq_q = 1 + (size_t)path % 3 * 5, .cap = 50, .d = 16,
                          .f16 = path & 1, .use_lens = 1, .lens = {50, 17, 0}};
            lens.desc.causal = 0;
            tcase masked = lens;
            masked.use_lens = 0;
            masked.masked = 1;
            masked.mask_b = 1;
            masked.mask_pad = 3;
            data x = make_data(&p->rng, &masked);
            size_t shape[4];
            int64_t strides[4];
            mask_layout(&masked, shape, strides);
            for (size_t bi = 0; bi < 3; bi++)
                for (size_t i = 0; i < masked.seq_q; i++)
                    for (size_t k = 0; k < 50; k++)
                        x.mask[bi * (size_t)strides[0] + i * (size_t)strides[2] + k] = k < lens.lens[bi] ? 0.0f : -INFINITY;
            float *want = run_on(b, &lens, &x), *got = run_on(b, &masked, &x);
            size_t item = lens.heads * lens.seq_q * lens.d;
            for (size_t e = 2 * item; e < 3 * item; e++) /* item 2: every key masked */
                if (got[e] != 0.0f)
                    fail_msg("%s path %d: output %zu of a row whose keys are all masked is %g", tgl_backend_name(b),
                             path, e, (double)got[e]);
            expect_close(&masked, got, want, x.nq, 1e-12, tgl_backend_name(b));
            free(want);
            free(got);
            free_data(&x);
        }
    }
    if (gl)
        tgl_close(gl);
}

static void test_mask_refusals(void **state)
{
    pair *p = *state;
    tgl_backend *bs[2] = {p->cpu, p->gl};
    for (int j = 0; j < 2; j++) {
        tgl_backend *b = bs[j];
        if (!b)
            continue;
        tgl_ptr m;
        float before[160], after[160]; /* bytes: q 0, k 128, v 256, o 384, mask 512 .. 576 */
        for (int i = 0; i < 160; i++)
            before[i] = (float)(i % 7);
        TGT_OK(b, tgl_alloc(b, sizeof before, &m));
        TGT_OK(b, tgl_copy_htod(b, m, before, sizeof before));
        const tgl_status A = TGL_ERR_INVALID_ARGUMENT;
        tgl_tensor q = tgl_tensor_contiguous(m, TGL_DTYPE_F32, 4, (size_t[]){2, 2, 2, 4});
        tgl_tensor k = tgl_tensor_contiguous(m + 128, TGL_DTYPE_F32, 4, (size_t[]){2, 1, 4, 4}), v = k;
        tgl_tensor o = q;
        v.data = m + 256;
        o.data = m + 384;
        tgl_tensor mask = tgl_tensor_contiguous(m + 512, TGL_DTYPE_F32, 4, (size_t[]){2, 1, 2, 4});
        tgl_attention_desc d = {.causal = 1};
        TGT_EXPECT(b, tgl_attention_t(b, &q, &k, &v, &mask, &o, &d), runs_masks(b) ? TGL_OK : TGL_ERR_UNSUPPORTED);
        TGT_OK(b, tgl_copy_htod(b, m, before, sizeof before));
        tgl_tensor t = mask;
        t.shape[0] = 3; /* neither 1 nor batch */
        TGT_EXPECT(b, tgl_attention_t(b, &q, &k, &v, &t, &o, &d), A);
        t = mask;
        t.shape[3] = 3; /* not seq_kv */
        TGT_EXPECT(b, tgl_attention_t(b, &q, &k, &v, &t, &o, &d), A);
        t = mask;
        t.ndim = 2;
        TGT_EXPECT(b, tgl_attention_t(b, &q, &k, &v, &t, &o, &d), A);
        t = mask;
        t.strides[3] = 2; /* keys not contiguous */
        TGT_EXPECT(b, tgl_attention_t(b, &q, &k, &v, &t, &o, &d), A);
        t = mask;
        t.strides[2] = -4;
        TGT_EXPECT(b, tgl_attention_t(b, &q, &k, &v, &t, &o, &d), A);
        t = mask;
        t.dtype = TGL_DTYPE_F16;
        TGT_EXPECT(b, tgl_attention_t(b, &q, &k, &v, &t, &o, &d), TGL_ERR_UNSUPPORTED);
        t = mask;
        t.data = o.data + 4 * sizeof(float); /* overlapping o */
        TGT_EXPECT(b, tgl_attention_t(b, &q, &k, &v, &t, &o, &d), A);
        t = mask;
        t.data = m + 600; /* past the allocation */
        TGT_EXPECT(b, tgl_attention_t(b, &q, &k, &v, &t, &o, &d), TGL_ERR_INVALID_POINTER);
        TGT_OK(b, tgl_copy_dtoh(b, after, m, sizeof after));
        assert_memory_equal(before, after, sizeof after);
        TGT_OK(b, tgl_free(b, m));
    }
}

static void test_refusals(void **state)
{
    pair *p = *state;
    tgl_backend *bs[2] = {p->cpu, p->gl};
    for (int j = 0; j < 2; j++) {
        tgl_backend *b = bs[j];
        if (!b)
            continue;
        tgl_ptr m;
        float before[256], after[256];
        for (int i = 0; i < 256; i++)
            before[i] = (float)i;
        TGT_OK(b, tgl_alloc(b, sizeof before, &m));
        TGT_OK(b, tgl_copy_htod(b, m, before, sizeof before));
        const tgl_status A = TGL_ERR_INVALID_ARGUMENT;
        tgl_tensor q = tgl_tensor_contiguous(m, TGL_DTYPE_F32, 4, (size_t[]){1, 2, 2, 4});
        tgl_tensor k = tgl_tensor_contiguous(m + 64, TGL_DTYPE_F32, 4, (size_t[]){1, 1, 4, 4}), v = k;
        tgl_tensor o = q;
        v.data = m + 128;
        o.data = m + 192;
        tgl_attention_desc d = {.causal = 1};
        TGT_OK(b, tgl_attention_t(b, &q, &k, &v, NULL, &o, &d));
        TGT_OK(b, tgl_copy_htod(b, m, before, sizeof before));
        TGT_EXPECT(b, tgl_attention_t(b, NULL, &k, &v, NULL, &o, &d), A);
        TGT_EXPECT(b, tgl_attention_t(b, &q, &k, &v, NULL, &o, NULL), A);
        tgl_tensor t = k;
        t.dtype = TGL_DTYPE_F16;
        TGT_EXPECT(b, tgl_attention_t(b, &q, &t, &v, NULL, &o, &d), A); /* k f16, v f32 */
        t = q;
        t.dtype = TGL_DTYPE_F16;
        TGT_EXPECT(b, tgl_attention_t(b, &t, &k, &v, NULL, &o, &d), TGL_ERR_UNSUPPORTED); /* q f16 */
        t = k;
        t.dtype = TGL_DTYPE_BF16;
        TGT_EXPECT(b, tgl_attention_t(b, &q, &t, &t, NULL, &o, &d), TGL_ERR_UNSUPPORTED);
        t = q;
        t.ndim = 3;
        TGT_EXPECT(b, tgl_attention_t(b, &t, &k, &v, NULL, &o, &d), A);
        t = q;
        t.strides[2] = 8; /* rows 8 apart: not contiguous */
        TGT_EXPECT(b, tgl_attention_t(b, &t, &k, &v, NULL, &o, &d), A);
        t = q; /* empty, its other dims' product past int64 (row-major strides up to there) */
        t.shape[0] = 0;
        t.shape[1] = (size_t)1 << 40;
        t.strides[1] = (int64_t)1 << 42;
        t.shape[2] = (size_t)1 << 40;
        TGT_EXPECT(b, tgl_attention_t(b, &t, &k, &v, NULL, &o, &d), A);
        t = k;
        t.shape[1] = 3; /* 3 kv heads do not divide 2 */
        tgl_tensor t2 = t;
        t2.data = v.data;
        TGT_EXPECT(b, tgl_attention_t(b, &q, &t, &t2, NULL, &o, &d), A);
        t = k;
        t.shape[3] = 2; /* head_dim differs */
        TGT_EXPECT(b, tgl_attention_t(b, &q, &t, &t, NULL, &o, &d), A);
        t = o;
        t.shape[2] = 1;
        TGT_EXPECT(b, tgl_attention_t(b, &q, &k, &v, NULL, &t, &d), A);
        tgl_attention_desc e = d;
        e.scale = INFINITY;
        TGT_EXPECT(b, tgl_attention_t(b, &q, &k, &v, NULL, &o, &e), A);
        e = d;
        e.softcap = -1.0f;
        TGT_EXPECT(b, tgl_attention_t(b, &q, &k, &v, NULL, &o, &e), A);
        e = d;
        e.softcap = NAN;
        TGT_EXPECT(b, tgl_attention_t(b, &q, &k, &v, NULL, &o, &e), A);
        e = d;
        e.alibi_max_bias = INFINITY;
        TGT_EXPECT(b, tgl_attention_t(b, &q, &k, &v, NULL, &o, &e), A);
        e = d;
        e.seq_kv = 5; /* past kv_capacity 4 */
        TGT_EXPECT(b, tgl_attention_t(b, &q, &k, &v, NULL, &o, &e), A);
        e = d;
        e.seq_kv = 3;
        e.seq_lens = (size_t[]){4}; /* past seq_kv */
        TGT_EXPECT(b, tgl_attention_t(b, &q, &k, &v, NULL, &o, &e), A);
        t = o;
        t.data = m + 8 * sizeof(float); /* o overlapping q */
        TGT_EXPECT(b, tgl_attention_t(b, &q, &k, &v, NULL, &t, &d), A);
        t = k;
        t.data = m + 250 * sizeof(float); /* runs past the allocation */
        TGT_EXPECT(b, tgl_attention_t(b, &q, &t, &v, NULL, &o, &d), TGL_ERR_INVALID_POINTER);
        TGT_OK(b, tgl_copy_dtoh(b, after, m, sizeof after));
        assert_memory_equal(before, after, sizeof after);
        TGT_OK(b, tgl_free(b, m));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cpu_matches_reference), cmocka_unit_test(test_gl_matches_cpu),
        cmocka_unit_test(test_gl_slabs),              cmocka_unit_test(test_large_heads),
        cmocka_unit_test(test_cache_offsets),
        cmocka_unit_test(test_mask_texture_limit),
        cmocka_unit_test(test_zero_desc_is_gqa),
        cmocka_unit_test(test_rows_without_keys),     cmocka_unit_test(test_padding_mask_is_lengths),
        cmocka_unit_test(test_mask_refusals),         cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
