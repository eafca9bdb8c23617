/* The element-wise descriptor ops (tgl_copy, tgl_compare, tgl_where, tgl_masked_fill) on GL
 * compared with the CPU oracle bit for bit. tgl_copy: the whole allocation included (guard
 * bytes around and between the elements keep their poison): every dtype pair on every f16 and
 * bf16 pattern, on 1M random f32 patterns and on integer and bool edge values; random shapes
 * (0-d, empty, dims of 1) with random strides (negative, zero, gaps, permuted), broadcasting,
 * windows cut into boxes by a small SSBO limit, in place. The oracle is pinned to hand-worked
 * conversions. tgl_compare, tgl_where, tgl_masked_fill: hand-worked cases (NaN, signed zeros, subnormals,
 * integer limits, bool bytes), random layouts and broadcasts over edge values of every dtype,
 * boxes. Then every refusal, with the destination unchanged. */
#include "testing.h"
#include "tensors.h"
#include "gl/gl_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef tgt_pair pair;

static int setup(void **state)
{
    return tgt_pair_setup(state, 0xC0B1);
}

static int teardown(void **state)
{
    return tgt_pair_teardown(state);
}

static const tgl_dtype dtypes[] = {TGL_DTYPE_F32, TGL_DTYPE_F16, TGL_DTYPE_BF16, TGL_DTYPE_I32, TGL_DTYPE_BOOL};
#define N_DTYPES (sizeof dtypes / sizeof dtypes[0])
#define POISON 0xA5

/* An input: its allocation's initial bytes, and its descriptor with data a byte offset into it. */
typedef struct operand {
    const uint8_t *init;
    size_t bytes;
    tgl_tensor t;
} operand;

enum { OP_COPY, OP_COMPARE, OP_WHERE, OP_MASKED_FILL };
static const char *const op_names[4] = {"copy", "compare", "where", "masked_fill"};

/* One call on b: each input in an allocation of its bytes, out in one of out_bytes filled with
 * POISON (descriptors' data fields are byte offsets into them). The whole out allocation comes
 * back in got. Returns the call's status. */
static tgl_status run_on(tgl_backend *b, int op, tgl_compare_op cmp, const operand *in, size_t nin, size_t out_bytes,
                         tgl_tensor out, uint8_t *got)
{
    tgl_ptr a[3], d;
    tgl_tensor t[3];
    for (size_t k = 0; k < nin; k++) {
        TGT_OK(b, tgl_alloc(b, in[k].bytes, &a[k]));
        TGT_OK(b, tgl_copy_htod(b, a[k], in[k].init, in[k].bytes));
        t[k] = in[k].t;
        t[k].data += a[k];
    }
    TGT_OK(b, tgl_alloc(b, out_bytes, &d));
    memset(got, POISON, out_bytes);
    TGT_OK(b, tgl_copy_htod(b, d, got, out_bytes));
    out.data += d;
    /* masked_fill: in[0] the mask, in[1] the input, the value the compare op's index - 2 (exact in
     * every dtype) */
    tgl_status st = op == OP_COPY      ? tgl_copy(b, &out, &t[0])
                    : op == OP_COMPARE ? tgl_compare(b, cmp, &t[0], &t[1], &out)
                    : op == OP_WHERE   ? tgl_where(b, &t[0], &t[1], &t[2], &out)
                                       : tgl_masked_fill(b, &t[1], &t[0], (double)cmp - 2.0, &out);
    TGT_OK(b, tgl_copy_dtoh(b, got, d, out_bytes));
    for (size_t k = 0; k < nin; k++)
        TGT_OK(b, tgl_free(b, a[k]));
    TGT_OK(b, tgl_free(b, d));
    return st;
}

/* The same call on gl and cpu: both must succeed and leave the same bytes. */
static void same_run(pair *p, tgl_backend *gl, int op, tgl_compare_op cmp, const operand *in, size_t nin,
                     size_t out_bytes, tgl_tensor out, const char *what)
{
    uint8_t *g = malloc(out_bytes), *c = malloc(out_bytes);
    TGT_OK(p->cpu, run_on(p->cpu, op, cmp, in, nin, out_bytes, out, c));
    if (gl) {
        TGT_OK(gl, run_on(gl, op, cmp, in, nin, out_bytes, out, g));
        for (size_t i = 0; i < out_bytes; i++)
            if (g[i] != c[i])
                fail_msg("%s: %s (%s -> %s, %zu dims): byte %zu of out's allocation is 0x%02x on gl, 0x%02x on cpu", what,
                         op_names[op], tgl_dtype_name(in[nin - 1].t.dtype), tgl_dtype_name(out.dtype), out.ndim, i,
                         g[i], c[i]);
    }
    free(g);
    free(c);
}

static tgl_status copy_on(tgl_backend *b, const uint8_t *src_init, size_t src_bytes, size_t dst_bytes, tgl_tensor dst,
                          tgl_tensor src, uint8_t *out)
{
    operand in = {src_init, src_bytes, src};
    return run_on(b, OP_COPY, TGL_COMPARE_EQ, &in, 1, dst_bytes, dst, out);
}

static void same_on_both(pair *p, tgl_backend *gl, const uint8_t *src_init, size_t src_bytes, size_t dst_bytes,
                         tgl_tensor dst, tgl_tensor src, const char *what)
{
    operand in = {src_init, src_bytes, src};
    same_run(p, gl, OP_COPY, TGL_COMPARE_EQ, &in, 1, dst_bytes, dst, what);
}

static tgl_tensor vec(tgl_dtype dt, size_t n)
{
    return tgl_tensor_contiguous(0, dt, 1, &n);
}

/* ---- the oracle against hand-worked conversions -------------------------------------------- */

typedef struct known {
    tgl_dtype from, to;
    uint32_t in, want; /* bit patterns (bool: 0 or 1; i32 as two's complement) */
} known;

