/* tgl_gather and tgl_index_select on GL compared with the CPU oracle, and the oracle with a host
 * reference that reads each out element's source by the op's definition: PyTorch's outputs for
 * small cases on both backends; an in of stride 0 along an axis past 2^32; random calls of 1-6 dims (extents 1, primes, 2^k +- 1, past a
 * workgroup; negative and gapped strides, broadcast indices, every dtype with its edge values,
 * repeated indices, empty tensors), the bytes around out's elements poisoned, bit for bit; an
 * in past a shrunk SSBO limit (GL binds runs of the axis one after another); an index out of
 * range anywhere (first, last, negative, at the extent, the i32 limits) refused with out
 * untouched, naming the first bad position, also where the check runs in boxes past a shrunk
 * limit; 300 calls round the GL status words' ring (with
 * tgl_gather_rows), good and bad interleaved; the other refusals. */
#include "testing.h"
#include "tensors.h"
#include "cpu/cpu_convert.h"
#include "gl/gl_internal.h"

#include <stdlib.h>
#include <string.h>

typedef tgt_pair pair;

static int setup(void **state)
{
    return tgt_pair_setup(state, 0x6a7e);
}

static int teardown(void **state)
{
    return tgt_pair_teardown(state);
}

#define POISON 0xA5

static const tgl_dtype dtypes[] = {TGL_DTYPE_F32, TGL_DTYPE_F16, TGL_DTYPE_BF16, TGL_DTYPE_I32, TGL_DTYPE_BOOL};

/* One call: in, index and out each an offset into its own allocation (out's POISON first). */
typedef struct call {
    int select; /* tgl_index_select, else tgl_gather */
    size_t axis;
    tgl_tensor in, index, out;
    size_t in_bytes, index_bytes, out_bytes;
    const uint8_t *in_init;
    const int32_t *index_init;
} call;

static tgl_status run_on(tgl_backend *b, const call *c, uint8_t *got)
{
    tgl_ptr x, i, d;
    TGT_OK(b, tgl_alloc(b, c->in_bytes ? c->in_bytes : 1, &x));
    TGT_OK(b, tgl_copy_htod(b, x, c->in_init, c->in_bytes));
    TGT_OK(b, tgl_alloc(b, c->index_bytes ? c->index_bytes : 1, &i));
    TGT_OK(b, tgl_copy_htod(b, i, c->index_init, c->index_bytes));
    TGT_OK(b, tgl_alloc(b, c->out_bytes ? c->out_bytes : 1, &d));
    memset(got, POISON, c->out_bytes);
    TGT_OK(b, tgl_copy_htod(b, d, got, c->out_bytes));
    tgl_tensor t = c->in, k = c->index, o = c->out;
    t.data += x;
    k.data += i;
    o.data += d;
    tgl_status st = c->select ? tgl_index_select(b, &t, c->axis, &k, &o) : tgl_gather(b, &t, c->axis, &k, &o);
    TGT_OK(b, tgl_copy_dtoh(b, got, d, c->out_bytes));
    TGT_OK(b, tgl_free(b, x));
    TGT_OK(b, tgl_free(b, i));
    TGT_OK(b, tgl_free(b, d));
    return st;
}

/* Element offset (in elements) of idx in t. */
static int64_t element_of(const tgl_tensor *t, const size_t *idx)
{
    int64_t at = (int64_t)(t->data / tgl_dtype_size(t->dtype));
    for (size_t d = 0; d < t->ndim; d++)
        at += (int64_t)idx[d] * t->strides[d];
    return at;
}

/* out's allocation image: POISON, each element of out its source's, converted as tgl_copy
 * converts (bool as 0 or 1). */
