/* tgl_map: 30+ expressions evaluated on GL and compared with the CPU oracle (which evaluates the
 * same tree), with guards, in place, and with the program cache telling distinct trees apart;
 * 30+ malformed expressions rejected with a message naming the position and what was expected,
 * on both backends, without touching the output; an expression over more inputs than the
 * device's storage blocks allow run in stages, with the one kernel's result. */
#include "testing.h"
#include "gl/gl_internal.h"

#include <locale.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define GUARD 8

typedef tgt_pair pair;

static int setup(void **state)
{
    return tgt_pair_setup(state, 0x3A9);
}

static int teardown(void **state)
{
    return tgt_pair_teardown(state);
}

/* Runs expr over n elements of `ni` inputs (the inputs hold positive values in [0.5, 2]
 * except c, which holds values in [-2, 2]), each `front` floats into its allocation (which
 * starts 32-byte aligned: 8 keeps windows 32-byte aligned, where llvmpipe's wide kernel takes
 * whole workgroups of 2048 elements; 4 keeps them 16-byte aligned: the vec4 kernel; 1 does not:
 * the scalar one); returns front + n + GUARD floats of the output. */
static float *run_on(tgl_backend *b, const char *expr, float *const *in, size_t ni, size_t n, int in_place,
                     size_t front, tgl_status *st)
{
    size_t total = front + n + GUARD, bytes = total * sizeof(float), f = front * sizeof(float);
    float *host = malloc(bytes);
    tgl_ptr p[8] = {0}, o;
    for (size_t k = 0; k < ni; k++) {
        TGT_OK(b, tgl_alloc(b, bytes, &p[k]));
        TGT_OK(b, tgl_copy_htod(b, p[k] + f, in[k], n * sizeof(float)));
    }
    tgt_poison(host, total);
    TGT_OK(b, tgl_alloc(b, bytes, &o));
    TGT_OK(b, tgl_copy_htod(b, o, host, bytes));
    tgl_ptr args[8];
    for (size_t k = 0; k < ni; k++)
        args[k] = p[k] + f;
    tgl_ptr dst = o + f;
    if (in_place && ni) {
        dst = args[0];
        o = p[0];
    }
    *st = tgl_map(b, expr, args, ni, dst, n);
    TGT_OK(b, tgl_copy_dtoh(b, host, o, bytes));
    for (size_t k = 0; k < ni; k++)
        TGT_OK(b, tgl_free(b, p[k]));
    if (!in_place || !ni)
        TGT_OK(b, tgl_free(b, o));
    return host;
}

static const char *const good[] = {
    "a", "a + b", "a - b * c", "(a - b) * c", "sqrt(a*b + c*c)", "-a", "--a", "- -a + -(b)",
    "exp(-a) / (1 + exp(-a))", "a / b / c", "2.5", "1e-3 * a + .5", "3. * a", "1.5E+2 - a",
    "max(a, b) - min(a, c)", "pow(a, b)", "pow(c, 3)", "clamp(c, -0.5, 0.5)", "select(c, a, b)",
    "select(c - c, a, b)", "gelu(c) + silu(c) + sigmoid(c)", "tanh(c * 4)", "relu(c) - relu(-c)",
    "abs(c) + floor(c) + ceil(c)", "log(a) + rsqrt(a) + recip(b)", "square(c) - c*c",
    "sin(c) * sin(c) + cos(c) * cos(c)", "neg(a) + add(a, b) - sub(b, c) * mul(a, c) / div(a, b)",
    "exp(log(a))", "a*b*c*d*e*f*g*h", "((((((((a))))))))", " \t a\n+\rb ",
    "clamp(pow(a, c), 0.1, max(b, 1.5)) + select(c, sqrt(a), -sqrt(b))",
};