static const known cases[] = {
    /* f32 -> bf16: nearest even, overflow to inf, every NaN 0x7FC0 */
    {TGL_DTYPE_F32, TGL_DTYPE_BF16, 0x3F800000u, 0x3F80u},
    {TGL_DTYPE_F32, TGL_DTYPE_BF16, 0x3F808000u, 0x3F80u}, /* tie, even below */
    {TGL_DTYPE_F32, TGL_DTYPE_BF16, 0x3F818000u, 0x3F82u}, /* tie, odd below: up */
    {TGL_DTYPE_F32, TGL_DTYPE_BF16, 0x3F808001u, 0x3F81u},
    {TGL_DTYPE_F32, TGL_DTYPE_BF16, 0x7F7FFFFFu, 0x7F80u},
    {TGL_DTYPE_F32, TGL_DTYPE_BF16, 0xFFC00001u, 0x7FC0u},
    {TGL_DTYPE_F32, TGL_DTYPE_BF16, 0x7F800001u, 0x7FC0u},
    {TGL_DTYPE_F32, TGL_DTYPE_BF16, 0x80000000u, 0x8000u},
    {TGL_DTYPE_F32, TGL_DTYPE_BF16, 0x00018000u, 0x0002u}, /* subnormal tie, odd: up */
    {TGL_DTYPE_F32, TGL_DTYPE_BF16, 0x00008000u, 0x0000u},
    /* f32 -> i32: toward zero, saturating, NaN 0 */
    {TGL_DTYPE_F32, TGL_DTYPE_I32, 0x4039999Au, 2u},                       /* 2.9 */
    {TGL_DTYPE_F32, TGL_DTYPE_I32, 0xC039999Au, (uint32_t)-2},             /* -2.9 */
    {TGL_DTYPE_F32, TGL_DTYPE_I32, 0x4F000000u, 0x7FFFFFFFu},              /* 2^31 */
    {TGL_DTYPE_F32, TGL_DTYPE_I32, 0xCF000000u, 0x80000000u},              /* -2^31 */
    {TGL_DTYPE_F32, TGL_DTYPE_I32, 0xCF000001u, 0x80000000u},
    {TGL_DTYPE_F32, TGL_DTYPE_I32, 0x4EFFFFFFu, 2147483520u},              /* largest below 2^31 */
    {TGL_DTYPE_F32, TGL_DTYPE_I32, 0x7F800000u, 0x7FFFFFFFu},              /* inf */
    {TGL_DTYPE_F32, TGL_DTYPE_I32, 0xFF800000u, 0x80000000u},
    {TGL_DTYPE_F32, TGL_DTYPE_I32, 0x7FC00000u, 0u},
    {TGL_DTYPE_F32, TGL_DTYPE_I32, 0x00000001u, 0u},
    {TGL_DTYPE_BF16, TGL_DTYPE_I32, 0xC2F7u, (uint32_t)-123},             /* -123.5 */
    /* i32 -> f32: nearest even */
    {TGL_DTYPE_I32, TGL_DTYPE_F32, 16777217u, 0x4B800000u},                /* 2^24 + 1 -> 2^24 */
    {TGL_DTYPE_I32, TGL_DTYPE_F32, 16777219u, 0x4B800002u},                /* -> 2^24 + 4 */
    {TGL_DTYPE_I32, TGL_DTYPE_F32, 33554435u, 0x4C000001u},                /* 2^25 + 3 -> 2^25 + 4 */
    {TGL_DTYPE_I32, TGL_DTYPE_F32, 0x80000000u, 0xCF000000u},
    {TGL_DTYPE_I32, TGL_DTYPE_F32, 0x7FFFFFFFu, 0x4F000000u},
    {TGL_DTYPE_I32, TGL_DTYPE_F32, (uint32_t)-16777217, 0xCB800000u},
    {TGL_DTYPE_I32, TGL_DTYPE_F32, (uint32_t)-7, 0xC0E00000u},
    {TGL_DTYPE_I32, TGL_DTYPE_F16, 65519u, 0x7BFFu},                       /* 65504 */
    {TGL_DTYPE_I32, TGL_DTYPE_F16, 65520u, 0x7C00u},                       /* inf */
    {TGL_DTYPE_I32, TGL_DTYPE_F16, (uint32_t)-70000, 0xFC00u},
    {TGL_DTYPE_I32, TGL_DTYPE_BF16, 257u, 0x4380u},                        /* 257 -> 256 */
    {TGL_DTYPE_I32, TGL_DTYPE_BF16, 259u, 0x4382u},                        /* 259 -> 260 */
    /* to and from bool */
    {TGL_DTYPE_BOOL, TGL_DTYPE_F32, 2u, 0x3F800000u},
    {TGL_DTYPE_BOOL, TGL_DTYPE_F16, 0xFFu, 0x3C00u},
    {TGL_DTYPE_BOOL, TGL_DTYPE_BF16, 1u, 0x3F80u},
    {TGL_DTYPE_BOOL, TGL_DTYPE_I32, 7u, 1u},
    {TGL_DTYPE_BOOL, TGL_DTYPE_BOOL, 9u, 1u},
    {TGL_DTYPE_BOOL, TGL_DTYPE_F32, 0u, 0u},
    {TGL_DTYPE_F32, TGL_DTYPE_BOOL, 0x7FC00000u, 1u},
    {TGL_DTYPE_F32, TGL_DTYPE_BOOL, 0x80000000u, 0u},
    {TGL_DTYPE_F32, TGL_DTYPE_BOOL, 0x00000001u, 1u},                      /* subnormal */
    {TGL_DTYPE_F16, TGL_DTYPE_BOOL, 0x8000u, 0u},
    {TGL_DTYPE_F16, TGL_DTYPE_BOOL, 0x0001u, 1u},
    {TGL_DTYPE_I32, TGL_DTYPE_BOOL, 0x80000000u, 1u},
    /* between the half types, and the same dtype keeps NaN payloads */
    {TGL_DTYPE_F16, TGL_DTYPE_BF16, 0x3C01u, 0x3F80u},                     /* 1 + 2^-10 -> 1 */
    {TGL_DTYPE_BF16, TGL_DTYPE_F16, 0x4780u, 0x7C00u},                     /* 65536 -> inf */
    {TGL_DTYPE_BF16, TGL_DTYPE_F16, 0x3380u, 0x0001u},                     /* 2^-24 */
    {TGL_DTYPE_F32, TGL_DTYPE_F32, 0x7F800123u, 0x7F800123u},
    {TGL_DTYPE_F16, TGL_DTYPE_F16, 0x7C01u, 0x7C01u},
    {TGL_DTYPE_F32, TGL_DTYPE_F16, 0x38800000u, 0x0400u},                  /* 2^-14 */
};

