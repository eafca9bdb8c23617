/* tgl_rope_t: rotary embedding with per-token positions, partial rotation and frequency scaling.
 * - The CPU backend against this file's own reading of Hugging Face's definitions (inv_freq,
 *   the linear, NTK and Llama 3 rules, rotate-half and interleaved pairs, the f32 angle) on
 *   random cases: NMSE 1e-13.
 * - GL against the CPU on random shapes (odd heads, head_dim 2..130, rotary_dim from 2 to
 *   head_dim, batch and seq 1..9), strided views (q and k as slices of one fused qkv row, a
 *   reversed batch, positions shared over the batch by a 0 stride), in place and not, positions
 *   from a tensor (negative, far) or from pos_offset: NMSE 1e-10; the dims past rotary_dim bit
 *   for bit; bytes around the output untouched. The same under a 4 KiB SSBO limit (runs of
 *   tokens).
 * - The plain case equals tgl_rope's to f32 angle accuracy; the refusals leave out intact. */
#include "testing.h"
#include "gl/gl_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef tgt_pair pair;

static int setup(void **state)
{
    return tgt_pair_setup(state, 0x40E7);
}

static int teardown(void **state)
{
    return tgt_pair_teardown(state);
}

/* Hugging Face's inverse frequencies for a rotary dimension and scaling, in its float32 tensor
 * steps (rope_init_fn's default, linear, static NTK base and llama3; its float32 pow taken
 * correctly rounded), each step a statement of its own; then divided by d->freq_factors[i]
 * where given (ggml's freq_factors). */
static float reference_freq(const tgl_rope_desc *d, size_t rot, size_t i)
{
    double base = d->theta; /* Python floats */
    if (d->scaling == TGL_ROPE_SCALE_NTK)
        base = base * pow(d->factor, (double)rot / ((double)rot - 2));
    float expo = (float)(2 * i) / (float)rot;
    float power = (float)pow((double)(float)base, (double)expo);
    float f = 1.0f / power;
    if (d->scaling == TGL_ROPE_SCALE_LINEAR)
        f = f / d->factor;
    if (d->scaling == TGL_ROPE_SCALE_LLAMA3) {
        double ctx = (double)d->original_context;
        float low_wl = (float)(ctx / d->low_freq_factor), high_wl = (float)(ctx / d->high_freq_factor);
        float wl = (float)(2 * 3.14159265358979323846) / f;
        float llama = wl > low_wl ? f / d->factor : f;
        float ratio = (float)ctx / wl;
        float smooth = (ratio - d->low_freq_factor) / (float)((double)d->high_freq_factor - d->low_freq_factor);
        float part = (1.0f - smooth) * llama;
        part = part / d->factor;
        float rest = smooth * llama;
        float smoothed = part + rest;
        f = !(wl < high_wl) && !(wl > low_wl) ? smoothed : llama;
    }
    return d->freq_factors ? f / d->freq_factors[i] : f;
}

/* One case: in is [batch, seq, heads, head_dim] inside a buffer of `row` floats per token
 * (a fused qkv row when row > heads * head_dim: in starts `col0` floats in), batch walked
 * backwards when reversed; out contiguous or in place. */
typedef struct rcase {
    size_t batch, seq, heads, head_dim, row, col0;
    int reversed, in_place, with_pos, shared_pos;
    tgl_rope_desc d;
    float factors[65]; /* d.freq_factors points here when the case has them */
} rcase;

