/* tgl_masked_select and tgl_nonzero on both backends against a host reference that walks the
 * index space by the ops' definitions, bit for bit (out's and count's whole allocation images,
 * poisoned first, so an element written past count or outside out shows): PyTorch's outputs for
 * small cases; random calls of 0-4 dims (extents 1, primes, 2^k +- 1, past a workgroup;
 * permuted, reversed and gapped strides; broadcast masks; every dtype; edge-value pools with
 * signed zeros, NaN, subnormals and bool bytes other than 1; masks all false, all true, sparse);
 * index spaces past one workgroup and cut into the scan's chunks; a shrunk SSBO limit that cuts
 * the placement into runs and out into windows; the refusals. */
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
    return tgt_pair_setup(state, 0x5e1ec7);
}

static int teardown(void **state)
{
    return tgt_pair_teardown(state);
}

#define POISON 0xA5

/* One call: each operand an offset into its own allocation (out and count POISON first). */
typedef struct call {
    int nonzero;
    tgl_tensor in, mask, out, count;
    size_t in_bytes, mask_bytes, out_bytes, count_bytes;
    const uint8_t *in_init, *mask_init;
} call;

static tgl_status run_on(tgl_backend *b, const call *c, uint8_t *got, uint8_t *got_count)
{
    tgl_ptr x, m = 0, o, k;
    TGT_OK(b, tgl_alloc(b, c->in_bytes, &x));
    TGT_OK(b, tgl_copy_htod(b, x, c->in_init, c->in_bytes));
    if (!c->nonzero) {
        TGT_OK(b, tgl_alloc(b, c->mask_bytes, &m));
        TGT_OK(b, tgl_copy_htod(b, m, c->mask_init, c->mask_bytes));
    }
    TGT_OK(b, tgl_alloc(b, c->out_bytes, &o));
    TGT_OK(b, tgl_alloc(b, c->count_bytes, &k));
    memset(got, POISON, c->out_bytes);
    memset(got_count, POISON, c->count_bytes);
    TGT_OK(b, tgl_copy_htod(b, o, got, c->out_bytes));
    TGT_OK(b, tgl_copy_htod(b, k, got_count, c->count_bytes));
    tgl_tensor in = c->in, mask = c->mask, out = c->out, count = c->count;
    in.data += x;
    mask.data += m;
    out.data += o;
    count.data += k;
    tgl_status st = c->nonzero ? tgl_nonzero(b, &in, &out, &count) : tgl_masked_select(b, &in, &mask, &out, &count);
    TGT_OK(b, tgl_copy_dtoh(b, got, o, c->out_bytes));
    TGT_OK(b, tgl_copy_dtoh(b, got_count, k, c->count_bytes));
    tgl_ptr ps[4] = {x, m, o, k};
    for (int i = 0; i < 4; i++)
        TGT_OK(b, tgl_free(b, ps[i]));
    return st;
}

/* The index space: the broadcast of in's and mask's shapes, or in's. */
static size_t index_space(const call *c, size_t *shape)
{
    size_t ndim = c->in.ndim;
    if (!c->nonzero && c->mask.ndim > ndim)
        ndim = c->mask.ndim;
    for (size_t d = 0; d < ndim; d++) {
        size_t a = d + c->in.ndim >= ndim ? c->in.shape[d + c->in.ndim - ndim] : 1;
        size_t m = !c->nonzero && d + c->mask.ndim >= ndim ? c->mask.shape[d + c->mask.ndim - ndim] : 1;
        shape[d] = a == 1 ? m : a;
    }
    return ndim;
}

/* The element of t (broadcast to ndim dims) at idx, as a byte offset into its allocation. */
static int64_t byte_at(const tgl_tensor *t, size_t ndim, const size_t *idx)
{
    size_t es = tgl_dtype_size(t->dtype);
    int64_t at = (int64_t)(t->data / es);
    for (size_t d = 0; d < t->ndim; d++)
        if (t->shape[d] > 1)
            at += (int64_t)idx[d + ndim - t->ndim] * t->strides[d];
    return at * (int64_t)es;
}

/* in's element is non-zero: a number other than +-0 (NaN too), true, an integer other than 0. */
static int is_nonzero(tgl_dtype dt, const uint8_t *p)
{
    if (dt == TGL_DTYPE_BOOL)
        return p[0] != 0;
    if (dt == TGL_DTYPE_I32) {
        int32_t v;
        memcpy(&v, p, 4);
        return v != 0;
    }
    float v = tgl_cpu_load_f32(dt, p);
    return isnan(v) || v != 0.0f;
}