static void test_known_conversions(void **state)
{
    pair *p = *state;
    tgl_backend *backends[2] = {p->cpu, p->gl};
    for (int k = 0; k < 2; k++) {
        if (!backends[k])
            continue;
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            const known *c = &cases[i];
            uint8_t in[4], out[8];
            memcpy(in, &c->in, 4); /* little-endian: the low bytes are the narrower patterns */
            TGT_OK(backends[k], copy_on(backends[k], in, 4, 8, vec(c->to, 1), vec(c->from, 1), out));
            uint32_t got = 0;
            memcpy(&got, out, tgl_dtype_size(c->to));
            if (got != c->want)
                fail_msg("%s: %s 0x%08x -> %s gives 0x%08x, want 0x%08x", k ? "gl" : "cpu", tgl_dtype_name(c->from),
                         c->in, tgl_dtype_name(c->to), got, c->want);
            for (size_t b = tgl_dtype_size(c->to); b < 8; b++)
                if (out[b] != POISON)
                    fail_msg("%s: %s -> %s wrote byte %zu past the element", k ? "gl" : "cpu", tgl_dtype_name(c->from),
                             tgl_dtype_name(c->to), b);
        }
    }
}

/* ---- every pattern of the small types, 1M random f32 patterns, integer edges ---------------- */

static void test_all_patterns(void **state)
{
    pair *p = *state;
    const size_t n32 = (size_t)1 << 20;
    uint8_t *src = malloc(n32 * 4);
    for (size_t s = 0; s < N_DTYPES; s++) {
        tgl_dtype from = dtypes[s];
        size_t n = from == TGL_DTYPE_BOOL ? 256 : tgl_dtype_size(from) == 2 ? 65536 : n32;
        for (size_t i = 0; i < n; i++) {
            uint32_t v = (uint32_t)tgt_next(&p->rng);
            if (tgl_dtype_size(from) < 4)
                v = (uint32_t)i; /* every pattern */
            else if (i < 64) /* edges first: zeros, infinities, NaNs, subnormals, integer limits */
                v = (uint32_t[]){0u, 0x80000000u, 0x7F800000u, 0xFF800000u, 0x7FC00000u, 0xFFFFFFFFu, 0x7F800001u,
                                 1u, 0x807FFFFFu, 0x7FFFFFFFu, 0x4F000000u, 0xCF000000u, 0x4EFFFFFFu, 0x477FF000u,
                                 0x477FEFFFu, 0x33000000u, 0x33000001u, 0x38800000u, 0x387FFFFFu, 16777217u,
                                 (uint32_t)-16777219, 2u}[i % 22];
            memcpy(src + i * tgl_dtype_size(from), &v, tgl_dtype_size(from));
        }
        for (size_t d = 0; d < N_DTYPES; d++) {
            tgl_dtype to = dtypes[d];
            size_t bytes = n * tgl_dtype_size(to) + 8; /* a guard after the elements */
            char what[64];
            snprintf(what, sizeof what, "all patterns, %zu elements", n);
            same_on_both(p, p->gl, src, n * tgl_dtype_size(from), bytes, vec(to, n), vec(from, n), what);
        }
    }
    free(src);
}

/* ---- random layouts ----------------------------------------------------------------------- */

static void random_copies(pair *p, tgl_backend *gl, int count, size_t max_dim, const char *what)
{
    for (int c = 0; c < count; c++) {
        size_t ndim = tgt_below(&p->rng, 6), shape[TGL_MAX_DIMS], n = 1;
        for (size_t d = 0; d < ndim; d++)
            n *= shape[d] = c % 17 == 5 && d == 0 ? 0 : 1 + tgt_below(&p->rng, max_dim);
        tgl_dtype to = dtypes[tgt_below(&p->rng, N_DTYPES)], from = dtypes[tgt_below(&p->rng, N_DTYPES)];
        size_t dst_bytes, src_bytes;
        tgl_tensor dst = tgt_random_layout(&p->rng, to, ndim, shape, &dst_bytes);
        /* src: broadcast from fewer dims and dims of 1 now and then */
        size_t s_ndim = ndim - (ndim ? tgt_below(&p->rng, 2) : 0), s_shape[TGL_MAX_DIMS];
        for (size_t d = 0; d < s_ndim; d++)
            s_shape[d] = tgt_below(&p->rng, 4) == 0 ? 1 : shape[d + ndim - s_ndim];
        tgl_tensor src = tgt_random_layout(&p->rng, from, s_ndim, s_shape, &src_bytes);
        if (c % 3 == 1) { /* both dense, one shape: the kernel's linear paths */
            dst = tgt_dense_layout(&p->rng, to, ndim, shape, &dst_bytes);
            src = tgt_dense_layout(&p->rng, from, ndim, shape, &src_bytes);
            s_ndim = 0; /* no broadcast dims below */
        }
        for (size_t d = 0; d < s_ndim; d++)
            if (s_shape[d] == 1 && tgt_below(&p->rng, 2))
                src.strides[d] = 0; /* a broadcast dim's stride is not read */
        uint8_t *init = malloc(src_bytes);
        for (size_t i = 0; i < src_bytes; i++)
            init[i] = (uint8_t)tgt_next(&p->rng);
        (void)n;
        same_on_both(p, gl, init, src_bytes, dst_bytes, dst, src, what);
        free(init);
    }
}

static void test_random_layouts(void **state)
{
    pair *p = *state;
    random_copies(p, p->gl, 300, 7, "random layout");
    random_copies(p, p->gl, 12, 40, "random layout, larger dims");
}

/* ---- comparisons and where ----------------------------------------------------------------- */

/* Random compare (op OP_COMPARE), where or masked_fill calls: out in a random layout, inputs
 * broadcast to it (fewer dims, dims of 1), every dtype; every third call all operands dense and
 * of out's shape (the kernel's linear paths). */
