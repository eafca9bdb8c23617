/* tgl_unary_t, tgl_binary_t, tgl_clamp, tgl_fill_t and tgl_arange on GL compared with the CPU
 * oracle. Hand-worked values on both
 * backends (integer floor division and remainder signs, INT32_MIN, division by zero, shifts past
 * the width, fmod and remainder signs, atan2's signed zeros and infinities, round half to even,
 * sign, erf's tails, bool logic); then every op x dtype it takes on random layouts (negative,
 * zero and gapped strides, broadcasts, 0-d and empty tensors, in place) over edge and random
 * values, the bytes around out's elements poisoned: integer, bool and exact float ops must agree
 * bit for bit, the others within the driver's accuracy (docs/ops.md); the flat tgl_unary and
 * tgl_binary running the later ops; and every refusal, on both backends alike. */
#include "testing.h"
#include "tensors.h"
#include "cpu/cpu_convert.h"
#include "gl/gl_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef tgt_pair pair;

static int setup(void **state)
{
    return tgt_pair_setup(state, 0x7E45);
}

static int teardown(void **state)
{
    return tgt_pair_teardown(state);
}

#define POISON 0xA5

static const tgl_dtype dtypes[] = {TGL_DTYPE_F32, TGL_DTYPE_F16, TGL_DTYPE_BF16, TGL_DTYPE_I32, TGL_DTYPE_BOOL};

/* One call: a unary or binary op, or clamp (binary 2), over tensors whose data are byte offsets
 * into host images of their allocations; out's allocation is filled with POISON first and comes
 * back in got. */
typedef struct call {
    int binary, op;
    tgl_tensor in[3], out;
    const uint8_t *init[3];
    size_t bytes[3], out_bytes;
    int out_is_in; /* out's data is input 0's allocation (in place) */
} call;
#define CLAMP 2
#define NIN(c) ((size_t)(c)->binary + 1)

static tgl_status run_on(tgl_backend *b, const call *c, uint8_t *got)
{
    tgl_ptr a[3] = {0, 0, 0}, d;
    tgl_tensor t[3], o = c->out;
    size_t nin = NIN(c);
    for (size_t k = 0; k < nin; k++) {
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
    tgl_status st = c->binary == CLAMP ? tgl_clamp(b, &t[0], &t[1], &t[2], &o)
                    : c->binary        ? tgl_binary_t(b, (tgl_binary_op)c->op, &t[0], &t[1], &o)
                                       : tgl_unary_t(b, (tgl_unary_op)c->op, &t[0], &o);
    TGT_OK(b, tgl_copy_dtoh(b, got, d, c->out_bytes));
    for (size_t k = 0; k < nin; k++)
        TGT_OK(b, tgl_free(b, a[k]));
    if (!c->out_is_in)
        TGT_OK(b, tgl_free(b, d));
    return st;
}

/* Float ops whose GL result is exactly the correctly rounded one (IEEE operations, exact
 * algorithms); the others may differ by the driver's accuracy. */
static int exact_op(int binary, int op)
{
    if (binary == CLAMP)
        return 1;
    if (binary)
        return op != TGL_BINARY_DIV && op != TGL_BINARY_POW && op != TGL_BINARY_ATAN2;
    switch (op) {
    case TGL_UNARY_NEG: case TGL_UNARY_ABS: case TGL_UNARY_SQUARE: case TGL_UNARY_RELU: case TGL_UNARY_FLOOR:
    case TGL_UNARY_CEIL: case TGL_UNARY_ROUND: case TGL_UNARY_TRUNC: case TGL_UNARY_SIGN: case TGL_UNARY_NOT:
    case TGL_UNARY_ISNAN: case TGL_UNARY_ISINF: case TGL_UNARY_ISFINITE:
        return 1;
    default: return 0;
    }
}

/* GL's and the CPU's elements agree: the same bytes, or (float dtypes, inexact ops) both NaN,
 * or within rtol relative (the op's accuracy plus a unit of the dtype's rounding) plus atol. */
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
    if (fabsf(x) < 0x1p-126f && fabsf(y) < 0x1p-126f)
        return 1; /* subnormal or zero: devices may flush subnormals (llvmpipe does in arithmetic) */
    if (exact_op(c->binary, c->op) || isinf(x) || isinf(y) || isnan(x) || isnan(y))
        return 0;
    double unit = dt == TGL_DTYPE_F32 ? 0.0 : dt == TGL_DTYPE_F16 ? 1.0 / 1024 : 1.0 / 128;
    double rtol = 2e-5 + unit, atol = 2e-6 + (dt == TGL_DTYPE_F16 ? 6e-8 : 0.0);
    return fabs((double)x - (double)y) <= rtol * fabs((double)y) + atol;
}

static const char *op_name(const call *c)
{
    if (c->binary == CLAMP)
        return "clamp";
    return c->binary ? tgl_binary_name((tgl_binary_op)c->op) : tgl_unary_name((tgl_unary_op)c->op);
}

/* The call on gl and cpu: both succeed, and every element slot of out's allocation agrees (the
 * slots out does not reach keep POISON on both). */
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
                float x = tgl_cpu_load_f32(dt == TGL_DTYPE_I32 || dt == TGL_DTYPE_BOOL ? TGL_DTYPE_F32 : dt, g + i);
                float y = tgl_cpu_load_f32(dt == TGL_DTYPE_I32 || dt == TGL_DTYPE_BOOL ? TGL_DTYPE_F32 : dt, w + i);
                uint32_t gb = 0, wb = 0;
                memcpy(&gb, g + i, es);
                memcpy(&wb, w + i, es);
                fail_msg("%s: %s on %s (%zu dims): element at byte %zu is 0x%x (%.9g) on gl, 0x%x (%.9g) on cpu", what,
                         op_name(c), tgl_dtype_name(dt), c->out.ndim, i, gb, (double)x, wb, (double)y);
            }
    }
    free(g);
    free(w);
}

/* ---- hand-worked values ------------------------------------------------------------------- */

typedef struct known {
    int binary, op;
    tgl_dtype dt;
    uint32_t a, b, want; /* bits */
} known;

