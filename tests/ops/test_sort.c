/* tgl_sort and tgl_topk on both backends against a host reference (a stable sort of each line
 * by value: NaN above every number, -0 equal to +0, false before true), bit for bit over the
 * outputs' whole allocations (guards included): PyTorch's outputs for small cases; random
 * calls of 1-4 dims (extents 1, primes, 2^k +- 1, past a workgroup's block; permuted, reversed
 * and gapped strides; every dtype; pools full of ties and edge values; ascending and
 * descending; k from 0 to the line; values or indices alone); lines of 2^17 + 3 elements (the
 * network's global stages, three a pass and one, and GL's radix passes), 301 lines of 347, 8
 * lines of 50257 (LLM sampling's top 50); the radix passes on every sort (tiles of 8, 16 and
 * 32 pairs per invocation, random bits in every digit); topk of lines past a block with k up to
 * a little past GL's selection (candidates from the sets' minima, or with ties the exact path);
 * dense lines of lengths off multiples of four whose neighbours would win (QUADS' first and last
 * quads); a shrunk SSBO limit (lines in groups; a line past it refused on GL); the temporary
 * memory each backend asks for; the refusals. */
#include "testing.h"
#include "tensors.h"
#include "cpu/cpu_convert.h"
#include "cpu/cpu_half.h"
#include "gl/gl_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef tgt_pair pair;

static int setup(void **state)
{
    return tgt_pair_setup(state, 0x5047);
}

static int teardown(void **state)
{
    return tgt_pair_teardown(state);
}

#define POISON 0xA5

typedef struct call {
    int topk, descending, with_values, with_indices;
    size_t axis, k;
    tgl_tensor in, values, indices;
    size_t in_bytes, values_bytes, indices_bytes;
    uint8_t *in_init;
} call;

static tgl_status run_on(tgl_backend *b, const call *c, uint8_t *got_v, uint8_t *got_i)
{
    tgl_ptr x, v, i;
    TGT_OK(b, tgl_alloc(b, c->in_bytes, &x));
    TGT_OK(b, tgl_alloc(b, c->values_bytes, &v));
    TGT_OK(b, tgl_alloc(b, c->indices_bytes, &i));
    TGT_OK(b, tgl_copy_htod(b, x, c->in_init, c->in_bytes));
    memset(got_v, POISON, c->values_bytes);
    memset(got_i, POISON, c->indices_bytes);
    TGT_OK(b, tgl_copy_htod(b, v, got_v, c->values_bytes));
    TGT_OK(b, tgl_copy_htod(b, i, got_i, c->indices_bytes));
    tgl_tensor in = c->in, values = c->values, indices = c->indices;
    in.data += x;
    values.data += v;
    indices.data += i;
    const tgl_tensor *vp = c->with_values ? &values : NULL, *ip = c->with_indices ? &indices : NULL;
    tgl_status st = c->topk ? tgl_topk(b, &in, c->axis, c->k, c->descending, vp, ip)
                            : tgl_sort(b, &in, c->axis, c->descending, vp, ip);
    TGT_OK(b, tgl_copy_dtoh(b, got_v, v, c->values_bytes));
    TGT_OK(b, tgl_copy_dtoh(b, got_i, i, c->indices_bytes));
    tgl_ptr ps[3] = {x, v, i};
    for (int k = 0; k < 3; k++)
        TGT_OK(b, tgl_free(b, ps[k]));
    return st;
}

static int64_t byte_at(const tgl_tensor *t, const size_t *idx)
{
    size_t es = tgl_dtype_size(t->dtype);
    int64_t at = (int64_t)(t->data / es);
    for (size_t d = 0; d < t->ndim; d++)
        at += (int64_t)idx[d] * t->strides[d];
    return at * (int64_t)es;
}

/* An element as a number to order by (NaN: +inf past +inf; bool, i32 exact in double). */
typedef struct num {
    int nan;
    double v;
} num;

static num value_of(tgl_dtype dt, const uint8_t *p)
{
    num r = {0, 0};
    if (dt == TGL_DTYPE_BOOL) {
        r.v = p[0] != 0;
    } else if (dt == TGL_DTYPE_I32) {
        int32_t v;
        memcpy(&v, p, 4);
        r.v = v;
    } else {
        float f = tgl_cpu_load_f32(dt, p);
        r.nan = isnan(f);
        r.v = r.nan ? 0 : f; /* -0 == +0 as doubles */
    }
    return r;
}

/* a strictly before b in the order asked (stable: equal ones keep their order). */
static int goes_before(num a, num b, int descending)
{
    if (a.nan || b.nan)
        return descending ? a.nan && !b.nan : !a.nan && b.nan;
    return descending ? a.v > b.v : a.v < b.v;
}

/* A line's element for the reference's qsort: equal values by position, so the order is the
 * stable sort's. */
typedef struct ranked {
    num v;
    size_t p;
    int descending;
} ranked;