static void random_compare_where(pair *p, tgl_backend *gl, int op, int count, size_t max_dim, const char *what)
{
    int where_ = op != OP_COMPARE; /* a bool input 0 and out of the data's dtype */
    size_t nin = op == OP_WHERE ? 3 : 2;
    for (int c = 0; c < count; c++) {
        size_t ndim = tgt_below(&p->rng, 5), shape[TGL_MAX_DIMS];
        for (size_t d = 0; d < ndim; d++)
            shape[d] = c % 13 == 7 && d == 0 ? 0 : 1 + tgt_below(&p->rng, max_dim);
        tgl_dtype dt = dtypes[tgt_below(&p->rng, N_DTYPES)];
        tgl_dtype out_dt = where_ ? dt : TGL_DTYPE_BOOL;
        size_t out_bytes;
        int dense = c % 3 == 1;
        tgl_tensor out = dense ? tgt_dense_layout(&p->rng, out_dt, ndim, shape, &out_bytes)
                               : tgt_random_layout(&p->rng, out_dt, ndim, shape, &out_bytes);
        size_t in_shape[3][TGL_MAX_DIMS], in_ndim[3];
        tgt_broadcast_shapes(&p->rng, nin, ndim, shape, in_ndim, in_shape);
        operand in[3];
        uint8_t *init[3];
        for (size_t k = 0; k < nin; k++) {
            tgl_dtype kt = where_ && k == 0 ? TGL_DTYPE_BOOL : dt;
            in[k].t = dense ? tgt_dense_layout(&p->rng, kt, ndim, shape, &in[k].bytes)
                            : tgt_random_layout(&p->rng, kt, in_ndim[k], in_shape[k], &in[k].bytes);
            init[k] = malloc(in[k].bytes);
            tgt_pool_fill(&p->rng, kt, init[k], in[k].bytes);
            in[k].init = init[k];
        }
        tgl_compare_op cmp = (tgl_compare_op)tgt_below(&p->rng, TGL_COMPARE_COUNT);
        same_run(p, gl, op, cmp, in, nin, out_bytes, out, what);
        for (size_t k = 0; k < nin; k++)
            free(init[k]);
    }
}

static void test_compare_where_random(void **state)
{
    pair *p = *state;
    random_compare_where(p, p->gl, OP_COMPARE, 300, 7, "random compare");
    random_compare_where(p, p->gl, OP_WHERE, 200, 7, "random where");
    random_compare_where(p, p->gl, OP_MASKED_FILL, 200, 7, "random masked_fill");
    if (!p->gl)
        return;
    tgl_backend *gl = tgt_open(TGL_BACKEND_GL);
    tgl_gl_test_set_limits(gl, 256 + 64, NULL);
    random_compare_where(p, gl, OP_COMPARE, tgt_count(30), 9, "compare, small SSBO limit");
    random_compare_where(p, gl, OP_WHERE, tgt_count(30), 9, "where, small SSBO limit");
    random_compare_where(p, gl, OP_MASKED_FILL, tgt_count(30), 9, "masked_fill, small SSBO limit");
    tgl_close(gl);
}

/* Comparisons worked by hand, on both backends: NaN, signed zeros, subnormals, integer limits,
 * bool bytes. Each row: dtype, a, b, then the six results eq ne lt le gt ge. */
typedef struct cmp_case {
    tgl_dtype dt;
    uint32_t a, b;
    uint8_t want[TGL_COMPARE_COUNT];
} cmp_case;

static const cmp_case cmp_cases[] = {
    {TGL_DTYPE_F32, 0x7FC00000u, 0x7FC00000u, {0, 1, 0, 0, 0, 0}}, /* NaN, NaN */
    {TGL_DTYPE_F32, 0x7FC00000u, 0x3F800000u, {0, 1, 0, 0, 0, 0}},
    {TGL_DTYPE_F32, 0x80000000u, 0u, {1, 0, 0, 1, 0, 1}},          /* -0, +0 */
    {TGL_DTYPE_F32, 1u, 2u, {0, 1, 1, 1, 0, 0}},                   /* subnormals */
    {TGL_DTYPE_F32, 0x80000002u, 0x80000001u, {0, 1, 1, 1, 0, 0}},
    {TGL_DTYPE_F32, 0xFF800000u, 0x7F800000u, {0, 1, 1, 1, 0, 0}}, /* -inf, inf */
    {TGL_DTYPE_F32, 0xBF800000u, 0x3F800000u, {0, 1, 1, 1, 0, 0}},
    {TGL_DTYPE_F16, 0x7C01u, 0x7C01u, {0, 1, 0, 0, 0, 0}},
    {TGL_DTYPE_F16, 0x8001u, 0x0000u, {0, 1, 1, 1, 0, 0}},
    {TGL_DTYPE_BF16, 0x3F81u, 0x3F80u, {0, 1, 0, 0, 1, 1}},
    {TGL_DTYPE_BF16, 0x8000u, 0x0000u, {1, 0, 0, 1, 0, 1}},
    {TGL_DTYPE_I32, 0x80000000u, 0x7FFFFFFFu, {0, 1, 1, 1, 0, 0}},
    {TGL_DTYPE_I32, 0xFFFFFFFFu, 0xFFFFFFFFu, {1, 0, 0, 1, 0, 1}},
    {TGL_DTYPE_I32, 16777217u, 16777216u, {0, 1, 0, 0, 1, 1}},     /* exact, not through f32 */
    {TGL_DTYPE_BOOL, 2u, 1u, {1, 0, 0, 1, 0, 1}},                  /* both true */
    {TGL_DTYPE_BOOL, 0u, 255u, {0, 1, 1, 1, 0, 0}},
};