#define F(x) 0x##x##u
static const known knowns[] = {
    /* i32 floor division and remainder: Python's signs, by zero, INT32_MIN */
    {1, TGL_BINARY_FLOOR_DIV, TGL_DTYPE_I32, 7u, 2u, 3u},
    {1, TGL_BINARY_FLOOR_DIV, TGL_DTYPE_I32, (uint32_t)-7, 2u, (uint32_t)-4},
    {1, TGL_BINARY_FLOOR_DIV, TGL_DTYPE_I32, 7u, (uint32_t)-2, (uint32_t)-4},
    {1, TGL_BINARY_FLOOR_DIV, TGL_DTYPE_I32, (uint32_t)-7, (uint32_t)-2, 3u},
    {1, TGL_BINARY_FLOOR_DIV, TGL_DTYPE_I32, (uint32_t)-6, 2u, (uint32_t)-3},
    {1, TGL_BINARY_FLOOR_DIV, TGL_DTYPE_I32, 0x80000000u, (uint32_t)-1, 0x80000000u},
    {1, TGL_BINARY_FLOOR_DIV, TGL_DTYPE_I32, 0x80000000u, 1u, 0x80000000u},
    {1, TGL_BINARY_FLOOR_DIV, TGL_DTYPE_I32, 0x80000000u, 0x7FFFFFFFu, (uint32_t)-2},
    {1, TGL_BINARY_FLOOR_DIV, TGL_DTYPE_I32, 5u, 0u, 0u},
    {1, TGL_BINARY_REMAINDER, TGL_DTYPE_I32, 7u, 2u, 1u},
    {1, TGL_BINARY_REMAINDER, TGL_DTYPE_I32, (uint32_t)-7, 2u, 1u},
    {1, TGL_BINARY_REMAINDER, TGL_DTYPE_I32, 7u, (uint32_t)-2, (uint32_t)-1},
    {1, TGL_BINARY_REMAINDER, TGL_DTYPE_I32, (uint32_t)-7, (uint32_t)-2, (uint32_t)-1},
    {1, TGL_BINARY_REMAINDER, TGL_DTYPE_I32, 0x80000000u, (uint32_t)-1, 0u},
    {1, TGL_BINARY_REMAINDER, TGL_DTYPE_I32, 0x80000000u, 0x7FFFFFFFu, 0x7FFFFFFEu},
    {1, TGL_BINARY_REMAINDER, TGL_DTYPE_I32, (uint32_t)-5, 0u, (uint32_t)-5},
    /* wrap, shifts, bitwise */
    {1, TGL_BINARY_ADD, TGL_DTYPE_I32, 0x7FFFFFFFu, 1u, 0x80000000u},
    {1, TGL_BINARY_MUL, TGL_DTYPE_I32, 0x10000u, 0x10000u, 0u},
    {1, TGL_BINARY_MUL, TGL_DTYPE_I32, 16777217u, 3u, 50331651u},
    {1, TGL_BINARY_SHL, TGL_DTYPE_I32, 1u, 31u, 0x80000000u},
    {1, TGL_BINARY_SHL, TGL_DTYPE_I32, 1u, 32u, 0u},
    {1, TGL_BINARY_SHL, TGL_DTYPE_I32, 1u, (uint32_t)-1, 0u},
    {1, TGL_BINARY_SHR, TGL_DTYPE_I32, (uint32_t)-8, 1u, (uint32_t)-4},
    {1, TGL_BINARY_SHR, TGL_DTYPE_I32, (uint32_t)-8, 40u, 0xFFFFFFFFu},
    {1, TGL_BINARY_SHR, TGL_DTYPE_I32, 8u, 40u, 0u},
    {1, TGL_BINARY_SHR, TGL_DTYPE_I32, 0x80000000u, 31u, 0xFFFFFFFFu},
    {1, TGL_BINARY_XOR, TGL_DTYPE_I32, 0xF0F0F0F0u, 0xFF00FF00u, 0x0FF00FF0u},
    {1, TGL_BINARY_MAX, TGL_DTYPE_I32, 0x80000000u, 0x7FFFFFFFu, 0x7FFFFFFFu},
    {0, TGL_UNARY_NEG, TGL_DTYPE_I32, 0x80000000u, 0, 0x80000000u},
    {0, TGL_UNARY_ABS, TGL_DTYPE_I32, 0x80000000u, 0, 0x80000000u},
    {0, TGL_UNARY_ABS, TGL_DTYPE_I32, (uint32_t)-5, 0, 5u},
    {0, TGL_UNARY_SIGN, TGL_DTYPE_I32, (uint32_t)-5, 0, 0xFFFFFFFFu},
    {0, TGL_UNARY_NOT, TGL_DTYPE_I32, 0u, 0, 0xFFFFFFFFu},
    /* bool: any non-zero byte is true, results 0 or 1 */
    {1, TGL_BINARY_AND, TGL_DTYPE_BOOL, 2u, 255u, 1u},
    {1, TGL_BINARY_OR, TGL_DTYPE_BOOL, 0u, 0u, 0u},
    {1, TGL_BINARY_XOR, TGL_DTYPE_BOOL, 2u, 1u, 0u},
    {0, TGL_UNARY_NOT, TGL_DTYPE_BOOL, 4u, 0, 0u},
    {0, TGL_UNARY_NOT, TGL_DTYPE_BOOL, 0u, 0, 1u},
    /* float fmod (sign of a) and remainder (sign of bb), exactly */
    /* division by |b| above 2^126 (NVIDIA's a * (1/b) underflowed to 0 there) */
    {1, TGL_BINARY_DIV, TGL_DTYPE_F32, F(7F000000), F(7F000000), F(3F800000)},   /* 2^127 / 2^127 = 1 */
    {1, TGL_BINARY_DIV, TGL_DTYPE_F32, F(7F400000), F(FF000000), F(BFC00000)},   /* 1.5 * 2^127 / -2^127 */
    {1, TGL_BINARY_DIV, TGL_DTYPE_F32, F(7F7FFFFF), F(7F7FFFFF), F(3F800000)},   /* max / max = 1 */
    {1, TGL_BINARY_FMOD, TGL_DTYPE_F32, F(40A00000), F(40400000), F(40000000)},  /* 5 fmod 3 = 2 */
    {1, TGL_BINARY_FMOD, TGL_DTYPE_F32, F(C0A00000), F(40400000), F(C0000000)},  /* -5 fmod 3 = -2 */
    {1, TGL_BINARY_FMOD, TGL_DTYPE_F32, F(C0C00000), F(40400000), F(80000000)},  /* -6 fmod 3 = -0 */
    {1, TGL_BINARY_FMOD, TGL_DTYPE_F32, F(7F7FFFFF), F(00000001), F(00000000)},  /* max fmod least: 0 */
    {1, TGL_BINARY_FMOD, TGL_DTYPE_F32, F(4B800001), F(3DCCCCCD), F(3D4CCCC6)},  /* 16777218 fmod 0.1f */
    {1, TGL_BINARY_FMOD, TGL_DTYPE_F32, F(40A00000), F(7F800000), F(40A00000)},  /* 5 fmod inf = 5 */
    {1, TGL_BINARY_FMOD, TGL_DTYPE_F32, F(40A00000), F(00000000), F(7FC00000)},  /* 5 fmod 0: NaN */
    {1, TGL_BINARY_FMOD, TGL_DTYPE_F32, F(7F800000), F(40400000), F(7FC00000)},  /* inf fmod 3: NaN */
    {1, TGL_BINARY_REMAINDER, TGL_DTYPE_F32, F(C0A00000), F(40400000), F(3F800000)}, /* -5 % 3 = 1 */
    {1, TGL_BINARY_REMAINDER, TGL_DTYPE_F32, F(40A00000), F(C0400000), F(BF800000)}, /* 5 % -3 = -1 */
    {1, TGL_BINARY_REMAINDER, TGL_DTYPE_F32, F(40A00000), F(FF800000), F(FF800000)}, /* 5 % -inf = -inf */
    {1, TGL_BINARY_REMAINDER, TGL_DTYPE_F32, F(80000000), F(40400000), F(80000000)}, /* -0 % 3 = -0 */
    /* atan2's zeros and infinities (pi rounded to f32: 0x40490FDB) */
    {1, TGL_BINARY_ATAN2, TGL_DTYPE_F32, F(00000000), F(80000000), F(40490FDB)},
    {1, TGL_BINARY_ATAN2, TGL_DTYPE_F32, F(80000000), F(80000000), F(C0490FDB)},
    {1, TGL_BINARY_ATAN2, TGL_DTYPE_F32, F(80000000), F(00000000), F(80000000)},
    {1, TGL_BINARY_ATAN2, TGL_DTYPE_F32, F(3F800000), F(00000000), F(3FC90FDB)},
    {1, TGL_BINARY_ATAN2, TGL_DTYPE_F32, F(7F800000), F(FF800000), F(4016CBE4)},
    {1, TGL_BINARY_ATAN2, TGL_DTYPE_F32, F(BF800000), F(7F800000), F(80000000)},
    {1, TGL_BINARY_ATAN2, TGL_DTYPE_F32, F(3F800000), F(FF800000), F(40490FDB)},
    /* round half to even, trunc, sign */
    {0, TGL_UNARY_ROUND, TGL_DTYPE_F32, F(3F000000), 0, F(00000000)}, /* 0.5 -> 0 */
    {0, TGL_UNARY_ROUND, TGL_DTYPE_F32, F(3FC00000), 0, F(40000000)}, /* 1.5 -> 2 */
    {0, TGL_UNARY_ROUND, TGL_DTYPE_F32, F(40200000), 0, F(40000000)}, /* 2.5 -> 2 */
    {0, TGL_UNARY_ROUND, TGL_DTYPE_F32, F(BF000000), 0, F(80000000)}, /* -0.5 -> -0 */
    {0, TGL_UNARY_ROUND, TGL_DTYPE_F32, F(4B000001), 0, F(4B000001)}, /* 2^23 + 1 stays */
    {0, TGL_UNARY_ROUND, TGL_DTYPE_BF16, F(3FC0), 0, F(4000)},        /* bf16 1.5 -> 2 */
    {0, TGL_UNARY_TRUNC, TGL_DTYPE_F32, F(BFE00000), 0, F(BF800000)}, /* -1.75 -> -1 */
    {0, TGL_UNARY_SIGN, TGL_DTYPE_F32, F(80000000), 0, F(80000000)},
    {0, TGL_UNARY_SIGN, TGL_DTYPE_F32, F(00000001), 0, F(3F800000)},
    {0, TGL_UNARY_SIGN, TGL_DTYPE_F16, F(FC00), 0, F(BC00)},
    /* erf, exact gelu, log1p, expm1 at their limits */
    {0, TGL_UNARY_ERF, TGL_DTYPE_F32, F(7F800000), 0, F(3F800000)},
    {0, TGL_UNARY_ERF, TGL_DTYPE_F32, F(FF800000), 0, F(BF800000)},
    {0, TGL_UNARY_ERF, TGL_DTYPE_F32, F(80000000), 0, F(80000000)},
    {0, TGL_UNARY_GELU_ERF, TGL_DTYPE_F32, F(7F800000), 0, F(7F800000)},
    {0, TGL_UNARY_GELU_ERF, TGL_DTYPE_F32, F(00000000), 0, F(00000000)},
    {0, TGL_UNARY_LOG1P, TGL_DTYPE_F32, F(BF800000), 0, F(FF800000)},
    {0, TGL_UNARY_LOG1P, TGL_DTYPE_F32, F(80000000), 0, F(80000000)},
    {0, TGL_UNARY_EXPM1, TGL_DTYPE_F32, F(FF800000), 0, F(BF800000)},
    {0, TGL_UNARY_EXPM1, TGL_DTYPE_F32, F(80000000), 0, F(80000000)},
    /* the tests, into bool (the want is a byte) */
    {0, TGL_UNARY_ISNAN, TGL_DTYPE_F32, F(FFC00001), 0, 1u},
    {0, TGL_UNARY_ISNAN, TGL_DTYPE_F32, F(7F800000), 0, 0u},
    {0, TGL_UNARY_ISINF, TGL_DTYPE_F32, F(FF800000), 0, 1u},
    {0, TGL_UNARY_ISINF, TGL_DTYPE_F16, F(7C01), 0, 0u},
    {0, TGL_UNARY_ISFINITE, TGL_DTYPE_F32, F(00000001), 0, 1u},
    {0, TGL_UNARY_ISFINITE, TGL_DTYPE_BF16, F(7FC0), 0, 0u},
    {0, TGL_UNARY_ISFINITE, TGL_DTYPE_BF16, F(7F7F), 0, 1u},
};

