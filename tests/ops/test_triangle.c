/* tgl_triu and tgl_tril on GL compared with the CPU oracle, and the oracle with a plain host
 * reference: hand-worked 3 x 4 triangles on both backends; every dtype on random layouts of 2-5
 * dims (extents 1, primes, 2^k +- 1, past a workgroup; negative, gapped and broadcast inputs, in
 * place, empty) with diagonals inside, at and past the matrices' edges (up to +-2^40), the bytes
 * around out's elements poisoned, bit for bit; boxes under a shrunk SSBO limit; refusals, out
 * untouched. */
#include "testing.h"
#include "tensors.h"
#include "cpu/cpu_convert.h"
#include "gl/gl_internal.h"

#include <stdlib.h>
#include <string.h>

typedef tgt_pair pair;

static int setup(void **state)
{
    return tgt_pair_setup(state, 0x7121);
}

static int teardown(void **state)
{
    return tgt_pair_teardown(state);
}

#define POISON 0xA5

static const tgl_dtype dtypes[] = {TGL_DTYPE_F32, TGL_DTYPE_F16, TGL_DTYPE_BF16, TGL_DTYPE_I32, TGL_DTYPE_BOOL};

/* One call: in (data an offset into an allocation of in_bytes holding init) into out (an offset
 * into an allocation of out_bytes, POISON first, or in's allocation when in_place). */
typedef struct call {
    int upper;
    int64_t diagonal;
    tgl_tensor in, out;
    size_t in_bytes, out_bytes;
    const uint8_t *init;
    int in_place;
} call;

static tgl_status run_on(tgl_backend *b, const call *c, uint8_t *got)
{
    tgl_ptr x, d;
    TGT_OK(b, tgl_alloc(b, c->in_bytes, &x));
    TGT_OK(b, tgl_copy_htod(b, x, c->init, c->in_bytes));
    if (c->in_place) {
        d = x;
    } else {
        TGT_OK(b, tgl_alloc(b, c->out_bytes, &d));
        memset(got, POISON, c->out_bytes);
        TGT_OK(b, tgl_copy_htod(b, d, got, c->out_bytes));
    }
    tgl_tensor t = c->in, o = c->out;
    t.data += x;
    o.data += d;
    tgl_status st = c->upper ? tgl_triu(b, &t, &o, c->diagonal) : tgl_tril(b, &t, &o, c->diagonal);
    TGT_OK(b, tgl_copy_dtoh(b, got, d, c->out_bytes));
    TGT_OK(b, tgl_free(b, x));
    if (!c->in_place)
        TGT_OK(b, tgl_free(b, d));
    return st;
}

/* Byte offset of the element at idx (out's index space; an input of fewer dims aligned right). */
static int64_t offset_of(const tgl_tensor *t, size_t ndim, const size_t *idx)
{
    size_t es = tgl_dtype_size(t->dtype);
    int64_t at = (int64_t)(t->data / es);
    for (size_t d = 0; d < t->ndim && d < TGL_MAX_DIMS; d++) {
        size_t i = idx[ndim - t->ndim + d];
        at += t->shape[d] == 1 ? 0 : (int64_t)i * t->strides[d];
    }
    return at * (int64_t)es;
}

/* The host reference: out's allocation image (starting from POISON, or the input image in place)
 * with each element of out set as the triangle keeps or zeroes it. */
static void reference(const call *c, uint8_t *want)
{
    const tgl_tensor *o = &c->out;
    size_t es = tgl_dtype_size(o->dtype), n = 1, idx[TGL_MAX_DIMS] = {0};
    if (c->in_place)
        memcpy(want, c->init, c->out_bytes);
    else
        memset(want, POISON, c->out_bytes);
    for (size_t d = 0; d < o->ndim; d++)
        n *= o->shape[d];
    uint8_t *src = malloc(c->in_bytes);
    memcpy(src, c->init, c->in_bytes); /* in place: read the elements as they were */
    for (size_t k = 0; k < n; k++) {
        int64_t diff = (int64_t)idx[o->ndim - 1] - (int64_t)idx[o->ndim - 2];
        int keep = c->upper ? diff >= c->diagonal : diff <= c->diagonal;
        uint8_t *dst = want + offset_of(o, o->ndim, idx);
        if (keep)
            tgl_cpu_convert(o->dtype, o->dtype, src + offset_of(&c->in, o->ndim, idx), dst);
        else
            memset(dst, 0, es);
        for (size_t d = o->ndim; d-- > 0;) {
            if (++idx[d] < o->shape[d])
                break;
            idx[d] = 0;
        }
    }
    free(src);
}

