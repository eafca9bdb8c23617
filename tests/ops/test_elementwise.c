/* Every float unary and binary op of the flat tgl_unary and tgl_binary (the later ones run on the
 * descriptor kernels) on GL compared with the CPU oracle on random data, at sizes 0, 1,
 * 7, 4099, 4199 and ~1M, at 32-byte-aligned, 16-byte-aligned and unaligned offsets (on llvmpipe
 * the wide kernels then take the whole workgroups of 2048 elements and the vec4 and scalar ones
 * the rest; at 16 bytes only the vec4 and scalar ones run), in place, and split into chunks over
 * a 2-D grid. Outputs are poisoned first and guard elements on both
 * sides are checked, so an unwritten or overwritten element fails. */
#include "testing.h"
#include "gl/gl_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef tgt_pair pair;

static const size_t sizes[] = {0, 1, 7, 4099, 4199, (1u << 20) + 3};
/* Elements before the data: allocations start 32-byte aligned (gl_pool.c), so 8 is 32 bytes,
 * 4 is 16 and 5 is no whole vec4. */
static const size_t fronts[] = {8, 4, 5};
#define GUARD 8

static int setup(void **state)
{
    return tgt_pair_setup(state, 0);
}

static int teardown(void **state)
{
    return tgt_pair_teardown(state);
}

/* GLSL bounds sin, cos and log (near 1) by absolute, not relative, error: near a zero of the
 * output a correct driver's result can be 1e-3 off relatively, which a 1-element NMSE would
 * call a failure. Inputs are kept where |f(x)| >= 0.05 for those ops. */
static int near_output_zero(tgl_unary_op op, float x)
{
    switch (op) {
    case TGL_UNARY_SIN: return fabs(sin(x)) < 0.05;
    case TGL_UNARY_COS: return fabs(cos(x)) < 0.05;
    case TGL_UNARY_LOG: return fabs(log(x)) < 0.05;
    default: return 0;
    }
}

/* Input ranges that keep each op in its domain and away from poles. */
static void unary_input(tgt_rng *r, tgl_unary_op op, float *x, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        do {
        switch (op) {
        case TGL_UNARY_LOG: case TGL_UNARY_SQRT: case TGL_UNARY_RSQRT:
            x[i] = tgt_uniform(r, 1e-3f, 100.0f);
            break;
        case TGL_UNARY_RECIP:
            x[i] = tgt_uniform(r, 0.1f, 10.0f) * (tgt_next(r) & 1 ? 1.0f : -1.0f);
            break;
        case TGL_UNARY_EXP:
            x[i] = tgt_uniform(r, -20.0f, 20.0f);
            break;
        case TGL_UNARY_LOG1P:
            x[i] = tgt_uniform(r, -0.999f, 100.0f);
            break;
        default:
            x[i] = tgt_uniform(r, -8.0f, 8.0f);
        }
        } while (near_output_zero(op, x[i]));
    }
}

static void binary_input(tgt_rng *r, tgl_binary_op op, float *a, float *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (op == TGL_BINARY_POW) {
            a[i] = tgt_uniform(r, 0.05f, 5.0f);
            b[i] = tgt_uniform(r, -3.0f, 3.0f);
            if (i % 5 == 0) { /* negative bases with integer exponents, as powf allows */
                a[i] = -a[i];
                b[i] = floorf(b[i]);
            }
        } else {
            a[i] = tgt_uniform(r, -10.0f, 10.0f);
            b[i] = tgt_uniform(r, -10.0f, 10.0f);
            if (op == TGL_BINARY_DIV && fabsf(b[i]) < 0.1f)
                b[i] = 0.5f;
        }
    }
}

/* Exact ops must agree to rounding; transcendental ones within driver accuracy. */
static double unary_threshold(tgl_unary_op op)
{
    switch (op) {
    case TGL_UNARY_NEG: case TGL_UNARY_ABS: case TGL_UNARY_SQUARE: case TGL_UNARY_RELU:
    case TGL_UNARY_FLOOR: case TGL_UNARY_CEIL: case TGL_UNARY_RECIP: case TGL_UNARY_SQRT:
    case TGL_UNARY_ROUND: case TGL_UNARY_TRUNC: case TGL_UNARY_SIGN:
        return 1e-10;
    default:
        return 1e-9;
    }
}

