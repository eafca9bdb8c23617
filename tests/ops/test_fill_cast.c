/* tgl_fill, tgl_scale_add and the f16 casts on GL compared with the CPU oracle (bit for bit for
 * the casts), with the oracle itself pinned to hand-worked IEEE cases; odd offsets and lengths
 * with guard elements, in place, beta == 0 with NaN in y, and the error cases. */
#include "testing.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef tgt_pair pair;

static int setup(void **state)
{
    return tgt_pair_setup(state, 0xF16);
}

static int teardown(void **state)
{
    return tgt_pair_teardown(state);
}

static const size_t sizes[] = {0, 1, 7, 4099, 4199, (1u << 20) + 3};
/* Elements before the data (allocations start 32-byte aligned): 8 lets llvmpipe's wide
 * scale_add take whole workgroups of 4096 elements, 4 keeps to the vec4 kernel, 5 the scalar one. */
static const size_t fronts[] = {8, 4, 5};

static void fill_and_scale_on(tgl_backend *b, size_t n, size_t front, float value, float alpha, float beta,
                              const float *x, const float *y0, int in_place, float *out_fill, float *out_sa)
{
    size_t total = front + n + 8, bytes = total * sizeof(float), f = front * sizeof(float);
    float *host = malloc(bytes);
    tgl_ptr a, c;
    TGT_OK(b, tgl_alloc(b, bytes, &a));
    TGT_OK(b, tgl_alloc(b, bytes, &c));
    tgt_poison(host, total);
    TGT_OK(b, tgl_copy_htod(b, a, host, bytes));
    TGT_OK(b, tgl_fill(b, a + f, value, n));
    TGT_OK(b, tgl_copy_dtoh(b, out_fill, a, bytes));
    memcpy(host + front, x, n * sizeof(float));
    TGT_OK(b, tgl_copy_htod(b, a, host, bytes));
    memcpy(host + front, y0, n * sizeof(float));
    TGT_OK(b, tgl_copy_htod(b, c, host, bytes));
    TGT_OK(b, tgl_scale_add(b, alpha, a + f, beta, in_place ? a + f : c + f, n));
    TGT_OK(b, tgl_copy_dtoh(b, out_sa, in_place ? a : c, bytes));
    TGT_OK(b, tgl_free(b, a));
    TGT_OK(b, tgl_free(b, c));
    free(host);
}

static void fill_and_scale_add_all(void *ctx)
{
    pair *p = ctx;
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        size_t n = sizes[s];
        float *x = malloc((n + 1) * sizeof(float)), *y = malloc((n + 1) * sizeof(float));
        for (size_t i = 0; i < n; i++) {
            x[i] = tgt_uniform(&p->rng, -5, 5);
            y[i] = s % 2 ? NAN : tgt_uniform(&p->rng, -5, 5); /* NaN y only with beta == 0 */
        }
        for (size_t fi = 0; fi < 3; fi++) {
            size_t front = fronts[fi];
            float value = tgt_uniform(&p->rng, -100, 100), alpha = tgt_uniform(&p->rng, -2, 2);
            float beta = s % 2 ? 0.0f : tgt_uniform(&p->rng, -2, 2);
            int in_place = front != 4 && s % 2 == 0;
            size_t total = front + n + 8;
            float *gf = malloc(total * 4), *gs = malloc(total * 4), *cf = malloc(total * 4), *cs = malloc(total * 4);
            fill_and_scale_on(p->gl, n, front, value, alpha, beta, x, y, in_place, gf, gs);
            fill_and_scale_on(p->cpu, n, front, value, alpha, beta, x, y, in_place, cf, cs);
            if (memcmp(gf, cf, total * 4))
                fail_msg("fill n=%zu front=%zu differs from the cpu (guards included)", n, front);
            for (size_t i = 0; i < total; i++) {
                int inside = i >= front && i < front + n;
                if (!inside && memcmp(&gs[i], &cs[i], 4)) // NOLINT(bugprone-suspicious-memory-comparison): guards compare bit for bit
                    fail_msg("scale_add n=%zu: guard element %zu changed", n, i);
                if (inside && !(fabsf(gs[i] - cs[i]) <= 1e-6f * fabsf(cs[i]) + 1e-6f))
                    fail_msg("scale_add n=%zu beta=%g in_place=%d: element %zu gl %g cpu %g", n, (double)beta,
                             in_place, i - front, (double)gs[i], (double)cs[i]);
            }
            free(gf), free(gs), free(cf), free(cs);
        }
        free(x);
        free(y);
    }
}

/* scale_add reads x through buffer textures where the device's element-wise kernels do: both
 * ways are compared. */
static void test_fill_and_scale_add(void **state)
{
    pair *p = *state;
    if (!p->gl)
        skip();
    tgt_with_and_without_textures(p->gl, fill_and_scale_add_all, p);
}