/* Each hand-worked value on both backends, bit for bit (NaN: any NaN). */
static void test_known_values(void **state)
{
    pair *p = *state;
    int wrong = 0;
    for (int k = 0; k < 2; k++) {
        tgl_backend *b = k ? p->gl : p->cpu;
        if (!b)
            continue;
        for (size_t i = 0; i < sizeof knowns / sizeof knowns[0]; i++) {
            const known *kn = &knowns[i];
            size_t es = tgl_dtype_size(kn->dt), one = 1;
            uint8_t a[4], bb[4], got[4];
            memcpy(a, &kn->a, es);
            memcpy(bb, &kn->b, es);
            int tests = !kn->binary && kn->op >= TGL_UNARY_ISNAN;
            tgl_dtype out_dt = tests ? TGL_DTYPE_BOOL : kn->dt;
            call c = {kn->binary, kn->op, {tgl_tensor_contiguous(0, kn->dt, 1, &one)}, tgl_tensor_contiguous(0, out_dt, 1, &one),
                      {a, bb}, {es, es}, tgl_dtype_size(out_dt), 0};
            c.in[1] = c.in[0];
            TGT_OK(b, run_on(b, &c, got));
            uint32_t g = 0;
            memcpy(&g, got, tgl_dtype_size(out_dt));
            int nan_want = kn->dt == TGL_DTYPE_F32 && isnan(tgl_cpu_load_f32(kn->dt, (const uint8_t *)&kn->want));
            if (g != kn->want && !(nan_want && isnan(tgl_cpu_load_f32(kn->dt, got)))) {
                print_error("%s: %s(0x%x, 0x%x) on %s is 0x%x, want 0x%x\n", tgl_backend_name(b), op_name(&c), kn->a,
                            kn->b, tgl_dtype_name(kn->dt), g, kn->want);
                wrong++;
            }
        }
    }
    if (wrong) /* every wrong value listed above, not only the first */
        fail_msg("%d known values wrong", wrong);
}