static void reference(const call *c, uint8_t *want)
{
    const tgl_tensor *o = &c->out;
    size_t n = tgl_tensor_numel(o), idx[TGL_MAX_DIMS] = {0}, from[TGL_MAX_DIMS];
    size_t es = tgl_dtype_size(o->dtype);
    memset(want, POISON, c->out_bytes);
    for (size_t k = 0; k < n; k++) {
        memcpy(from, idx, sizeof from);
        size_t at_index[TGL_MAX_DIMS] = {idx[c->axis]};
        int32_t v = c->index_init[element_of(&c->index, c->select ? at_index : idx)];
        from[c->axis] = (size_t)v;
        tgl_cpu_convert(o->dtype, c->in.dtype, c->in_init + element_of(&c->in, from) * (int64_t)es,
                        want + element_of(o, idx) * (int64_t)es);
        for (size_t d = o->ndim; d-- > 0;) {
            if (++idx[d] < o->shape[d])
                break;
            idx[d] = 0;
        }
    }
}

/* The call on the CPU against the reference, then GL against the CPU: every byte of out's
 * allocation. */
static void check(pair *p, tgl_backend *gl, const call *c, const char *what)
{
    uint8_t *w = malloc(c->out_bytes + 1), *r = malloc(c->out_bytes + 1), *g = malloc(c->out_bytes + 1);
    reference(c, r);
    TGT_OK(p->cpu, run_on(p->cpu, c, w));
    for (size_t i = 0; i < c->out_bytes; i++)
        if (w[i] != r[i])
            fail_msg("%s: %s %s %zu-d along %zu: cpu byte %zu is 0x%02x, the reference's 0x%02x", what,
                     c->select ? "index_select" : "gather", tgl_dtype_name(c->in.dtype), c->in.ndim, c->axis, i, w[i],
                     r[i]);
    if (gl) {
        TGT_OK(gl, run_on(gl, c, g));
        for (size_t i = 0; i < c->out_bytes; i++)
            if (g[i] != w[i])
                fail_msg("%s: %s %s %zu-d along %zu: gl byte %zu is 0x%02x, cpu's 0x%02x", what,
                         c->select ? "index_select" : "gather", tgl_dtype_name(c->in.dtype), c->in.ndim, c->axis, i,
                         g[i], w[i]);
    }
    free(w);
    free(r);
    free(g);
}

/* torch.gather and torch.index_select on small f32 tensors holding 1, 2, 3, ... */
static void test_known_values(void **state)
{
    pair *p = *state;
    tgl_backend *bs[2] = {p->cpu, p->gl};
    float x[6] = {1, 2, 3, 4, 5, 6}, got[6];
    for (int j = 0; j < 2; j++) {
        tgl_backend *b = bs[j];
        if (!b)
            continue;
        /* torch.gather(x.view(2, 3), 1, [[2, 0], [1, 1]]) = [[3, 1], [5, 5]] */
        const int32_t cols[4] = {2, 0, 1, 1};
        call c = {.axis = 1, .in_init = (const uint8_t *)x, .in_bytes = sizeof x, .index_init = cols,
                  .index_bytes = sizeof cols, .out_bytes = 4 * sizeof(float)};
        c.in = tgl_tensor_contiguous(0, TGL_DTYPE_F32, 2, (size_t[]){2, 3});
        c.index = tgl_tensor_contiguous(0, TGL_DTYPE_I32, 2, (size_t[]){2, 2});
        c.out = tgl_tensor_contiguous(0, TGL_DTYPE_F32, 2, (size_t[]){2, 2});
        TGT_OK(b, run_on(b, &c, (uint8_t *)got));
        assert_memory_equal(got, ((const float[]){3, 1, 5, 5}), 4 * sizeof(float));
        /* torch.gather(x.view(2, 3), 0, [[1, 0, 1]]) = [[4, 2, 6]] */
        const int32_t rows[3] = {1, 0, 1};
        c.axis = 0;
        c.index_init = rows;
        c.index_bytes = sizeof rows;
        c.index = tgl_tensor_contiguous(0, TGL_DTYPE_I32, 2, (size_t[]){1, 3});
        c.out = tgl_tensor_contiguous(0, TGL_DTYPE_F32, 2, (size_t[]){1, 3});
        c.out_bytes = 3 * sizeof(float);
        TGT_OK(b, run_on(b, &c, (uint8_t *)got));
        assert_memory_equal(got, ((const float[]){4, 2, 6}), 3 * sizeof(float));
        /* torch.index_select(x.view(2, 3), 1, [2, 2, 0]) = [[3, 3, 1], [6, 6, 4]] */
        const int32_t pick[3] = {2, 2, 0};
        c = (call){.select = 1, .axis = 1, .in_init = (const uint8_t *)x, .in_bytes = sizeof x, .index_init = pick,
                   .index_bytes = sizeof pick, .out_bytes = 6 * sizeof(float)};
        c.in = tgl_tensor_contiguous(0, TGL_DTYPE_F32, 2, (size_t[]){2, 3});
        c.index = tgl_tensor_contiguous(0, TGL_DTYPE_I32, 1, (size_t[]){3});
        c.out = tgl_tensor_contiguous(0, TGL_DTYPE_F32, 2, (size_t[]){2, 3});
        TGT_OK(b, run_on(b, &c, (uint8_t *)got));
        assert_memory_equal(got, ((const float[]){3, 3, 1, 6, 6, 4}), 6 * sizeof(float));
        /* a 0-d gather: torch.gather(tensor(5.), 0, tensor(0)) = tensor(5.) */
        const int32_t zero[1] = {0};
        c = (call){.in_init = (const uint8_t *)(x + 4), .in_bytes = 4, .index_init = zero, .index_bytes = 4,
                   .out_bytes = 4};
        c.in = tgl_tensor_contiguous(0, TGL_DTYPE_F32, 0, NULL);
        c.index = tgl_tensor_contiguous(0, TGL_DTYPE_I32, 0, NULL);
        c.out = tgl_tensor_contiguous(0, TGL_DTYPE_F32, 0, NULL);
        TGT_OK(b, run_on(b, &c, (uint8_t *)got));
        assert_true(got[0] == 5.0f);
    }
}