static void expressions_all(void *ctx)
{
    pair *p = ctx;
    const size_t sizes[] = {1, 7, 4099, 100003};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        size_t n = sizes[s];
        float *in[8];
        for (size_t k = 0; k < 8; k++) {
            in[k] = malloc(n * sizeof(float));
            for (size_t i = 0; i < n; i++)
                in[k][i] = k == 2 ? tgt_uniform(&p->rng, -2, 2) : tgt_uniform(&p->rng, 0.5f, 2);
        }
        for (size_t e = 0; e < sizeof good / sizeof good[0]; e++) {
            size_t ni = strchr(good[e], 'h') ? 8 : 3;
            int in_place = e % 3 == 0;
            size_t front = e % 2 ? 1 : e % 4 ? 4 : 8;
            tgl_status sg, sc;
            float *g = run_on(p->gl, good[e], in, ni, n, in_place, front, &sg);
            float *c = run_on(p->cpu, good[e], in, ni, n, in_place, front, &sc);
            if (sg || sc)
                fail_msg("'%s': gl %s, cpu %s: %s", good[e], tgl_status_string(sg), tgl_status_string(sc),
                         tgl_last_error(sg ? p->gl : p->cpu));
            if (!in_place &&
                (tgt_first_unpoisoned(g, front) != front || tgt_first_unpoisoned(g + front + n, GUARD) != GUARD))
                fail_msg("'%s' n=%zu: guard overwritten", good[e], n);
            /* Each output counts as at least 0.1 in size: an output whose O(1)-to-16 terms cancel
             * to near zero is off relatively by their roundings over its own size, which failed a
             * correct kernel at n = 1 (seed 1883016374788856 on the H100: 'a - b * c', NMSE
             * 2.6e-9, the GPU's b*c rounded in f32 against the oracle's exact one). So a near-zero
             * output may be off by about 3e-6; a wrong one is off by far more. */
            double err = tgt_nmse_floor(g + front, c + front, n, 0.1);
            if (!(err <= 1e-9))
                fail_msg("'%s' n=%zu: NMSE %.3g (seed %llu)", good[e], n, err, (unsigned long long)tgt_seed());
            free(g), free(c);
        }
        for (size_t k = 0; k < 8; k++)
            free(in[k]);
    }
}

/* With inputs through buffer textures (up to 4 inputs, where the device's element-wise kernels
 * use them) and through SSBOs. */
static void test_expressions(void **state)
{
    pair *p = *state;
    if (!p->gl)
        skip();
    tgt_with_and_without_textures(p->gl, expressions_all, p);
}

static const struct { const char *expr; size_t ni; const char *says; } bad[] = {
    {"", 1, "position 0: expected a number"}, {"a +", 1, "position 3: expected a number"},
    {"a b", 2, "position 2: expected an operator"}, {"(a", 1, "expected ')'"}, {"a)", 1, "position 1"},
    {"((a)", 1, "expected ')'"}, {"sqrt(a", 1, "expected ')' after 1 argument of sqrt"},
    {"sqrt a", 1, "unknown name 'sqrt'"}, {"foo(a)", 1, "unknown function 'foo'"}, {"x", 1, "unknown name 'x'"},
    {"ab", 2, "unknown name 'ab'"}, {"i", 8, "unknown name 'i'"}, {"pow(a)", 1, "expected ',' and a second"},
    {"max(a, b, c)", 3, "expected ')' after 2 arguments of max"}, {"clamp(a, b)", 2, "expected ',' and another"},
    {"sqrt()", 1, "position 5: expected a number"}, {"a $ b", 2, "found '$'"}, {"a + \x01", 1, "byte 0x01"},
    {"1e", 1, "digits after the exponent"}, {"1e+", 1, "digits after the exponent"}, {".", 1, "digits around '.'"},
    {"1e39", 1, "out of f32 range"}, {"d", 3, "uses input 'd' but n_inputs is 3"},
    {"a + b", 1, "uses input 'b' but n_inputs is 1"}, {"a,b", 2, "found ','"}, {"*a", 1, "found '*'"},
    {"a ** b", 2, "found '*'"}, {"a +* b", 2, "found '*'"}, {"nan", 1, "unknown name 'nan'"},
    {"inf * a", 1, "unknown name 'inf'"}, {"1.2.3", 1, "found '.'"}, {"exp(", 1, "found the end"},
    {"select(a, b)", 2, "expected ',' and another"}, {"a[0]", 1, "found '['"},
    {"00000000000000000000000000000000000000000000000000000000000000000001", 1, "number longer"},
};

static void expect_rejected(tgl_backend *b, const char *expr, size_t ni, const char *says)
{
    float x[4] = {1, 2, 3, 4}, *in[8] = {x, x, x, x, x, x, x, x};
    tgl_status st;
    float *out = run_on(b, expr, in, ni, 4, 0, 1, &st);
    if (st != TGL_ERR_INVALID_ARGUMENT)
        fail_msg("%s: '%s' -> %s, expected TGL_ERR_INVALID_ARGUMENT", tgl_backend_name(b), expr, tgl_status_string(st));
    if (!strstr(tgl_last_error(b), says))
        fail_msg("%s: '%s': message '%s' does not say '%s'", tgl_backend_name(b), expr, tgl_last_error(b), says);
    assert_int_equal(tgt_first_unpoisoned(out, 4 + 1 + GUARD), 4 + 1 + GUARD);
    free(out);
}