static int by_rank(const void *pa, const void *pb)
{
    const ranked *a = pa, *b = pb;
    if (goes_before(a->v, b->v, a->descending))
        return -1;
    if (goes_before(b->v, a->v, a->descending))
        return 1;
    return a->p < b->p ? -1 : a->p > b->p;
}

/* The outputs' allocation images by the definition. */
static void reference(const call *c, uint8_t *want_v, uint8_t *want_i)
{
    memset(want_v, POISON, c->values_bytes);
    memset(want_i, POISON, c->indices_bytes);
    tgl_dtype dt = c->in.dtype;
    size_t es = tgl_dtype_size(dt), ndim = c->in.ndim ? c->in.ndim : 1, len = c->in.ndim ? c->in.shape[c->axis] : 1;
    size_t shape[TGL_MAX_DIMS] = {0}, lines = 1;
    for (size_t d = 0; d < ndim; d++)
        lines *= shape[d] = d == c->axis ? 1 : c->in.shape[d];
    ranked *order = calloc(len ? len : 1, sizeof *order);
    size_t idx[TGL_MAX_DIMS] = {0};
    tgl_tensor in = c->in, v = c->values, ix = c->indices;
    if (!in.ndim) { /* 0-d: one element of one dim */
        in.ndim = v.ndim = ix.ndim = 1;
        in.shape[0] = v.shape[0] = ix.shape[0] = 1;
    }
    for (size_t line = 0; lines && len && line < lines; line++) {
        for (size_t p = 0; p < len; p++) {
            idx[c->axis] = p;
            order[p] = (ranked){value_of(dt, c->in_init + byte_at(&in, idx)), p, c->descending};
        }
        qsort(order, len, sizeof *order, by_rank);
        for (size_t p = 0; p < c->k; p++) {
            idx[c->axis] = order[p].p;
            const uint8_t *e = c->in_init + byte_at(&in, idx);
            idx[c->axis] = p;
            if (c->with_values) {
                uint8_t *o = want_v + byte_at(&v, idx);
                memcpy(o, e, es);
                if (dt == TGL_DTYPE_BOOL)
                    o[0] = e[0] != 0;
            }
            if (c->with_indices) {
                int32_t at = (int32_t)order[p].p;
                memcpy(want_i + byte_at(&ix, idx), &at, 4);
            }
        }
        idx[c->axis] = 0;
        for (size_t d = ndim; d-- > 0;) {
            if (++idx[d] < shape[d])
                break;
            idx[d] = 0;
        }
    }
    free(order);
}

/* The bytes one line's window of t spans (`extent` elements along the axis). */
static size_t line_window(const tgl_tensor *t, size_t axis, size_t extent)
{
    int64_t step = t->ndim ? t->strides[axis] : 0;
    uint64_t reach = (uint64_t)(step < 0 ? -step : step) * (extent ? extent - 1 : 0) + 1;
    return (size_t)reach * tgl_dtype_size(t->dtype);
}

/* Whether GL sorts the call's lines of len by radix passes (gl_sort.c): lines of the profile's
 * radix_min or more, not a topk the selection takes, a line's keys and their counts (a digit's
 * per tile of 128 invocations' radix_items) within the window limit max_bytes (0: the device's). */
static int radix_takes(tgl_backend *gl, const call *c, size_t len, size_t max_bytes)
{
    const tgl_gl_limits *l = &tgl_gl_of(gl)->limits;
    size_t tile = 128 * l->radix_items, keys = (len + tgl_gl_radix_digits(l) * ((len + tile - 1) / tile)) * 4;
    return l->radix_min && len >= l->radix_min && !(c->topk && tgl_gl_topk_selects(l, len, c->k)) &&
           (!max_bytes || keys <= max_bytes);
}

/* gl_max_bytes: GL's window limit when a test shrinks it (0: the device's own), past which a
 * line (its pairs, its radix arrays or any operand's window) is refused. */