/* in repeating one element per row along an axis longer than 2^32 (stride 0): every index
 * below 2^31 is in range and picks that element (GL's counts along the axis are 32-bit). */
static void test_long_broadcast_axis(void **state)
{
    pair *p = *state;
    tgl_backend *bs[2] = {p->cpu, p->gl};
    const float x[3] = {1.5f, -2.0f, 7.0f};
    const int32_t ix[12] = {0, 5, INT32_MAX, 123456789, 4, 3, 2, 1, 65536, 65537, 1 << 30, 6};
    for (int j = 0; j < 2; j++) {
        if (!bs[j])
            continue;
        float got[12];
        call c = {.axis = 1, .in_init = (const uint8_t *)x, .in_bytes = sizeof x, .index_init = ix,
                  .index_bytes = sizeof ix, .out_bytes = sizeof got};
        c.in = tgl_tensor_contiguous(0, TGL_DTYPE_F32, 2, (size_t[]){3, ((size_t)1 << 32) + 5});
        c.in.strides[0] = 1;
        c.in.strides[1] = 0;
        c.index = tgl_tensor_contiguous(0, TGL_DTYPE_I32, 2, (size_t[]){3, 4});
        c.out = tgl_tensor_contiguous(0, TGL_DTYPE_F32, 2, (size_t[]){3, 4});
        c.out.strides[0] = 1; /* column-major: an element per invocation */
        c.out.strides[1] = 3;
        TGT_OK(bs[j], run_on(bs[j], &c, (uint8_t *)got));
        for (int k = 0; k < 12; k++) /* element (k % 3, k / 3) */
            if (got[k] != x[k % 3])
                fail_msg("%s: element %d is %g, not %g", tgl_backend_name(bs[j]), k, (double)got[k], (double)x[k % 3]);
    }
}

/* A random call: in of ndim dims (at most ~20000 elements), index no larger along the other
 * dims (gather) or a 1-D list (index_select), indices in range, repeating now and then. */