static void random_case(tgt_rng *r, rcase *c)
{
    memset(c, 0, sizeof *c);
    c->batch = 1 + tgt_below(r, 4);
    c->seq = 1 + tgt_below(r, 9);
    c->heads = 1 + tgt_below(r, 5);
    c->head_dim = 2 * (1 + tgt_below(r, 65));
    size_t rot = 2 * (1 + tgt_below(r, c->head_dim / 2));
    c->d.rotary_dim = tgt_below(r, 3) == 0 ? 0 : rot;
    c->d.theta = tgt_below(r, 2) ? 10000.0f : 500000.0f;
    c->d.mode = tgt_below(r, 2) ? TGL_ROPE_NEOX : TGL_ROPE_INTERLEAVED;
    c->d.scaling = (tgl_rope_scaling)tgt_below(r, 4);
    c->d.factor = tgt_uniform(r, 1.0f, 16.0f);
    c->d.low_freq_factor = 1.0f;
    c->d.high_freq_factor = 4.0f;
    c->d.original_context = 64 + tgt_below(r, 8192);
    if (c->d.scaling == TGL_ROPE_SCALE_NTK && (c->d.rotary_dim ? c->d.rotary_dim : c->head_dim) < 4)
        c->d.scaling = TGL_ROPE_SCALE_LINEAR;
    if (tgt_below(r, 3) == 0) { /* per-frequency factors, as GGUF's rope_freqs tensor holds them */
        for (size_t i = 0; i < (c->d.rotary_dim ? c->d.rotary_dim : c->head_dim) / 2; i++)
            c->factors[i] = tgt_uniform(r, 0.5f, 40.0f);
        c->d.freq_factors = c->factors;
    }
    c->d.pos_offset = tgt_below(r, 3) == 0 ? 0 : tgt_below(r, 100000);
    c->with_pos = tgt_below(r, 2);
    c->shared_pos = c->with_pos && tgt_below(r, 2);
    c->in_place = tgt_below(r, 2);
    c->reversed = tgt_below(r, 3) == 0;
    c->row = c->heads * c->head_dim * (tgt_below(r, 2) ? 3 : 1); /* a fused [q | k | v] row */
    c->col0 = c->row > c->heads * c->head_dim ? c->heads * c->head_dim * tgt_below(r, 3) : 0;
}

/* CPU reference of the whole case on host arrays (in place on x when in_place). */
static void reference(const rcase *c, const float *x, const int32_t *pos, float *y)
{
    size_t rot = c->d.rotary_dim ? c->d.rotary_dim : c->head_dim, rh = rot / 2;
    for (size_t b = 0; b < c->batch; b++)
        for (size_t s = 0; s < c->seq; s++) {
            float p = c->with_pos ? (float)pos[(c->shared_pos ? 0 : b) * c->seq + s] : (float)(c->d.pos_offset + s);
            for (size_t h = 0; h < c->heads; h++) {
                const float *xr = x + ((b * c->seq + s) * c->heads + h) * c->head_dim;
                float *yr = y + ((b * c->seq + s) * c->heads + h) * c->head_dim;
                for (size_t i = 0; i < rh; i++) {
                    float f = reference_freq(&c->d, rot, i), angle = p * f;
                    size_t i0 = c->d.mode == TGL_ROPE_NEOX ? i : 2 * i;
                    size_t i1 = c->d.mode == TGL_ROPE_NEOX ? i + rh : 2 * i + 1;
                    double a = xr[i0], bb = xr[i1]; // NOLINT(clang-analyzer-core.uninitialized.Assign): make_inputs fills x
                    yr[i0] = (float)(a * cos((double)angle) - bb * sin((double)angle));
                    yr[i1] = (float)(a * sin((double)angle) + bb * cos((double)angle));
                }
                for (size_t dd = rot; dd < c->head_dim; dd++)
                    yr[dd] = xr[dd];
            }
        }
}

/* Runs c on backend b from x (batch-major [batch, seq, heads, head_dim]); the result into y in
 * the same order. The device buffer holds guard floats around everything written. */