static void check(pair *p, tgl_backend *gl, const call *c, size_t gl_max_bytes, const char *what)
{
    uint8_t *wv = malloc(c->values_bytes), *wi = malloc(c->indices_bytes), *gv = malloc(c->values_bytes),
            *gi = malloc(c->indices_bytes);
    reference(c, wv, wi);
    size_t len = c->in.ndim ? c->in.shape[c->axis] : 1, padded = 1;
    while (padded < len)
        padded <<= 1;
    tgl_backend *bs[2] = {p->cpu, gl};
    for (int j = 0; j < 2; j++) {
        tgl_backend *b = bs[j];
        if (!b)
            continue;
        /* GL's topk that selects holds no pairs, the radix passes their own arrays */
        int pairs = !(c->topk && tgl_gl_topk_selects(&tgl_gl_of(gl)->limits, len, c->k)) &&
                    !radix_takes(gl, c, len, gl_max_bytes);
        int too_big = (pairs && padded * 8 > gl_max_bytes) || line_window(&c->in, c->axis, len) > gl_max_bytes ||
                      (c->with_values && line_window(&c->values, c->axis, c->k) > gl_max_bytes) ||
                      (c->with_indices && line_window(&c->indices, c->axis, c->k) > gl_max_bytes);
        if (b == gl && gl_max_bytes && too_big && c->k && tgl_tensor_numel(&c->in)) {
            TGT_EXPECT(b, run_on(b, c, gv, gi), TGL_ERR_UNSUPPORTED);
            continue;
        }
        TGT_OK(b, run_on(b, c, gv, gi));
        for (size_t i = 0; i < c->values_bytes; i++)
            if (gv[i] != wv[i])
                fail_msg("%s: %s %s %zu-d axis %zu len %zu k %zu %s: %s values byte %zu is 0x%02x, the reference's "
                         "0x%02x", what, c->topk ? "topk" : "sort", tgl_dtype_name(c->in.dtype), c->in.ndim, c->axis,
                         len, c->k, c->descending ? "descending" : "ascending", tgl_backend_name(b), i, gv[i], wv[i]);
        for (size_t i = 0; i < c->indices_bytes; i++)
            if (gi[i] != wi[i])
                fail_msg("%s: %s %s %zu-d axis %zu len %zu k %zu %s: %s indices byte %zu is 0x%02x, the reference's "
                         "0x%02x", what, c->topk ? "topk" : "sort", tgl_dtype_name(c->in.dtype), c->in.ndim, c->axis,
                         len, c->k, c->descending ? "descending" : "ascending", tgl_backend_name(b), i, gi[i], wi[i]);
    }
    free(wv);
    free(wi);
    free(gv);
    free(gi);
}

static tgl_tensor layout(tgt_rng *r, tgl_dtype dt, size_t ndim, const size_t *shape, size_t *bytes)
{
    return tgt_below(r, 3) ? tgt_random_layout(r, dt, ndim, shape, bytes) : tgt_dense_layout(r, dt, ndim, shape, bytes);
}

/* Edge values, or a few distinct small numbers (many ties). */
static void fill_values(tgt_rng *r, tgl_dtype dt, uint8_t *p, size_t bytes)
{
    tgt_pool_fill(r, dt, p, bytes);
    if (dt == TGL_DTYPE_BOOL || tgt_below(r, 3) == 0)
        return;
    size_t es = tgl_dtype_size(dt), distinct = 1 + tgt_below(r, 6);
    for (size_t i = 0; i + es <= bytes; i += es) {
        float v = (float)tgt_below(r, distinct) - 2.0f;
        if (dt == TGL_DTYPE_I32) {
            int32_t k = (int32_t)v;
            memcpy(p + i, &k, 4);
        } else {
            tgl_cpu_store_f32(dt, v, p + i);
        }
    }
}

static call random_call(tgt_rng *r, size_t ndim, const size_t *shape)
{
    static const tgl_dtype dts[] = {TGL_DTYPE_F32, TGL_DTYPE_F16, TGL_DTYPE_BF16, TGL_DTYPE_I32, TGL_DTYPE_BOOL};
    call c = {.topk = (int)tgt_below(r, 2), .descending = (int)tgt_below(r, 2), .axis = ndim ? tgt_below(r, ndim) : 0};
    size_t mode = tgt_below(r, 4);
    c.with_values = mode != 1;
    c.with_indices = mode != 2;
    tgl_dtype dt = dts[tgt_below(r, 5)];
    size_t len = ndim ? shape[c.axis] : 1;
    c.k = c.topk ? (tgt_below(r, 3) == 0 ? len : tgt_below(r, len + 1)) : len;
    size_t out_shape[TGL_MAX_DIMS];
    for (size_t d = 0; d < ndim; d++)
        out_shape[d] = d == c.axis ? c.k : shape[d];
    c.in = layout(r, dt, ndim, shape, &c.in_bytes);
    c.values = layout(r, dt, ndim, out_shape, &c.values_bytes);
    c.indices = layout(r, TGL_DTYPE_I32, ndim, out_shape, &c.indices_bytes);
    return c;
}

static void run_random(pair *p, tgl_backend *gl, call *c, size_t gl_max_bytes, const char *what)
{
    c->in_init = malloc(c->in_bytes);
    fill_values(&p->rng, c->in.dtype, c->in_init, c->in_bytes);
    check(p, gl, c, gl_max_bytes, what);
    free(c->in_init);
}

static void random_calls(pair *p, tgl_backend *gl, int count, size_t most, size_t gl_max_bytes, const char *what)
{
    tgt_rng *r = &p->rng;
    for (int i = 0; i < count; i++) {
        size_t ndim = tgt_below(r, 5), shape[TGL_MAX_DIMS] = {0}, n = 1;
        for (size_t d = 0; d < ndim; d++) {
            shape[d] = n * 257 <= most ? tgt_awkward_extent(r, 257) : 1 + tgt_below(r, 2);
            n *= shape[d];
        }
        if (ndim && tgt_below(r, 20) == 0)
            shape[tgt_below(r, ndim)] = 0;
        call c = random_call(r, ndim, shape);
        run_random(p, gl, &c, gl_max_bytes, what);
    }
}