static double binary_threshold(tgl_binary_op op)
{
    return op == TGL_BINARY_POW || op == TGL_BINARY_ATAN2 ? 1e-9 : 1e-10;
}

/* One backend's run: inputs uploaded at element offset `front` of allocations with guards on
 * both sides, the output poisoned; returns the whole output allocation. */
typedef struct run_args {
    int binary, op, in_place;
    size_t n, front;
    const float *a, *b;
} run_args;

static float *run_on(tgl_backend *be, const run_args *ra)
{
    size_t total = ra->front + ra->n + GUARD;
    float *host = malloc(total * sizeof(float));
    tgl_ptr pa, pb = 0, po;
    TGT_OK(be, tgl_alloc(be, total * sizeof(float), &pa));
    TGT_OK(be, tgl_alloc(be, total * sizeof(float), &po));
    tgt_poison(host, total);
    memcpy(host + ra->front, ra->a, ra->n * sizeof(float));
    TGT_OK(be, tgl_copy_htod(be, pa, host, total * sizeof(float)));
    if (ra->binary) {
        TGT_OK(be, tgl_alloc(be, total * sizeof(float), &pb));
        memcpy(host + ra->front, ra->b, ra->n * sizeof(float));
        TGT_OK(be, tgl_copy_htod(be, pb, host, total * sizeof(float)));
    }
    tgt_poison(host, total);
    TGT_OK(be, tgl_copy_htod(be, po, host, total * sizeof(float)));

    tgl_ptr out = ra->in_place ? pa : po;
    size_t off = ra->front * sizeof(float);
    if (ra->binary)
        TGT_OK(be, tgl_binary(be, ra->op, pa + off, pb + off, out + off, ra->n));
    else
        TGT_OK(be, tgl_unary(be, ra->op, pa + off, out + off, ra->n));
    TGT_OK(be, tgl_copy_dtoh(be, host, out, total * sizeof(float)));
    TGT_OK(be, tgl_free(be, pa));
    TGT_OK(be, tgl_free(be, pb));
    TGT_OK(be, tgl_free(be, po));
    return host;
}

static void compare(pair *p, const run_args *ra, double threshold, const char *name)
{
    float *got = run_on(p->gl, ra);
    float *want = run_on(p->cpu, ra);
    size_t total = ra->front + ra->n + GUARD;
    if (!ra->in_place) {
        size_t g = tgt_first_unpoisoned(got, ra->front);
        if (g != ra->front)
            fail_msg("%s n=%zu: front guard element %zu overwritten", name, ra->n, g);
        g = tgt_first_unpoisoned(got + ra->front + ra->n, GUARD);
        if (g != GUARD)
            fail_msg("%s n=%zu: back guard element %zu overwritten", name, ra->n, g);
    }
    double e = tgt_nmse(got + ra->front, want + ra->front, ra->n);
    if (!(e <= threshold)) {
        for (size_t i = ra->front; i < ra->front + ra->n; i++) {
            if (!(fabsf(got[i] - want[i]) <= 1e-4f * fabsf(want[i]) + 1e-6f)) {
                print_error("first difference at %zu: gl %.9g cpu %.9g\n", i - ra->front, got[i], want[i]);
                break;
            }
        }
        fail_msg("%s n=%zu front=%zu in_place=%d: NMSE %.3g > %.3g (seed %llu)", name, ra->n,
                 ra->front, ra->in_place, e, threshold, (unsigned long long)tgt_seed());
    }
    (void)total;
    free(got);
    free(want);
}

static void unary_all(void *ctx)
{
    pair *p = ctx;
    for (int op = 0; op < TGL_UNARY_NOT; op++) { /* the float ops: all before NOT */
        if (!tgt_pick((size_t)op)) /* each op compiles its own kernels */
            continue;
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            size_t n = sizes[s];
            float *x = malloc((n + 1) * sizeof(float));
            unary_input(&p->rng, op, x, n);
            for (size_t f = 0; f < 3; f++) {
                size_t front = fronts[f];
                run_args ra = {0, op, (int)(front != 4 && s % 2), n, front, x, NULL};
                compare(p, &ra, unary_threshold(op), tgl_unary_name(op));
            }
            free(x);
        }
    }
}