static call random_call(tgt_rng *r, int select, size_t ndim, const size_t *shape, size_t axis)
{
    call c = {.select = select, .axis = axis};
    size_t ishape[TGL_MAX_DIMS] = {0}, oshape[TGL_MAX_DIMS] = {0};
    for (size_t d = 0; d < ndim; d++) {
        ishape[d] = d == axis ? tgt_awkward_extent(r, 129) : tgt_below(r, 3) ? shape[d] : tgt_below(r, shape[d] + 1);
        if (d == axis && shape[d] == 0)
            ishape[d] = 0; /* no index is in range: only an empty index passes */
        oshape[d] = select ? (d == axis ? ishape[d] : shape[d]) : ishape[d];
    }
    if (select)
        ishape[0] = oshape[axis];
    size_t n_out = 1;
    for (size_t d = 0; d < ndim; d++)
        n_out *= oshape[d];
    if (n_out > 40000) /* keep out small */
        oshape[axis] = ishape[select ? 0 : axis] = 1 + tgt_below(r, 5);
    tgl_dtype dt = dtypes[tgt_below(r, 5)];
    c.in = tgt_below(r, 3) ? tgt_random_layout(r, dt, ndim, shape, &c.in_bytes)
                           : tgt_dense_layout(r, dt, ndim, shape, &c.in_bytes);
    c.index = tgt_below(r, 2) ? tgt_random_layout(r, TGL_DTYPE_I32, select ? 1 : ndim, ishape, &c.index_bytes)
                              : tgt_dense_layout(r, TGL_DTYPE_I32, select ? 1 : ndim, ishape, &c.index_bytes);
    if (!select && tgt_below(r, 5) == 0) { /* a broadcast index: one index per line along a dim */
        size_t d = tgt_below(r, ndim);
        c.index.strides[d] = 0;
    }
    c.out = tgt_below(r, 2) ? tgt_random_layout(r, dt, ndim, oshape, &c.out_bytes)
                            : tgt_dense_layout(r, dt, ndim, oshape, &c.out_bytes);
    return c;
}

/* Indices in [0, extent): all over it, or a few values repeated. */
static int32_t *random_indices(tgt_rng *r, size_t bytes, size_t extent)
{
    int32_t *ix = malloc(bytes + 4);
    size_t few = 1 + tgt_below(r, 3), start = extent ? tgt_below(r, extent) : 0;
    int spread = tgt_below(r, 3) != 0;
    for (size_t k = 0; k < bytes / 4; k++)
        ix[k] = !extent ? 0 : spread ? (int32_t)tgt_below(r, extent) : (int32_t)((start + tgt_below(r, few)) % extent);
    return ix;
}

/* count calls on tensors of up to about max_elems elements. */
static void random_calls(pair *p, tgl_backend *gl, int count, size_t max_elems, const char *what)
{
    tgt_rng *r = &p->rng;
    for (int i = 0; i < count; i++) {
        size_t ndim = 1 + tgt_below(r, 5), shape[TGL_MAX_DIMS] = {0}, n = 1;
        for (size_t d = 0; d < ndim; d++) {
            shape[d] = n * 129 <= max_elems ? tgt_awkward_extent(r, 129) : 1 + tgt_below(r, 2);
            n *= shape[d];
        }
        if (tgt_below(r, 15) == 0)
            shape[tgt_below(r, ndim)] = 0; /* empty */
        size_t axis = tgt_below(r, ndim);
        call c = random_call(r, i % 3 == 2, ndim, shape, axis);
        uint8_t *init = malloc(c.in_bytes + 1);
        tgt_pool_fill(r, c.in.dtype, init, c.in_bytes);
        int32_t *ix = random_indices(r, c.index_bytes, shape[axis]);
        c.in_init = init;
        c.index_init = ix;
        check(p, gl, &c, what);
        free(init);
        free(ix);
    }
}

static void test_random_calls(void **state)
{
    pair *p = *state;
    random_calls(p, p->gl, 200, 20000, "random calls");
}

/* in past a shrunk SSBO limit: boxes of out, and runs of the axis bound one after another. */
static void test_small_ssbo_limit(void **state)
{
    pair *p = *state;
    if (!p->gl)
        skip();
    tgl_backend *gl = tgt_open(TGL_BACKEND_GL);
    tgl_gl_test_set_limits(gl, 2048 + 64, NULL); /* runs of a few indices: few dispatches on softpipe */
    /* Tensors of up to ~4000 elements, 8 windows of 528 floats: a gather of 20000 elements
     * whose axis runs and out boxes multiply took tens of thousands of dispatches, over 15
     * minutes on softpipe (seed 1883433407117227). */
    random_calls(p, gl, tgt_count(30), 4000, "small SSBO limit");
    tgl_close(gl);
}