static void test_random_calls(void **state)
{
    pair *p = *state;
    random_calls(p, p->gl, 250, 20000, 0, "random calls");
}

/* A long line (the network's global stages, and the radix passes where the profile's radix_min
 * takes it), many short lines, LLM sampling's shape; on GL with the profile's traits and, where
 * they take the long line to the radix passes, with the network only (radix_min 0). */
static void test_large(void **state)
{
    pair *p = *state;
    tgt_rng *r = &p->rng;
    const size_t shapes[3][2] = {{1, (1u << 17) + 3}, {301, 347}, {8, 50257}};
    /* the network alone where the profile's radix passes take the long line (llvmpipe) */
    uint64_t radix_min = p->gl ? tgl_gl_of(p->gl)->limits.radix_min : 0;
    tgl_backend *network = radix_min && radix_min <= shapes[0][1] ? tgt_open(TGL_BACKEND_GL) : NULL;
    if (network)
        tgl_gl_of(network)->limits.radix_min = 0;
    for (int s = 0; s < 6; s++)
        for (int topk = 0; topk < 2; topk++) {
            call c = random_call(r, 2, shapes[s % 3]);
            c.axis = 1;
            c.topk = topk;
            c.k = topk ? (s % 3 == 2 ? 50 : 1 + tgt_below(r, 100)) : shapes[s % 3][1];
            size_t out_shape[2] = {shapes[s % 3][0], c.k};
            c.values = layout(r, c.in.dtype, 2, out_shape, &c.values_bytes);
            c.indices = layout(r, TGL_DTYPE_I32, 2, out_shape, &c.indices_bytes);
            if (s < 3 || network)
                run_random(p, s < 3 ? p->gl : network, &c, 0, s < 3 ? "large" : "large, the network");
        }
    if (network)
        tgl_close(network);
}

/* tgl_topk of lines longer than a block with k at most a little past GL's selection: 1-3 dims,
 * any axis, every dtype and layout; random pools (about k candidates), few distinct values or one
 * (the exact path: bisection, then the ties in line order), ascending and descending. Lines up
 * to `most_line` long. */
static void topk_calls(pair *p, tgl_backend *gl, int count, size_t most_line, size_t gl_max_bytes, const char *what)
{
    tgt_rng *r = &p->rng;
    static const size_t lens[] = {2049, 2053, 4095, 4099, 10007, 50257};
    static const size_t ks[] = {1, 2, 49, 50, 255, 256, 257};
    for (int i = 0; i < count; i++) {
        size_t ndim = 1 + tgt_below(r, 3), axis = tgt_below(r, ndim), shape[3], len = lens[tgt_below(r, 6)];
        if (len > most_line)
            len = lens[tgt_below(r, 2)];
        for (size_t d = 0; d < ndim; d++)
            shape[d] = d == axis ? len : 1 + tgt_below(r, d == 0 ? 3 : 2);
        call c = random_call(r, ndim, shape);
        c.topk = 1;
        c.axis = axis;
        c.k = tgt_below(r, 3) ? ks[tgt_below(r, 7)] : 1 + tgt_below(r, 256);
        size_t out_shape[3];
        for (size_t d = 0; d < ndim; d++)
            out_shape[d] = d == axis ? c.k : shape[d];
        c.values = layout(r, c.in.dtype, ndim, out_shape, &c.values_bytes);
        c.indices = layout(r, TGL_DTYPE_I32, ndim, out_shape, &c.indices_bytes);
        run_random(p, gl, &c, gl_max_bytes, what);
    }
}

static void test_topk_select(void **state)
{
    pair *p = *state;
    topk_calls(p, p->gl, tgt_count(30), 50257, 0, "topk select");
}

/* Dense lines whose values grow (or shrink) from line to line, of lengths that are not multiples
 * of four: GL's QUADS reads whole quads of words, the first and last of a line holding its
 * neighbours' elements, which here would win every comparison if taken for the line's own. */