/* Casts `n` elements starting `front` elements into allocations with 8 guard elements after. */
static void *cast_on(tgl_backend *b, int to_f16, const void *src, size_t n, size_t front_in, size_t front_out)
{
    size_t in_sz = to_f16 ? 4 : 2, out_sz = to_f16 ? 2 : 4;
    size_t out_bytes = (front_out + n + 8) * out_sz;
    unsigned char *host = malloc(out_bytes);
    memset(host, 0xA5, out_bytes);
    tgl_ptr in, out;
    TGT_OK(b, tgl_alloc(b, (front_in + n) * in_sz + 2, &in));
    TGT_OK(b, tgl_alloc(b, out_bytes, &out));
    TGT_OK(b, tgl_copy_htod(b, in + front_in * in_sz, src, n * in_sz));
    TGT_OK(b, tgl_copy_htod(b, out, host, out_bytes));
    if (to_f16)
        TGT_OK(b, tgl_cast_f32_f16(b, in + front_in * in_sz, out + front_out * out_sz, n));
    else
        TGT_OK(b, tgl_cast_f16_f32(b, in + front_in * in_sz, out + front_out * out_sz, n));
    TGT_OK(b, tgl_copy_dtoh(b, host, out, out_bytes));
    TGT_OK(b, tgl_free(b, in));
    TGT_OK(b, tgl_free(b, out));
    return host;
}

static void compare_cast(pair *p, int to_f16, const void *src, size_t n)
{
    for (size_t fi = 0; fi < 2; fi++) {
        for (size_t fo = 0; fo < 2; fo++) {
            size_t out_sz = to_f16 ? 2 : 4, bytes = (fo + n + 8) * out_sz;
            unsigned char *g = cast_on(p->gl, to_f16, src, n, fi, fo), *c = cast_on(p->cpu, to_f16, src, n, fi, fo);
            if (memcmp(g, c, bytes)) {
                for (size_t i = 0; i < bytes; i++)
                    if (g[i] != c[i])
                        fail_msg("%s n=%zu offsets %zu/%zu: byte %zu (element %zu) gl 0x%02x cpu 0x%02x",
                                 to_f16 ? "f32->f16" : "f16->f32", n, fi, fo, i, i / out_sz, g[i], c[i]);
            }
            free(g);
            free(c);
        }
    }
}

static uint16_t cpu_to_half(tgl_backend *cpu, float f)
{
    uint16_t *h = cast_on(cpu, 1, &f, 1, 0, 0), r = h[0];
    free(h);
    return r;
}

/* The oracle against IEEE cases worked by hand. */
static void test_cpu_oracle_ieee_cases(void **state)
{
    pair *p = *state;
    const struct { float f; uint16_t h; } cases[] = {
        {0.0f, 0x0000}, {-0.0f, 0x8000}, {1.0f, 0x3C00}, {-2.0f, 0xC000}, {65504.0f, 0x7BFF},
        {65519.99f, 0x7BFF}, {65520.0f, 0x7C00} /* halfway to 2^16 rounds up to inf */,
        {1e6f, 0x7C00}, {-INFINITY, 0xFC00}, {0x1p-14f, 0x0400} /* smallest normal */,
        {0x1p-24f, 0x0001} /* smallest subnormal */, {0x1p-25f, 0x0000} /* halfway: to even */,
        {0x1.8p-25f, 0x0001}, {0x1.8p-24f, 0x0002} /* 1.5 ulp: halfway, up to even */,
        {1.0f + 0x1p-11f, 0x3C00} /* halfway between 1 and 1+2^-10: even */,
        {1.0f + 0x3p-11f, 0x3C02}, {0x1.ffcp-15f, 0x0400} /* rounds up into the normals */,
        {0.333333343f, 0x3555},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint16_t h = cpu_to_half(p->cpu, cases[i].f);
        if (h != cases[i].h)
            fail_msg("cpu f32->f16 of %a: 0x%04x, IEEE says 0x%04x", (double)cases[i].f, h, cases[i].h);
    }
    uint16_t nan_h = cpu_to_half(p->cpu, NAN);
    assert_true((nan_h & 0x7C00) == 0x7C00 && (nan_h & 0x3FF) != 0);
    /* f16 -> f32 of every finite half equals its value computed with ldexp. */
    for (uint32_t h = 0; h < 0x10000; h++) {
        uint16_t hh = (uint16_t)h;
        float *f = cast_on(p->cpu, 0, &hh, 1, 0, 0);
        unsigned e = (h >> 10) & 0x1F, m = h & 0x3FF;
        double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(1024 + m, (int)e - 25);
        v = h & 0x8000 ? -v : v;
        if (!(isnan(v) ? isnan(f[0]) : (double)f[0] == v && !!signbit(f[0]) == !!signbit(v)))
            fail_msg("cpu f16->f32 of 0x%04x: %a, expected %a", h, (double)f[0], v);
        free(f);
    }
}