/* clamp by hand on both backends (f32 bits): x, lo, hi, want. */
static void test_clamp_known(void **state)
{
    pair *p = *state;
    static const uint32_t cases[][4] = {
        {F(40A00000), F(00000000), F(40400000), F(40400000)}, /* 5 in [0, 3] -> 3 */
        {F(C0A00000), F(00000000), F(40400000), F(00000000)}, /* -5 -> 0 */
        {F(3F800000), F(40400000), F(00000000), F(00000000)}, /* lo > hi: hi */
        {F(3F800000), F(7FC00000), F(40400000), F(7FC00000)}, /* a NaN bound: NaN */
        {F(7FC00000), F(00000000), F(40400000), F(7FC00000)},
        {F(80000000), F(00000000), F(40400000), F(80000000)}, /* -0 against lo +0: x kept */
        {F(FF800000), F(FF800000), F(7F800000), F(FF800000)},
        {F(00000001), F(00000002), F(40400000), F(00000002)}, /* subnormals, by their bits */
    };
    size_t one = 1;
    for (int k = 0; k < 2; k++) {
        tgl_backend *b = k ? p->gl : p->cpu;
        if (!b)
            continue;
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            tgl_tensor t = tgl_tensor_contiguous(0, TGL_DTYPE_F32, 1, &one);
            call c = {CLAMP, 0, {t, t, t}, t, {(const uint8_t *)&cases[i][0], (const uint8_t *)&cases[i][1],
                      (const uint8_t *)&cases[i][2]}, {4, 4, 4}, 4, 0};
            uint32_t got;
            TGT_OK(b, run_on(b, &c, (uint8_t *)&got));
            if (got != cases[i][3])
                fail_msg("%s: clamp(0x%x, 0x%x, 0x%x) is 0x%x, want 0x%x", tgl_backend_name(b), cases[i][0], cases[i][1],
                         cases[i][2], got, cases[i][3]);
        }
    }
}

/* tgl_fill_t of value into out (data a byte offset) in a POISON-filled allocation of out_bytes. */
static tgl_status fill_on(tgl_backend *b, tgl_tensor out, size_t out_bytes, double value, uint8_t *got)
{
    tgl_ptr d;
    TGT_OK(b, tgl_alloc(b, out_bytes, &d));
    memset(got, POISON, out_bytes);
    TGT_OK(b, tgl_copy_htod(b, d, got, out_bytes));
    out.data += d;
    tgl_status st = tgl_fill_t(b, &out, value);
    TGT_OK(b, tgl_copy_dtoh(b, got, d, out_bytes));
    TGT_OK(b, tgl_free(b, d));
    return st;
}

/* tgl_fill_t: hand-worked conversions of the value on both backends, then every dtype on random
 * layouts (0-d, empty, strided: the bytes between elements keep their poison), GL bit-equal to
 * the CPU over the whole allocation. */
static void test_fill(void **state)
{
    pair *p = *state;
    static const struct {
        double value;
        tgl_dtype dt;
        uint32_t want;
    } cases[] = {
        {2.9, TGL_DTYPE_I32, 2u}, {-2.9, TGL_DTYPE_I32, (uint32_t)-2}, {1e10, TGL_DTYPE_I32, 0x7FFFFFFFu},
        {-1e10, TGL_DTYPE_I32, 0x80000000u}, {NAN, TGL_DTYPE_I32, 0u}, {16777217.0, TGL_DTYPE_I32, 16777217u},
        {NAN, TGL_DTYPE_BOOL, 1u}, {-0.0, TGL_DTYPE_BOOL, 0u}, {0.5, TGL_DTYPE_BOOL, 1u},
        {1.0 / 3.0, TGL_DTYPE_BF16, 0x3EABu}, {65520.0, TGL_DTYPE_F16, 0x7C00u}, {-0.0, TGL_DTYPE_F16, 0x8000u},
        {0.1, TGL_DTYPE_F32, 0x3DCCCCCDu}, {-INFINITY, TGL_DTYPE_F32, 0xFF800000u},
    };
    size_t one = 1;
    for (int k = 0; k < 2; k++) {
        tgl_backend *b = k ? p->gl : p->cpu;
        if (!b)
            continue;
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            size_t es = tgl_dtype_size(cases[i].dt);
            uint8_t got[4];
            uint32_t g = 0;
            TGT_OK(b, fill_on(b, tgl_tensor_contiguous(0, cases[i].dt, 1, &one), es, cases[i].value, got));
            memcpy(&g, got, es);
            if (g != cases[i].want)
                fail_msg("%s: fill %s with %.17g gives 0x%x, want 0x%x", tgl_backend_name(b), tgl_dtype_name(cases[i].dt),
                         cases[i].value, g, cases[i].want);
        }
    }
    if (!p->gl)
        return;
    static const double values[] = {0.0, -0.0, 1.0, -2.5, 1.0 / 3.0, 1e10, NAN, INFINITY, 70000.0, 3e-42};
    for (int round = 0; round < 150; round++) {
        /* long dims (up to 200) in at most two: four of them would ask for gigabytes */
        int long_dims = round % 10 == 0;
        size_t ndim = tgt_below(&p->rng, long_dims ? 3 : 5), shape[TGL_MAX_DIMS], bytes;
        for (size_t d = 0; d < ndim; d++)
            shape[d] = round % 13 == 7 && d == 0 ? 0 : 1 + tgt_below(&p->rng, long_dims ? 200 : 6);
        tgl_dtype dt = dtypes[tgt_below(&p->rng, sizeof dtypes / sizeof dtypes[0])];
        tgl_tensor out = tgt_random_layout(&p->rng, dt, ndim, shape, &bytes);
        double value = values[tgt_below(&p->rng, sizeof values / sizeof values[0])];
        uint8_t *g = malloc(bytes), *w = malloc(bytes);
        TGT_OK(p->cpu, fill_on(p->cpu, out, bytes, value, w));
        TGT_OK(p->gl, fill_on(p->gl, out, bytes, value, g));
        for (size_t i = 0; i < bytes; i++)
            if (g[i] != w[i])
                fail_msg("fill %s (%zu dims) with %g: byte %zu is 0x%02x on gl, 0x%02x on cpu", tgl_dtype_name(dt), ndim, value,
                         i, g[i], w[i]);
        free(g);
        free(w);
    }
}

