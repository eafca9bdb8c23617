/* tgl_map_t on GL compared with the CPU oracle, and both with hand-worked values: the typing
 * rules (i32 nodes wrap, / is f32, an integer literal stays exact, bool inputs count 0 or 1),
 * comparisons (NaN unordered, -0 == +0, i32 compared as integers), select's condition, the
 * conversion into every out dtype; then random expressions over 1-8 inputs of random dtypes
 * and layouts (negative, zero and gapped strides, broadcasts, 0-d and empty tensors, in place),
 * out's allocation poisoned around its elements: expressions of exact operations must agree bit
 * for bit (NaN payloads aside), the f32 functions within the driver's accuracy; the same under
 * a shrunk SSBO block limit; and every refusal, on both backends alike. */
#include "testing.h"
#include "tensors.h"
#include "cpu/cpu_convert.h"
#include "gl/gl_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef tgt_pair pair;

static int setup(void **state)
{
    return tgt_pair_setup(state, 0x3A9);
}

static int teardown(void **state)
{
    return tgt_pair_teardown(state);
}

#define POISON 0xA5
#define MAX_IN 8

static const tgl_dtype dtypes[] = {TGL_DTYPE_F32, TGL_DTYPE_F16, TGL_DTYPE_BF16, TGL_DTYPE_I32, TGL_DTYPE_BOOL};

/* One call over tensors whose data are byte offsets into host images of their allocations;
 * out's allocation is filled with POISON first (unless it is input 0's) and comes back in got. */
typedef struct call {
    const char *expr;
    size_t nin;
    tgl_tensor in[MAX_IN], out;
    const uint8_t *init[MAX_IN];
    size_t bytes[MAX_IN], out_bytes;
    int out_is_in;
    int exact; /* only exact operations: GL and the CPU agree bit for bit */
} call;

static tgl_status run_on(tgl_backend *b, const call *c, uint8_t *got)
{
    tgl_ptr a[MAX_IN] = {0}, d;
    tgl_tensor t[MAX_IN], o = c->out;
    for (size_t k = 0; k < c->nin; k++) {
        TGT_OK(b, tgl_alloc(b, c->bytes[k], &a[k]));
        TGT_OK(b, tgl_copy_htod(b, a[k], c->init[k], c->bytes[k]));
        t[k] = c->in[k];
        t[k].data += a[k];
    }
    if (c->out_is_in) {
        d = a[0];
    } else {
        TGT_OK(b, tgl_alloc(b, c->out_bytes, &d));
        memset(got, POISON, c->out_bytes);
        TGT_OK(b, tgl_copy_htod(b, d, got, c->out_bytes));
    }
    o.data += d;
    tgl_status st = tgl_map_t(b, c->expr, t, c->nin, &o);
    TGT_OK(b, tgl_copy_dtoh(b, got, d, c->out_bytes));
    for (size_t k = 0; k < c->nin; k++)
        TGT_OK(b, tgl_free(b, a[k]));
    if (!c->out_is_in)
        TGT_OK(b, tgl_free(b, d));
    return st;
}

/* GL's and the CPU's elements agree: the same bytes, or (float dtypes) both NaN, or (inexact
 * expressions) within the f32 functions' accuracy plus a unit of the dtype's rounding. */
static int agree(const call *c, tgl_dtype dt, const uint8_t *g, const uint8_t *w)
{
    size_t es = tgl_dtype_size(dt);
    if (!memcmp(g, w, es))
        return 1;
    if (dt == TGL_DTYPE_I32 || dt == TGL_DTYPE_BOOL)
        return 0;
    float x = tgl_cpu_load_f32(dt, g), y = tgl_cpu_load_f32(dt, w);
    if (isnan(x) && isnan(y))
        return 1; /* NaN payloads are the driver's */
    if (x == 0.0f && y == 0.0f)
        return 1; /* GLSL's max and min pick either of -0 and +0 (max(-a, a) may be abs(a)) */
    if (c->exact || isinf(x) || isinf(y) || isnan(x) || isnan(y))
        return 0;
    if (fabsf(x) < 0x1p-126f && fabsf(y) < 0x1p-126f)
        return 1; /* devices may flush subnormals */
    double unit = dt == TGL_DTYPE_F32 ? 0.0 : dt == TGL_DTYPE_F16 ? 1.0 / 1024 : 1.0 / 128;
    double rtol = 2e-5 + unit, atol = 2e-6 + (dt == TGL_DTYPE_F16 ? 6e-8 : 0.0);
    return fabs((double)x - (double)y) <= rtol * fabs((double)y) + atol;
}