static void test_topk_neighbours(void **state)
{
    pair *p = *state;
    tgt_rng *r = &p->rng;
    static const size_t lens[] = {2049, 4099, 10007}, ks[] = {1, 2, 7, 50}; /* k 1: no slack in the bound */
    for (int i = 0; i < 32; i++) {
        size_t shape[2] = {5, lens[i % 3]};
        tgl_dtype dt = i / 4 % 2 ? TGL_DTYPE_I32 : TGL_DTYPE_F32;
        call c = {.topk = 1, .descending = i / 8 % 2, .with_values = 1, .with_indices = 1, .axis = 1, .k = ks[i % 4]};
        c.in = tgt_dense_layout(r, dt, 2, shape, &c.in_bytes);
        size_t out_shape[2] = {5, c.k};
        c.values = tgt_dense_layout(r, dt, 2, out_shape, &c.values_bytes);
        c.indices = tgt_dense_layout(r, TGL_DTYPE_I32, 2, out_shape, &c.indices_bytes);
        c.in_init = malloc(c.in_bytes);
        memset(c.in_init, 0, c.in_bytes);
        int rising = i / 16 == 0; /* later lines larger, or smaller */
        for (size_t a = 0; a < shape[0]; a++)
            for (size_t b = 0; b < shape[1]; b++) {
                size_t idx[2] = {a, b};
                double line = (double)(rising ? a : shape[0] - 1 - a);
                uint8_t *e = c.in_init + byte_at(&c.in, idx);
                if (dt == TGL_DTYPE_I32) {
                    int32_t v = (int32_t)(line * 1e6) + (int32_t)tgt_below(r, 100000);
                    memcpy(e, &v, 4);
                } else {
                    float v = (float)(line * 1000.0 + (double)tgt_below(r, 1u << 20) / (1u << 20));
                    memcpy(e, &v, 4);
                }
            }
        check(p, p->gl, &c, 0, "topk neighbours");
        free(c.in_init);
    }
}

/* GL's radix passes, with radix_min 1 (every sort and every topk the selection does not take)
 * and tiles of 8, 16 and 32 pairs per invocation: random calls (every dtype, layout, ties and
 * edge values, k, values or indices alone), lines of one to many tiles, one of 2^16 + 1 (half
 * of them random bits: every digit of the keys differs); the
 * temporary arrays a line asks for; under a shrunk SSBO limit a line whose network pairs would
 * not fit but whose arrays do sorts, and one whose arrays do not fit either is refused. */
static void test_radix(void **state)
{
    pair *p = *state;
    tgt_rng *r = &p->rng;
    if (!p->gl)
        skip();
    /* pairs per invocation, staged, digit bits: 8-bit digits in tiles of 1024 and 2048, 4-bit
     * ones staged in tiles of 4096 and directly in tiles of 2048 */
    static const uint32_t config[][3] = {{8, 0, 8}, {16, 0, 4}, {32, 1, 4}, {16, 0, 8}};
    static const size_t lens[] = {1, 2, 127, 1023, 1025, 4097, 12289, (1u << 16) + 1};
    for (int i = 0; i < 4; i++) {
        tgl_backend *gl = tgt_open(TGL_BACKEND_GL);
        tgl_gl_limits *l = &tgl_gl_of(gl)->limits;
        l->radix_min = 1;
        l->radix_items = config[i][0];
        l->radix_staged = (int)config[i][1];
        l->radix_bits = config[i][2];
        /* 8-bit digits where the device's shared memory holds their scatter kernel (27 KiB at
         * most here: 32 KiB, GL 4.3's least, always does), else the 4-bit passes */
        unsigned digits = tgl_gl_radix_digits(l);
        assert_true(digits == 16 || (digits == 256 && config[i][2] == 8));
        if (config[i][2] == 8 && l->shared_memory >= 32768)
            assert_int_equal(digits, 256);
        /* (a line at a time, ~26 dispatches each: fewer elements, so fewer lines, when scaled) */
        random_calls(p, gl, tgt_count(40), tgt_count(10) < 10 ? 2000 : 20000, 0, "radix");
        /* at full scale up to 12289 (2^16 + 1: tiles of 8), else up to 4097 */
        size_t most = tgt_count(10) < 10 ? 4097 : i ? 12289 : lens[7];
        for (size_t j = 0; j < sizeof lens / sizeof lens[0] && lens[j] <= most; j++) {
            size_t shape[2] = {1 + tgt_below(r, 3), lens[j]};
            call c = random_call(r, 2, shape);
            c.axis = 1;
            c.k = c.topk ? tgt_below(r, lens[j] + 1) : lens[j];
            size_t out_shape[2] = {shape[0], c.k};
            c.values = layout(r, c.in.dtype, 2, out_shape, &c.values_bytes);
            c.indices = layout(r, TGL_DTYPE_I32, 2, out_shape, &c.indices_bytes);
            c.in_init = malloc(c.in_bytes);
            fill_values(r, c.in.dtype, c.in_init, c.in_bytes);
            for (size_t b = 0; c.in.dtype != TGL_DTYPE_BOOL && j % 2 && b < c.in_bytes; b++)
                c.in_init[b] = (uint8_t)tgt_below(r, 256); /* every bit of the keys' digits */
            check(p, gl, &c, 0, "radix lines");
            free(c.in_init);
        }
        tgl_close(gl);
    }
    /* the temporary arrays: keys (and a count per digit a tile of 1024) and positions, twice,
     * each from a multiple of 256 bytes */
    tgl_backend *gl = tgt_open(TGL_BACKEND_GL);
    tgl_gl_of(gl)->limits.radix_min = 1;
    tgl_gl_of(gl)->limits.radix_items = 8;
    const size_t len = 5000, keys = (len + tgl_gl_radix_digits(&tgl_gl_of(gl)->limits) * 5) * 4, pos = len * 4;
    tgl_ptr x, v;
    TGT_OK(gl, tgl_alloc(gl, len * 4, &x));
    TGT_OK(gl, tgl_alloc(gl, len * 4, &v));
    TGT_OK(gl, tgl_fill(gl, x, 0.5f, len));
    struct tgl_memory_info m;
    TGT_OK(gl, tgl_memory_info(gl, &m));
    uint64_t base = m.in_use;
    tgl_tensor in = tgl_tensor_contiguous(x, TGL_DTYPE_F32, 1, (size_t[]){len}), out = in;
    out.data = v;
    TGT_OK(gl, tgl_sort(gl, &in, 0, 0, &out, NULL));
    TGT_OK(gl, tgl_memory_info(gl, &m));
    assert_int_equal(m.peak, base + 2 * ((keys + 255) / 256 * 256 + (pos + 255) / 256 * 256));
    tgl_close(gl);
    /* 3001-element lines: pairs 32 KiB (padded to 4096), arrays 12 KiB */
    for (int radix = 0; radix < 2; radix++) {
        gl = tgt_open(TGL_BACKEND_GL);
        tgl_gl_test_set_limits(gl, 16384, NULL);
        tgl_gl_of(gl)->limits.radix_min = radix;
        size_t shape[2] = {2, 3001};
        for (int j = 0; j < 4; j++) {
            call c = random_call(r, 2, shape);
            c.axis = 1;
            c.topk = 0;
            c.k = shape[1];
            c.values = layout(r, c.in.dtype, 2, shape, &c.values_bytes);
            c.indices = layout(r, TGL_DTYPE_I32, 2, shape, &c.indices_bytes);
            run_random(p, gl, &c, tgl_gl_max_window_elems(&tgl_gl_of(gl)->limits, 4) * 4, "radix, small SSBO limit");
        }
        tgl_close(gl);
    }
}