/* tgl_arange: hand-worked values on both backends (f32's two roundings, i32's wrap, bf16), then
 * random dtypes, lengths, strides (negative too), starts and steps, GL bit-equal to the CPU over
 * the whole allocation; also in boxes under a small SSBO limit (each box's first index). */
static void arange_case(pair *p, tgl_backend *gl, tgl_tensor out, size_t bytes, double start, double step)
{
    uint8_t *g = calloc(bytes, 1), *w = calloc(bytes, 1);
    tgl_ptr d;
    for (int k = 0; k < 2; k++) {
        tgl_backend *b = k ? gl : p->cpu;
        uint8_t *got = k ? g : w;
        tgl_tensor o = out;
        TGT_OK(b, tgl_alloc(b, bytes, &d));
        memset(got, POISON, bytes);
        TGT_OK(b, tgl_copy_htod(b, d, got, bytes));
        o.data += d;
        TGT_OK(b, tgl_arange(b, &o, start, step));
        TGT_OK(b, tgl_copy_dtoh(b, got, d, bytes));
        TGT_OK(b, tgl_free(b, d));
    }
    for (size_t i = 0; i < bytes; i++)
        if (g[i] != w[i])
            fail_msg("arange %s of %zu (stride %lld) from %g by %g: byte %zu is 0x%02x on gl, 0x%02x on cpu",
                     tgl_dtype_name(out.dtype), out.shape[0], (long long)out.strides[0], start, step, i, g[i], w[i]);
    free(g);
    free(w);
}

static void test_arange(void **state)
{
    pair *p = *state;
    size_t n = 4;
    static const float want_f32[4] = {0.1f, 0.4f, 0.70000005f, 1.0f}; /* 0.1f + i * 0.3f, rounded twice */
    static const int32_t want_i32[4] = {INT32_MAX - 1, INT32_MIN, INT32_MIN + 2, INT32_MIN + 4}; /* wraps */
    for (int k = 0; k < 2; k++) {
        tgl_backend *b = k ? p->gl : p->cpu;
        if (!b)
            continue;
        tgl_ptr d;
        TGT_OK(b, tgl_alloc(b, 16, &d));
        float f[4];
        int32_t v[4];
        tgl_tensor t = tgl_tensor_contiguous(d, TGL_DTYPE_F32, 1, &n);
        TGT_OK(b, tgl_arange(b, &t, 0.1, 0.3));
        TGT_OK(b, tgl_copy_dtoh(b, f, d, 16));
        t.dtype = TGL_DTYPE_I32;
        TGT_OK(b, tgl_arange(b, &t, INT32_MAX - 1, 2.0));
        TGT_OK(b, tgl_copy_dtoh(b, v, d, 16));
        for (int i = 0; i < 4; i++)
            if (f[i] != want_f32[i] || v[i] != want_i32[i]) /* exact values (none is NaN or zero) */
                fail_msg("%s: arange element %d is %.9g and %d, want %.9g and %d", tgl_backend_name(b), i, (double)f[i], v[i],
                         (double)want_f32[i], want_i32[i]);
        TGT_EXPECT(b, tgl_arange(b, &t, 0.5, 1.0), TGL_ERR_INVALID_ARGUMENT);   /* i32 start not an integer */
        TGT_EXPECT(b, tgl_arange(b, &t, 0.0, 3e9), TGL_ERR_INVALID_ARGUMENT);   /* step out of range */
        t.dtype = TGL_DTYPE_BOOL;
        TGT_EXPECT(b, tgl_arange(b, &t, 0.0, 1.0), TGL_ERR_UNSUPPORTED);
        tgl_tensor two = tgl_tensor_contiguous(d, TGL_DTYPE_F32, 2, (size_t[]){2, 2});
        TGT_EXPECT(b, tgl_arange(b, &two, 0.0, 1.0), TGL_ERR_INVALID_ARGUMENT); /* not 1-D */
        TGT_OK(b, tgl_free(b, d));
    }
    if (!p->gl)
        return;
    static const tgl_dtype numeric[] = {TGL_DTYPE_F32, TGL_DTYPE_F16, TGL_DTYPE_BF16, TGL_DTYPE_I32};
    for (int round = 0; round < 60; round++) {
        tgl_dtype dt = numeric[tgt_below(&p->rng, 4)];
        size_t len = round % 7 == 3 ? 0 : 1 + tgt_below(&p->rng, round % 5 == 0 ? 100000 : 300), bytes;
        tgl_tensor out = tgt_random_layout(&p->rng, dt, 1, &len, &bytes);
        int integer = dt == TGL_DTYPE_I32;
        double start = integer ? (double)((int32_t)tgt_below(&p->rng, 2001) - 1000) : tgt_uniform(&p->rng, -100.0f, 100.0f);
        double step = integer ? (double)((int32_t)tgt_below(&p->rng, 21) - 10) : tgt_uniform(&p->rng, -3.0f, 3.0f);
        arange_case(p, p->gl, out, bytes, start, step);
    }
    tgl_backend *gl = tgt_open(TGL_BACKEND_GL);
    tgl_gl_test_set_limits(gl, 256 + 64, NULL);
    size_t len = 1000, bytes;
    for (int k = 0; k < 2; k++) {
        tgl_tensor out = tgt_random_layout(&p->rng, k ? TGL_DTYPE_BF16 : TGL_DTYPE_F32, 1, &len, &bytes);
        arange_case(p, gl, out, bytes, -7.25, 0.125);
    }
    tgl_close(gl);
}