static void run_case(tgl_backend *b, const rcase *c, const float *x, const int32_t *pos, float *y)
{
    size_t tokens = c->batch * c->seq, guard = 7, n_buf = guard + tokens * c->row + guard;
    size_t n_out = tokens * c->heads * c->head_dim;
    float *buf = malloc(n_buf * sizeof *buf);
    for (size_t i = 0; i < n_buf; i++)
        buf[i] = -1000.0f - (float)i;
    /* token (b, s) at row (reversed ? batch - 1 - b : b) * seq + s */
    for (size_t bi = 0; bi < c->batch; bi++)
        for (size_t s = 0; s < c->seq; s++) {
            size_t row = (c->reversed ? c->batch - 1 - bi : bi) * c->seq + s;
            memcpy(buf + guard + row * c->row + c->col0, x + (bi * c->seq + s) * c->heads * c->head_dim,
                   c->heads * c->head_dim * sizeof(float));
        }
    tgl_ptr dbuf = tgt_upload(b, buf, n_buf, 0), dout = 0, dpos = 0;
    int64_t rs = (int64_t)c->row, bs = (int64_t)(c->seq * c->row);
    tgl_tensor in = {.data = dbuf + (guard + c->col0 + (c->reversed ? (c->batch - 1) * c->seq * c->row : 0)) * 4,
                     .dtype = TGL_DTYPE_F32, .ndim = 4, .shape = {c->batch, c->seq, c->heads, c->head_dim},
                     .strides = {c->reversed ? -bs : bs, rs, (int64_t)c->head_dim, 1}};
    tgl_tensor out = in;
    if (!c->in_place) {
        float *g = malloc((n_out + 2 * guard) * sizeof *g);
        for (size_t i = 0; i < n_out + 2 * guard; i++)
            g[i] = 777.0f;
        dout = tgt_upload(b, g, n_out + 2 * guard, 0);
        free(g);
        out = tgl_tensor_contiguous(dout + guard * 4, TGL_DTYPE_F32, 4, in.shape);
    }
    tgl_tensor tp = {0};
    if (c->with_pos) {
        size_t np = c->shared_pos ? c->seq : tokens;
        dpos = tgt_upload(b, (const float *)(const void *)pos, np, 0);
        tp = tgl_tensor_contiguous(dpos, TGL_DTYPE_I32, 2, (size_t[]){c->batch, c->seq});
        if (c->shared_pos)
            tp.strides[0] = 0;
    }
    tgl_status st = tgl_rope_t(b, &in, &out, c->with_pos ? &tp : NULL, &c->d);
    if (st)
        fail_msg("tgl_rope_t: %s: %s", tgl_status_string(st), tgl_last_error(b));
    float *back = malloc(n_buf * sizeof *back);
    if (c->in_place) {
        assert_int_equal(tgl_copy_dtoh(b, back, dbuf, n_buf * 4), TGL_OK);
        for (size_t bi = 0; bi < c->batch; bi++)
            for (size_t s = 0; s < c->seq; s++) {
                size_t row = (c->reversed ? c->batch - 1 - bi : bi) * c->seq + s;
                memcpy(y + (bi * c->seq + s) * c->heads * c->head_dim, back + guard + row * c->row + c->col0,
                       c->heads * c->head_dim * sizeof(float));
            }
        /* everything but the rotated rows' own floats is as it was */
        for (size_t row = 0; row < tokens; row++)
            for (size_t k = 0; k < c->row; k++)
                if (k < c->col0 || k >= c->col0 + c->heads * c->head_dim)
                    assert_true(back[guard + row * c->row + k] == buf[guard + row * c->row + k]);
        for (size_t k = 0; k < guard; k++)
            assert_true(back[k] == buf[k] && back[n_buf - 1 - k] == buf[n_buf - 1 - k]);
    } else {
        assert_int_equal(tgl_copy_dtoh(b, back, dout, (n_out + 2 * guard) * 4), TGL_OK);
        memcpy(y, back + guard, n_out * sizeof(float));
        for (size_t k = 0; k < guard; k++)
            assert_true(back[k] == 777.0f && back[guard + n_out + k] == 777.0f);
        assert_int_equal(tgl_free(b, dout), TGL_OK);
    }
    assert_int_equal(tgl_free(b, dbuf), TGL_OK);
    if (dpos)
        assert_int_equal(tgl_free(b, dpos), TGL_OK);
    free(buf);
    free(back);
}

