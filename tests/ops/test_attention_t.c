/* tgl_attention_t: the CPU backend against a reference written out here (double, BLOOM's ALiBi
 * slopes computed as BLOOM's code does, f16 caches through their rounded values); GL against
 * the CPU on every kernel path (flash_reg, flash, decode, flash without shuffles) for random
 * calls mixing grouped heads, f16 and f32 caches with spare capacity, causal masks, sliding
 * windows, soft-capping, ALiBi and per-item key lengths, and under a small SSBO limit (slabs
 * whose first block is not head 0); the zero descriptor against tgl_attention_gqa; rows that
 * see no key; refusals, which leave the output untouched. */
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
} tcase;

/* Host data of a case: q, k, v (k and v as f32 values, already rounded to f16 where f16). */
typedef struct data {
    float *q, *k, *v;
    size_t nq, nkv;
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
    return x;
}

static void free_data(data *x)
{
    free(x->q);
    free(x->k);
    free(x->v);
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
                    s[j] = sc - slope * fabs(p - (double)j);
                    mx = fmax(mx, s[j]);
                    seen = 1;
                }
                for (size_t e = 0; e < c->d; e++)
                    out[e] = 0.0f;
                if (!seen)
                    continue;
                double *acc = calloc(c->d, sizeof(double));
                for (size_t j = 0; j < seq_kv; j++) {
                    if (isnan(s[j]))
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

/* Runs c on b (k and v uploaded as f16 where c->f16); the output, poisoned beforehand. */
static float *run_on(tgl_backend *b, const tcase *c, const data *x)
{
    tgl_dtype kt = c->f16 ? TGL_DTYPE_F16 : TGL_DTYPE_F32;
    size_t es = c->f16 ? 2 : 4;
    tgl_ptr q = tgt_upload(b, x->q, x->nq, 0), o, k, v;
    float *host = malloc(x->nq * sizeof(float));
    tgt_poison(host, x->nq);
    TGT_OK(b, tgl_alloc(b, x->nq * sizeof(float), &o));
    TGT_OK(b, tgl_copy_htod(b, o, host, x->nq * sizeof(float)));
    TGT_OK(b, tgl_alloc(b, x->nkv * es, &k));
    TGT_OK(b, tgl_alloc(b, x->nkv * es, &v));
    if (c->f16) {
        uint16_t *h = malloc(x->nkv * 2);
        for (int which = 0; which < 2; which++) {
            const float *src = which ? x->v : x->k;
            for (size_t i = 0; i < x->nkv; i++) {
                uint32_t bits;
                memcpy(&bits, &src[i], sizeof bits);
                h[i] = tgl_f32_to_f16_bits(bits);
            }
            TGT_OK(b, tgl_copy_htod(b, which ? v : k, h, x->nkv * 2));
        }
        free(h);
    } else {
        TGT_OK(b, tgl_copy_htod(b, k, x->k, x->nkv * 4));
        TGT_OK(b, tgl_copy_htod(b, v, x->v, x->nkv * 4));
    }
    tgl_tensor tq = tgl_tensor_contiguous(q, TGL_DTYPE_F32, 4, (size_t[]){c->batch, c->heads, c->seq_q, c->d});
    tgl_tensor to = tq;
    to.data = o;
    tgl_tensor tk = tgl_tensor_contiguous(k, kt, 4, (size_t[]){c->batch, c->heads_kv, c->cap, c->d}), tv = tk;
    tv.data = v;
    tgl_attention_desc d = c->desc;
    if (c->use_lens)
        d.seq_lens = c->lens;
    TGT_OK(b, tgl_attention_t(b, &tq, &tk, &tv, &to, &d));
    TGT_OK(b, tgl_copy_dtoh(b, host, o, x->nq * sizeof(float)));
    TGT_OK(b, tgl_free(b, q));
    TGT_OK(b, tgl_free(b, k));
    TGT_OK(b, tgl_free(b, v));
    TGT_OK(b, tgl_free(b, o));
    return host;
}

static void describe(const tcase *c, char *buf, size_t size)
{
    const tgl_attention_desc *d = &c->desc;
    snprintf(buf, size,
             "b=%zu h=%zu h_kv=%zu seq_q=%zu cap=%zu d=%zu %s scale=%g causal=%d seq_kv=%zu window=%zu softcap=%g "
             "alibi=%g lens=%s",
             c->batch, c->heads, c->heads_kv, c->seq_q, c->cap, c->d, c->f16 ? "f16" : "f32", (double)d->scale,
             d->causal, d->seq_kv, d->window, (double)d->softcap, (double)d->alibi_max_bias, c->use_lens ? "yes" : "no");
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
    c.heads = c.heads_kv * (1 + tgt_below(r, 3));
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

static const char *const paths[] = {"flash_reg", "flash", "decode", "flash without subgroup shuffles"};

/* GL on each kernel path against the CPU, random cases. */
static void gl_random(pair *p, tgl_backend *gl, int calls, const char *what)
{
    for (int path = -1; path < 4; path++) {
        tgl_gl_test_force_attention(gl, path);
        for (int i = 0; i < calls; i++) {
            tcase c = random_case(&p->rng);
            data x = make_data(&p->rng, &c);
            float *want = run_on(p->cpu, &c, &x), *got = run_on(gl, &c, &x);
            char who[120];
            snprintf(who, sizeof who, "%s, %s", what, path < 0 ? "the device's choice" : paths[path]);
            if (tgt_first_unpoisoned(got, x.nq) != 0 && x.nq)
                fail_msg("%s: output left unwritten", who);
            expect_close(&c, got, want, x.nq, 1e-8, who);
            free(want);
            free(got);
            free_data(&x);
        }
    }
    tgl_gl_test_force_attention(gl, -1);
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
        TGT_OK(b, tgl_attention_t(b, &q, &k, &v, &o, &d));
        TGT_OK(b, tgl_copy_htod(b, m, before, sizeof before));
        TGT_EXPECT(b, tgl_attention_t(b, NULL, &k, &v, &o, &d), A);
        TGT_EXPECT(b, tgl_attention_t(b, &q, &k, &v, &o, NULL), A);
        tgl_tensor t = k;
        t.dtype = TGL_DTYPE_F16;
        TGT_EXPECT(b, tgl_attention_t(b, &q, &t, &v, &o, &d), A); /* k f16, v f32 */
        t = q;
        t.dtype = TGL_DTYPE_F16;
        TGT_EXPECT(b, tgl_attention_t(b, &t, &k, &v, &o, &d), TGL_ERR_UNSUPPORTED); /* q f16 */
        t = k;
        t.dtype = TGL_DTYPE_BF16;
        TGT_EXPECT(b, tgl_attention_t(b, &q, &t, &t, &o, &d), TGL_ERR_UNSUPPORTED);
        t = q;
        t.ndim = 3;
        TGT_EXPECT(b, tgl_attention_t(b, &t, &k, &v, &o, &d), A);
        t = q;
        t.strides[2] = 8; /* rows 8 apart: not contiguous */
        TGT_EXPECT(b, tgl_attention_t(b, &t, &k, &v, &o, &d), A);
        t = k;
        t.shape[1] = 3; /* 3 kv heads do not divide 2 */
        tgl_tensor t2 = t;
        t2.data = v.data;
        TGT_EXPECT(b, tgl_attention_t(b, &q, &t, &t2, &o, &d), A);
        t = k;
        t.shape[3] = 2; /* head_dim differs */
        TGT_EXPECT(b, tgl_attention_t(b, &q, &t, &t, &o, &d), A);
        t = o;
        t.shape[2] = 1;
        TGT_EXPECT(b, tgl_attention_t(b, &q, &k, &v, &t, &d), A);
        tgl_attention_desc e = d;
        e.scale = INFINITY;
        TGT_EXPECT(b, tgl_attention_t(b, &q, &k, &v, &o, &e), A);
        e = d;
        e.softcap = -1.0f;
        TGT_EXPECT(b, tgl_attention_t(b, &q, &k, &v, &o, &e), A);
        e = d;
        e.softcap = NAN;
        TGT_EXPECT(b, tgl_attention_t(b, &q, &k, &v, &o, &e), A);
        e = d;
        e.alibi_max_bias = INFINITY;
        TGT_EXPECT(b, tgl_attention_t(b, &q, &k, &v, &o, &e), A);
        e = d;
        e.seq_kv = 5; /* past kv_capacity 4 */
        TGT_EXPECT(b, tgl_attention_t(b, &q, &k, &v, &o, &e), A);
        e = d;
        e.seq_kv = 3;
        e.seq_lens = (size_t[]){4}; /* past seq_kv */
        TGT_EXPECT(b, tgl_attention_t(b, &q, &k, &v, &o, &e), A);
        t = o;
        t.data = m + 8 * sizeof(float); /* o overlapping q */
        TGT_EXPECT(b, tgl_attention_t(b, &q, &k, &v, &t, &d), A);
        t = k;
        t.data = m + 250 * sizeof(float); /* runs past the allocation */
        TGT_EXPECT(b, tgl_attention_t(b, &q, &t, &v, &o, &d), TGL_ERR_INVALID_POINTER);
        TGT_OK(b, tgl_copy_dtoh(b, after, m, sizeof after));
        assert_memory_equal(before, after, sizeof after);
        TGT_OK(b, tgl_free(b, m));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cpu_matches_reference), cmocka_unit_test(test_gl_matches_cpu),
        cmocka_unit_test(test_gl_slabs),              cmocka_unit_test(test_zero_desc_is_gqa),
        cmocka_unit_test(test_rows_without_keys),     cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