/* out's and count's allocation images by the definitions. */
static void reference(const call *c, uint8_t *want, uint8_t *want_count)
{
    size_t shape[TGL_MAX_DIMS] = {0}, ndim = index_space(c, shape), n = 1, idx[TGL_MAX_DIMS] = {0};
    for (size_t d = 0; d < ndim; d++)
        n *= shape[d];
    memset(want, POISON, c->out_bytes);
    memset(want_count, POISON, c->count_bytes);
    size_t os = tgl_dtype_size(c->out.dtype);
    int32_t k = 0;
    for (size_t i = 0; i < n; i++) {
        int taken = c->nonzero ? is_nonzero(c->in.dtype, c->in_init + byte_at(&c->in, ndim, idx))
                               : c->mask_init[byte_at(&c->mask, ndim, idx)] != 0;
        if (taken) {
            int64_t row = (int64_t)(c->out.data / os) + k * c->out.strides[0];
            if (c->nonzero) {
                for (size_t d = 0; d < ndim; d++) {
                    int32_t v = (int32_t)idx[d];
                    memcpy(want + (row + (int64_t)d * c->out.strides[1]) * 4, &v, 4);
                }
            } else {
                const uint8_t *e = c->in_init + byte_at(&c->in, ndim, idx);
                memcpy(want + row * (int64_t)os, e, os);
                if (c->out.dtype == TGL_DTYPE_BOOL)
                    want[row] = e[0] != 0;
            }
            k++;
        }
        for (size_t d = ndim; d-- > 0;) {
            if (++idx[d] < shape[d])
                break;
            idx[d] = 0;
        }
    }
    memcpy(want_count + c->count.data, &k, 4);
}

/* GL's buffer window in bytes when a test shrinks it (0: the device's own): an index space of
 * more i32s than fit it is refused (the scan's line). */
static size_t shrunk_window;

static void check(pair *p, tgl_backend *gl, const call *c, const char *what)
{
    uint8_t *want = malloc(c->out_bytes), *got = malloc(c->out_bytes), *wc = malloc(c->count_bytes),
            *gc = malloc(c->count_bytes);
    size_t shape[TGL_MAX_DIMS], ndim = index_space(c, shape), n = 1;
    for (size_t d = 0; d < ndim; d++)
        n *= shape[d];
    reference(c, want, wc);
    const char *fn = c->nonzero ? "nonzero" : "masked_select";
    tgl_backend *bs[2] = {p->cpu, gl};
    for (int j = 0; j < 2; j++) {
        tgl_backend *b = bs[j];
        if (!b)
            continue;
        if (b == gl && shrunk_window && 4 * n > shrunk_window) {
            TGT_EXPECT(b, run_on(b, c, got, gc), TGL_ERR_UNSUPPORTED);
            continue;
        }
        TGT_OK(b, run_on(b, c, got, gc));
        for (size_t i = 0; i < c->count_bytes; i++)
            if (gc[i] != wc[i])
                fail_msg("%s: %s %s %zu-d (%zu elements): %s count byte %zu is 0x%02x, the reference's 0x%02x", what,
                         fn, tgl_dtype_name(c->in.dtype), ndim, n, tgl_backend_name(b), i, gc[i], wc[i]);
        for (size_t i = 0; i < c->out_bytes; i++)
            if (got[i] != want[i])
                fail_msg("%s: %s %s %zu-d (%zu elements): %s out byte %zu is 0x%02x, the reference's 0x%02x", what,
                         fn, tgl_dtype_name(c->in.dtype), ndim, n, tgl_backend_name(b), i, got[i], want[i]);
    }
    free(want);
    free(got);
    free(wc);
    free(gc);
}

static tgl_tensor layout(tgt_rng *r, tgl_dtype dt, size_t ndim, const size_t *shape, size_t *bytes)
{
    return tgt_below(r, 3) ? tgt_random_layout(r, dt, ndim, shape, bytes) : tgt_dense_layout(r, dt, ndim, shape, bytes);
}

/* Bools (or in's elements) taken at a rate the call draws: none, all, sparse, half, and bytes
 * other than 0 and 1. zero_bits: the element that is not taken (0, or -0 for floats at random). */