/* The call on gl and cpu: both succeed, and every element slot of out's allocation agrees. */
static void same_run(pair *p, const call *c, const char *what)
{
    uint8_t *g = malloc(c->out_bytes), *w = malloc(c->out_bytes);
    tgl_dtype dt = c->out.dtype;
    size_t es = tgl_dtype_size(dt);
    TGT_OK(p->cpu, run_on(p->cpu, c, w));
    if (p->gl) {
        TGT_OK(p->gl, run_on(p->gl, c, g));
        for (size_t i = 0; i + es <= c->out_bytes; i += es)
            if (!agree(c, dt, g + i, w + i)) {
                uint32_t gb = 0, wb = 0;
                memcpy(&gb, g + i, es);
                memcpy(&wb, w + i, es);
                fail_msg("%s: \"%s\" into %s (%zu dims, %zu inputs): element at byte %zu is 0x%x on gl, 0x%x on cpu",
                         what, c->expr, tgl_dtype_name(dt), c->out.ndim, c->nin, i, gb, wb);
            }
    }
    free(g);
    free(w);
}

/* ---- hand-worked values ------------------------------------------------------------------- */

typedef struct known {
    const char *expr;
    tgl_dtype a_dt, b_dt, out_dt; /* b_dt: the second input's (unused when the expr has no b) */
    uint32_t a, b, want;         /* bits */
} known;