static void test_compare_known(void **state)
{
    pair *p = *state;
    for (int k = 0; k < 2; k++) {
        tgl_backend *b = k ? p->gl : p->cpu;
        if (!b)
            continue;
        for (size_t i = 0; i < sizeof cmp_cases / sizeof cmp_cases[0]; i++) {
            const cmp_case *c = &cmp_cases[i];
            uint8_t a[4], bb[4], got[8];
            memcpy(a, &c->a, 4);
            memcpy(bb, &c->b, 4);
            operand in[2] = {{a, 4, vec(c->dt, 1)}, {bb, 4, vec(c->dt, 1)}};
            for (int op = 0; op < TGL_COMPARE_COUNT; op++) {
                TGT_OK(b, run_on(b, OP_COMPARE, (tgl_compare_op)op, in, 2, 8, vec(TGL_DTYPE_BOOL, 1), got));
                if (got[0] != c->want[op] || got[1] != POISON)
                    fail_msg("%s: %s 0x%x %s 0x%x gives %u, want %u", k ? "gl" : "cpu", tgl_dtype_name(c->dt), c->a,
                             tgl_compare_name((tgl_compare_op)op), c->b, got[0], c->want[op]);
            }
        }
        /* where picks bits as they are (a NaN payload survives), bool as 0 or 1 */
        uint8_t cond[4] = {0, 7, 1, 0}, got[32];
        uint32_t x[4] = {0x7F800123u, 1u, 2u, 3u}, y[4] = {10u, 11u, 12u, 0xFFC00001u};
        operand in[3] = {{cond, 4, vec(TGL_DTYPE_BOOL, 4)}, {(uint8_t *)x, 16, vec(TGL_DTYPE_F32, 4)},
                         {(uint8_t *)y, 16, vec(TGL_DTYPE_F32, 4)}};
        TGT_OK(b, run_on(b, OP_WHERE, TGL_COMPARE_EQ, in, 3, 16, vec(TGL_DTYPE_F32, 4), got));
        uint32_t want[4] = {10u, 1u, 2u, 0xFFC00001u};
        assert_memory_equal(got, want, 16);
        uint8_t bx[4] = {5, 0, 9, 0}, by[4] = {0, 3, 0, 0};
        in[1] = (operand){bx, 4, vec(TGL_DTYPE_BOOL, 4)};
        in[2] = (operand){by, 4, vec(TGL_DTYPE_BOOL, 4)};
        TGT_OK(b, run_on(b, OP_WHERE, TGL_COMPARE_EQ, in, 3, 8, vec(TGL_DTYPE_BOOL, 4), got));
        assert_memory_equal(got, ((uint8_t[]){0, 0, 1, 0}), 4);
        /* masked_fill (value: the compare op's index - 2): x.masked_fill(cond, v), payloads kept,
         * f16 and i32 values converted, bool as 0 or 1, a row mask broadcast over two rows */
        in[0] = (operand){cond, 4, vec(TGL_DTYPE_BOOL, 4)};
        in[1] = (operand){(uint8_t *)x, 16, vec(TGL_DTYPE_F32, 4)};
        TGT_OK(b, run_on(b, OP_MASKED_FILL, TGL_COMPARE_COUNT - 1, in, 2, 16, vec(TGL_DTYPE_F32, 4), got));
        assert_memory_equal(got, ((uint32_t[]){0x7F800123u, 0x40400000u, 0x40400000u, 3u}), 16); /* 3.0f */
        uint16_t h[4] = {0x7C01u, 0x3C00u, 0x8000u, 0x0001u};
        in[1] = (operand){(uint8_t *)h, 8, vec(TGL_DTYPE_F16, 4)};
        TGT_OK(b, run_on(b, OP_MASKED_FILL, TGL_COMPARE_EQ, in, 2, 8, vec(TGL_DTYPE_F16, 4), got));
        assert_memory_equal(got, ((uint16_t[]){0x7C01u, 0xC000u, 0xC000u, 0x0001u}), 8); /* -2.0 */
        int32_t iv[8] = {1, 2, 3, 4, 5, 6, 7, 8};
        in[1] = (operand){(uint8_t *)iv, 32, tgl_tensor_contiguous(0, TGL_DTYPE_I32, 2, (size_t[]){2, 4})};
        TGT_OK(b, run_on(b, OP_MASKED_FILL, TGL_COMPARE_NE, in, 2, 32,
                         tgl_tensor_contiguous(0, TGL_DTYPE_I32, 2, (size_t[]){2, 4}), got));
        assert_memory_equal(got, ((int32_t[]){1, -1, -1, 4, 5, -1, -1, 8}), 32);
        in[1] = (operand){bx, 4, vec(TGL_DTYPE_BOOL, 4)};
        TGT_OK(b, run_on(b, OP_MASKED_FILL, TGL_COMPARE_EQ, in, 2, 8, vec(TGL_DTYPE_BOOL, 4), got));
        assert_memory_equal(got, ((uint8_t[]){1, 1, 1, 0}), 4); /* -2 is true */
    }
}

/* A 256-byte SSBO limit: every copy is cut into boxes whose windows fit. */
static void test_boxes(void **state)
{
    pair *p = *state;
    if (!p->gl)
        skip();
    tgl_backend *gl = tgt_open(TGL_BACKEND_GL);
    tgl_gl_test_set_limits(gl, 256 + 64, NULL);
    random_copies(p, gl, tgt_count(60), 9, "small SSBO limit");
    /* dense operands cut into boxes across their rows: a box is dense or not on its own */
    const size_t shape[3] = {5, 7, 23}, n = 5 * 7 * 23;
    uint8_t *init = malloc(n * 4 + 8);
    for (size_t i = 0; i < n * 4 + 8; i++)
        init[i] = (uint8_t)tgt_next(&p->rng);
    for (size_t s = 0; s < N_DTYPES; s++)
        for (size_t d = 0; d < N_DTYPES; d++) {
            size_t es = tgl_dtype_size(dtypes[s]), ed = tgl_dtype_size(dtypes[d]);
            tgl_tensor src = tgl_tensor_contiguous(es, dtypes[s], 3, shape);
            tgl_tensor dst = tgl_tensor_contiguous(ed, dtypes[d], 3, shape);
            same_on_both(p, gl, init, n * es + 8, n * ed + 8, dst, src, "dense, small SSBO limit");
        }
    free(init);
    tgl_close(gl);
}

/* Transposes and flips of f32 (the strided gather's route), contiguous copies of each dtype (a
 * buffer copy), and dense narrow destinations (a word per invocation) at sizes that are not
 * multiples of the word or the workgroup, at odd element offsets. */