static void fill_taken(tgt_rng *r, tgl_dtype dt, uint8_t *p, size_t bytes)
{
    size_t es = tgl_dtype_size(dt), mode = tgt_below(r, 5);
    tgt_pool_fill(r, dt, p, bytes);
    for (size_t i = 0; i + es <= bytes; i += es) {
        int keep = mode == 0 ? 0 : mode == 1 ? 1 : mode == 2 ? tgt_below(r, 50) == 0 : mode == 3 ? (int)tgt_below(r, 2) : -1;
        if (keep == 1 && dt == TGL_DTYPE_BOOL)
            p[i] = (uint8_t)(1 + tgt_below(r, 255));
        else if (keep == 1 && !is_nonzero(dt, p + i))
            memset(p + i, 0x11, es); /* 0x11, 0x1111, 0x11111111: non-zero in every dtype */
        else if (keep == 0) {
            memset(p + i, 0, es);
            if (dt != TGL_DTYPE_BOOL && dt != TGL_DTYPE_I32 && tgt_below(r, 2))
                p[i + es - 1] = 0x80; /* -0 */
        }
    }
}

static call random_call(tgt_rng *r, int nonzero, size_t ndim, const size_t *shape)
{
    static const tgl_dtype dts[] = {TGL_DTYPE_F32, TGL_DTYPE_F16, TGL_DTYPE_BF16, TGL_DTYPE_I32, TGL_DTYPE_BOOL};
    call c = {.nonzero = nonzero};
    tgl_dtype dt = dts[tgt_below(r, 5)];
    size_t n = 1, in_ndim[2], in_shape[2][TGL_MAX_DIMS];
    for (size_t d = 0; d < ndim; d++)
        n *= shape[d];
    size_t cap = n + (tgt_below(r, 2) ? 0 : tgt_below(r, 5));
    if (nonzero) {
        c.in = layout(r, dt, ndim, shape, &c.in_bytes);
        c.out = layout(r, TGL_DTYPE_I32, 2, (size_t[]){cap, ndim}, &c.out_bytes);
    } else {
        tgt_broadcast_shapes(r, 2, ndim, shape, in_ndim, in_shape);
        c.in = layout(r, dt, in_ndim[0], in_shape[0], &c.in_bytes);
        c.mask = layout(r, TGL_DTYPE_BOOL, in_ndim[1], in_shape[1], &c.mask_bytes);
        c.out = layout(r, dt, 1, &cap, &c.out_bytes);
    }
    size_t ones[3] = {1, 1, 1};
    c.count = tgt_random_layout(r, TGL_DTYPE_I32, tgt_below(r, 3), ones, &c.count_bytes);
    return c;
}

static void run_random(pair *p, tgl_backend *gl, call *c, const char *what)
{
    tgt_rng *r = &p->rng;
    uint8_t *in = malloc(c->in_bytes), *mask = malloc(c->mask_bytes + 1);
    if (c->nonzero)
        fill_taken(r, c->in.dtype, in, c->in_bytes);
    else {
        tgt_pool_fill(r, c->in.dtype, in, c->in_bytes);
        fill_taken(r, TGL_DTYPE_BOOL, mask, c->mask_bytes);
    }
    c->in_init = in;
    c->mask_init = mask;
    check(p, gl, c, what);
    free(in);
    free(mask);
}

static void random_calls(pair *p, tgl_backend *gl, int count, size_t most, const char *what)
{
    tgt_rng *r = &p->rng;
    for (int i = 0; i < count; i++) {
        size_t ndim = tgt_below(r, 5), shape[TGL_MAX_DIMS] = {0}, n = 1;
        for (size_t d = 0; d < ndim; d++) {
            shape[d] = n * 257 <= most ? tgt_awkward_extent(r, 257) : 1 + tgt_below(r, 2);
            n *= shape[d];
        }
        if (ndim && tgt_below(r, 15) == 0)
            shape[tgt_below(r, ndim)] = 0; /* empty: count 0 */
        call c = random_call(r, i % 2, ndim, shape);
        run_random(p, gl, &c, what);
    }
}

static void test_random_calls(void **state)
{
    pair *p = *state;
    random_calls(p, p->gl, 200, 20000, "random calls");
}