#define I(x) ((uint32_t)(int32_t)(x))
#define F32_NAN 0x7FC00000u
#define F32_INF 0x7F800000u
#define F32_NEG0 0x80000000u
static const known knowns[] = {
    /* i32 nodes wrap; / is f32; integer literals stay exact */
    {"a + b", TGL_DTYPE_I32, TGL_DTYPE_I32, TGL_DTYPE_I32, I(INT32_MAX), 1u, I(INT32_MIN)},
    {"a * b", TGL_DTYPE_I32, TGL_DTYPE_I32, TGL_DTYPE_I32, 65536u, 65536u, 0u},
    {"-a", TGL_DTYPE_I32, TGL_DTYPE_I32, TGL_DTYPE_I32, I(INT32_MIN), 0u, I(INT32_MIN)},
    {"abs(a)", TGL_DTYPE_I32, TGL_DTYPE_I32, TGL_DTYPE_I32, I(INT32_MIN), 0u, I(INT32_MIN)},
    {"relu(a) + floor(b)", TGL_DTYPE_I32, TGL_DTYPE_I32, TGL_DTYPE_I32, I(-5), I(-7), I(-7)},
    {"a / 2", TGL_DTYPE_I32, TGL_DTYPE_I32, TGL_DTYPE_F32, 7u, 0u, 0x40600000u},             /* 3.5 */
    {"a / b", TGL_DTYPE_I32, TGL_DTYPE_I32, TGL_DTYPE_F32, 1u, 0u, F32_INF},
    {"a + 16777217", TGL_DTYPE_I32, TGL_DTYPE_I32, TGL_DTYPE_I32, 0u, 0u, 16777217u},
    {"a + 16777217", TGL_DTYPE_F32, TGL_DTYPE_I32, TGL_DTYPE_F32, 0u, 0u, 0x4B800000u},      /* 2^24 */
    {"a * 1.5", TGL_DTYPE_I32, TGL_DTYPE_I32, TGL_DTYPE_I32, 3u, 0u, 4u},                    /* 4.5 -> 4 */
    {"a * 1.5", TGL_DTYPE_I32, TGL_DTYPE_I32, TGL_DTYPE_I32, I(-3), 0u, I(-4)},
    {"a * 2.0", TGL_DTYPE_I32, TGL_DTYPE_I32, TGL_DTYPE_I32, I(INT32_MAX), 0u, I(INT32_MAX)}, /* saturates */
    {"a + b", TGL_DTYPE_I32, TGL_DTYPE_F32, TGL_DTYPE_F32, 16777217u, 0x3F800000u, 0x4B800000u},
    {"clamp(a, 0, 6)", TGL_DTYPE_I32, TGL_DTYPE_I32, TGL_DTYPE_I32, I(-3), 0u, 0u},
    {"clamp(a, 0, 6)", TGL_DTYPE_I32, TGL_DTYPE_I32, TGL_DTYPE_F16, 9u, 0u, 0x4600u},       /* 6.0 */
    {"2 + 3", TGL_DTYPE_I32, TGL_DTYPE_I32, TGL_DTYPE_I32, 0u, 0u, 5u},
    /* bool inputs count 0 or 1, whatever their byte */
    {"a + b", TGL_DTYPE_BOOL, TGL_DTYPE_BOOL, TGL_DTYPE_I32, 7u, 1u, 2u},
    {"a * 0.5", TGL_DTYPE_BOOL, TGL_DTYPE_BOOL, TGL_DTYPE_F32, 0x80u, 0u, 0x3F000000u},
    /* half inputs exact in f32; out conversions as tgl_copy's */
    {"a * 2", TGL_DTYPE_F16, TGL_DTYPE_F16, TGL_DTYPE_F32, 0x7BFFu, 0u, 0x47FFE000u},         /* 131008 */
    {"a * 2", TGL_DTYPE_F16, TGL_DTYPE_F16, TGL_DTYPE_F16, 0x7BFFu, 0u, 0x7C00u},             /* inf */
    {"a + b", TGL_DTYPE_BF16, TGL_DTYPE_F16, TGL_DTYPE_BF16, 0x3F80u, 0x3C00u, 0x4000u},      /* 1 + 1 */
    {"a", TGL_DTYPE_F32, TGL_DTYPE_F32, TGL_DTYPE_I32, F32_NAN, 0u, 0u},
    {"a", TGL_DTYPE_F32, TGL_DTYPE_F32, TGL_DTYPE_BOOL, F32_NEG0, 0u, 0u},
    {"a", TGL_DTYPE_F32, TGL_DTYPE_F32, TGL_DTYPE_BOOL, F32_NAN, 0u, 1u},
    /* comparisons: 1 or 0; NaN unordered; -0 == +0; i32 as integers; mixed through f32 */
    {"a > 0.5", TGL_DTYPE_F32, TGL_DTYPE_F32, TGL_DTYPE_I32, F32_NAN, 0u, 0u},
    {"a != a", TGL_DTYPE_F32, TGL_DTYPE_F32, TGL_DTYPE_I32, F32_NAN, 0u, 1u},
    {"a == a", TGL_DTYPE_F32, TGL_DTYPE_F32, TGL_DTYPE_BOOL, F32_NAN, 0u, 0u},
    {"a == b", TGL_DTYPE_F32, TGL_DTYPE_F32, TGL_DTYPE_I32, F32_NEG0, 0u, 1u},
    {"a < b", TGL_DTYPE_F32, TGL_DTYPE_F32, TGL_DTYPE_I32, F32_NEG0, 0u, 0u},
    {"a < b", TGL_DTYPE_I32, TGL_DTYPE_I32, TGL_DTYPE_I32, I(INT32_MIN), I(INT32_MAX), 1u},
    {"a == b", TGL_DTYPE_I32, TGL_DTYPE_I32, TGL_DTYPE_I32, 16777217u, 16777216u, 0u},
    {"a == b", TGL_DTYPE_I32, TGL_DTYPE_F32, TGL_DTYPE_I32, 16777217u, 0x4B800000u, 1u},    /* through f32 */
    {"(a >= b) * 3", TGL_DTYPE_F16, TGL_DTYPE_F16, TGL_DTYPE_I32, 0x3C00u, 0x3C00u, 3u},
    {"(a < b) == (b > a)", TGL_DTYPE_I32, TGL_DTYPE_I32, TGL_DTYPE_BOOL, 1u, 2u, 1u},
    /* select: a non-zero condition takes x; -0 is zero, NaN is not */
    {"select(a, 1, 2)", TGL_DTYPE_F32, TGL_DTYPE_F32, TGL_DTYPE_I32, F32_NEG0, 0u, 2u},
    {"select(a, 1, 2)", TGL_DTYPE_F32, TGL_DTYPE_F32, TGL_DTYPE_I32, F32_NAN, 0u, 1u},
    {"select(a > b, a, b)", TGL_DTYPE_I32, TGL_DTYPE_I32, TGL_DTYPE_I32, I(-4), I(-9), I(-4)},
    {"select(a, b, 0.5)", TGL_DTYPE_BOOL, TGL_DTYPE_I32, TGL_DTYPE_F32, 1u, 3u, 0x40400000u},
    /* f32 nodes keep IEEE: nothing folded */
    {"a * 0", TGL_DTYPE_F32, TGL_DTYPE_F32, TGL_DTYPE_F32, F32_INF, 0u, F32_NAN},
    {"a + 0", TGL_DTYPE_F32, TGL_DTYPE_F32, TGL_DTYPE_F32, F32_NEG0, 0u, 0u},
    {"select(a - a, 1, 2)", TGL_DTYPE_F32, TGL_DTYPE_F32, TGL_DTYPE_I32, F32_INF, 0u, 1u},
    /* a comparison of a value with itself is a constant 0: the product with it still IEEE's
     * (llvmpipe folded it to 0 until tgl_itof's result stopped being a constant) */
    {"a * (a > a)", TGL_DTYPE_F32, TGL_DTYPE_F32, TGL_DTYPE_F32, F32_INF, 0u, F32_NAN},
    {"a * (a > a)", TGL_DTYPE_F32, TGL_DTYPE_F32, TGL_DTYPE_F32, 0xC0A00000u, 0u, F32_NEG0}, /* -5 */
    {"clamp((a * (a > a)), a, 4)", TGL_DTYPE_F32, TGL_DTYPE_F32, TGL_DTYPE_BOOL, 0xFF800000u, 0u, 1u},
};

