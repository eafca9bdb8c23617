/* tgl_cat on GL and on the CPU backend. Same-dtype concatenations are checked against a host
 * reference computed here from the inputs' bytes and strides (the slicing is the library's
 * shared code, so agreement of the two backends alone would not catch it), the whole out
 * allocation included: bytes outside out's elements keep their poison. Random ndim, axis,
 * input counts (some inputs empty along the axis), random layouts (negative strides, gaps,
 * permuted dims, a 0 stride), every dtype; inputs of other dtypes than out's are converted, GL
 * against CPU. Then long lists, and every refusal with out unchanged on both backends. */
#include "testing.h"
#include "tensors.h"

#include <stdlib.h>
#include <string.h>

#define POISON 0xA5
#define MAX_INPUTS 160

static int setup(void **state)
{
    return tgt_pair_setup(state, 0xCA7);
}

static int teardown(void **state)
{
    return tgt_pair_teardown(state);
}

static const tgl_dtype dtypes[] = {TGL_DTYPE_F32, TGL_DTYPE_F16, TGL_DTYPE_BF16, TGL_DTYPE_I32, TGL_DTYPE_BOOL};
#define N_DTYPES (sizeof dtypes / sizeof dtypes[0])

/* The inputs of one call: each in an allocation of its own (descriptor data a byte offset). */
typedef struct cat_case {
    size_t n, axis;
    tgl_tensor in[MAX_INPUTS];
    uint8_t *init[MAX_INPUTS];
    size_t bytes[MAX_INPUTS];
    tgl_tensor out;
    size_t out_bytes;
} cat_case;

static void free_case(cat_case *c)
{
    for (size_t k = 0; k < c->n; k++)
        free(c->init[k]);
}

/* tgl_cat on b with c's inputs uploaded and out in a POISON-filled allocation, which comes back
 * in got. Returns the call's status. */
static tgl_status run_on(tgl_backend *b, const cat_case *c, uint8_t *got)
{
    static tgl_ptr a[MAX_INPUTS];
    static tgl_tensor t[MAX_INPUTS];
    tgl_ptr d;
    for (size_t k = 0; k < c->n; k++) {
        TGT_OK(b, tgl_alloc(b, c->bytes[k], &a[k]));
        TGT_OK(b, tgl_copy_htod(b, a[k], c->init[k], c->bytes[k]));
        t[k] = c->in[k];
        t[k].data += a[k];
    }
    TGT_OK(b, tgl_alloc(b, c->out_bytes, &d));
    memset(got, POISON, c->out_bytes);
    TGT_OK(b, tgl_copy_htod(b, d, got, c->out_bytes));
    tgl_tensor out = c->out;
    out.data += d;
    tgl_status st = tgl_cat(b, t, c->n, c->axis, &out);
    TGT_OK(b, tgl_copy_dtoh(b, got, d, c->out_bytes));
    for (size_t k = 0; k < c->n; k++)
        TGT_OK(b, tgl_free(b, a[k]));
    TGT_OK(b, tgl_free(b, d));
    return st;
}

/* Byte offset of element idx of t (its data a byte offset). */
static size_t at(const tgl_tensor *t, const size_t *idx)
{
    int64_t e = 0;
    for (size_t d = 0; d < t->ndim; d++)
        e += (int64_t)idx[d] * t->strides[d];
    return (size_t)((int64_t)t->data + e * (int64_t)tgl_dtype_size(t->dtype));
}

/* The expected out allocation when every input has out's dtype: POISON, then each out element
 * from the input that holds its index along the axis (bool as 0 or 1). */
static void host_cat(const cat_case *c, uint8_t *want)
{
    memset(want, POISON, c->out_bytes);
    const tgl_tensor *o = &c->out;
    size_t es = tgl_dtype_size(o->dtype), n = tgl_tensor_numel(o), idx[TGL_MAX_DIMS] = {0};
    for (size_t e = 0; e < n; e++) {
        size_t rem = e, src[TGL_MAX_DIMS];
        for (size_t d = o->ndim; d-- > 0;) {
            idx[d] = rem % o->shape[d];
            rem /= o->shape[d];
        }
        size_t k = 0, off = idx[c->axis];
        while (off >= c->in[k].shape[c->axis]) {
            off -= c->in[k].shape[c->axis];
            k++;
        }
        memcpy(src, idx, sizeof src);
        src[c->axis] = off;
        const uint8_t *from = c->init[k] + at(&c->in[k], src);
        uint8_t *to = want + at(o, idx);
        if (o->dtype == TGL_DTYPE_BOOL)
            *to = *from != 0;
        else
            memcpy(to, from, es);
    }
}