static void test_malformed(void **state)
{
    pair *p = *state;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        expect_rejected(p->gl, bad[i].expr, bad[i].ni, bad[i].says);
        expect_rejected(p->cpu, bad[i].expr, bad[i].ni, bad[i].says);
    }
    /* Limits: deep nesting, long text, too many nodes, too many inputs. */
    char *deep = malloc(200);
    memset(deep, '(', 60);
    deep[60] = 'a';
    memset(deep + 61, ')', 60);
    deep[121] = '\0';
    expect_rejected(p->gl, deep, 1, "nests deeper than 32");
    /* 32 levels are allowed, as documented: parentheses, calls, unary minus; 33 are not */
    static const char *const open_level[3] = {"(", "exp(", "-"}, *const close_level[3] = {")", ")", ""};
    for (int kind = 0; kind < 3; kind++)
        for (int levels = 32; levels <= 33; levels++) {
            char text[256];
            size_t used = 0;
            for (int i = 0; i < levels; i++)
                used += (size_t)snprintf(text + used, sizeof text - used, "%s", open_level[kind]);
            used += (size_t)snprintf(text + used, sizeof text - used, "a * 0");
            for (int i = 0; i < levels; i++)
                used += (size_t)snprintf(text + used, sizeof text - used, "%s", close_level[kind]);
            assert_true(used < sizeof text);
            tgl_ptr buf;
            TGT_OK(p->cpu, tgl_alloc(p->cpu, 64, &buf));
            tgl_status st = tgl_map(p->cpu, text, &buf, 1, buf, 16);
            if (levels == 32 && st)
                fail_msg("%d levels of %s: %s", levels, open_level[kind], tgl_last_error(p->cpu));
            if (levels == 33)
                expect_rejected(p->cpu, text, 1, "nests deeper than 32");
            TGT_OK(p->cpu, tgl_free(p->cpu, buf));
        }
    memset(deep, '-', 100);
    memcpy(deep + 100, "a", 2);
    expect_rejected(p->cpu, deep, 1, "nests deeper than 32");
    free(deep);
    char *longer = malloc(10241);
    for (size_t i = 0; i < 10240; i += 4)
        memcpy(longer + i, "a + ", 4);
    longer[10239] = 'a';
    longer[10240] = '\0';
    expect_rejected(p->gl, longer, 1, "longer than 4096 bytes");
    longer[4000] = '\0';
    expect_rejected(p->cpu, longer, 1, "more than 256");
    free(longer);
    tgl_ptr x[9] = {0};
    TGT_EXPECT(p->gl, tgl_map(p->gl, "a", x, 9, 0, 4), TGL_ERR_INVALID_ARGUMENT);
    TGT_EXPECT(p->gl, tgl_map(p->gl, NULL, x, 1, 0, 4), TGL_ERR_INVALID_ARGUMENT);
    TGT_EXPECT(p->gl, tgl_map(p->gl, "a", NULL, 1, 0, 4), TGL_ERR_INVALID_ARGUMENT);
    /* A valid expression with bad pointers, and out overlapping an input. */
    tgl_ptr buf;
    TGT_OK(p->gl, tgl_alloc(p->gl, 64, &buf));
    tgl_ptr in1[1] = {buf};
    TGT_EXPECT(p->gl, tgl_map(p->gl, "a", in1, 1, buf + 4, 8), TGL_ERR_INVALID_ARGUMENT);
    TGT_EXPECT(p->gl, tgl_map(p->gl, "a", in1, 1, buf, 17), TGL_ERR_INVALID_POINTER);
    TGT_OK(p->gl, tgl_map(p->gl, "a + 1", in1, 1, buf, 0)); /* n == 0, but the expression is checked */
    TGT_EXPECT(p->gl, tgl_map(p->gl, "a +", in1, 1, buf, 0), TGL_ERR_INVALID_ARGUMENT);
    TGT_OK(p->gl, tgl_free(p->gl, buf));
}

/* An expression binds its used inputs and the output as storage buffers (where its inputs are
 * not read as textures). One that reads more inputs than the device binds beside out runs in
 * stages through temporaries: the result is the one kernel's (bit for bit where only exact
 * operations are involved) and the CPU's. The limit is lowered here to every value from ES
 * 3.1's 4 blocks up. */