/* Each test runs with the inputs read through SSBOs, through buffer textures with texelFetch
 * and, where the device reads them as images (llvmpipe), with imageLoad. */
static void test_unary_all(void **state)
{
    pair *p = *state;
    if (!p->gl)
        skip();
    tgt_with_and_without_textures(p->gl, unary_all, p);
}

static void binary_all(void *ctx)
{
    pair *p = ctx;
    for (int op = 0; op < TGL_BINARY_FLOOR_DIV; op++) { /* the float ops: all before FLOOR_DIV */
        if (!tgt_pick((size_t)op)) /* each op compiles its own kernels */
            continue;
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            size_t n = sizes[s];
            float *a = malloc((n + 1) * sizeof(float)), *b = malloc((n + 1) * sizeof(float));
            binary_input(&p->rng, op, a, b, n);
            for (size_t f = 0; f < 3; f++) {
                size_t front = fronts[f];
                run_args ra = {1, op, (int)(front != 4 && s % 2), n, front, a, b};
                compare(p, &ra, binary_threshold(op), tgl_binary_name(op));
            }
            free(a);
            free(b);
        }
    }
}

static void test_binary_all(void **state)
{
    pair *p = *state;
    if (!p->gl)
        skip();
    tgt_with_and_without_textures(p->gl, binary_all, p);
}

/* Tiny SSBO and grid limits force many chunks and 2-D grids on any device, and 3 elements per
 * invocation the grid-stride loop that some renderers' tuning uses. */
static void test_chunked_and_2d_grid(void **state)
{
    pair *p = *state;
    tgl_gl *gl = tgl_gl_of(p->gl);
    tgl_gl_limits saved = gl->limits;
    gl->limits.max_ssbo_block = 4096 + 64;
    gl->limits.wg_count[0] = 3;
    gl->limits.items_per_invocation = 3;
    size_t n = 100003;
    float *a = malloc(n * sizeof(float)), *b = malloc(n * sizeof(float));
    binary_input(&p->rng, TGL_BINARY_MUL, a, b, n);
    for (size_t front = 4; front <= 5; front++) {
        run_args ub = {0, TGL_UNARY_SILU, 0, n, front, a, NULL};
        compare(p, &ub, 1e-9, "silu (chunked)");
        run_args bb = {1, TGL_BINARY_MUL, 0, n, front, a, b};
        compare(p, &bb, 1e-10, "mul (chunked)");
        run_args sq = {0, TGL_UNARY_SQUARE, 1, 4099, front, a, NULL};
        compare(p, &sq, 1e-10, "square (3 per invocation, in place)");
    }
    gl->limits = saved;
    free(a);
    free(b);
}

/* An op over limits.sweep_bytes or more walks its range the other way from the last such op
 * (glsl/common/sweep.glsl): both directions, set explicitly, give the CPU's result over wide,
 * vec4 and scalar pieces, in place too, and each such call flips the direction once; a smaller
 * op walks forward and leaves the direction as it was. */
static void test_both_directions(void **state)
{
    pair *p = *state;
    if (!p->gl) {
        skip();
        return;
    }
    tgl_gl *gl = tgl_gl_of(p->gl);
    const uint64_t saved = gl->limits.sweep_bytes;
    const size_t ns[] = {7, 4099, (1u << 20) + 3};
    for (size_t s = 0; s < sizeof ns / sizeof ns[0]; s++) {
        size_t n = ns[s];
        float *a = malloc(n * sizeof(float)), *b = malloc(n * sizeof(float));
        binary_input(&p->rng, TGL_BINARY_SUB, a, b, n);
        for (unsigned backward = 0; backward < 2; backward++) {
            for (size_t f = 0; f < 2; f++) {
                run_args runs[] = {{1, TGL_BINARY_SUB, 0, n, fronts[f], a, b},
                                   {0, TGL_UNARY_NEG, 1, n, fronts[f], a, NULL}};
                for (size_t r = 0; r < 2; r++) {
                    /* the smallest op here (7 elements, 2 operands) reaches it */
                    gl->limits.sweep_bytes = 2 * 7 * sizeof(float);
                    gl->sweep_backward = backward;
                    compare(p, &runs[r], 1e-10, backward ? "backward" : "forward");
                    if (gl->sweep_backward != !backward)
                        fail_msg("n=%zu: the direction after a %s call is %u", n, backward ? "backward" : "forward",
                                 gl->sweep_backward);
                    /* the binary op's 3 operands stay below it: forward, the direction kept */
                    gl->limits.sweep_bytes = 3 * n * sizeof(float) + 1;
                    gl->sweep_backward = backward;
                    compare(p, &runs[r], 1e-10, "below sweep_bytes");
                    if (gl->sweep_backward != backward)
                        fail_msg("n=%zu: an op below sweep_bytes changed the direction", n);
                }
            }
        }
        free(a);
        free(b);
    }
    gl->limits.sweep_bytes = saved;
}