/* A random case: ndim 1..4, a random axis, 1..max_n inputs of random extents along it (about
 * one in five empty), out and inputs in random layouts, an input dim sometimes broadcast by a
 * 0 stride. Inputs take out's dtype unless mixed. */
static void random_case(tgt_rng *r, cat_case *c, size_t max_n, int mixed)
{
    size_t ndim = 1 + tgt_below(r, 4), shape[TGL_MAX_DIMS];
    for (size_t d = 0; d < ndim; d++)
        shape[d] = 1 + tgt_below(r, 6);
    c->axis = tgt_below(r, ndim);
    c->n = 1 + tgt_below(r, max_n);
    tgl_dtype dt = dtypes[tgt_below(r, N_DTYPES)];
    size_t total = 0;
    for (size_t k = 0; k < c->n; k++) {
        size_t s[TGL_MAX_DIMS];
        memcpy(s, shape, sizeof s);
        s[c->axis] = tgt_below(r, 5) == 0 ? 0 : 1 + tgt_below(r, 5);
        total += s[c->axis];
        tgl_dtype kt = mixed ? dtypes[tgt_below(r, N_DTYPES)] : dt;
        c->in[k] = tgt_random_layout(r, kt, ndim, s, &c->bytes[k]);
        size_t d0 = tgt_below(r, ndim);
        if (tgt_below(r, 6) == 0 && d0 != c->axis)
            c->in[k].strides[d0] = 0;
        c->init[k] = malloc(c->bytes[k]);
        tgt_pool_fill(r, kt, c->init[k], c->bytes[k]);
    }
    shape[c->axis] = total;
    c->out = tgt_random_layout(r, dt, ndim, shape, &c->out_bytes);
}

static void check_case(tgt_pair *p, const cat_case *c, int host, const char *what, int i)
{
    uint8_t *cpu = malloc(c->out_bytes), *gl = malloc(c->out_bytes), *want = malloc(c->out_bytes);
    TGT_OK(p->cpu, run_on(p->cpu, c, cpu));
    if (host) {
        host_cat(c, want);
        for (size_t b = 0; b < c->out_bytes; b++)
            if (cpu[b] != want[b])
                fail_msg("%s %d (%zu inputs, axis %zu, %s): byte %zu is 0x%02x on cpu, 0x%02x expected", what, i,
                         c->n, c->axis, tgl_dtype_name(c->out.dtype), b, cpu[b], want[b]);
    }
    if (p->gl) {
        TGT_OK(p->gl, run_on(p->gl, c, gl));
        for (size_t b = 0; b < c->out_bytes; b++)
            if (gl[b] != cpu[b])
                fail_msg("%s %d (%zu inputs, axis %zu, %s): byte %zu is 0x%02x on gl, 0x%02x on cpu", what, i,
                         c->n, c->axis, tgl_dtype_name(c->out.dtype), b, gl[b], cpu[b]);
    }
    free(cpu);
    free(gl);
    free(want);
}

static void test_random_same_dtype(void **state)
{
    tgt_pair *p = *state;
    static cat_case c;
    for (int i = 0; i < 150; i++) {
        random_case(&p->rng, &c, 5, 0);
        check_case(p, &c, 1, "same dtype", i);
        free_case(&c);
    }
}

static void test_random_mixed_dtypes(void **state)
{
    tgt_pair *p = *state;
    static cat_case c;
    for (int i = 0; i < 60; i++) {
        random_case(&p->rng, &c, 4, 1);
        check_case(p, &c, 0, "mixed dtypes", i);
        free_case(&c);
    }
}