/* erf and exact gelu against C's double erf over their whole range on GL: relative precision
 * in the tails too (erfc's tail is not 1 - erf), to 3e-5 (f32 exp of arguments near -80 is
 * that precise). */
static void test_erf_tails(void **state)
{
    pair *p = *state;
    if (!p->gl)
        skip();
    size_t n = 4001;
    float *x = malloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++)
        x[i] = -20.0f + 40.0f * (float)i / (float)(n - 1);
    for (int op = TGL_UNARY_ERF; op <= TGL_UNARY_GELU_ERF; op++) {
        call c = {0, op, {tgl_tensor_contiguous(0, TGL_DTYPE_F32, 1, &n)}, tgl_tensor_contiguous(0, TGL_DTYPE_F32, 1, &n),
                  {(const uint8_t *)x}, {n * 4}, n * 4, 0};
        float *g = malloc(n * sizeof(float));
        TGT_OK(p->gl, run_on(p->gl, &c, (uint8_t *)g));
        for (size_t i = 0; i < n; i++) {
            double v = x[i], want = op == TGL_UNARY_ERF ? erf(v) : 0.5 * v * erfc(-v * 0.7071067811865476);
            if ((float)want == 0.0f || fabs(want) < 1e-37)
                continue; /* underflow: the least subnormals */
            double rel = fabs(g[i] - want) / fabs(want);
            if (!(rel < 3e-5))
                fail_msg("%s(%.9g) on gl: %.9g, want %.9g (relative error %.3g)", op_name(&c), v, (double)g[i], want, rel);
        }
        free(g);
    }
    free(x);
}

/* ---- random ------------------------------------------------------------------------------ */

/* Whether the op's GL formula has defined results for NaN, infinities and signed zeros (GLSL
 * leaves exp, log, sqrt, division, sin and cos of them to the driver). */
static int specials_defined(int binary, int op)
{
    if (binary)
        return op != TGL_BINARY_DIV;
    switch (op) {
    case TGL_UNARY_EXP: case TGL_UNARY_LOG: case TGL_UNARY_SQRT: case TGL_UNARY_RSQRT: case TGL_UNARY_RECIP:
    case TGL_UNARY_SIN: case TGL_UNARY_COS:
        return 0;
    default: return 1;
    }
}

/* A random input value for a float op: edge values where the op defines them, otherwise
 * values in its domain away from poles (and sin/cos's arguments where GLSL keeps precision). */
static float float_value(tgt_rng *r, int binary, int op, int second)
{
    /* no subnormals: GLSL lets devices flush them to zero in arithmetic (llvmpipe does), so
     * they are checked by hand-worked values where the result does not depend on it */
    static const float edges[] = {0.0f, -0.0f, 1.0f, -1.0f, 0.5f, -2.5f, NAN, INFINITY, -INFINITY, 1e30f,
                                  16777218.0f, 3.0f};
    /* pow's formula defines NaN, infinities, zeros and +-1; large and subnormal bases are the
     * driver's exp2 and log2 */
    size_t n_edges = binary && op == TGL_BINARY_POW ? 9 : sizeof edges / sizeof edges[0];
    if (specials_defined(binary, op) && tgt_below(r, 4) == 0)
        return edges[tgt_below(r, n_edges)];
    float x = tgt_uniform(r, -8.0f, 8.0f);
    if (binary && op == TGL_BINARY_POW && !second)
        return tgt_uniform(r, 0.05f, 5.0f);
    if (binary && op == TGL_BINARY_DIV && second && fabsf(x) < 0.1f)
        return 0.5f;
    if (binary && (op == TGL_BINARY_FMOD || op == TGL_BINARY_REMAINDER) && tgt_below(r, 3) == 0)
        return second ? tgt_uniform(r, -1e-3f, 1e-3f) : tgt_uniform(r, -1e6f, 1e6f); /* long reductions */
    if (binary)
        return x; /* clamp's bounds too */
    switch (op) {
    case TGL_UNARY_SQRT: case TGL_UNARY_RSQRT: return tgt_uniform(r, 1e-3f, 100.0f);
    case TGL_UNARY_RECIP: return (tgt_next(r) & 1 ? 1.0f : -1.0f) * tgt_uniform(r, 0.1f, 10.0f);
    case TGL_UNARY_LOG1P: return tgt_uniform(r, -0.999f, 100.0f);
    case TGL_UNARY_SIN: case TGL_UNARY_COS: {
        float v;
        do /* away from the zeros, where GLSL bounds only the absolute error */
            v = tgt_uniform(r, -3.0f, 3.0f);
        while (fabs(op == TGL_UNARY_SIN ? sin(v) : cos(v)) < 0.05);
        return v;
    }
    case TGL_UNARY_LOG: return tgt_uniform(r, 1.1f, 100.0f); /* away from 1: GLSL bounds log's absolute error there */
    default: return x;
    }
}

/* count elements of dtype dt for input `second` of the op into p. */
static void fill_values(tgt_rng *r, const call *c, tgl_dtype dt, int second, uint8_t *p, size_t bytes)
{
    size_t es = tgl_dtype_size(dt);
    if (dt == TGL_DTYPE_BOOL || (dt == TGL_DTYPE_I32 && tgt_below(r, 2) == 0)) {
        tgt_pool_fill(r, dt, p, bytes); /* integer limits, bool bytes other than 1 */
        return;
    }
    for (size_t i = 0; i + es <= bytes; i += es) {
        if (dt == TGL_DTYPE_I32) {
            int shift = c->binary && (c->op == TGL_BINARY_SHL || c->op == TGL_BINARY_SHR) && second;
            int32_t v = shift ? (int32_t)tgt_below(r, 40) - 3 : (int32_t)tgt_below(r, 2001) - 1000;
            memcpy(p + i, &v, 4);
        } else {
            float v = float_value(r, c->binary, c->op, second);
            uint8_t f[4];
            memcpy(f, &v, 4);
            tgl_cpu_convert(dt, TGL_DTYPE_F32, f, p + i);
        }
    }
}