/* Runs "expr" over 0-d a and b on backend bk; the out element's bits. */
static uint32_t known_on(tgl_backend *bk, const known *k)
{
    tgl_tensor t[2], o = tgl_tensor_contiguous(0, k->out_dt, 0, NULL);
    tgl_ptr a[2], d;
    const uint32_t v[2] = {k->a, k->b};
    const tgl_dtype dt[2] = {k->a_dt, k->b_dt};
    for (int i = 0; i < 2; i++) {
        TGT_OK(bk, tgl_alloc(bk, 4, &a[i]));
        TGT_OK(bk, tgl_copy_htod(bk, a[i], &v[i], 4)); /* little-endian: the low bytes are the element */
        t[i] = tgl_tensor_contiguous(a[i], dt[i], 0, NULL);
    }
    uint32_t got = 0xA5A5A5A5u;
    TGT_OK(bk, tgl_alloc(bk, 4, &d));
    TGT_OK(bk, tgl_copy_htod(bk, d, &got, 4));
    o.data = d;
    TGT_OK(bk, tgl_map_t(bk, k->expr, t, 2, &o));
    TGT_OK(bk, tgl_copy_dtoh(bk, &got, d, 4));
    for (int i = 0; i < 2; i++)
        TGT_OK(bk, tgl_free(bk, a[i]));
    TGT_OK(bk, tgl_free(bk, d));
    size_t es = tgl_dtype_size(k->out_dt);
    uint32_t keep = es == 4 ? 0u : 0xFFFFFFFFu << (8 * es);
    if ((got & keep) != (0xA5A5A5A5u & keep))
        fail_msg("\"%s\": bytes past the out element were written (0x%08x)", k->expr, got);
    return es == 4 ? got : got & ~keep;
}

static void test_known_values(void **state)
{
    pair *p = *state;
    for (size_t i = 0; i < sizeof knowns / sizeof knowns[0]; i++) {
        const known *k = &knowns[i];
        tgl_backend *bs[2] = {p->cpu, p->gl};
        for (int j = 0; j < 2; j++) {
            if (!bs[j])
                continue;
            uint32_t got = known_on(bs[j], k);
            int nan_ok = k->want == F32_NAN && k->out_dt == TGL_DTYPE_F32 && (got & 0x7FFFFFFFu) > 0x7F800000u;
            if (got != k->want && !nan_ok)
                fail_msg("\"%s\" (a %s 0x%x, b %s 0x%x) into %s on %s: 0x%x, want 0x%x", k->expr,
                         tgl_dtype_name(k->a_dt), k->a, tgl_dtype_name(k->b_dt), k->b, tgl_dtype_name(k->out_dt),
                         j ? "gl" : "cpu", got, k->want);
        }
    }
}

/* ---- random expressions ------------------------------------------------------------------- */

/* A random expression of depth at most `depth` over inputs a.. (nin of them, nin >= 1) into buf:
 * exact operations only (+ - * max min clamp select comparisons neg abs relu square floor ceil,
 * numbers that are small integers or eighths), or where `fns` one of the f32 functions (or / or
 * pow) of such expressions. */