/* Many inputs: MAX_INPUTS slices of extent 0..2 along the last dim, dense and random layouts. */
static void test_long_list(void **state)
{
    tgt_pair *p = *state;
    static cat_case c;
    for (int i = 0; i < 3; i++) {
        size_t shape[2] = {3, 0};
        c.n = MAX_INPUTS;
        c.axis = 1;
        for (size_t k = 0; k < c.n; k++) {
            size_t s[2] = {3, tgt_below(&p->rng, 3)};
            shape[1] += s[1];
            c.in[k] = i == 0 ? tgt_dense_layout(&p->rng, TGL_DTYPE_F32, 2, s, &c.bytes[k])
                             : tgt_random_layout(&p->rng, TGL_DTYPE_F32, 2, s, &c.bytes[k]);
            c.init[k] = malloc(c.bytes[k]);
            tgt_pool_fill(&p->rng, TGL_DTYPE_F32, c.init[k], c.bytes[k]);
        }
        c.out = i == 2 ? tgt_random_layout(&p->rng, TGL_DTYPE_F32, 2, shape, &c.out_bytes)
                       : tgt_dense_layout(&p->rng, TGL_DTYPE_F32, 2, shape, &c.out_bytes);
        check_case(p, &c, 1, "long list", i);
        free_case(&c);
    }
}

/* tgl_cat with its (at most two) inputs and out in one POISON-filled allocation, descriptors'
 * data byte offsets into it; the allocation's bytes after the call come back in after. */
static tgl_status cat_in_one(tgl_backend *b, tgl_tensor *in, size_t n, size_t axis, tgl_tensor out, uint8_t *after)
{
    tgl_ptr d;
    uint8_t init[256];
    memset(init, POISON, sizeof init);
    TGT_OK(b, tgl_alloc(b, sizeof init, &d));
    TGT_OK(b, tgl_copy_htod(b, d, init, sizeof init));
    tgl_tensor t[2];
    for (size_t k = 0; in && k < n && k < 2; k++) {
        t[k] = in[k];
        t[k].data += d;
    }
    out.data += d;
    tgl_status st = tgl_cat(b, in ? t : NULL, n, axis, &out);
    TGT_OK(b, tgl_copy_dtoh(b, after, d, sizeof init));
    TGT_OK(b, tgl_free(b, d));
    return st;
}

/* Every refusal on both backends: the status, a message naming the argument, nothing written. */
static void expect_refused(tgt_pair *p, tgl_tensor *in, size_t n, size_t axis, tgl_tensor out, tgl_status want,
                           const char *names)
{
    tgl_backend *bs[2] = {p->cpu, p->gl};
    for (int i = 0; i < 2; i++) {
        if (!bs[i])
            continue;
        uint8_t after[256];
        tgl_status st = cat_in_one(bs[i], in, n, axis, out, after);
        if (st != want)
            fail_msg("%s: %s where %s was expected (%s)", names, tgl_status_string(st), tgl_status_string(want),
                     tgl_last_error(bs[i]));
        if (!strstr(tgl_last_error(bs[i]), names))
            fail_msg("the message \"%s\" does not name %s", tgl_last_error(bs[i]), names);
        for (size_t k = 0; k < sizeof after; k++)
            if (after[k] != POISON)
                fail_msg("%s: byte %zu changed by a refused call", names, k);
    }
}