/* A shrunk SSBO limit: lines in groups whose windows fit; a line whose pairs pass it refused. */
static void test_small_ssbo_limit(void **state)
{
    pair *p = *state;
    if (!p->gl)
        skip();
    tgl_backend *gl = tgt_open(TGL_BACKEND_GL);
    tgl_gl_test_set_limits(gl, 8192, NULL);
    random_calls(p, gl, tgt_count(40), 6000, tgl_gl_max_window_elems(&tgl_gl_of(gl)->limits, 4) * 4, "small SSBO limit");
    tgl_close(gl);
    /* lines of 2049 to 4099 elements: groups of a few, a line of one past the limit refused */
    gl = tgt_open(TGL_BACKEND_GL);
    tgl_gl_test_set_limits(gl, 40000, NULL);
    topk_calls(p, gl, tgt_count(12), 4099, tgl_gl_max_window_elems(&tgl_gl_of(gl)->limits, 4) * 4, "topk, small SSBO limit");
    tgl_close(gl);
}

/* The temporary pairs each backend asks for, seen in tgl_memory_info's peak on a fresh backend:
 * the CPU one line's (8 bytes a pair), GL's network every line's (padded to a power of two), and
 * GL's TOPK selection none. */
static void test_temp_memory(void **state)
{
    pair *p = *state;
    const size_t lines = 8, len = 5000, padded = 8192, k = 50;
    for (int j = 0; j < 2; j++) {
        if (!(j ? p->gl : p->cpu))
            continue;
        tgl_backend *b = tgt_open(j ? TGL_BACKEND_GL : TGL_BACKEND_CPU);
        if (j)
            tgl_gl_of(b)->limits.radix_min = 0; /* the network's pairs (test_radix: the radix arrays) */
        tgl_ptr x, v, i;
        TGT_OK(b, tgl_alloc(b, lines * len * 4, &x));
        TGT_OK(b, tgl_alloc(b, lines * len * 4, &v));
        TGT_OK(b, tgl_alloc(b, lines * len * 4, &i));
        TGT_OK(b, tgl_fill(b, x, 0.25f, lines * len));
        struct tgl_memory_info m;
        TGT_OK(b, tgl_memory_info(b, &m));
        uint64_t base = m.in_use, cpu_line = len * 8, gl_line = padded * 8; /* a line's pairs */
        assert_int_equal(m.peak, base);
        tgl_tensor in = tgl_tensor_contiguous(x, TGL_DTYPE_F32, 2, (size_t[]){lines, len});
        tgl_tensor vk = tgl_tensor_contiguous(v, TGL_DTYPE_F32, 2, (size_t[]){lines, k});
        tgl_tensor ik = tgl_tensor_contiguous(i, TGL_DTYPE_I32, 2, (size_t[]){lines, k});
        TGT_OK(b, tgl_topk(b, &in, 1, k, 1, &vk, &ik));
        TGT_OK(b, tgl_memory_info(b, &m));
        int selects = j && tgl_gl_topk_selects(&tgl_gl_of(b)->limits, len, k);
        assert_true(j == 0 || selects); /* 5000 past a block, k 50: GL selects on every device */
        assert_int_equal(m.peak, base + (j ? 0 : cpu_line));
        tgl_tensor vs = tgl_tensor_contiguous(v, TGL_DTYPE_F32, 2, (size_t[]){lines, len});
        tgl_tensor is = tgl_tensor_contiguous(i, TGL_DTYPE_I32, 2, (size_t[]){lines, len});
        TGT_OK(b, tgl_sort(b, &in, 1, 0, &vs, &is));
        TGT_OK(b, tgl_memory_info(b, &m));
        assert_int_equal(m.peak, base + (j ? lines * gl_line : cpu_line));
        tgl_close(b);
    }
}