static void make_inputs(tgt_rng *r, const rcase *c, float **x, int32_t **pos)
{
    size_t n = c->batch * c->seq * c->heads * c->head_dim, tokens = c->batch * c->seq;
    *x = malloc(n * sizeof **x);
    *pos = malloc(tokens * sizeof **pos);
    for (size_t i = 0; i < n; i++)
        (*x)[i] = tgt_uniform(r, -2.0f, 2.0f);
    for (size_t i = 0; i < tokens; i++) {
        int kind = (int)tgt_below(r, 4);
        (*pos)[i] = kind == 0 ? -(int32_t)tgt_below(r, 50) : kind == 1 ? (int32_t)tgt_below(r, 300000)
                                                                       : (int32_t)tgt_below(r, 4096);
    }
}

/* The case on b against the reference; the passthrough dims bit for bit. */
static void check_case(tgl_backend *b, const rcase *c, const float *x, const int32_t *pos, double tol, const char *who)
{
    size_t n = c->batch * c->seq * c->heads * c->head_dim;
    float *got = malloc(n * sizeof *got), *want = malloc(n * sizeof *want);
    run_case(b, c, x, pos, got);
    reference(c, x, pos, want);
    double e = tgt_nmse(got, want, n);
    size_t rot = c->d.rotary_dim ? c->d.rotary_dim : c->head_dim;
    for (size_t i = 0; i < n; i++)
        if (i % c->head_dim >= rot && got[i] != want[i])
            fail_msg("%s: passthrough dim %zu changed", who, i % c->head_dim);
    if (!(e <= tol))
        fail_msg("%s: %zu x %zu x %zu x %zu, rotary %zu, %s, scaling %d (factor %g), positions %s%s, %s%s: NMSE %g",
                 who, c->batch, c->seq, c->heads, c->head_dim, rot,
                 c->d.mode == TGL_ROPE_NEOX ? "neox" : "interleaved", (int)c->d.scaling, (double)c->d.factor,
                 c->with_pos ? "from a tensor" : "from the offset", c->shared_pos ? " (shared)" : "",
                 c->in_place ? "in place" : "apart", c->reversed ? ", batch reversed" : "", e);
    free(got);
    free(want);
}

static void test_cpu_against_reference(void **state)
{
    pair *p = *state;
    for (int k = 0; k < tgt_count(60); k++) {
        rcase c;
        random_case(&p->rng, &c);
        float *x;
        int32_t *pos;
        make_inputs(&p->rng, &c, &x, &pos);
        check_case(p->cpu, &c, x, pos, 1e-13, "cpu");
        free(x);
        free(pos);
    }
}

/* GL against the reference (whose cos and sin are double's: the kernel's f32 ones differ by
 * ulps of the reduced angle). */
static void gl_cases(pair *p, tgl_backend *gl, int count)
{
    for (int k = 0; k < count; k++) {
        rcase c;
        random_case(&p->rng, &c);
        float *x;
        int32_t *pos;
        make_inputs(&p->rng, &c, &x, &pos);
        check_case(gl, &c, x, pos, 1e-10, "gl");
        free(x);
        free(pos);
    }
}

static void test_gl_random(void **state)
{
    pair *p = *state;
    if (!p->gl)
        skip();
    gl_cases(p, p->gl, tgt_count(60));
}

static void test_gl_small_ssbo_limit(void **state)
{
    pair *p = *state;
    if (!p->gl)
        skip();
    tgl_backend *gl = tgt_open(TGL_BACKEND_GL);
    tgl_gl_test_set_limits(gl, 4096, NULL);
    gl_cases(p, gl, tgt_count(20));
    tgl_close(gl);
}

/* Positions from the offset, the whole head rotated, no scaling: tgl_rope's result, within the
 * f32 angle's rounding (tgl_rope takes the phase at pos_offset in double). */