static int takes(int binary, int op, tgl_dtype dt)
{
    static const int floats[] = {1, 1, 1, 0, 0};
    if (binary == CLAMP)
        return dt != TGL_DTYPE_BOOL;
    if (binary) {
        if (op == TGL_BINARY_FLOOR_DIV || op == TGL_BINARY_SHL || op == TGL_BINARY_SHR)
            return dt == TGL_DTYPE_I32;
        if (op >= TGL_BINARY_AND)
            return dt == TGL_DTYPE_I32 || dt == TGL_DTYPE_BOOL;
        if (op == TGL_BINARY_DIV || op == TGL_BINARY_POW || op == TGL_BINARY_ATAN2 || op == TGL_BINARY_FMOD)
            return floats[dt];
        return floats[dt] || dt == TGL_DTYPE_I32;
    }
    if (op == TGL_UNARY_NOT)
        return dt == TGL_DTYPE_I32 || dt == TGL_DTYPE_BOOL;
    if (op == TGL_UNARY_NEG || op == TGL_UNARY_ABS || op == TGL_UNARY_SQUARE || op == TGL_UNARY_SIGN)
        return floats[dt] || dt == TGL_DTYPE_I32;
    return floats[dt];
}

/* Every op (and clamp) on every dtype it takes, `rounds` random layouts each: out random, inputs
 * broadcast to it; now and then in place (out is input 0's elements); every third round all
 * operands dense and of out's shape (the kernel's linear paths). */
static void random_ops(pair *p, int rounds, size_t max_dim, const char *what)
{
    for (int binary = 0; binary <= CLAMP; binary++)
        for (int op = 0; op < (binary == CLAMP ? 1 : binary ? TGL_BINARY_COUNT : TGL_UNARY_COUNT); op++)
            for (size_t di = 0; di < sizeof dtypes / sizeof dtypes[0]; di++) {
                tgl_dtype dt = dtypes[di];
                if (!takes(binary, op, dt))
                    continue;
                for (int round = 0; round < rounds; round++) {
                    size_t ndim = max_dim > 10 ? 1 + tgt_below(&p->rng, 2) : tgt_below(&p->rng, 5);
                    size_t shape[TGL_MAX_DIMS];
                    for (size_t d = 0; d < ndim; d++)
                        shape[d] = round % 11 == 7 && d == 0 ? 0 : 1 + tgt_below(&p->rng, max_dim);
                    call c = {.binary = binary, .op = op};
                    size_t nin = NIN(&c), in_shape[3][TGL_MAX_DIMS], in_ndim[3];
                    int tests = !binary && op >= TGL_UNARY_ISNAN; /* a bool out */
                    c.out = tgt_random_layout(&p->rng, tests ? TGL_DTYPE_BOOL : dt, ndim, shape, &c.out_bytes);
                    int dense = round % 3 == 1;
                    if (dense)
                        c.out = tgt_dense_layout(&p->rng, c.out.dtype, ndim, shape, &c.out_bytes);
                    tgt_broadcast_shapes(&p->rng, nin, ndim, shape, in_ndim, in_shape);
                    for (size_t k = 0; dense && k < nin; k++) {
                        in_ndim[k] = ndim;
                        memcpy(in_shape[k], shape, sizeof shape);
                    }
                    uint8_t *init[3] = {NULL, NULL, NULL};
                    c.out_is_in = round % 5 == 3 && in_ndim[0] == ndim && !tests;
                    for (size_t k = 0; k < nin; k++) {
                        c.in[k] = dense ? tgt_dense_layout(&p->rng, dt, ndim, shape, &c.bytes[k])
                                        : tgt_random_layout(&p->rng, dt, in_ndim[k], in_shape[k], &c.bytes[k]);
                        if (k == 0 && c.out_is_in) {
                            int same = 1;
                            for (size_t d = 0; d < ndim; d++)
                                same &= in_shape[0][d] == shape[d];
                            c.out_is_in = same;
                            if (same) { /* out is input 0's elements, strides and all */
                                c.in[0] = c.out;
                                c.bytes[0] = c.out_bytes;
                            }
                        }
                        init[k] = malloc(c.bytes[k]);
                        fill_values(&p->rng, &c, dt, (int)k, init[k], c.bytes[k]);
                        c.init[k] = init[k];
                    }
                    if (c.out_is_in)
                        c.out_bytes = c.bytes[0];
                    same_run(p, &c, what);
                    for (size_t k = 0; k < nin; k++)
                        free(init[k]);
                }
            }
}

static void test_random_layouts(void **state)
{
    pair *p = *state;
    random_ops(p, 12, 6, "random layout");
    random_ops(p, 1, 300, "random layout, long dims");
}

/* The flat tgl_unary and tgl_binary run the later float ops on the descriptor kernels: the same
 * results as tgl_unary_t / tgl_binary_t on 1-D f32 tensors, in place too. */
static void test_flat_forms(void **state)
{
    pair *p = *state;
    size_t n = 1000;
    float *a = malloc(n * sizeof(float)), *bb = malloc(n * sizeof(float));
    float *x = malloc(n * sizeof(float)), *y = malloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++) {
        a[i] = tgt_uniform(&p->rng, -0.9f, 5.0f);
        bb[i] = tgt_uniform(&p->rng, 0.5f, 3.0f);
    }
    for (int k = 0; k < 2; k++) {
        tgl_backend *b = k ? p->gl : p->cpu;
        if (!b)
            continue;
        tgl_ptr da, db, dout;
        TGT_OK(b, tgl_alloc(b, n * 4, &da));
        TGT_OK(b, tgl_alloc(b, n * 4, &db));
        TGT_OK(b, tgl_alloc(b, n * 4, &dout));
        tgl_tensor ta = tgl_tensor_contiguous(da, TGL_DTYPE_F32, 1, &n), tb = ta, to = ta;
        tb.data = db;
        to.data = dout;
        for (int binary = 0; binary < 2; binary++)
            for (int op = binary ? TGL_BINARY_ATAN2 : TGL_UNARY_ERF; op < (binary ? TGL_BINARY_FLOOR_DIV : TGL_UNARY_NOT); op++) {
                TGT_OK(b, tgl_copy_htod(b, da, a, n * 4));
                TGT_OK(b, tgl_copy_htod(b, db, bb, n * 4));
                TGT_OK(b, binary ? tgl_binary_t(b, op, &ta, &tb, &to) : tgl_unary_t(b, op, &ta, &to));
                TGT_OK(b, tgl_copy_dtoh(b, x, dout, n * 4));
                TGT_OK(b, binary ? tgl_binary(b, op, da, db, da, n) : tgl_unary(b, op, da, da, n)); /* in place */
                TGT_OK(b, tgl_copy_dtoh(b, y, da, n * 4));
                if (memcmp(x, y, n * 4))
                    fail_msg("%s: flat %s differs from its descriptor form", tgl_backend_name(b),
                             binary ? tgl_binary_name(op) : tgl_unary_name(op));
            }
        TGT_OK(b, tgl_free(b, da));
        TGT_OK(b, tgl_free(b, db));
        TGT_OK(b, tgl_free(b, dout));
    }
    free(a);
    free(bb);
    free(x);
    free(y);
}