/* Index spaces past one workgroup and cut into several of the scan's chunks. */
static void test_large(void **state)
{
    pair *p = *state;
    tgt_rng *r = &p->rng;
    const size_t shapes[3][3] = {{(1u << 19) + 3, 1, 1}, {3, 1001, 347}, {65537, 2, 3}};
    for (int k = 0; k < 3; k++)
        for (int nonzero = 0; nonzero < 2; nonzero++) {
            call c = random_call(r, nonzero, 3, shapes[k]);
            run_random(p, p->gl, &c, "large");
        }
}

/* A shrunk SSBO limit: runs of the index space and windows of out cut to fit it; an index space
 * past it refused. */
static void test_small_ssbo_limit(void **state)
{
    pair *p = *state;
    if (!p->gl)
        skip();
    tgl_backend *gl = tgt_open(TGL_BACKEND_GL);
    tgl_gl_test_set_limits(gl, 8192, NULL);
    shrunk_window = tgl_gl_max_window_elems(&tgl_gl_of(gl)->limits, 4) * 4;
    random_calls(p, gl, tgt_count(40), 3000, "small SSBO limit");
    for (int nonzero = 0; nonzero < 2; nonzero++) { /* wide rows of out, gapped in: many windows */
        call c = random_call(&p->rng, nonzero, 4, (size_t[]){7, 5, 3, 11});
        run_random(p, gl, &c, "small SSBO limit, 4-d");
    }
    shrunk_window = 0;
    tgl_close(gl);
}

/* PyTorch's outputs: torch.masked_select(x, mask) of a row mask broadcast over x, and
 * torch.nonzero (its documented example, and NaN, -0, a subnormal, true bytes other than 1). */