static void test_routes(void **state)
{
    pair *p = *state;
    static const size_t dims[][2] = {{1, 1}, {3, 5}, {33, 65}, {64, 64}, {129, 7}, {517, 300}};
    for (size_t k = 0; k < sizeof dims / sizeof dims[0]; k++) {
        size_t r = dims[k][0], c = dims[k][1], n = r * c;
        for (size_t s = 0; s < N_DTYPES; s++)
            for (size_t d = 0; d < N_DTYPES; d++) {
                size_t es = tgl_dtype_size(dtypes[s]), ed = tgl_dtype_size(dtypes[d]);
                uint8_t *init = malloc((n + 3) * es);
                for (size_t i = 0; i < (n + 3) * es; i++)
                    init[i] = (uint8_t)tgt_next(&p->rng);
                for (int layout = 0; layout < 3; layout++) {
                    tgl_tensor src = tgl_tensor_contiguous(es * (1 + k % 3), dtypes[s], 2, (size_t[]){r, c});
                    tgl_tensor dst = tgl_tensor_contiguous(ed * (1 + k % 2), dtypes[d], 2, (size_t[]){r, c});
                    if (layout == 1) { /* transpose: dst [c, r] reads src's columns */
                        dst = tgl_tensor_contiguous(ed * (1 + k % 2), dtypes[d], 2, (size_t[]){c, r});
                        src.shape[0] = c;
                        src.shape[1] = r;
                        src.strides[0] = 1;
                        src.strides[1] = (int64_t)c;
                    } else if (layout == 2) { /* flip both dims */
                        src.data += (n - 1) * es;
                        src.strides[0] = -(int64_t)c;
                        src.strides[1] = -1;
                    }
                    same_on_both(p, p->gl, init, (n + 3) * es, (n + 3) * ed, dst, src, "routes");
                }
                free(init);
            }
    }
}

/* dst and src the same elements: the copy is in place (bool is rewritten as 0 or 1). */
static void test_in_place(void **state)
{
    pair *p = *state;
    tgl_backend *backends[2] = {p->cpu, p->gl};
    for (int k = 0; k < 2; k++) {
        tgl_backend *b = backends[k];
        if (!b)
            continue;
        uint8_t bytes[40], got[40];
        for (size_t i = 0; i < sizeof bytes; i++)
            bytes[i] = (uint8_t)(i * 37);
        for (size_t s = 0; s < N_DTYPES; s++) {
            tgl_ptr a;
            TGT_OK(b, tgl_alloc(b, sizeof bytes, &a));
            TGT_OK(b, tgl_copy_htod(b, a, bytes, sizeof bytes));
            size_t es = tgl_dtype_size(dtypes[s]), n = 32 / es / 2;
            tgl_tensor t = tgl_tensor_contiguous(a + 4, dtypes[s], 2, (size_t[]){n, 2});
            t.strides[0] = 2;
            t.strides[1] = 1;
            TGT_OK(b, tgl_copy(b, &t, &t));
            TGT_OK(b, tgl_copy_dtoh(b, got, a, sizeof got));
            for (size_t i = 0; i < sizeof bytes; i++) {
                uint8_t want = bytes[i];
                if (dtypes[s] == TGL_DTYPE_BOOL && i >= 4 && i < 4 + 2 * n)
                    want = want != 0;
                if (got[i] != want)
                    fail_msg("%s: %s in place changed byte %zu: 0x%02x -> 0x%02x", k ? "gl" : "cpu",
                             tgl_dtype_name(dtypes[s]), i, want, got[i]);
            }
            TGT_OK(b, tgl_free(b, a));
        }
    }
}

/* ---- refusals ---------------------------------------------------------------------------- */

static void expect_refused(tgl_backend *b, tgl_ptr guard, const tgl_tensor *dst, const tgl_tensor *src,
                           tgl_status want, const char *says)
{
    uint8_t before[256], after[256];
    TGT_OK(b, tgl_copy_dtoh(b, before, guard, sizeof before));
    TGT_EXPECT(b, tgl_copy(b, dst, src), want);
    if (says && !strstr(tgl_last_error(b), says))
        fail_msg("message \"%s\" does not say \"%s\"", tgl_last_error(b), says);
    TGT_OK(b, tgl_copy_dtoh(b, after, guard, sizeof after));
    assert_memory_equal(before, after, sizeof before);
}