/* On b, ten calls with one bad index in a dense [rows, cols] gather along 1 (or index_select of
 * a list of n_list cols): each fails, out keeps its bytes, and the message names the first bad
 * position. */
static void out_of_range_calls(pair *p, tgl_backend *b, size_t rows, size_t n_list)
{
    const int32_t bad[] = {-1, 7, INT32_MIN, INT32_MAX, 8};
    const size_t cols = 7;
    int32_t *ix = malloc((rows * 3 > n_list ? rows * 3 : n_list) * sizeof *ix);
    float *x = malloc(rows * cols * sizeof *x);
    for (size_t k = 0; k < rows * cols; k++)
        x[k] = (float)k;
    for (int t = 0; t < 10; t++) {
        int select = t % 2;
        size_t n = select ? n_list : rows * 3, where = t < 2 ? 0 : t < 4 ? n - 1 : tgt_below(&p->rng, n);
        for (size_t k = 0; k < n; k++)
            ix[k] = (int32_t)tgt_below(&p->rng, cols);
        ix[where] = bad[t % 5];
        if (t >= 6) /* a second bad one after the first */
            ix[n - 1 == where ? where : n - 1] = -5;
        call c = {.select = select, .axis = 1, .in_init = (const uint8_t *)x, .in_bytes = rows * cols * sizeof *x,
                  .index_init = ix, .index_bytes = n * 4};
        c.in = tgl_tensor_contiguous(0, TGL_DTYPE_F32, 2, (size_t[]){rows, cols});
        c.index = select ? tgl_tensor_contiguous(0, TGL_DTYPE_I32, 1, (size_t[]){n})
                         : tgl_tensor_contiguous(0, TGL_DTYPE_I32, 2, (size_t[]){rows, 3});
        c.out = tgl_tensor_contiguous(0, TGL_DTYPE_F32, 2, (size_t[]){rows, select ? n : 3});
        c.out_bytes = rows * (select ? n : 3) * sizeof(float);
        uint8_t *got = malloc(c.out_bytes);
        TGT_EXPECT(b, run_on(b, &c, got), TGL_ERR_INVALID_ARGUMENT);
        for (size_t k = 0; k < c.out_bytes; k++)
            if (got[k] != POISON)
                fail_msg("%s: a refused call wrote out's byte %zu", tgl_backend_name(b), k);
        char want[64];
        if (select)
            snprintf(want, sizeof want, "index[%zu]: %d is outside", where, (int)ix[where]);
        else
            snprintf(want, sizeof want, "index[%zu,%zu]: %d is outside", where / 3, where % 3, (int)ix[where]);
        if (!strstr(tgl_last_error(b), want))
            fail_msg("%s: the message '%s' does not say '%s'", tgl_backend_name(b), tgl_last_error(b), want);
        free(got);
    }
    free(ix);
    free(x);
}

static void test_out_of_range(void **state)
{
    pair *p = *state;
    tgl_backend *bs[2] = {p->cpu, p->gl};
    for (int j = 0; j < 2; j++)
        if (bs[j])
            out_of_range_calls(p, bs[j], 37, 300);
}

/* The same past a shrunk SSBO limit on GL: the check runs box by box (a dense index as one line
 * cut into windows), each box's positions counted from its own first. */
static void test_out_of_range_small_limit(void **state)
{
    pair *p = *state;
    if (!p->gl)
        skip();
    tgl_backend *gl = tgt_open(TGL_BACKEND_GL);
    tgl_gl_test_set_limits(gl, 2048 + 64, NULL);
    out_of_range_calls(p, gl, 704, 1531); /* 2112 indices: boxes of 528 from multiples of 4 */
    tgl_close(gl);
}

/* Every index check takes a fresh status word from a ring the GL backend resets by one fill
 * when it runs out (tgl_gl_status_slot): 300 calls, several times round it, of tgl_gather and
 * tgl_gather_rows on one backend, a third of them with a bad index somewhere: each good call
 * writes its rows whatever the calls before it found, each bad one is refused naming its own
 * first bad position and writes nothing. */