static void test_matches_tgl_rope(void **state)
{
    pair *p = *state;
    tgl_backend *bs[2] = {p->cpu, p->gl};
    const size_t batch = 2, seq = 5, heads = 3, hd = 64, n = batch * seq * heads * hd;
    float *x = malloc(n * sizeof *x), *a = malloc(n * sizeof *a), *r = malloc(n * sizeof *r);
    for (size_t i = 0; i < n; i++)
        x[i] = tgt_uniform(&p->rng, -1, 1);
    for (int k = 0; k < 2 && bs[k]; k++)
        for (int m = 0; m < 2; m++) {
            tgl_backend *b = bs[k];
            tgl_ptr dx = tgt_upload(b, x, n, 0), dy = tgt_upload(b, x, n, 0), dz = tgt_upload(b, x, n, 0);
            tgl_rope_desc d = {.theta = 10000.0f, .mode = m ? TGL_ROPE_INTERLEAVED : TGL_ROPE_NEOX, .pos_offset = 37};
            tgl_tensor tx = tgl_tensor_contiguous(dx, TGL_DTYPE_F32, 4, (size_t[]){batch, seq, heads, hd});
            tgl_tensor ty = tgl_tensor_contiguous(dy, TGL_DTYPE_F32, 4, (size_t[]){batch, seq, heads, hd});
            assert_int_equal(tgl_rope_t(b, &tx, &ty, NULL, &d), TGL_OK);
            assert_int_equal(tgl_rope(b, dx, dz, batch, seq, heads, hd, 37, 10000.0f, d.mode), TGL_OK);
            assert_int_equal(tgl_copy_dtoh(b, a, dy, n * 4), TGL_OK);
            assert_int_equal(tgl_copy_dtoh(b, r, dz, n * 4), TGL_OK);
            double e = tgt_nmse(a, r, n);
            if (!(e < 1e-11))
                fail_msg("%s, mode %d: tgl_rope_t vs tgl_rope NMSE %g", k ? "gl" : "cpu", m, e);
            tgl_free(b, dx);
            tgl_free(b, dy);
            tgl_free(b, dz);
        }
    free(x);
    free(a);
    free(r);
}