static void test_casts_gl_vs_cpu(void **state)
{
    pair *p = *state;
    uint16_t *all = malloc(65536 * 2);
    for (uint32_t h = 0; h < 65536; h++)
        all[h] = (uint16_t)h;
    compare_cast(p, 0, all, 65536); /* at offsets 0/0: llvmpipe's wide variant, whole groups */
    compare_cast(p, 0, all + 5, 65531); /* ... and the plain one for the rest */
    compare_cast(p, 0, all + 3, 7);
    free(all);
    size_t n = (1u << 20) + 1;
    uint32_t *bits = malloc(n * 4);
    for (size_t i = 0; i < n; i++) {
        bits[i] = (uint32_t)tgt_next(&p->rng);
        if (i % 3 == 0) /* concentrate on the half range, where rounding happens */
            bits[i] = (bits[i] & 0x80FFFFFFu) | ((uint32_t)(100 + tgt_below(&p->rng, 50)) << 23);
    }
    const float special[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 65504.0f, 65520.0f, 0x1p-24f, 0x1p-25f,
                             0x1.8p-25f, 1.0f + 0x1p-11f, 1e-30f, -1e30f};
    memcpy(bits, special, sizeof special);
    for (size_t len = 0; len < 6; len++)
        compare_cast(p, 1, bits, len);
    compare_cast(p, 1, bits, 4099);
    compare_cast(p, 1, bits, n);
    free(bits);

    /* Every sign and exponent with mantissas at each bit's rounding edges: just under, at and
     * just over each power of two, and ties with the kept bit odd, so each subnormal shift and
     * the normal rounding meet their halfway cases. */
    size_t count = 0, cap = 2 * 256 * (2 + 23 * 5);
    bits = malloc(cap * 4);
    for (uint32_t sign = 0; sign < 2; sign++)
        for (uint32_t e = 0; e < 256; e++) {
            uint32_t top = sign << 31 | e << 23;
            bits[count++] = top;
            bits[count++] = top | 0x7FFFFFu;
            for (uint32_t b = 0; b < 23; b++) {
                const uint32_t m[] = {1u << b, (1u << b) - 1u, (1u << b) + 1u, (3u << b) & 0x7FFFFFu,
                                      0x7FFFFFu ^ (1u << b)};
                for (size_t i = 0; i < 5; i++)
                    bits[count++] = top | m[i];
            }
        }
    assert_true(count == cap);
    compare_cast(p, 1, bits, count);
    free(bits);
}

static void test_errors(void **state)
{
    pair *p = *state;
    tgl_backend *bk[2] = {p->gl, p->cpu};
    for (int k = 0; k < 2; k++) {
        tgl_backend *b = bk[k];
        tgl_ptr a;
        float data[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, back[16];
        TGT_OK(b, tgl_alloc(b, sizeof data, &a));
        TGT_OK(b, tgl_copy_htod(b, a, data, sizeof data));
        TGT_EXPECT(b, tgl_cast_f32_f16(b, a, a + 33, 4), TGL_ERR_INVALID_ARGUMENT); /* odd f16 address */
        TGT_EXPECT(b, tgl_cast_f16_f32(b, a + 1, a + 32, 4), TGL_ERR_INVALID_ARGUMENT);
        TGT_EXPECT(b, tgl_cast_f32_f16(b, a, a + 8, 4), TGL_ERR_INVALID_ARGUMENT);  /* overlap */
        TGT_EXPECT(b, tgl_cast_f16_f32(b, a + 48, a, 10), TGL_ERR_INVALID_POINTER); /* past the end */
        TGT_EXPECT(b, tgl_fill(b, a + 2, 1.0f, 3), TGL_ERR_INVALID_ARGUMENT);
        TGT_EXPECT(b, tgl_fill(b, a, 1.0f, 17), TGL_ERR_INVALID_POINTER);
        TGT_EXPECT(b, tgl_scale_add(b, 1.0f, a, 1.0f, a + 4, 8), TGL_ERR_INVALID_ARGUMENT); /* partial overlap */
        TGT_OK(b, tgl_copy_dtoh(b, back, a, sizeof back));
        assert_memory_equal(back, data, sizeof data);
        TGT_OK(b, tgl_free(b, a));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_fill_and_scale_add, tgt_pair_restore_reads),
        cmocka_unit_test(test_cpu_oracle_ieee_cases),
        cmocka_unit_test(test_casts_gl_vs_cpu),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests_name("ops/fill, scale_add, casts (gl vs cpu)", tests, setup, teardown);
}