static void refusals_on(tgl_backend *b)
{
    tgl_ptr a, other;
    uint8_t fill[256];
    memset(fill, POISON, sizeof fill);
    TGT_OK(b, tgl_alloc(b, 256, &a));
    TGT_OK(b, tgl_alloc(b, 256, &other));
    TGT_OK(b, tgl_copy_htod(b, a, fill, sizeof fill));
    tgl_tensor d = tgl_tensor_contiguous(a, TGL_DTYPE_F32, 2, (size_t[]){4, 4});
    tgl_tensor s = tgl_tensor_contiguous(other, TGL_DTYPE_F32, 2, (size_t[]){4, 4}), t;
    TGT_OK(b, tgl_copy(b, &d, &s));
    TGT_OK(b, tgl_copy_htod(b, a, fill, sizeof fill));
    expect_refused(b, a, NULL, &s, TGL_ERR_INVALID_ARGUMENT, "dst");
    expect_refused(b, a, &d, NULL, TGL_ERR_INVALID_ARGUMENT, "src");
    t = d;
    t.ndim = TGL_MAX_DIMS + 1;
    expect_refused(b, a, &t, &s, TGL_ERR_INVALID_ARGUMENT, "ndim");
    t = tgl_tensor_contiguous(a, TGL_DTYPE_F32, 9, (size_t[]){1, 1, 1, 1, 1, 1, 1, 1, 1});
    expect_refused(b, a, &t, &s, TGL_ERR_INVALID_ARGUMENT, "ndim");
    t = d;
    t.dtype = (tgl_dtype)99;
    expect_refused(b, a, &t, &s, TGL_ERR_INVALID_ARGUMENT, "dtype");
    t = s;
    t.dtype = (tgl_dtype)-1;
    expect_refused(b, a, &d, &t, TGL_ERR_INVALID_ARGUMENT, "dtype");
    t = tgl_tensor_contiguous(a, TGL_DTYPE_Q8_0, 2, (size_t[]){1, 32});
    expect_refused(b, a, &t, &s, TGL_ERR_UNSUPPORTED, "q8_0");
    t = tgl_tensor_contiguous(other, TGL_DTYPE_Q4_0, 2, (size_t[]){4, 32});
    expect_refused(b, a, &d, &t, TGL_ERR_UNSUPPORTED, "q4_0");
    /* element counts that overflow size_t */
    t = tgl_tensor_contiguous(a, TGL_DTYPE_F32, 3, (size_t[]){(size_t)1 << 32, (size_t)1 << 32, 2});
    expect_refused(b, a, &t, &s, TGL_ERR_INVALID_ARGUMENT, "overflows");
    /* strides that walk out of the allocation: forwards, backwards, by the extreme index only */
    t = d;
    t.strides[0] = 30; /* element (3, 3) at float 93 of 64 */
    expect_refused(b, a, &t, &s, TGL_ERR_INVALID_POINTER, "dst");
    t = d;
    t.strides[1] = -1;
    expect_refused(b, a, &t, &s, TGL_ERR_INVALID_POINTER, "before data");
    t = s;
    t.data = other + 3 * 4;
    t.strides[0] = -1;
    t.strides[1] = 1; /* reaches other + 0 .. other + 6 floats: inside */
    TGT_OK(b, tgl_copy(b, &d, &t));
    TGT_OK(b, tgl_copy_htod(b, a, fill, sizeof fill));
    t.data = other + 2 * 4; /* element (3, 0) one float before the allocation */
    expect_refused(b, a, &d, &t, TGL_ERR_INVALID_POINTER, "before data");
    t = s;
    t.strides[0] = INT64_MAX / 2;
    expect_refused(b, a, &d, &t, TGL_ERR_INVALID_POINTER, "src");
    t = s;
    t.strides[0] = INT64_MIN;
    expect_refused(b, a, &d, &t, TGL_ERR_INVALID_POINTER, "src");
    /* a data pointer that is misaligned, freed, foreign */
    t = d;
    t.data = a + 2;
    expect_refused(b, a, &t, &s, TGL_ERR_INVALID_ARGUMENT, "aligned");
    tgl_ptr gone;
    TGT_OK(b, tgl_alloc(b, 64, &gone));
    TGT_OK(b, tgl_free(b, gone));
    t = s;
    t.data = gone;
    expect_refused(b, a, &d, &t, TGL_ERR_INVALID_POINTER, "src");
    t = s;
    t.data = 12345;
    expect_refused(b, a, &d, &t, TGL_ERR_INVALID_POINTER, "src");
    /* shapes that do not broadcast */
    t = tgl_tensor_contiguous(other, TGL_DTYPE_F32, 2, (size_t[]){4, 3});
    expect_refused(b, a, &d, &t, TGL_ERR_INVALID_ARGUMENT, "broadcast");
    t = tgl_tensor_contiguous(other, TGL_DTYPE_F32, 3, (size_t[]){1, 4, 4});
    expect_refused(b, a, &d, &t, TGL_ERR_INVALID_ARGUMENT, "broadcast");
    /* a dst that reaches an element twice */
    t = d;
    t.strides[0] = 0;
    expect_refused(b, a, &t, &s, TGL_ERR_INVALID_ARGUMENT, "two indices");
    t = d;
    t.strides[0] = 2; /* rows of 4 at a step of 2: rows overlap */
    expect_refused(b, a, &t, &s, TGL_ERR_INVALID_ARGUMENT, "two indices");
    /* overlap between dst and src that is not the same elements */
    t = d;
    t.data = a + 4;
    expect_refused(b, a, &d, &t, TGL_ERR_INVALID_ARGUMENT, "overlaps");
    t = d;
    t.strides[0] = 1;
    t.strides[1] = 4; /* the transpose of dst in place */
    expect_refused(b, a, &d, &t, TGL_ERR_INVALID_ARGUMENT, "overlaps");
    t = d;
    t.dtype = TGL_DTYPE_I32; /* the same bytes as another dtype */
    expect_refused(b, a, &d, &t, TGL_ERR_INVALID_ARGUMENT, "overlaps");
    /* tgl_compare and tgl_where */
    tgl_tensor bo = tgl_tensor_contiguous(a, TGL_DTYPE_BOOL, 2, (size_t[]){4, 4});
    tgl_tensor row = tgl_tensor_contiguous(other, TGL_DTYPE_F32, 1, (size_t[]){4});
    TGT_OK(b, tgl_compare(b, TGL_COMPARE_LT, &s, &row, &bo));
    TGT_OK(b, tgl_copy_htod(b, a, fill, sizeof fill));
    TGT_EXPECT(b, tgl_compare(b, (tgl_compare_op)6, &s, &row, &bo), TGL_ERR_INVALID_ARGUMENT);
    TGT_EXPECT(b, tgl_compare(b, TGL_COMPARE_EQ, &s, &row, &d), TGL_ERR_UNSUPPORTED); /* f32 out */
    t = row;
    t.dtype = TGL_DTYPE_I32;
    TGT_EXPECT(b, tgl_compare(b, TGL_COMPARE_EQ, &s, &t, &bo), TGL_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(tgl_last_error(b), "differ"));
    t = tgl_tensor_contiguous(a, TGL_DTYPE_BOOL, 2, (size_t[]){8, 4});
    TGT_EXPECT(b, tgl_compare(b, TGL_COMPARE_EQ, &s, &row, &t), TGL_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(tgl_last_error(b), "broadcast shape"));
    t = tgl_tensor_contiguous(other, TGL_DTYPE_F32, 1, (size_t[]){3});
    TGT_EXPECT(b, tgl_compare(b, TGL_COMPARE_EQ, &s, &t, &bo), TGL_ERR_INVALID_ARGUMENT);
    t = tgl_tensor_contiguous(other, TGL_DTYPE_Q8_0, 1, (size_t[]){32});
    TGT_EXPECT(b, tgl_compare(b, TGL_COMPARE_EQ, &t, &t, &bo), TGL_ERR_UNSUPPORTED);
    tgl_tensor fcond = tgl_tensor_contiguous(other, TGL_DTYPE_F32, 2, (size_t[]){4, 4});
    TGT_EXPECT(b, tgl_where(b, &fcond, &s, &s, &d), TGL_ERR_UNSUPPORTED);
    tgl_tensor cond = tgl_tensor_contiguous(other + 128, TGL_DTYPE_BOOL, 1, (size_t[]){4});
    TGT_OK(b, tgl_where(b, &cond, &s, &row, &d));
    t = d;
    t.dtype = TGL_DTYPE_I32;
    TGT_EXPECT(b, tgl_where(b, &cond, &s, &row, &t), TGL_ERR_INVALID_ARGUMENT);
    t = s;
    t.data = a + 4; /* out overlapping an input without being its elements */
    TGT_EXPECT(b, tgl_where(b, &cond, &t, &row, &d), TGL_ERR_INVALID_ARGUMENT);
    TGT_OK(b, tgl_where(b, &cond, &d, &row, &d)); /* in place */
    TGT_OK(b, tgl_copy_htod(b, a, fill, sizeof fill));
    /* tgl_masked_fill: a bool mask, in and out of one dtype, no partial overlap */
    TGT_EXPECT(b, tgl_masked_fill(b, &s, &fcond, 1.0, &d), TGL_ERR_UNSUPPORTED);
    assert_non_null(strstr(tgl_last_error(b), "bool mask"));
    t = d;
    t.dtype = TGL_DTYPE_I32;
    TGT_EXPECT(b, tgl_masked_fill(b, &s, &cond, 1.0, &t), TGL_ERR_INVALID_ARGUMENT);
    t = s;
    t.data = a + 4;
    TGT_EXPECT(b, tgl_masked_fill(b, &t, &cond, 1.0, &d), TGL_ERR_INVALID_ARGUMENT);
    TGT_EXPECT(b, tgl_masked_fill(b, NULL, &cond, 1.0, &d), TGL_ERR_INVALID_ARGUMENT);
    TGT_EXPECT(b, tgl_masked_fill(b, &s, &cond, 1.0, NULL), TGL_ERR_INVALID_ARGUMENT);
    TGT_OK(b, tgl_masked_fill(b, &d, &cond, 1.0, &d)); /* in place */
    TGT_OK(b, tgl_copy_htod(b, a, fill, sizeof fill));
    /* empty tensors do nothing, whatever their pointers */
    t = tgl_tensor_contiguous(0, TGL_DTYPE_F32, 2, (size_t[]){0, 4});
    tgl_tensor e = tgl_tensor_contiguous(0, TGL_DTYPE_BOOL, 1, (size_t[]){4});
    TGT_OK(b, tgl_copy(b, &t, &e));
    TGT_OK(b, tgl_free(b, a));
    TGT_OK(b, tgl_free(b, other));
}