static void test_status_slots(void **state)
{
    pair *p = *state;
    tgl_backend *bs[2] = {p->cpu, p->gl};
    enum { ROWS = 9, COLS = 8, N = 5 };
    float table[ROWS * COLS];
    for (size_t k = 0; k < ROWS * COLS; k++)
        table[k] = (float)k;
    for (int j = 0; j < 2; j++) {
        tgl_backend *b = bs[j];
        if (!b)
            continue;
        tgl_ptr x, ix, out;
        TGT_OK(b, tgl_alloc(b, sizeof table, &x));
        TGT_OK(b, tgl_copy_htod(b, x, table, sizeof table));
        TGT_OK(b, tgl_alloc(b, N * 4, &ix));
        TGT_OK(b, tgl_alloc(b, N * COLS * 4, &out));
        for (int t = 0; t < 300; t++) {
            int rows = t % 4 == 3; /* tgl_gather_rows; else tgl_gather along 0 of [ROWS, COLS] */
            int32_t id[N];
            for (size_t k = 0; k < N; k++)
                id[k] = (int32_t)tgt_below(&p->rng, ROWS);
            size_t where = tgt_below(&p->rng, N);
            int bad = tgt_below(&p->rng, 3) == 0;
            if (bad)
                id[where] = tgt_below(&p->rng, 2) ? -1 - (int32_t)t : ROWS + t;
            float before[N * COLS], got[N * COLS];
            for (size_t k = 0; k < N * COLS; k++)
                before[k] = -1.0f - (float)t;
            TGT_OK(b, tgl_copy_htod(b, out, before, sizeof before));
            /* gather: out[k, c] = x[id[k], c], an index row per out row (each the id repeated) */
            int32_t index[N * COLS];
            for (size_t k = 0; k < N * COLS; k++)
                index[k] = id[k / COLS];
            tgl_status st;
            if (rows) {
                TGT_OK(b, tgl_copy_htod(b, ix, id, sizeof id));
                st = tgl_gather_rows(b, x, ix, out, ROWS, COLS, N);
            } else {
                tgl_ptr big;
                TGT_OK(b, tgl_alloc(b, sizeof index, &big));
                TGT_OK(b, tgl_copy_htod(b, big, index, sizeof index));
                tgl_tensor in = tgl_tensor_contiguous(x, TGL_DTYPE_F32, 2, (size_t[]){ROWS, COLS});
                tgl_tensor it = tgl_tensor_contiguous(big, TGL_DTYPE_I32, 2, (size_t[]){N, COLS});
                tgl_tensor ot = tgl_tensor_contiguous(out, TGL_DTYPE_F32, 2, (size_t[]){N, COLS});
                st = tgl_gather(b, &in, 0, &it, &ot);
                TGT_OK(b, tgl_free(b, big));
            }
            TGT_OK(b, tgl_copy_dtoh(b, got, out, sizeof got));
            if (st != (bad ? TGL_ERR_INVALID_ARGUMENT : TGL_OK))
                fail_msg("%s: call %d (%s, %s): status %d", tgl_backend_name(b), t, rows ? "gather_rows" : "gather",
                         bad ? "a bad index" : "good", (int)st);
            for (size_t k = 0; k < N * COLS; k++) {
                float want = bad ? before[k] : table[(size_t)id[k / COLS] * COLS + k % COLS];
                if (got[k] != want)
                    fail_msg("%s: call %d: out[%zu] is %g, want %g", tgl_backend_name(b), t, k, got[k], want);
            }
            char want[64];
            if (bad && rows)
                snprintf(want, sizeof want, "ids[%zu]", where);
            else if (bad)
                snprintf(want, sizeof want, "index[%zu,0]: %d is outside", where, (int)id[where]);
            if (bad && !strstr(tgl_last_error(b), want))
                fail_msg("%s: call %d: the message '%s' does not say '%s'", tgl_backend_name(b), t, tgl_last_error(b),
                         want);
        }
        TGT_OK(b, tgl_free(b, x));
        TGT_OK(b, tgl_free(b, ix));
        TGT_OK(b, tgl_free(b, out));
    }
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
        uint8_t before[512], after[512];
        memset(before, 0, sizeof before); /* indices 0: in range */
        TGT_OK(b, tgl_alloc(b, sizeof before, &d));
        TGT_OK(b, tgl_copy_htod(b, d, before, sizeof before));
        tgl_tensor m = tgl_tensor_contiguous(d, TGL_DTYPE_F32, 2, (size_t[]){2, 3});
        tgl_tensor ix = tgl_tensor_contiguous(d + 64, TGL_DTYPE_I32, 2, (size_t[]){2, 3});
        tgl_tensor o = tgl_tensor_contiguous(d + 128, TGL_DTYPE_F32, 2, (size_t[]){2, 3});
        tgl_tensor list = tgl_tensor_contiguous(d + 64, TGL_DTYPE_I32, 1, (size_t[]){3});
        tgl_tensor fx = ix, wide = ix, flat = ix, o16 = o, part = o, o3 = o, q = m;
        fx.dtype = TGL_DTYPE_F32;
        wide.shape[0] = 3; /* past in's 2 rows along dim 0 */
        flat.ndim = 1;
        o16.dtype = TGL_DTYPE_F16;
        part.data = d + 4; /* overlaps in */
        o3.ndim = 3;
        o3.shape[2] = 1;
        q.dtype = TGL_DTYPE_Q8_0;
        const tgl_status A = TGL_ERR_INVALID_ARGUMENT;
        TGT_EXPECT(b, tgl_gather(b, NULL, 0, &ix, &o), A);
        TGT_EXPECT(b, tgl_gather(b, &m, 0, NULL, &o), A);
        TGT_EXPECT(b, tgl_gather(b, &m, 0, &ix, NULL), A);
        TGT_EXPECT(b, tgl_gather(b, &m, 2, &ix, &o), A);                /* axis past ndim */
        TGT_EXPECT(b, tgl_gather(b, &m, 1, &fx, &o), TGL_ERR_UNSUPPORTED); /* f32 indices */
        TGT_EXPECT(b, tgl_gather(b, &m, 1, &wide, &o), A);              /* index past in along dim 0 */
        TGT_EXPECT(b, tgl_gather(b, &m, 1, &flat, &o), A);              /* index of another ndim */
        TGT_EXPECT(b, tgl_gather(b, &m, 1, &ix, &o16), A);              /* out of another dtype */
        TGT_EXPECT(b, tgl_gather(b, &m, 1, &ix, &o3), A);               /* out of another ndim */
        TGT_EXPECT(b, tgl_gather(b, &m, 1, &ix, &part), A);             /* out overlaps in */
        TGT_EXPECT(b, tgl_gather(b, &m, 1, &ix, &ix), A);               /* out is the index */
        TGT_EXPECT(b, tgl_gather(b, &q, 1, &ix, &o), TGL_ERR_UNSUPPORTED);
        TGT_EXPECT(b, tgl_index_select(b, &m, 1, &ix, &o), A);          /* a 2-d index */
        TGT_EXPECT(b, tgl_index_select(b, &m, 2, &list, &o), A);        /* axis past ndim */
        TGT_EXPECT(b, tgl_index_select(b, &m, 0, &list, &o), A);        /* out has 2 rows, not 3 */
        TGT_EXPECT(b, tgl_index_select(b, &m, 1, &list, &part), A);
        TGT_OK(b, tgl_copy_dtoh(b, after, d, sizeof after));
        assert_memory_equal(before, after, sizeof after);
        TGT_OK(b, tgl_free(b, d));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_values),
        cmocka_unit_test(test_long_broadcast_axis),
        cmocka_unit_test(test_random_calls),
        cmocka_unit_test(test_small_ssbo_limit),
        cmocka_unit_test(test_out_of_range),
        cmocka_unit_test(test_out_of_range_small_limit),
        cmocka_unit_test(test_status_slots),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests_name("ops/gather (gl vs cpu)", tests, setup, teardown);
}