static void random_expr(tgt_rng *r, size_t nin, int depth, int fns, char *buf, size_t size)
{
    static const char *const exact1[] = {"-", "abs", "relu", "square", "floor", "ceil"};
    static const char *const exact2[] = {"+", "-", "*", "max", "min"};
    static const char *const cmp[] = {"==", "!=", "<", "<=", ">", ">="};
    static const char *const fn1[] = {"exp", "log", "sqrt", "rsqrt", "recip", "sin", "cos", "tanh", "sigmoid",
                                      "gelu", "silu"};
    static const char *const fn2[] = {"/", "pow"};
    size_t pick = fns ? 8 : depth <= 0 ? tgt_below(r, 2) : tgt_below(r, 8);
    char x[512], y[512], z[512];
    switch (pick) {
    case 0: snprintf(buf, size, "%c", (char)('a' + tgt_below(r, nin))); return;
    case 1:
        if (tgt_below(r, 2))
            snprintf(buf, size, "%d", (int)tgt_below(r, 7)); /* an integer literal */
        else
            snprintf(buf, size, "%g", (double)((int)tgt_below(r, 64) - 32) / 8.0 + 0.125);
        return;
    case 2:
        random_expr(r, nin, depth - 1, fns, x, sizeof x);
        if (tgt_below(r, 6) == 0)
            snprintf(buf, size, "-(%s)", x);
        else
            snprintf(buf, size, "%s(%s)", exact1[tgt_below(r, 6)], x);
        return;
    case 3:
    case 4:
        random_expr(r, nin, depth - 1, fns, x, sizeof x);
        random_expr(r, nin, depth - 1, fns, y, sizeof y);
        {
            const char *op = exact2[tgt_below(r, 5)];
            if (op[0] == 'm')
                snprintf(buf, size, "%s(%s, %s)", op, x, y);
            else
                snprintf(buf, size, "(%s %s %s)", x, op, y);
        }
        return;
    case 5:
        random_expr(r, nin, depth - 1, fns, x, sizeof x);
        random_expr(r, nin, depth - 1, fns, y, sizeof y);
        snprintf(buf, size, "(%s %s %s)", x, cmp[tgt_below(r, 6)], y);
        return;
    case 6:
        random_expr(r, nin, depth - 1, fns, x, sizeof x);
        random_expr(r, nin, depth - 1, fns, y, sizeof y);
        random_expr(r, nin, depth - 1, fns, z, sizeof z);
        snprintf(buf, size, "select(%s, %s, %s)", x, y, z);
        return;
    case 7:
        random_expr(r, nin, depth - 1, fns, x, sizeof x);
        snprintf(buf, size, "clamp(%s, %c, %d)", x, (char)('a' + tgt_below(r, nin)), (int)tgt_below(r, 5));
        return;
    default: /* an inexact function at the root, of inputs or numbers: a comparison, rounding or
                conversion of its result would turn the driver's last bit into any difference,
                and large arguments (cos(2^31)) are outside GLSL's accuracy */
        random_expr(r, nin, 0, 0, x, sizeof x);
        random_expr(r, nin, 0, 0, y, sizeof y);
        if (tgt_below(r, 3))
            snprintf(buf, size, "%s(%s)", fn1[tgt_below(r, 11)], x);
        else if (tgt_below(r, 2))
            snprintf(buf, size, "(%s / %s)", x, y);
        else
            snprintf(buf, size, "%s(%s, %s)", fn2[1], x, y);
        return;
    }
}

/* Elements of dtype dt: small values whose products stay exact and normal (eighths up to 8,
 * small integers) with NaN, infinities and signed zeros now and then; i32 also its limits
 * (wrapping is exact) unless `fns` (an f32 function of 2^31 is outside GLSL's accuracy); bool
 * any byte. */
static void fill_values(tgt_rng *r, tgl_dtype dt, int fns, uint8_t *p, size_t bytes)
{
    size_t es = tgl_dtype_size(dt);
    for (size_t i = 0; i + es <= bytes; i += es) {
        size_t pick = tgt_below(r, 16);
        if (fns && dt == TGL_DTYPE_I32 && pick < 2)
            pick = 2;
        if (dt == TGL_DTYPE_BOOL) {
            p[i] = (uint8_t)(pick < 6 ? 0 : pick < 12 ? 1 : tgt_below(r, 256));
        } else if (dt == TGL_DTYPE_I32) {
            int32_t v = pick == 0 ? INT32_MIN : pick == 1 ? INT32_MAX : (int32_t)tgt_below(r, 41) - 20;
            memcpy(p + i, &v, 4);
        } else {
            float v = pick == 0 ? NAN : pick == 1 ? INFINITY : pick == 2 ? -INFINITY : pick == 3 ? -0.0f
                      : (float)((int)tgt_below(r, 129) - 64) / 8.0f;
            tgl_cpu_store_f32(dt, v, p + i);
        }
    }
}