static void test_refusals(void **state)
{
    pair *p = *state;
    refusals_on(p->cpu);
    if (p->gl)
        refusals_on(p->gl);
    /* tgl_supports: every dtype but the block formats */
    for (int k = 0; k < 2; k++) {
        tgl_backend *b = k ? p->gl : p->cpu;
        if (!b)
            continue;
        for (int dt = 0; dt < TGL_DTYPE_COUNT; dt++) {
            tgl_support want = dt == TGL_DTYPE_Q8_0 || dt == TGL_DTYPE_Q4_0 ? TGL_SUPPORT_NONE
                               : dt == TGL_DTYPE_F16 || dt == TGL_DTYPE_BF16 ? TGL_SUPPORT_CONVERTED
                                                                              : TGL_SUPPORT_NATIVE;
            assert_int_equal(tgl_supports(b, TGL_OP_COPY, (tgl_dtype)dt), want);
            assert_int_equal(tgl_supports(b, TGL_OP_COMPARE, (tgl_dtype)dt), want);
            assert_int_equal(tgl_supports(b, TGL_OP_WHERE, (tgl_dtype)dt), want);
        }
    }
}

/* The public helpers. */
static void test_descriptor_helpers(void **state)
{
    (void)state;
    assert_int_equal(tgl_dtype_size(TGL_DTYPE_F32), 4);
    assert_int_equal(tgl_dtype_size(TGL_DTYPE_F16), 2);
    assert_int_equal(tgl_dtype_size(TGL_DTYPE_BF16), 2);
    assert_int_equal(tgl_dtype_size(TGL_DTYPE_I32), 4);
    assert_int_equal(tgl_dtype_size(TGL_DTYPE_BOOL), 1);
    assert_int_equal(tgl_dtype_size(TGL_DTYPE_Q8_0), 0);
    assert_int_equal(tgl_dtype_size((tgl_dtype)99), 0);
    tgl_tensor t = tgl_tensor_contiguous(8, TGL_DTYPE_F16, 3, (size_t[]){2, 3, 5});
    assert_int_equal(t.strides[0], 15);
    assert_int_equal(t.strides[1], 5);
    assert_int_equal(t.strides[2], 1);
    assert_int_equal(tgl_tensor_numel(&t), 30);
    assert_int_equal(tgl_tensor_bytes(&t), 60);
    t = tgl_tensor_contiguous(0, TGL_DTYPE_F32, 0, NULL);
    assert_int_equal(tgl_tensor_numel(&t), 1);
    assert_int_equal(tgl_tensor_bytes(&t), 4);
    t = tgl_tensor_contiguous(0, TGL_DTYPE_Q8_0, 2, (size_t[]){3, 64});
    assert_int_equal(tgl_tensor_bytes(&t), 3 * 2 * 34);
    t = tgl_tensor_contiguous(0, TGL_DTYPE_Q4_0, 2, (size_t[]){3, 64});
    assert_int_equal(tgl_tensor_bytes(&t), 3 * 2 * 18);
    t = tgl_tensor_contiguous(0, TGL_DTYPE_Q4_0, 1, (size_t[]){33});
    assert_int_equal(tgl_tensor_bytes(&t), 0);
    t = tgl_tensor_contiguous(0, TGL_DTYPE_F32, 9, (size_t[]){1, 1, 1, 1, 1, 1, 1, 1, 1});
    assert_int_equal(t.ndim, TGL_MAX_DIMS + 1);
    assert_int_equal(tgl_tensor_numel(&t), 0);
    t = tgl_tensor_contiguous(0, TGL_DTYPE_F32, 2, (size_t[]){SIZE_MAX, 2});
    assert_int_equal(tgl_tensor_numel(&t), 0);
    assert_string_equal(tgl_dtype_name(TGL_DTYPE_BF16), "bf16");
    assert_string_equal(tgl_dtype_name(TGL_DTYPE_Q4_0), "q4_0");
    assert_null(tgl_dtype_name(TGL_DTYPE_COUNT));
    assert_string_equal(tgl_op_name(TGL_OP_COPY), "copy");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_descriptor_helpers),
        cmocka_unit_test(test_known_conversions),
        cmocka_unit_test(test_all_patterns),
        cmocka_unit_test(test_random_layouts),
        cmocka_unit_test(test_routes),
        cmocka_unit_test(test_boxes),
        cmocka_unit_test(test_in_place),
        cmocka_unit_test(test_compare_known),
        cmocka_unit_test(test_compare_where_random),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