static void test_storage_block_limit(void **state)
{
    pair *p = *state;
    if (!p->gl) {
        skip();
        return; /* (the analyzer does not know skip() leaves) */
    }
    struct tgl_device_info info;
    TGT_OK(p->gl, tgl_device_info(p->gl, &info));
    assert_true(info.max_storage_blocks >= 4u); /* ES 3.1's minimum (and TGL_LIMITS=es31-min's on desktop GL) */
    uint32_t *limit = &tgl_gl_of(p->gl)->limits.storage_blocks, saved = *limit;
    const size_t n = 1003;
    float *in[8];
    for (size_t k = 0; k < 8; k++) {
        in[k] = malloc(n * sizeof(float));
        for (size_t i = 0; i < n; i++)
            in[k][i] = k == 2 ? tgt_uniform(&p->rng, -2, 2) : tgt_uniform(&p->rng, 0.5f, 2);
    }
    /* exact: + - * / and comparisons only, which compute the same bits in any kernel; the
     * others take functions (exp, pow, ...) that a driver may compile differently in another
     * kernel within GLSL's accuracy (NVIDIA's did) */
    static const struct { const char *text; int exact; } wide[] = {
        {"a*b*c*d + e - f", 1}, {"a*b*c*d*e*f*g*h", 1}, {"(a + b) * (c - d) + (e * f - g) / h", 1},
        {"select(c, a*b + d, e - f*g) + clamp(h, a, b)", 1}, {"max(a, h) * min(b, g) - pow(d, c) + sqrt(e*f)", 0},
        {"a*(b + c*(d + e*(f + g*h)))", 1}, {"(a + b + c + d) * (a - e) * (b - f) * (c - g) * (d - h)", 1},
        {"clamp(a*b, c - d, e + f) + select(g - h, a, b) * exp(-c*c)", 0},
        {"((a > b) + (c < d) + (e >= f) + (g != h)) * a", 1},
        {"tanh(a - b) + gelu(c*d) + silu(e + f) - sigmoid(g*h)", 0},
    };
    for (size_t e = 0; e < sizeof wide / sizeof *wide; e++) {
        tgl_status s1, sg, sc;
        *limit = saved;
        float *one = run_on(p->gl, wide[e].text, in, 8, n, 0, 4, &s1);
        float *c = run_on(p->cpu, wide[e].text, in, 8, n, 0, 4, &sc);
        if (s1 || sc)
            fail_msg("'%s': gl %s, cpu %s: %s", wide[e].text, tgl_status_string(s1), tgl_status_string(sc),
                     tgl_last_error(s1 ? p->gl : p->cpu));
        for (uint32_t blocks = 4; blocks <= 8 && blocks <= saved; blocks++) {
            *limit = blocks;
            float *g = run_on(p->gl, wide[e].text, in, 8, n, e % 3 == 0, 4, &sg);
            *limit = saved;
            if (sg)
                fail_msg("'%s' under %u blocks: %s: %s", wide[e].text, blocks, tgl_status_string(sg),
                         tgl_last_error(p->gl));
            double staged = tgt_nmse(g + 4, one + 4, n);
            int differ = memcmp(g + 4, one + 4, n * sizeof(float)) != 0; // NOLINT(bugprone-suspicious-memory-comparison): bit for bit on purpose
            if (wide[e].exact ? differ : !(staged <= 1e-12))
                fail_msg("'%s' under %u blocks differs from one kernel's result (NMSE %.3g)", wide[e].text, blocks,
                         staged);
            if (e % 3 && tgt_first_unpoisoned(g + 4 + n, GUARD) != GUARD)
                fail_msg("'%s' under %u blocks: guard overwritten", wide[e].text, blocks);
            free(g);
        }
        double err = tgt_nmse_floor(one + 4, c + 4, n, 0.1);
        if (!(err <= 1e-9))
            fail_msg("'%s': NMSE %.3g against the CPU", wide[e].text, err);
        free(one), free(c);
    }
    *limit = saved;
    for (size_t k = 0; k < 8; k++)
        free(in[k]);
}

/* Number literals are read the way the grammar writes them whatever the process locale: in a
 * decimal-comma one (de_DE: scripts/run-tests.sh builds it under LOCPATH), `a*1.5` once
 * computed a*1 and `.5*a` 0 with TGL_OK on both backends. A literal the C library cannot read
 * whole is an error, not a prefix. */