/* The call on the CPU against the reference, then GL against the CPU: every byte of out's
 * allocation. */
static void check(pair *p, tgl_backend *gl, const call *c, const char *what)
{
    uint8_t *w = malloc(c->out_bytes), *r = malloc(c->out_bytes), *g = malloc(c->out_bytes);
    reference(c, r);
    TGT_OK(p->cpu, run_on(p->cpu, c, w));
    for (size_t i = 0; i < c->out_bytes; i++)
        if (w[i] != r[i])
            fail_msg("%s: %s (diagonal %lld) %s, %zu dims: cpu byte %zu is 0x%02x, the reference's 0x%02x", what,
                     c->upper ? "triu" : "tril", (long long)c->diagonal, tgl_dtype_name(c->out.dtype), c->out.ndim, i,
                     w[i], r[i]);
    if (gl) {
        TGT_OK(gl, run_on(gl, c, g));
        for (size_t i = 0; i < c->out_bytes; i++)
            if (g[i] != w[i])
                fail_msg("%s: %s (diagonal %lld) %s, %zu dims: gl byte %zu is 0x%02x, cpu's 0x%02x", what,
                         c->upper ? "triu" : "tril", (long long)c->diagonal, tgl_dtype_name(c->out.dtype),
                         c->out.ndim, i, g[i], w[i]);
    }
    free(w);
    free(r);
    free(g);
}

static void test_known_values(void **state)
{
    pair *p = *state;
    float x[12];
    for (int i = 0; i < 12; i++)
        x[i] = (float)(i + 1);
    static const struct {
        int upper, diagonal;
        float want[12];
    } cases[] = {
        {1, 0, {1, 2, 3, 4, 0, 6, 7, 8, 0, 0, 11, 12}},
        {1, 1, {0, 2, 3, 4, 0, 0, 7, 8, 0, 0, 0, 12}},
        {1, -1, {1, 2, 3, 4, 5, 6, 7, 8, 0, 10, 11, 12}},
        {0, 0, {1, 0, 0, 0, 5, 6, 0, 0, 9, 10, 11, 0}},
        {0, -2, {0, 0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0}},
        {0, 3, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}},
    };
    tgl_backend *bs[2] = {p->cpu, p->gl};
    for (int j = 0; j < 2; j++) {
        if (!bs[j])
            continue;
        for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
            call c = {.upper = cases[k].upper, .diagonal = cases[k].diagonal, .init = (const uint8_t *)x};
            c.in = c.out = tgl_tensor_contiguous(0, TGL_DTYPE_F32, 2, (size_t[]){3, 4});
            c.in_bytes = c.out_bytes = sizeof x;
            float got[12];
            TGT_OK(bs[j], run_on(bs[j], &c, (uint8_t *)got));
            assert_memory_equal(got, cases[k].want, sizeof got);
        }
    }
}