/* `rounds` random calls: nin inputs (1-8, random dtypes; 4-8 and five trees joined where `wide`)
 * broadcast to a random out (random dtype, layout); every third round all dense (the linear
 * paths); now and then in place. */
static void random_calls(pair *p, tgl_backend *gl, int rounds, size_t max_dim, int fns, int wide, const char *what)
{
    tgl_backend *keep = p->gl;
    p->gl = gl;
    for (int round = 0; round < rounds; round++) {
        call c = {.nin = wide ? 4 + tgt_below(&p->rng, 5) : 1 + tgt_below(&p->rng, round % 4 == 0 ? 8 : 3),
                  .exact = !fns};
        char expr[4096];
        if (wide) { /* five trees joined: most read four inputs or more */
            char part[5][512];
            for (int k = 0; k < 5; k++)
                random_expr(&p->rng, c.nin, 1 + (int)tgt_below(&p->rng, 3), fns, part[k], sizeof part[k]);
            snprintf(expr, sizeof expr, "select(%s, %s, %s) - max(%s, %s)", part[0], part[1], part[2], part[3],
                     part[4]);
        } else {
            random_expr(&p->rng, c.nin, 1 + (int)tgt_below(&p->rng, 3), fns, expr, sizeof expr);
        }
        c.expr = expr;
        /* long dims in at most two dims: four of 300 would ask for gigabytes */
        size_t ndim = max_dim > 10 ? 1 + tgt_below(&p->rng, 2) : tgt_below(&p->rng, 5), shape[TGL_MAX_DIMS];
        for (size_t d = 0; d < ndim; d++)
            shape[d] = round % 13 == 7 && d == 0 ? 0 : 1 + tgt_below(&p->rng, max_dim);
        tgl_dtype out_dt = dtypes[tgt_below(&p->rng, fns ? 3 : 5)]; /* an inexact value into a float */
        int dense = round % 3 == 1;
        c.out = dense ? tgt_dense_layout(&p->rng, out_dt, ndim, shape, &c.out_bytes)
                      : tgt_random_layout(&p->rng, out_dt, ndim, shape, &c.out_bytes);
        size_t in_ndim[MAX_IN], in_shape[MAX_IN][TGL_MAX_DIMS];
        tgt_broadcast_shapes(&p->rng, c.nin, ndim, shape, in_ndim, in_shape);
        c.out_is_in = round % 5 == 3 && in_ndim[0] == ndim;
        for (size_t d = 0; c.out_is_in && d < ndim; d++)
            c.out_is_in = in_shape[0][d] == shape[d];
        uint8_t *init[MAX_IN] = {NULL};
        for (size_t k = 0; k < c.nin; k++) {
            tgl_dtype dt = c.out_is_in && k == 0 ? out_dt : dtypes[tgt_below(&p->rng, 5)];
            if (dense) {
                in_ndim[k] = ndim;
                memcpy(in_shape[k], shape, sizeof shape);
            }
            c.in[k] = dense ? tgt_dense_layout(&p->rng, dt, ndim, shape, &c.bytes[k])
                            : tgt_random_layout(&p->rng, dt, in_ndim[k], in_shape[k], &c.bytes[k]);
            if (k == 0 && c.out_is_in) { /* out is input 0's elements, strides and all */
                c.in[0] = c.out;
                c.bytes[0] = c.out_bytes;
            }
            init[k] = malloc(c.bytes[k]);
            fill_values(&p->rng, dt, fns, init[k], c.bytes[k]);
            c.init[k] = init[k];
        }
        same_run(p, &c, what);
        for (size_t k = 0; k < MAX_IN; k++) /* the unused ones NULL */
            free(init[k]);
    }
    p->gl = keep;
}

static void test_random_exact(void **state)
{
    pair *p = *state;
    random_calls(p, p->gl, 160, 6, 0, 0, "random exact");
    random_calls(p, p->gl, 8, 300, 0, 0, "random exact, long dims");
}