static void test_refusals(void **state)
{
    tgt_pair *p = *state;
    const size_t s4[2] = {2, 2}, s6[2] = {2, 3}, s10[2] = {2, 5};
    tgl_tensor ok[2] = {tgl_tensor_contiguous(0, TGL_DTYPE_F32, 2, s4), tgl_tensor_contiguous(16, TGL_DTYPE_F32, 2, s6)};
    tgl_tensor out = tgl_tensor_contiguous(64, TGL_DTYPE_F32, 2, s10), in[2], o;

    /* the valid call, for reference */
    uint8_t after[256];
    TGT_OK(p->cpu, cat_in_one(p->cpu, ok, 2, 1, out, after));

    expect_refused(p, NULL, 2, 1, out, TGL_ERR_INVALID_ARGUMENT, "inputs");
    expect_refused(p, ok, 0, 1, out, TGL_ERR_INVALID_ARGUMENT, "n_inputs");
    expect_refused(p, ok, 2, 2, out, TGL_ERR_INVALID_ARGUMENT, "axis");
    o = tgl_tensor_contiguous(64, TGL_DTYPE_F32, 0, NULL);
    expect_refused(p, ok, 2, 0, o, TGL_ERR_INVALID_ARGUMENT, "out");
    o = out;
    o.ndim = TGL_MAX_DIMS + 1;
    expect_refused(p, ok, 2, 1, o, TGL_ERR_INVALID_ARGUMENT, "out");
    memcpy(in, ok, sizeof in);
    in[1].ndim = 1;
    expect_refused(p, in, 2, 1, out, TGL_ERR_INVALID_ARGUMENT, "inputs[1]");
    memcpy(in, ok, sizeof in);
    in[0].shape[0] = 1;
    expect_refused(p, in, 2, 1, out, TGL_ERR_INVALID_ARGUMENT, "inputs[0]");
    memcpy(in, ok, sizeof in);
    in[1].shape[1] = 4; /* 2 + 4 > 5 */
    expect_refused(p, in, 2, 1, out, TGL_ERR_INVALID_ARGUMENT, "inputs[1]");
    memcpy(in, ok, sizeof in);
    in[1].shape[1] = 2; /* 2 + 2 < 5 */
    expect_refused(p, in, 2, 1, out, TGL_ERR_INVALID_ARGUMENT, "out");
    memcpy(in, ok, sizeof in);
    in[1].dtype = TGL_DTYPE_Q8_0;
    expect_refused(p, in, 2, 1, out, TGL_ERR_UNSUPPORTED, "inputs[1]");
    memcpy(in, ok, sizeof in);
    in[0].dtype = (tgl_dtype)99;
    expect_refused(p, in, 2, 1, out, TGL_ERR_INVALID_ARGUMENT, "inputs[0]");
    o = out;
    o.dtype = TGL_DTYPE_Q4_0;
    expect_refused(p, ok, 2, 1, o, TGL_ERR_UNSUPPORTED, "out");
    /* an input past its allocation's end (checked at its extreme element) */
    memcpy(in, ok, sizeof in);
    in[1].data = 240;
    expect_refused(p, in, 2, 1, out, TGL_ERR_INVALID_POINTER, "inputs[1]");
    /* a negative stride that walks below the allocation */
    memcpy(in, ok, sizeof in);
    in[0].strides[0] = -2;
    expect_refused(p, in, 2, 1, out, TGL_ERR_INVALID_POINTER, "inputs[0]");
    /* overlap: bb's bytes run into out's */
    memcpy(in, ok, sizeof in);
    in[1].data = 56;
    expect_refused(p, in, 2, 1, out, TGL_ERR_INVALID_ARGUMENT, "inputs[1]");
    /* out reaching an element twice */
    o = out;
    o.strides[0] = 0;
    expect_refused(p, ok, 2, 1, o, TGL_ERR_INVALID_ARGUMENT, "out");
    /* an empty input still needs out's ndim and extents */
    memcpy(in, ok, sizeof in);
    in[0].shape[1] = 0;
    in[0].shape[0] = 3;
    in[1].shape[1] = 5;
    expect_refused(p, in, 2, 1, out, TGL_ERR_INVALID_ARGUMENT, "inputs[0]");
}

/* Empty out (a 0 extent off the axis, or along it) does nothing, even with data 0. */
static void test_empty(void **state)
{
    tgt_pair *p = *state;
    tgl_backend *bs[2] = {p->cpu, p->gl};
    for (int i = 0; i < 2; i++) {
        if (!bs[i])
            continue;
        const size_t s0[2] = {0, 3}, s1[2] = {0, 2}, z[2] = {4, 0};
        tgl_tensor in[2] = {tgl_tensor_contiguous(0, TGL_DTYPE_I32, 2, s0), tgl_tensor_contiguous(0, TGL_DTYPE_F16, 2, s1)};
        tgl_tensor out = tgl_tensor_contiguous(0, TGL_DTYPE_BF16, 2, (size_t[]){0, 5});
        TGT_OK(bs[i], tgl_cat(bs[i], in, 2, 1, &out));
        tgl_tensor zin[1] = {tgl_tensor_contiguous(0, TGL_DTYPE_F32, 2, z)};
        tgl_tensor zout = tgl_tensor_contiguous(0, TGL_DTYPE_F32, 2, z);
        TGT_OK(bs[i], tgl_cat(bs[i], zin, 1, 1, &zout));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_same_dtype),
        cmocka_unit_test(test_random_mixed_dtypes),
        cmocka_unit_test(test_long_list),
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