/* Refusals, alike on both backends, out unchanged: ops a dtype does not take, dtypes that
 * differ, op values out of range, the integer ops in the flat forms and binary_broadcast. */
static void refusals_on(tgl_backend *b)
{
    size_t n = 4, two[2] = {2, 2};
    tgl_ptr d, e;
    TGT_OK(b, tgl_alloc(b, 64, &d));
    TGT_OK(b, tgl_alloc(b, 64, &e));
    TGT_OK(b, tgl_fill(b, e, 7.0f, 16));
    tgl_tensor f = tgl_tensor_contiguous(d, TGL_DTYPE_F32, 1, &n), i = tgl_tensor_contiguous(d, TGL_DTYPE_I32, 1, &n);
    tgl_tensor bo = tgl_tensor_contiguous(d, TGL_DTYPE_BOOL, 1, &n), h = tgl_tensor_contiguous(d, TGL_DTYPE_F16, 1, &n);
    tgl_tensor fo = tgl_tensor_contiguous(e, TGL_DTYPE_F32, 1, &n), io = tgl_tensor_contiguous(e, TGL_DTYPE_I32, 1, &n);
    tgl_tensor bo_out = tgl_tensor_contiguous(e, TGL_DTYPE_BOOL, 1, &n), q = tgl_tensor_contiguous(d, TGL_DTYPE_Q8_0, 1, &n);
    tgl_tensor f2 = tgl_tensor_contiguous(e, TGL_DTYPE_F32, 2, two);
    TGT_EXPECT(b, tgl_unary_t(b, TGL_UNARY_NOT, &f, &fo), TGL_ERR_UNSUPPORTED);
    TGT_EXPECT(b, tgl_unary_t(b, TGL_UNARY_EXP, &i, &io), TGL_ERR_UNSUPPORTED);
    TGT_EXPECT(b, tgl_unary_t(b, TGL_UNARY_NEG, &bo, &bo_out), TGL_ERR_UNSUPPORTED);
    TGT_EXPECT(b, tgl_unary_t(b, TGL_UNARY_EXP, &q, &fo), TGL_ERR_UNSUPPORTED);
    TGT_EXPECT(b, tgl_binary_t(b, TGL_BINARY_DIV, &i, &i, &io), TGL_ERR_UNSUPPORTED);
    TGT_EXPECT(b, tgl_binary_t(b, TGL_BINARY_SHL, &f, &f, &fo), TGL_ERR_UNSUPPORTED);
    TGT_EXPECT(b, tgl_binary_t(b, TGL_BINARY_FLOOR_DIV, &h, &h, &fo), TGL_ERR_INVALID_ARGUMENT); /* dtypes differ */
    TGT_EXPECT(b, tgl_binary_t(b, TGL_BINARY_ADD, &f, &i, &fo), TGL_ERR_INVALID_ARGUMENT);
    TGT_EXPECT(b, tgl_unary_t(b, TGL_UNARY_ABS, &f, &io), TGL_ERR_INVALID_ARGUMENT);
    TGT_EXPECT(b, tgl_unary_t(b, (tgl_unary_op)TGL_UNARY_COUNT, &f, &fo), TGL_ERR_INVALID_ARGUMENT);
    TGT_EXPECT(b, tgl_binary_t(b, (tgl_binary_op)-1, &f, &f, &fo), TGL_ERR_INVALID_ARGUMENT);
    TGT_EXPECT(b, tgl_unary_t(b, TGL_UNARY_ABS, &f, &f2), TGL_ERR_INVALID_ARGUMENT); /* not the broadcast shape */
    TGT_EXPECT(b, tgl_unary_t(b, TGL_UNARY_ABS, NULL, &fo), TGL_ERR_INVALID_ARGUMENT);
    TGT_EXPECT(b, tgl_unary(b, TGL_UNARY_NOT, d, e, n), TGL_ERR_UNSUPPORTED);
    TGT_EXPECT(b, tgl_binary(b, TGL_BINARY_XOR, d, d, e, n), TGL_ERR_UNSUPPORTED);
    TGT_EXPECT(b, tgl_binary_broadcast(b, TGL_BINARY_ATAN2, d, &n, 1, d, &n, 1, e), TGL_ERR_UNSUPPORTED);
    TGT_EXPECT(b, tgl_unary_t(b, TGL_UNARY_ISNAN, &f, &fo), TGL_ERR_UNSUPPORTED); /* out is not bool */
    TGT_EXPECT(b, tgl_unary_t(b, TGL_UNARY_ISINF, &i, &bo_out), TGL_ERR_UNSUPPORTED);
    TGT_EXPECT(b, tgl_unary(b, TGL_UNARY_ISFINITE, d, e, n), TGL_ERR_UNSUPPORTED);
    TGT_EXPECT(b, tgl_clamp(b, &bo, &bo, &bo, &bo_out), TGL_ERR_UNSUPPORTED);
    TGT_EXPECT(b, tgl_clamp(b, &f, &f, &i, &fo), TGL_ERR_INVALID_ARGUMENT);
    TGT_EXPECT(b, tgl_clamp(b, &f, NULL, &f, &fo), TGL_ERR_INVALID_ARGUMENT);
    tgl_tensor twice = fo; /* a 0 stride on a dim above 1 reaches its element twice */
    twice.strides[0] = 0;
    TGT_EXPECT(b, tgl_fill_t(b, &twice, 1.0), TGL_ERR_INVALID_ARGUMENT);
    TGT_EXPECT(b, tgl_fill_t(b, &q, 1.0), TGL_ERR_UNSUPPORTED);
    TGT_EXPECT(b, tgl_fill_t(b, NULL, 1.0), TGL_ERR_INVALID_ARGUMENT);
    float got[16];
    TGT_OK(b, tgl_copy_dtoh(b, got, e, 64));
    for (int k = 0; k < 16; k++)
        if (got[k] != 7.0f)
            fail_msg("%s: a refused call wrote out (element %d is %g)", tgl_backend_name(b), k, (double)got[k]);
    TGT_OK(b, tgl_free(b, d));
    TGT_OK(b, tgl_free(b, e));
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
        cmocka_unit_test(test_clamp_known),
        cmocka_unit_test(test_erf_tails),
        cmocka_unit_test(test_random_layouts),
        cmocka_unit_test(test_flat_forms),
        cmocka_unit_test(test_fill),
        cmocka_unit_test(test_arange),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests_name("ops/tensor_math (gl vs cpu)", tests, setup, teardown);
}