/* The documented special-value semantics hold on GL exactly as on the CPU. */
static void test_special_values(void **state)
{
    pair *p = *state;
    const float nan = NAN, inf = INFINITY;
    const float a[] = {nan, 1.0f, nan, -2.0f, -2.0f, -0.5f, 0.0f, 0.0f, -0.0f, -1.0f, 4.0f, inf,
                       -inf, 2.0f, -8.0f, 100.0f, -100.0f, 1.0f};
    const float b[] = {1.0f, nan, nan, 3.0f, 2.0f, 0.5f, -1.0f, 2.0f, 3.0f, inf, 0.0f, -2.0f,
                       3.0f, -inf, 1.0f / 3.0f, 0.0f, 0.0f, nan};
    /* The values repeated over 4096 + 18 elements at 32-byte alignment too, so llvmpipe's wide
     * kernels (whole workgroups of 4096) carry them as well as the vec4 and scalar ones. */
    const size_t base = sizeof a / sizeof a[0], n = 4096 + base;
    float *ta = malloc(n * sizeof(float)), *tb = malloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++)
        ta[i] = a[i % base], tb[i] = b[i % base];
    const tgl_binary_op bops[] = {TGL_BINARY_MAX, TGL_BINARY_MIN, TGL_BINARY_POW, TGL_BINARY_ADD};
    const tgl_unary_op uops[] = {TGL_UNARY_RELU, TGL_UNARY_SIGMOID, TGL_UNARY_TANH, TGL_UNARY_GELU,
                                 TGL_UNARY_SILU, TGL_UNARY_ABS, TGL_UNARY_NEG};
    for (int k = 0; k < (int)(sizeof bops / sizeof bops[0]) + (int)(sizeof uops / sizeof uops[0]); k++) {
        int binary = k < (int)(sizeof bops / sizeof bops[0]);
        int op = binary ? (int)bops[k] : (int)uops[k - (int)(sizeof bops / sizeof bops[0])];
        for (size_t f = 0; f < 2; f++) {
            size_t front = fronts[f];
            run_args ra = {binary, op, 0, f ? base : n, front, ta, binary ? tb : NULL};
            float *got = run_on(p->gl, &ra), *want = run_on(p->cpu, &ra);
            const char *name = binary ? tgl_binary_name(op) : tgl_unary_name(op);
            for (size_t i = 0; i < ra.n; i++) {
                float g = got[front + i], w = want[front + i], x = ta[i], y = tb[i];
                /* Drivers may flush subnormal results to zero, hence the absolute floor. */
                int same = (isnan(g) && isnan(w)) || g == w || fabsf(g - w) <= 1e-6f * fabsf(w) + 1e-30f;
                if (!same && binary)
                    fail_msg("%s(%g, %g) at %zu: gl %g, cpu %g", name, (double)x, (double)y, i, (double)g, (double)w);
                if (!same)
                    fail_msg("%s(%g) at %zu: gl %g, cpu %g", name, (double)x, i, (double)g, (double)w);
            }
            free(got);
            free(want);
        }
    }
    free(ta);
    free(tb);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_unary_all, tgt_pair_restore_reads),
        cmocka_unit_test_teardown(test_binary_all, tgt_pair_restore_reads),
        cmocka_unit_test(test_chunked_and_2d_grid),
        cmocka_unit_test(test_both_directions),
        cmocka_unit_test(test_special_values),
    };
    return cmocka_run_group_tests_name("ops/elementwise (gl vs cpu)", tests, setup, teardown);
}