static void test_number_locale(void **state)
{
    pair *p = *state;
    static const char *const comma_locales[] = {"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", "fr_FR.utf8"};
    const char *set = NULL;
    for (size_t i = 0; !set && i < sizeof comma_locales / sizeof comma_locales[0]; i++)
        set = setlocale(LC_ALL, comma_locales[i]);
    if (!set || strcmp(localeconv()->decimal_point, ",")) {
        setlocale(LC_ALL, "C");
        if (getenv("CI")) /* CI makes one (scripts/run-tests.sh): its absence there is a failure */
            fail_msg("no decimal-comma locale (de_DE.UTF-8 under LOCPATH=%s)", getenv("LOCPATH") ? getenv("LOCPATH") : "");
        skip();
        return;
    }
    const size_t n = 37;
    float *in[1] = {malloc(n * sizeof(float))};
    for (size_t i = 0; i < n; i++)
        in[0][i] = tgt_uniform(&p->rng, 0.5f, 2);
    static const struct { const char *expr; float scale, add; } cases[] = {
        {"a*1.5", 1.5f, 0}, {".5*a", 0.5f, 0}, {"a*2.5e-1 + 1.25", 0.25f, 1.25f}, {"a*1e1", 10.0f, 0},
    };
    tgl_backend *backends[2] = {p->gl, p->cpu};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        for (int k = 0; k < 2; k++) {
            if (!backends[k])
                continue;
            tgl_status st;
            float *got = run_on(backends[k], cases[c].expr, in, 1, n, 0, 4, &st);
            if (st)
                fail_msg("%s in %s: %s", cases[c].expr, set, tgl_last_error(backends[k]));
            for (size_t i = 0; i < n; i++) {
                float want = in[0][i] * cases[c].scale + cases[c].add;
                if (fabsf(got[4 + i] - want) > 1e-6f * fabsf(want))
                    fail_msg("%s on %s in %s: element %zu is %g, want %g", cases[c].expr, k ? "cpu" : "gl", set, i,
                             (double)got[4 + i], (double)want);
            }
            free(got);
        }
    setlocale(LC_ALL, "C");
    free(in[0]);
}

/* IEEE special values through expressions a compiler might fold (a*0 = 0, a+0 = a, a-a = 0 are
 * false for inf, NaN and -0): GL gives the CPU backend's bits (NaN counting as NaN). */
static void test_ieee_not_folded(void **state)
{
    pair *p = *state;
    if (!p->gl) {
        skip();
        return;
    }
    static const char *const exprs[] = {"a*0", "a+0", "0+a", "a-0", "select(a-a, 1, 2)", "a*0+5", "a/a", "a*1",
                                        "-(-a)", "a-a", "0*a+a", "a*0 + 0"};
    float in[1][12];
    const float specials[] = {INFINITY, -INFINITY, NAN, -0.0f, 0.0f, 1.0f, -2.5f, 3e38f};
    const size_t n = sizeof specials / sizeof specials[0];
    float *inputs[1] = {in[0]};
    memcpy(in[0], specials, sizeof specials);
    for (size_t e = 0; e < sizeof exprs / sizeof exprs[0]; e++)
        for (size_t front = 0; front <= 4; front += 4) { /* scalar and vec4 variants */
            tgl_status sg, sc;
            float *g = run_on(p->gl, exprs[e], inputs, 1, n, 0, front, &sg);
            float *c = run_on(p->cpu, exprs[e], inputs, 1, n, 0, front, &sc);
            assert_int_equal(sg, TGL_OK);
            assert_int_equal(sc, TGL_OK);
            for (size_t i = 0; i < n; i++) {
                float x = g[front + i], y = c[front + i];
                uint32_t bx, by;
                memcpy(&bx, &x, 4);
                memcpy(&by, &y, 4);
                if (!(isnan(x) && isnan(y)) && bx != by)
                    fail_msg("%s at a = %g: gl %g (0x%08x), cpu %g (0x%08x)", exprs[e], (double)specials[i], (double)x,
                             bx, (double)y, by);
            }
            free(g);
            free(c);
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_expressions, tgt_pair_restore_reads),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_storage_block_limit),
        cmocka_unit_test(test_number_locale),
        cmocka_unit_test_teardown(test_ieee_not_folded, tgt_pair_restore_reads),
    };
    return cmocka_run_group_tests_name("ops/map: fused expressions (gl vs cpu)", tests, setup, teardown);
}