static void test_random_functions(void **state)
{
    pair *p = *state;
    random_calls(p, p->gl, 60, 6, 1, 0, "random with f32 functions");
}

/* Windows past a shrunk SSBO block limit: out's index space cut into boxes on GL. */
static void test_small_ssbo_limit(void **state)
{
    pair *p = *state;
    if (!p->gl)
        skip();
    tgl_backend *gl = tgt_open(TGL_BACKEND_GL);
    tgl_gl_test_set_limits(gl, 256 + 64, NULL);
    random_calls(p, gl, tgt_count(30), 9, 0, 0, "small SSBO limit");
    tgl_close(gl);
}

/* Expressions over more inputs than the device binds beside out run in stages through
 * temporaries, each node in its own type: exact against the CPU under ES 3.1's 4 blocks and 6. */
static void test_few_storage_blocks(void **state)
{
    pair *p = *state;
    if (!p->gl)
        skip();
    tgl_backend *gl = tgt_open(TGL_BACKEND_GL);
    uint32_t *limit = &tgl_gl_of(gl)->limits.storage_blocks;
    *limit = 4;
    random_calls(p, gl, tgt_count(40), 6, 0, 1, "4 storage blocks");
    *limit = 6;
    random_calls(p, gl, tgt_count(20), 6, 0, 1, "6 storage blocks");
    tgl_close(gl);
}

/* The flat tgl_map's comparisons: 1.0 or 0.0, NaN unordered, on both backends. */
static void test_flat_comparisons(void **state)
{
    pair *p = *state;
    const float x[6] = {NAN, -0.0f, 1.0f, 2.0f, INFINITY, -3.0f}, y[6] = {1.0f, 0.0f, 1.0f, 1.0f, INFINITY, NAN};
    const char *exprs[3] = {"(a <= b) + (a != b) * 2", "select(a > b, a, b) * (a == a)", "(a - b >= 0) - (b < 1)"};
    for (int e = 0; e < 3; e++) {
        float want[6];
        for (int i = 0; i < 6; i++) {
            float a = x[i], b = y[i];
            want[i] = e == 0   ? (float)(a <= b) + (float)(a != b) * 2.0f
                      : e == 1 ? (a > b ? a : b) * (float)(a == a)
                               : (float)(a - b >= 0) - (float)(b < 1);
        }
        tgl_backend *bs[2] = {p->cpu, p->gl};
        for (int j = 0; j < 2; j++) {
            if (!bs[j])
                continue;
            tgl_backend *b = bs[j];
            tgl_ptr da, db, dout;
            float got[6];
            TGT_OK(b, tgl_alloc(b, sizeof x, &da));
            TGT_OK(b, tgl_alloc(b, sizeof y, &db));
            TGT_OK(b, tgl_alloc(b, sizeof got, &dout));
            TGT_OK(b, tgl_copy_htod(b, da, x, sizeof x));
            TGT_OK(b, tgl_copy_htod(b, db, y, sizeof y));
            TGT_OK(b, tgl_map(b, exprs[e], (tgl_ptr[]){da, db}, 2, dout, 6));
            TGT_OK(b, tgl_copy_dtoh(b, got, dout, sizeof got));
            for (int i = 0; i < 6; i++)
                if (!(got[i] == want[i] || (isnan(got[i]) && isnan(want[i]))))
                    fail_msg("tgl_map \"%s\" element %d on %s: %g, want %g", exprs[e], i, j ? "gl" : "cpu",
                             (double)got[i], (double)want[i]);
            TGT_OK(b, tgl_free(b, da));
            TGT_OK(b, tgl_free(b, db));
            TGT_OK(b, tgl_free(b, dout));
        }
    }
}

/* ---- refusals ----------------------------------------------------------------------------- */