/* PyTorch's outputs: torch.sort(x, stable=True) both ways of [3, 1, 2, 1, nan, -0., 0.], and
 * torch.topk([1, 3, 3, 2], 3) (the tie in line order). */
static void test_known_values(void **state)
{
    pair *p = *state;
    tgl_backend *bs[2] = {p->cpu, p->gl};
    const float x[7] = {3, 1, 2, 1, NAN, -0.0f, 0.0f}, y[4] = {1, 3, 3, 2};
    const int32_t up[7] = {5, 6, 1, 3, 2, 0, 4}, down[7] = {4, 0, 2, 1, 3, 5, 6}, top[3] = {1, 2, 3};
    for (int j = 0; j < 2; j++) {
        tgl_backend *b = bs[j];
        if (!b)
            continue;
        tgl_ptr px, pv, pi;
        TGT_OK(b, tgl_alloc(b, sizeof x, &px));
        TGT_OK(b, tgl_alloc(b, sizeof x, &pv));
        TGT_OK(b, tgl_alloc(b, sizeof x, &pi));
        TGT_OK(b, tgl_copy_htod(b, px, x, sizeof x));
        tgl_tensor in = tgl_tensor_contiguous(px, TGL_DTYPE_F32, 1, (size_t[]){7});
        tgl_tensor v = tgl_tensor_contiguous(pv, TGL_DTYPE_F32, 1, (size_t[]){7});
        tgl_tensor i = tgl_tensor_contiguous(pi, TGL_DTYPE_I32, 1, (size_t[]){7});
        for (int desc = 0; desc < 2; desc++) {
            TGT_OK(b, tgl_sort(b, &in, 0, desc, &v, &i));
            float gv[7];
            int32_t gi[7];
            TGT_OK(b, tgl_copy_dtoh(b, gv, pv, sizeof gv));
            TGT_OK(b, tgl_copy_dtoh(b, gi, pi, sizeof gi));
            for (int k = 0; k < 7; k++) {
                int32_t want = desc ? down[k] : up[k];
                uint32_t got_bits, want_bits; /* -0 and +0 told apart */
                memcpy(&got_bits, &gv[k], 4);
                memcpy(&want_bits, &x[want], 4);
                if (gi[k] != want || got_bits != want_bits)
                    fail_msg("%s: sort %s element %d: %g at %d, PyTorch's %g at %d", tgl_backend_name(b),
                             desc ? "descending" : "ascending", k, (double)gv[k], (int)gi[k], (double)x[want],
                             (int)want);
            }
        }
        TGT_OK(b, tgl_copy_htod(b, px, y, sizeof y));
        in = tgl_tensor_contiguous(px, TGL_DTYPE_F32, 1, (size_t[]){4});
        v = tgl_tensor_contiguous(pv, TGL_DTYPE_F32, 1, (size_t[]){3});
        i = tgl_tensor_contiguous(pi, TGL_DTYPE_I32, 1, (size_t[]){3});
        TGT_OK(b, tgl_topk(b, &in, 0, 3, 1, &v, &i));
        float gv[3];
        int32_t gi[3];
        TGT_OK(b, tgl_copy_dtoh(b, gv, pv, sizeof gv));
        TGT_OK(b, tgl_copy_dtoh(b, gi, pi, sizeof gi));
        for (int k = 0; k < 3; k++)
            if (gi[k] != top[k] || gv[k] != y[top[k]])
                fail_msg("%s: topk element %d: %g at %d", tgl_backend_name(b), k, (double)gv[k], (int)gi[k]);
        tgl_ptr all[3] = {px, pv, pi};
        for (int k = 0; k < 3; k++)
            TGT_OK(b, tgl_free(b, all[k]));
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
        tgl_ptr pa, pb;
        TGT_OK(b, tgl_alloc(b, 4096, &pa));
        TGT_OK(b, tgl_alloc(b, 4096, &pb));
        TGT_OK(b, tgl_fill(b, pa, 0.5f, 1024));
        tgl_tensor in = tgl_tensor_contiguous(pa, TGL_DTYPE_F32, 2, (size_t[]){4, 8});
        tgl_tensor v = tgl_tensor_contiguous(pb, TGL_DTYPE_F32, 2, (size_t[]){4, 8});
        tgl_tensor i = tgl_tensor_contiguous(pb + 256, TGL_DTYPE_I32, 2, (size_t[]){4, 8});
        TGT_OK(b, tgl_sort(b, &in, 1, 0, &v, &i));
        TGT_OK(b, tgl_sort(b, &in, 0, 1, NULL, &i));
        TGT_OK(b, tgl_sort(b, &in, 0, 1, &v, NULL));
        TGT_EXPECT(b, tgl_sort(b, &in, 1, 0, NULL, NULL), TGL_ERR_INVALID_ARGUMENT);
        TGT_EXPECT(b, tgl_sort(b, NULL, 1, 0, &v, &i), TGL_ERR_INVALID_ARGUMENT);
        TGT_EXPECT(b, tgl_sort(b, &in, 2, 0, &v, &i), TGL_ERR_INVALID_ARGUMENT); /* axis */
        tgl_tensor bad = i;
        bad.dtype = TGL_DTYPE_F32;
        TGT_EXPECT(b, tgl_sort(b, &in, 1, 0, &v, &bad), TGL_ERR_INVALID_ARGUMENT); /* f32 indices */
        bad = v;
        bad.dtype = TGL_DTYPE_F16;
        TGT_EXPECT(b, tgl_sort(b, &in, 1, 0, &bad, &i), TGL_ERR_INVALID_ARGUMENT); /* values' dtype */
        bad = tgl_tensor_contiguous(pb, TGL_DTYPE_F32, 2, (size_t[]){4, 7});
        TGT_EXPECT(b, tgl_sort(b, &in, 1, 0, &bad, &i), TGL_ERR_INVALID_ARGUMENT); /* shape */
        bad = tgl_tensor_contiguous(pa + 64, TGL_DTYPE_F32, 2, (size_t[]){4, 8});
        TGT_EXPECT(b, tgl_sort(b, &in, 1, 0, &bad, &i), TGL_ERR_INVALID_ARGUMENT); /* values on in */
        bad = tgl_tensor_contiguous(pb + 64, TGL_DTYPE_I32, 2, (size_t[]){4, 8});
        TGT_EXPECT(b, tgl_sort(b, &in, 1, 0, &v, &bad), TGL_ERR_INVALID_ARGUMENT); /* indices on values */
        bad = v;
        bad.strides[0] = 0;
        TGT_EXPECT(b, tgl_sort(b, &in, 1, 0, &bad, &i), TGL_ERR_INVALID_ARGUMENT); /* reaches twice */
        bad = tgl_tensor_contiguous(pb + 4000, TGL_DTYPE_F32, 2, (size_t[]){4, 8});
        TGT_EXPECT(b, tgl_sort(b, &in, 1, 0, &bad, &i), TGL_ERR_INVALID_POINTER);
        tgl_tensor q = tgl_tensor_contiguous(pa, TGL_DTYPE_Q8_0, 2, (size_t[]){4, 32});
        TGT_EXPECT(b, tgl_sort(b, &q, 1, 0, &v, &i), TGL_ERR_UNSUPPORTED);
        tgl_tensor v3 = tgl_tensor_contiguous(pb, TGL_DTYPE_F32, 2, (size_t[]){4, 3});
        tgl_tensor i3 = tgl_tensor_contiguous(pb + 256, TGL_DTYPE_I32, 2, (size_t[]){4, 3});
        TGT_OK(b, tgl_topk(b, &in, 1, 3, 1, &v3, &i3));
        TGT_EXPECT(b, tgl_topk(b, &in, 1, 9, 1, &v3, &i3), TGL_ERR_INVALID_ARGUMENT);  /* k past 8 */
        TGT_EXPECT(b, tgl_topk(b, &in, 1, 4, 1, &v3, &i3), TGL_ERR_INVALID_ARGUMENT);  /* outputs hold 3 */
        tgl_tensor v0 = {.data = pb, .dtype = TGL_DTYPE_F32, .ndim = 2, .shape = {4, 0}, .strides = {0, 1}};
        TGT_OK(b, tgl_topk(b, &in, 1, 0, 1, &v0, NULL)); /* k 0: nothing */
        tgl_tensor s0 = tgl_tensor_contiguous(pa, TGL_DTYPE_F32, 0, NULL), o0 = tgl_tensor_contiguous(pb, TGL_DTYPE_F32, 0, NULL);
        TGT_OK(b, tgl_sort(b, &s0, 0, 0, &o0, NULL)); /* a 0-d in: one element */
        TGT_OK(b, tgl_free(b, pa));
        TGT_OK(b, tgl_free(b, pb));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_values),
        cmocka_unit_test(test_random_calls),
        cmocka_unit_test(test_large),
        cmocka_unit_test(test_topk_select),
        cmocka_unit_test(test_topk_neighbours),
        cmocka_unit_test(test_small_ssbo_limit),
        cmocka_unit_test(test_temp_memory),
        cmocka_unit_test(test_radix),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