static void random_calls(pair *p, tgl_backend *gl, int count, const char *what)
{
    tgt_rng *r = &p->rng;
    for (int i = 0; i < count; i++) {
        tgl_dtype dt = dtypes[tgt_below(r, 5)];
        size_t ndim = 2 + tgt_below(r, 4), shape[TGL_MAX_DIMS] = {0}, n = 1;
        for (size_t d = 0; d < ndim; d++) {
            shape[d] = n * 129 <= 30000 ? tgt_awkward_extent(r, 129) : 1;
            n *= shape[d];
        }
        if (tgt_below(r, 12) == 0)
            shape[tgt_below(r, ndim)] = 0; /* empty */
        size_t rows = shape[ndim - 2], cols = shape[ndim - 1];
        call c = {.upper = (int)tgt_below(r, 2)};
        switch (tgt_below(r, 4)) {
        case 0: c.diagonal = (int64_t)tgt_below(r, 7) - 3; break;
        case 1: c.diagonal = (int64_t)cols - (int64_t)tgt_below(r, 3); break; /* at the right edge */
        case 2: c.diagonal = -(int64_t)rows + (int64_t)tgt_below(r, 3); break; /* at the bottom edge */
        default: c.diagonal = tgt_below(r, 2) ? (int64_t)1 << 40 : -((int64_t)1 << 40); break;
        }
        c.out = tgt_below(r, 2) ? tgt_random_layout(r, dt, ndim, shape, &c.out_bytes)
                                : tgt_dense_layout(r, dt, ndim, shape, &c.out_bytes);
        c.in_place = tgt_below(r, 5) == 0;
        if (c.in_place) {
            c.in = c.out;
            c.in_bytes = c.out_bytes;
        } else {
            size_t in_ndim, in_shape[1][TGL_MAX_DIMS];
            tgt_broadcast_shapes(r, 1, ndim, shape, &in_ndim, in_shape);
            if (in_ndim < 2) { /* keep the matrices' dims: broadcast only the batch */
                in_ndim = 2;
                in_shape[0][0] = rows;
                in_shape[0][1] = cols;
            }
            c.in = tgt_random_layout(r, dt, in_ndim, in_shape[0], &c.in_bytes);
        }
        uint8_t *init = malloc(c.in_bytes);
        tgt_pool_fill(r, dt, init, c.in_bytes);
        c.init = init;
        check(p, gl, &c, what);
        free(init);
    }
}

static void test_random_layouts(void **state)
{
    pair *p = *state;
    random_calls(p, p->gl, 150, "random layouts");
}

/* Windows past a shrunk SSBO block limit: out's index space cut into boxes on GL, each box's
 * coordinates counted from its origin. */
static void test_small_ssbo_limit(void **state)
{
    pair *p = *state;
    if (!p->gl)
        skip();
    tgl_backend *gl = tgt_open(TGL_BACKEND_GL);
    tgl_gl_test_set_limits(gl, 256 + 64, NULL);
    random_calls(p, gl, tgt_count(40), "small SSBO limit");
    tgl_close(gl);
}

static void test_refusals(void **state)
{
    pair *p = *state;
    tgl_backend *bs[2] = {p->cpu, p->gl};
    for (int j = 0; j < 2; j++) {
        if (!bs[j])
            continue;
        tgl_backend *b = bs[j];
        tgl_ptr d;
        uint8_t before[64], after[64];
        memset(before, POISON, sizeof before);
        TGT_OK(b, tgl_alloc(b, sizeof before, &d));
        TGT_OK(b, tgl_copy_htod(b, d, before, sizeof before));
        tgl_tensor m = tgl_tensor_contiguous(d, TGL_DTYPE_F32, 2, (size_t[]){2, 3}), o = m;
        o.data += 32;
        tgl_tensor v = tgl_tensor_contiguous(d, TGL_DTYPE_F32, 1, (size_t[]){6}), h = o, q = o, part = m;
        h.dtype = TGL_DTYPE_F16;
        q.dtype = TGL_DTYPE_Q8_0;
        part.data += 4; /* overlaps m one element along */
        const tgl_status A = TGL_ERR_INVALID_ARGUMENT;
        TGT_EXPECT(b, tgl_triu(b, &v, &v, 0), A); /* one dim */
        TGT_EXPECT(b, tgl_tril(b, NULL, &o, 0), A);
        TGT_EXPECT(b, tgl_tril(b, &m, NULL, 0), A);
        TGT_EXPECT(b, tgl_triu(b, &m, &h, 0), A); /* dtypes differ */
        TGT_EXPECT(b, tgl_triu(b, &m, &q, 0), TGL_ERR_UNSUPPORTED);
        TGT_EXPECT(b, tgl_tril(b, &m, &part, 0), A); /* a partial overlap */
        tgl_tensor wide = o;
        wide.shape[1] = 4; /* in does not broadcast to it */
        TGT_EXPECT(b, tgl_tril(b, &m, &wide, 0), A);
        TGT_OK(b, tgl_copy_dtoh(b, after, d, sizeof after));
        assert_memory_equal(before, after, sizeof after);
        TGT_OK(b, tgl_free(b, d));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_values),
        cmocka_unit_test(test_random_layouts),
        cmocka_unit_test(test_small_ssbo_limit),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests_name("ops/triangle (gl vs cpu)", tests, setup, teardown);
}