static void test_known_values(void **state)
{
    pair *p = *state;
    tgl_backend *bs[2] = {p->cpu, p->gl};
    const float x[6] = {1, 2, 3, 4, 5, 6}, diag[16] = {0.6f, 0, 0, 0, 0, 0.4f, 0, 0, 0, 0, 1.2f, 0, 0, 0, 0, -0.4f};
    const float specials[4] = {NAN, -0.0f, 0.0f, 1e-45f};
    const uint8_t mask[3] = {1, 0, 9};
    for (int j = 0; j < 2; j++) {
        tgl_backend *b = bs[j];
        if (!b)
            continue;
        tgl_ptr px, pm, po, pc, pd, ps;
        TGT_OK(b, tgl_alloc(b, sizeof x, &px));
        TGT_OK(b, tgl_alloc(b, sizeof mask, &pm));
        TGT_OK(b, tgl_alloc(b, 32 * 4, &po));
        TGT_OK(b, tgl_alloc(b, 4, &pc));
        TGT_OK(b, tgl_alloc(b, sizeof diag, &pd));
        TGT_OK(b, tgl_alloc(b, sizeof specials, &ps));
        TGT_OK(b, tgl_copy_htod(b, px, x, sizeof x));
        TGT_OK(b, tgl_copy_htod(b, pm, mask, sizeof mask));
        TGT_OK(b, tgl_copy_htod(b, pd, diag, sizeof diag));
        TGT_OK(b, tgl_copy_htod(b, ps, specials, sizeof specials));
        float got[8] = {-1, -1, -1, -1, -1, -1, -1, -1};
        int32_t n = -1, at[8];
        TGT_OK(b, tgl_copy_htod(b, po, got, sizeof got));
        tgl_tensor in = tgl_tensor_contiguous(px, TGL_DTYPE_F32, 2, (size_t[]){2, 3});
        tgl_tensor m = tgl_tensor_contiguous(pm, TGL_DTYPE_BOOL, 1, (size_t[]){3});
        tgl_tensor out = tgl_tensor_contiguous(po, TGL_DTYPE_F32, 1, (size_t[]){6});
        tgl_tensor count = tgl_tensor_contiguous(pc, TGL_DTYPE_I32, 0, NULL);
        TGT_OK(b, tgl_masked_select(b, &in, &m, &out, &count));
        TGT_OK(b, tgl_copy_dtoh(b, got, po, sizeof got));
        TGT_OK(b, tgl_copy_dtoh(b, &n, pc, 4));
        if (n != 4 || got[0] != 1 || got[1] != 3 || got[2] != 4 || got[3] != 6 || got[4] != -1 || got[5] != -1)
            fail_msg("%s: masked_select gave %d: %g %g %g %g %g %g", tgl_backend_name(b), (int)n, (double)got[0],
                     (double)got[1], (double)got[2], (double)got[3], (double)got[4], (double)got[5]);
        tgl_tensor t = tgl_tensor_contiguous(pd, TGL_DTYPE_F32, 2, (size_t[]){4, 4});
        tgl_tensor rows = tgl_tensor_contiguous(po, TGL_DTYPE_I32, 2, (size_t[]){16, 2});
        TGT_OK(b, tgl_nonzero(b, &t, &rows, &count));
        TGT_OK(b, tgl_copy_dtoh(b, at, po, sizeof at));
        TGT_OK(b, tgl_copy_dtoh(b, &n, pc, 4));
        for (int k = 0; k < 8; k++)
            if (n != 4 || at[k] != k / 2)
                fail_msg("%s: nonzero gave %d rows, element %d is %d", tgl_backend_name(b), (int)n, k, (int)at[k]);
        tgl_tensor s = tgl_tensor_contiguous(ps, TGL_DTYPE_F32, 1, (size_t[]){4});
        tgl_tensor col = tgl_tensor_contiguous(po, TGL_DTYPE_I32, 2, (size_t[]){4, 1});
        TGT_OK(b, tgl_nonzero(b, &s, &col, &count));
        TGT_OK(b, tgl_copy_dtoh(b, at, po, 2 * 4));
        TGT_OK(b, tgl_copy_dtoh(b, &n, pc, 4));
        if (n != 2 || at[0] != 0 || at[1] != 3)
            fail_msg("%s: nonzero of NaN, -0, 0, a subnormal gave %d: %d %d", tgl_backend_name(b), (int)n, (int)at[0],
                     (int)at[1]);
        /* a 0-d in: count only (a 0-d false gives 0) */
        tgl_tensor scalar = tgl_tensor_contiguous(ps + 4, TGL_DTYPE_F32, 0, NULL);
        tgl_tensor none = {.data = po, .dtype = TGL_DTYPE_I32, .ndim = 2, .shape = {1, 0}, .strides = {0, 1}};
        TGT_OK(b, tgl_nonzero(b, &scalar, &none, &count));
        TGT_OK(b, tgl_copy_dtoh(b, &n, pc, 4));
        if (n != 0)
            fail_msg("%s: nonzero of a 0-d -0 gave %d", tgl_backend_name(b), (int)n);
        tgl_ptr all[6] = {px, pm, po, pc, pd, ps};
        for (int k = 0; k < 6; k++)
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
        tgl_tensor in = tgl_tensor_contiguous(pa, TGL_DTYPE_F32, 2, (size_t[]){4, 8});
        tgl_tensor mask = tgl_tensor_contiguous(pa + 256, TGL_DTYPE_BOOL, 1, (size_t[]){8});
        tgl_tensor out = tgl_tensor_contiguous(pb, TGL_DTYPE_F32, 1, (size_t[]){32});
        tgl_tensor count = tgl_tensor_contiguous(pb + 1024, TGL_DTYPE_I32, 0, NULL);
        TGT_OK(b, tgl_masked_select(b, &in, &mask, &out, &count));
        TGT_EXPECT(b, tgl_masked_select(b, NULL, &mask, &out, &count), TGL_ERR_INVALID_ARGUMENT);
        TGT_EXPECT(b, tgl_masked_select(b, &in, &mask, &out, NULL), TGL_ERR_INVALID_ARGUMENT);
        tgl_tensor bad = mask;
        bad.dtype = TGL_DTYPE_I32;
        TGT_EXPECT(b, tgl_masked_select(b, &in, &bad, &out, &count), TGL_ERR_UNSUPPORTED);
        bad = tgl_tensor_contiguous(pa + 256, TGL_DTYPE_BOOL, 1, (size_t[]){3});
        TGT_EXPECT(b, tgl_masked_select(b, &in, &bad, &out, &count), TGL_ERR_INVALID_ARGUMENT); /* no broadcast */
        bad = out;
        bad.shape[0] = 31; /* shorter than the 32 that may be taken */
        TGT_EXPECT(b, tgl_masked_select(b, &in, &mask, &bad, &count), TGL_ERR_INVALID_ARGUMENT);
        bad = tgl_tensor_contiguous(pb, TGL_DTYPE_F32, 2, (size_t[]){4, 8});
        TGT_EXPECT(b, tgl_masked_select(b, &in, &mask, &bad, &count), TGL_ERR_INVALID_ARGUMENT); /* not 1-D */
        bad = out;
        bad.dtype = TGL_DTYPE_F16;
        TGT_EXPECT(b, tgl_masked_select(b, &in, &mask, &bad, &count), TGL_ERR_INVALID_ARGUMENT);
        bad = out;
        bad.strides[0] = 0; /* reaches one element 32 times */
        TGT_EXPECT(b, tgl_masked_select(b, &in, &mask, &bad, &count), TGL_ERR_INVALID_ARGUMENT);
        bad = count;
        bad.dtype = TGL_DTYPE_F32;
        TGT_EXPECT(b, tgl_masked_select(b, &in, &mask, &out, &bad), TGL_ERR_INVALID_ARGUMENT);
        bad = tgl_tensor_contiguous(pb + 1024, TGL_DTYPE_I32, 1, (size_t[]){2});
        TGT_EXPECT(b, tgl_masked_select(b, &in, &mask, &out, &bad), TGL_ERR_INVALID_ARGUMENT);
        bad = tgl_tensor_contiguous(pb + 8, TGL_DTYPE_I32, 0, NULL);
        TGT_EXPECT(b, tgl_masked_select(b, &in, &mask, &out, &bad), TGL_ERR_INVALID_ARGUMENT); /* count in out */
        bad = tgl_tensor_contiguous(pa + 64, TGL_DTYPE_F32, 1, (size_t[]){32});
        TGT_EXPECT(b, tgl_masked_select(b, &in, &mask, &bad, &count), TGL_ERR_INVALID_ARGUMENT); /* out on in */
        bad = tgl_tensor_contiguous(pa + 260, TGL_DTYPE_I32, 0, NULL);
        TGT_EXPECT(b, tgl_masked_select(b, &in, &mask, &out, &bad), TGL_ERR_INVALID_ARGUMENT); /* count on mask */
        bad = tgl_tensor_contiguous(pb + 4094, TGL_DTYPE_I32, 0, NULL);
        TGT_EXPECT(b, tgl_masked_select(b, &in, &mask, &out, &bad), TGL_ERR_INVALID_POINTER);
        tgl_tensor q = tgl_tensor_contiguous(pa, TGL_DTYPE_Q8_0, 1, (size_t[]){32});
        TGT_EXPECT(b, tgl_nonzero(b, &q, &out, &count), TGL_ERR_UNSUPPORTED);
        tgl_tensor rows = tgl_tensor_contiguous(pb, TGL_DTYPE_I32, 2, (size_t[]){32, 2});
        TGT_OK(b, tgl_nonzero(b, &in, &rows, &count));
        bad = rows;
        bad.dtype = TGL_DTYPE_F32;
        TGT_EXPECT(b, tgl_nonzero(b, &in, &bad, &count), TGL_ERR_INVALID_ARGUMENT);
        bad = tgl_tensor_contiguous(pb, TGL_DTYPE_I32, 2, (size_t[]){32, 3});
        TGT_EXPECT(b, tgl_nonzero(b, &in, &bad, &count), TGL_ERR_INVALID_ARGUMENT); /* columns */
        bad = tgl_tensor_contiguous(pb, TGL_DTYPE_I32, 2, (size_t[]){31, 2});
        TGT_EXPECT(b, tgl_nonzero(b, &in, &bad, &count), TGL_ERR_INVALID_ARGUMENT); /* rows */
        bad = tgl_tensor_contiguous(pb, TGL_DTYPE_I32, 1, (size_t[]){64});
        TGT_EXPECT(b, tgl_nonzero(b, &in, &bad, &count), TGL_ERR_INVALID_ARGUMENT); /* not 2-D */
        TGT_EXPECT(b, tgl_nonzero(b, &in, &rows, &(tgl_tensor){0}), TGL_ERR_INVALID_ARGUMENT); /* an f32 count */
        tgl_tensor huge = {.data = pa, .dtype = TGL_DTYPE_BOOL, .ndim = 2, .shape = {1u << 16, 1u << 15}};
        tgl_tensor huge_out = {.data = pb, .dtype = TGL_DTYPE_I32, .ndim = 2, .shape = {(size_t)1 << 31, 2}};
        TGT_EXPECT(b, tgl_nonzero(b, &huge, &huge_out, &count), TGL_ERR_INVALID_ARGUMENT); /* 2^31 elements */
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
        cmocka_unit_test(test_small_ssbo_limit),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