static void test_refusals(void **state)
{
    pair *p = *state;
    tgl_backend *bs[2] = {p->cpu, p->gl};
    for (int k = 0; k < 2 && bs[k]; k++) {
        tgl_backend *b = bs[k];
        float x[2 * 3 * 8];
        for (size_t i = 0; i < 48; i++)
            x[i] = (float)i;
        tgl_ptr dx = tgt_upload(b, x, 48, 0), dy = tgt_upload(b, x, 48, 0);
        int32_t pos[6] = {0};
        tgl_ptr dp = tgt_upload(b, (const float *)(const void *)pos, 6, 0);
        tgl_tensor in = tgl_tensor_contiguous(dx, TGL_DTYPE_F32, 4, (size_t[]){2, 3, 1, 8});
        tgl_tensor out = tgl_tensor_contiguous(dy, TGL_DTYPE_F32, 4, (size_t[]){2, 3, 1, 8});
        tgl_tensor tp = tgl_tensor_contiguous(dp, TGL_DTYPE_I32, 2, (size_t[]){2, 3});
        const tgl_rope_desc ok = {.theta = 10000.0f};
        /* head_dim 8: 4 factors read; the bad one last, so every one is checked */
        const float zero_factor[4] = {1, 1, 1, 0}, nan_factor[4] = {1, 1, 1, NAN};
        const float inf_factor[4] = {1, 1, 1, INFINITY}, negative_factor[4] = {1, 1, 1, -2};
        const float tiny_factor[4] = {1e-39f, 1, 1, 1};
        struct {
            tgl_rope_desc d;
            int bad_pos, bad_shape, odd, overlap, stride;
        } cases[] = {
            {{.theta = 1.0f}, 0, 0, 0, 0, 0},
            {{.theta = 10000.0f, .rotary_dim = 3}, 0, 0, 0, 0, 0},
            {{.theta = 10000.0f, .rotary_dim = 10}, 0, 0, 0, 0, 0},
            {{.theta = 10000.0f, .mode = (tgl_rope_mode)2}, 0, 0, 0, 0, 0},
            {{.theta = 10000.0f, .scaling = (tgl_rope_scaling)9, .factor = 2}, 0, 0, 0, 0, 0},
            {{.theta = 10000.0f, .scaling = TGL_ROPE_SCALE_LINEAR, .factor = 0}, 0, 0, 0, 0, 0},
            {{.theta = 10000.0f, .scaling = TGL_ROPE_SCALE_LLAMA3, .factor = 8, .low_freq_factor = 4,
              .high_freq_factor = 1, .original_context = 8192}, 0, 0, 0, 0, 0},
            {{.theta = 10000.0f, .scaling = TGL_ROPE_SCALE_NTK, .factor = 2, .rotary_dim = 2}, 0, 0, 0, 0, 0},
            {{.theta = 10000.0f, .pos_offset = 0xFFFFFFFFu}, 0, 0, 0, 0, 0},
            {{.theta = 10000.0f, .freq_factors = zero_factor}, 0, 0, 0, 0, 0},
            {{.theta = 10000.0f, .freq_factors = nan_factor}, 0, 0, 0, 0, 0},
            {{.theta = 10000.0f, .freq_factors = inf_factor}, 0, 0, 0, 0, 0},
            {{.theta = 10000.0f, .freq_factors = negative_factor}, 0, 0, 0, 0, 0},
            {{.theta = 10000.0f, .freq_factors = tiny_factor}, 0, 0, 0, 0, 0}, /* frequency 0 past FLT_MAX */
            {ok, 1, 0, 0, 0, 0},
            {ok, 0, 1, 0, 0, 0},
            {ok, 0, 0, 1, 0, 0},
            {ok, 0, 0, 0, 1, 0},
            {ok, 0, 0, 0, 0, 1},
        };
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            tgl_tensor a = in, o = out, q = tp;
            if (cases[i].bad_pos)
                q.shape[1] = 2;
            if (cases[i].bad_shape)
                o.shape[2] = 2, o.shape[3] = 4;
            if (cases[i].odd)
                a.shape[3] = o.shape[3] = 7, a.strides[2] = o.strides[2] = 7;
            if (cases[i].overlap) /* one batch entry of in, and out 4 floats on in the same buffer */
                a.shape[0] = o.shape[0] = 1, o.data = dx + 16;
            if (cases[i].stride)
                a.strides[3] = 2, a.shape[3] = 4, o.shape[3] = 4;
            tgl_status st = tgl_rope_t(b, &a, &o, cases[i].bad_pos ? &q : NULL, &cases[i].d);
            if (st != TGL_ERR_INVALID_ARGUMENT)
                fail_msg("case %zu: %s (%s)", i, tgl_status_string(st), tgl_last_error(b));
        }
        assert_int_equal(tgl_rope_t(b, NULL, &out, NULL, &ok), TGL_ERR_INVALID_ARGUMENT);
        assert_int_equal(tgl_rope_t(b, &in, &out, NULL, NULL), TGL_ERR_INVALID_ARGUMENT);
        float back[48];
        assert_int_equal(tgl_copy_dtoh(b, back, dy, sizeof back), TGL_OK);
        assert_memory_equal(back, x, sizeof back);
        assert_int_equal(tgl_rope_t(b, &in, &out, &tp, &ok), TGL_OK); /* and the valid call runs */
        tgl_free(b, dx);
        tgl_free(b, dy);
        tgl_free(b, dp);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cpu_against_reference),
        cmocka_unit_test(test_gl_random),
        cmocka_unit_test(test_gl_small_ssbo_limit),
        cmocka_unit_test(test_matches_tgl_rope),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