static void refusals_on(tgl_backend *b)
{
    tgl_ptr buf, other;
    TGT_OK(b, tgl_alloc(b, 4096, &buf));
    TGT_OK(b, tgl_alloc(b, 4096, &other));
    const size_t s4[1] = {4}, s3[1] = {3}, s8[1] = {8}, s32[1] = {32};
    tgl_tensor a = tgl_tensor_contiguous(buf, TGL_DTYPE_F32, 1, s4);
    tgl_tensor out = tgl_tensor_contiguous(other, TGL_DTYPE_F32, 1, s4);
    tgl_tensor ins[9];
    for (int k = 0; k < 9; k++)
        ins[k] = a;
    float sevens[1024];
    for (int i = 0; i < 1024; i++)
        sevens[i] = 7.0f;
    TGT_OK(b, tgl_copy_htod(b, other, sevens, sizeof sevens));
    TGT_EXPECT(b, tgl_map_t(b, NULL, &a, 1, &out), TGL_ERR_INVALID_ARGUMENT);
    TGT_EXPECT(b, tgl_map_t(b, "a <", &a, 1, &out), TGL_ERR_INVALID_ARGUMENT);
    TGT_EXPECT(b, tgl_map_t(b, "a < a < a", &a, 1, &out), TGL_ERR_INVALID_ARGUMENT);
    TGT_EXPECT(b, tgl_map_t(b, "a = a", &a, 1, &out), TGL_ERR_INVALID_ARGUMENT);
    TGT_EXPECT(b, tgl_map_t(b, "a + b", &a, 1, &out), TGL_ERR_INVALID_ARGUMENT);     /* b beyond n_inputs */
    TGT_EXPECT(b, tgl_map_t(b, "a", ins, 9, &out), TGL_ERR_INVALID_ARGUMENT);        /* more than 8 */
    TGT_EXPECT(b, tgl_map_t(b, "a", NULL, 1, &out), TGL_ERR_INVALID_ARGUMENT);
    TGT_EXPECT(b, tgl_map_t(b, "a", &a, 1, NULL), TGL_ERR_INVALID_ARGUMENT);
    tgl_tensor a3 = tgl_tensor_contiguous(buf, TGL_DTYPE_F32, 1, s3);                /* 3 does not broadcast to 4 */
    TGT_EXPECT(b, tgl_map_t(b, "a", &a3, 1, &out), TGL_ERR_INVALID_ARGUMENT);
    tgl_tensor q = tgl_tensor_contiguous(buf, TGL_DTYPE_Q8_0, 1, s32);              /* a block format */
    tgl_tensor out32 = tgl_tensor_contiguous(other, TGL_DTYPE_F32, 1, s32);
    TGT_EXPECT(b, tgl_map_t(b, "a", &q, 1, &out32), TGL_ERR_UNSUPPORTED);
    tgl_tensor shifted = tgl_tensor_contiguous(buf + 4, TGL_DTYPE_F32, 1, s4);      /* a partial overlap */
    TGT_EXPECT(b, tgl_map_t(b, "a * 2", &a, 1, &shifted), TGL_ERR_INVALID_ARGUMENT);
    tgl_tensor past = tgl_tensor_contiguous(other + 4096 - 16, TGL_DTYPE_F32, 1, s8); /* out of the allocation */
    tgl_tensor a8 = tgl_tensor_contiguous(buf, TGL_DTYPE_F32, 1, s8);
    TGT_EXPECT(b, tgl_map_t(b, "a", &a8, 1, &past), TGL_ERR_INVALID_POINTER);
    TGT_EXPECT(b, tgl_map_t(b, "a", &past, 1, &a8), TGL_ERR_INVALID_POINTER);
    float got[1024];
    TGT_OK(b, tgl_copy_dtoh(b, got, other, sizeof got));
    for (int i = 0; i < 1024; i++)
        if (got[i] != 7.0f)
            fail_msg("%s: a refused call wrote out (element %d is %g)", tgl_backend_name(b), i, (double)got[i]);
    /* in place is allowed; with no input the expression is a constant */
    TGT_OK(b, tgl_map_t(b, "a * 2", &a, 1, &a));
    TGT_OK(b, tgl_map_t(b, "7 - 0.5", NULL, 0, &out));
    TGT_OK(b, tgl_copy_dtoh(b, got, other, 4 * sizeof(float)));
    for (int i = 0; i < 4; i++)
        assert_true(got[i] == 6.5f);
    TGT_OK(b, tgl_free(b, buf));
    TGT_OK(b, tgl_free(b, other));
}

static void test_refusals(void **state)
{
    pair *p = *state;
    refusals_on(p->cpu);
    if (p->gl)
        refusals_on(p->gl);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_values),
        cmocka_unit_test(test_flat_comparisons),
        cmocka_unit_test(test_random_exact),
        cmocka_unit_test(test_random_functions),
        cmocka_unit_test(test_small_ssbo_limit),
        cmocka_unit_test(test_few_storage_blocks),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
