/* tgl_cumsum, tgl_cumprod, tgl_cummax and tgl_cummin on GL compared with the CPU oracle, and the
 * oracle with a host reference that walks each line by the ops' definitions: PyTorch's outputs
 * for small cases on both backends; random calls of 1-4 dims (extents 1, primes, 2^k +- 1, past
 * a workgroup; permuted, reversed and gapped strides; every dtype pair the ops take; in place;
 * the bytes around out's and the indices' elements poisoned); lines long enough to be cut into
 * chunks, and into more than the driver's chunk cap; a shrunk SSBO limit; the refusals.
 * cummax and cummin (edge-value pools: NaN, signed zeros, infinities, subnormals, integer limits)
 * and every i32 and bool count are compared bit for bit. Float sums are held to 200 roundings of
 * the prefix's sum of magnitudes (the kernel's bound, docs/ops.md, is at most 120 at these
 * lengths; one element lost or counted twice is about 2^24 / len of them: thousands in the random
 * calls), products to one rounding per factor, each plus
 * out's own rounding; NaN and infinities must match in kind. */
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
    return tgt_pair_setup(state, 0x5ca9);
}

static int teardown(void **state)
{
    return tgt_pair_teardown(state);
}

#define POISON 0xA5

enum { CUMSUM, CUMPROD, CUMMAX, CUMMIN };
static const char *const names[] = {"cumsum", "cumprod", "cummax", "cummin"};

/* One call: in, out and the indices each an offset into its own allocation (out and indices
 * POISON first); in place when out is in (then out_bytes is in_bytes and out_init in's). */
typedef struct call {
    int op, in_place, with_idx;
    size_t axis;
    tgl_tensor in, out, idx;
    size_t in_bytes, out_bytes, idx_bytes;
    const uint8_t *in_init;
} call;

static tgl_status invoke(tgl_backend *b, int op, const tgl_tensor *in, size_t axis, const tgl_tensor *out,
                         const tgl_tensor *idx)
{
    switch (op) {
    case CUMSUM:
        return tgl_cumsum(b, in, axis, out);
    case CUMPROD:
        return tgl_cumprod(b, in, axis, out);
    case CUMMAX:
        return tgl_cummax(b, in, axis, out, idx);
    default:
        return tgl_cummin(b, in, axis, out, idx);
    }
}

/* Runs c on b: out's allocation image into got (in's when in place), the indices' into got_idx. */
static tgl_status run_on(tgl_backend *b, const call *c, uint8_t *got, uint8_t *got_idx)
{
    tgl_ptr x, d = 0, k = 0;
    TGT_OK(b, tgl_alloc(b, c->in_bytes ? c->in_bytes : 1, &x));
    TGT_OK(b, tgl_copy_htod(b, x, c->in_init, c->in_bytes));
    if (!c->in_place) {
        TGT_OK(b, tgl_alloc(b, c->out_bytes ? c->out_bytes : 1, &d));
        memset(got, POISON, c->out_bytes);
        TGT_OK(b, tgl_copy_htod(b, d, got, c->out_bytes));
    }
    if (c->with_idx) {
        TGT_OK(b, tgl_alloc(b, c->idx_bytes ? c->idx_bytes : 1, &k));
        memset(got_idx, POISON, c->idx_bytes);
        TGT_OK(b, tgl_copy_htod(b, k, got_idx, c->idx_bytes));
    }
    tgl_tensor t = c->in, o = c->out, i = c->idx;
    t.data += x;
    o.data += c->in_place ? x : d;
    i.data += k;
    tgl_status st = invoke(b, c->op, &t, c->axis, &o, c->with_idx ? &i : NULL);
    TGT_OK(b, tgl_copy_dtoh(b, got, c->in_place ? x : d, c->out_bytes));
    if (c->with_idx) {
        TGT_OK(b, tgl_copy_dtoh(b, got_idx, k, c->idx_bytes));
        TGT_OK(b, tgl_free(b, k));
    }
    TGT_OK(b, tgl_free(b, x));
    if (!c->in_place)
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

static double load(tgl_dtype dt, const uint8_t *p)
{
    if (dt == TGL_DTYPE_I32) {
        int32_t v;
        memcpy(&v, p, 4);
        return v;
    }
    if (dt == TGL_DTYPE_BOOL)
        return p[0] != 0;
    return tgl_cpu_load_f32(dt, p);
}

/* The host reference: out's (and the indices') allocation images, and for float sums and
 * products each output's error scale (the prefix's sum of magnitudes, or the product's own
 * magnitude) at its position in out's allocation. */
static void reference(const call *c, uint8_t *want, uint8_t *want_idx, double *scale)
{
    const tgl_tensor *in = &c->in, *o = &c->out;
    size_t es = tgl_dtype_size(in->dtype), os = tgl_dtype_size(o->dtype), len = in->shape[c->axis];
    if (c->in_place)
        memcpy(want, c->in_init, c->in_bytes);
    else
        memset(want, POISON, c->out_bytes);
    if (c->with_idx)
        memset(want_idx, POISON, c->idx_bytes);
    size_t lines = len ? tgl_tensor_numel(in) / len : 0, idx[TGL_MAX_DIMS] = {0};
    for (size_t l = 0; l < lines; l++) {
        double acc = 0.0, mag = 0.0;
        uint32_t iacc = c->op == CUMPROD ? 1u : 0u;
        int32_t at = 0;
        if (c->op == CUMPROD)
            acc = 1.0;
        for (size_t k = 0; k < len; k++) {
            idx[c->axis] = k;
            const uint8_t *e = c->in_init + element_of(in, idx) * (int64_t)es;
            int64_t oat = element_of(o, idx);
            uint8_t *d = want + oat * (int64_t)os;
            double v = load(in->dtype, e);
            if (c->op == CUMMAX || c->op == CUMMIN) {
                if (k == 0 || isnan(v) || (!isnan(acc) && (c->op == CUMMAX ? v >= acc : v <= acc))) {
                    acc = v;
                    at = (int32_t)k;
                }
                size_t bidx[TGL_MAX_DIMS];
                memcpy(bidx, idx, sizeof bidx);
                bidx[c->axis] = (size_t)at;
                memcpy(d, c->in_init + element_of(in, bidx) * (int64_t)es, es);
                if (c->with_idx)
                    memcpy(want_idx + element_of(&c->idx, idx) * 4, &at, 4);
            } else if (in->dtype == TGL_DTYPE_I32 || in->dtype == TGL_DTYPE_BOOL) {
                uint32_t u = (uint32_t)(int32_t)v;
                iacc = c->op == CUMPROD ? iacc * u : iacc + u;
                memcpy(d, &iacc, 4);
            } else {
                acc = c->op == CUMPROD ? acc * v : acc + v;
                mag += fabs(v);
                tgl_cpu_store_f32(o->dtype, (float)acc, d);
                scale[oat] = c->op == CUMPROD ? fabs(acc) * (double)(k + 3) : mag * 200.0;
            }
        }
        for (size_t d = in->ndim; d-- > 0;) { /* the next line: carry through the other dims */
            if (d == c->axis)
                continue;
            if (++idx[d] < in->shape[d])
                break;
            idx[d] = 0;
        }
    }
}

/* A float out element of GL against the CPU's: NaN and infinities alike, finite ones within
 * the error scale's roundings plus out's own rounding. */
static int float_close(tgl_dtype dt, const uint8_t *g, const uint8_t *w, double scale)
{
    double a = tgl_cpu_load_f32(dt, g), b = tgl_cpu_load_f32(dt, w);
    if (isnan(b) || isinf(b))
        return isnan(b) ? isnan(a) : a == b;
    double ulp = dt == TGL_DTYPE_F32 ? 0x1p-23 : dt == TGL_DTYPE_F16 ? 0x1p-10 : 0x1p-7;
    double tiny = dt == TGL_DTYPE_F16 ? 0x1p-24 : 0x1p-126 * 1e3; /* f16's subnormal step; flushed f32 */
    return fabs(a - b) <= scale * 0x1p-24 + ulp * fabs(b) + tiny;
}

/* The bytes one line of t spans (the GL driver never cuts a line across windows). */
static size_t line_bytes(const tgl_tensor *t, size_t axis)
{
    int64_t s = t->strides[axis] < 0 ? -t->strides[axis] : t->strides[axis];
    return ((size_t)s * (t->shape[axis] - 1) + 1) * tgl_dtype_size(t->dtype);
}

/* GL's buffer window in bytes when a test shrinks it (0: the device's own): a line past it is
 * refused with TGL_ERR_UNSUPPORTED. */
static size_t shrunk_window;

static void check(pair *p, tgl_backend *gl, const call *c, const char *what)
{
    size_t ob = c->out_bytes + 1, ib = c->idx_bytes + 1;
    uint8_t *w = malloc(ob), *r = malloc(ob), *g = malloc(ob), *wi = malloc(ib), *ri = malloc(ib), *gi = malloc(ib);
    size_t os = tgl_dtype_size(c->out.dtype), n_out = c->out_bytes / os + 1;
    double *scale = calloc(n_out, sizeof *scale);
    reference(c, r, ri, scale);
    const char *dn = tgl_dtype_name(c->in.dtype), *on = tgl_dtype_name(c->out.dtype);
    TGT_OK(p->cpu, run_on(p->cpu, c, w, wi));
    for (size_t i = 0; i < c->out_bytes; i++)
        if (w[i] != r[i])
            fail_msg("%s: %s %s->%s %zu-d along %zu: cpu byte %zu is 0x%02x, the reference's 0x%02x", what,
                     names[c->op], dn, on, c->in.ndim, c->axis, i, w[i], r[i]);
    for (size_t i = 0; c->with_idx && i < c->idx_bytes; i++)
        if (wi[i] != ri[i])
            fail_msg("%s: %s %s: cpu index byte %zu is 0x%02x, the reference's 0x%02x", what, names[c->op], dn, i,
                     wi[i], ri[i]);
    size_t span = 0;
    if (tgl_tensor_numel(&c->in)) {
        span = line_bytes(&c->in, c->axis);
        span = line_bytes(&c->out, c->axis) > span ? line_bytes(&c->out, c->axis) : span;
        if (c->with_idx && line_bytes(&c->idx, c->axis) > span)
            span = line_bytes(&c->idx, c->axis);
    }
    if (gl && shrunk_window && span > shrunk_window) {
        TGT_EXPECT(gl, run_on(gl, c, g, gi), TGL_ERR_UNSUPPORTED);
        gl = NULL;
    }
    if (gl) {
        TGT_OK(gl, run_on(gl, c, g, gi));
        int floats = (c->op == CUMSUM || c->op == CUMPROD) && c->out.dtype != TGL_DTYPE_I32;
        for (size_t e = 0; e < c->out_bytes / os; e++) {
            const uint8_t *ge = g + e * os, *we = w + e * os;
            if (memcmp(ge, we, os) == 0)
                continue;
            if (!floats || scale[e] == 0.0 || !float_close(c->out.dtype, ge, we, scale[e])) {
                fail_msg("%s: %s %s->%s %zu-d along %zu (len %zu): gl element %zu of out's allocation is %.9g, "
                         "cpu's %.9g (error scale %g)",
                         what, names[c->op], dn, on, c->in.ndim, c->axis, c->in.shape[c->axis], e,
                         load(c->out.dtype, ge), load(c->out.dtype, we), scale[e]);
            }
        }
        for (size_t i = 0; c->with_idx && i < c->idx_bytes; i++)
            if (gi[i] != wi[i])
                fail_msg("%s: %s %s %zu-d along %zu (len %zu): gl index byte %zu is 0x%02x, cpu's 0x%02x", what,
                         names[c->op], dn, c->in.ndim, c->axis, c->in.shape[c->axis], i, gi[i], wi[i]);
    }
    free(w);
    free(r);
    free(g);
    free(wi);
    free(ri);
    free(gi);
    free(scale);
}

/* Float elements for the sums and products: values of both signs up to 100 * spread (for
 * products, exp(+-spread / 2): no drift, so that long lines stay far from overflow), with NaN,
 * infinities, signed zeros and subnormals one time in special_every. */
static void fill_floats(tgt_rng *r, int op, tgl_dtype dt, uint8_t *p, size_t bytes, float spread,
                        size_t special_every)
{
    size_t es = tgl_dtype_size(dt);
    static const float special[] = {NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 1e-40f, -3e-39f};
    for (size_t k = 0; k + es <= bytes; k += es) {
        float v;
        if (tgt_below(r, special_every) == 0) /* no subnormal factor: a device that flushes it gets
                                                 0 (0 * inf NaN), and GL may */
            v = special[tgt_below(r, op == CUMPROD ? 5 : 7)];
        else if (op == CUMPROD)
            v = expf(tgt_uniform(r, -0.5f, 0.5f) * spread) * (tgt_below(r, 2) ? 1.0f : -1.0f);
        else
            v = tgt_uniform(r, -100.0f, 100.0f) * spread;
        tgl_cpu_store_f32(dt, v, p + k);
    }
}

static const tgl_dtype floats[] = {TGL_DTYPE_F32, TGL_DTYPE_F16, TGL_DTYPE_BF16};

/* A random call of op over `shape` along axis: in's dtype one the op takes, out's one it writes. */
static call random_call(tgt_rng *r, int op, size_t ndim, const size_t *shape, size_t axis)
{
    call c = {.op = op, .axis = axis};
    tgl_dtype in, out;
    int pairs = op == CUMMAX || op == CUMMIN;
    size_t pick = tgt_below(r, pairs ? 4 : 5);
    in = pick < 3 ? floats[pick] : pick == 3 ? TGL_DTYPE_I32 : TGL_DTYPE_BOOL;
    out = pairs ? in : pick < 3 ? floats[tgt_below(r, 3)] : TGL_DTYPE_I32;
    c.in = tgt_below(r, 3) ? tgt_random_layout(r, in, ndim, shape, &c.in_bytes)
                           : tgt_dense_layout(r, in, ndim, shape, &c.in_bytes);
    c.in_place = in == out && tgt_below(r, 4) == 0;
    if (c.in_place) {
        c.out = c.in;
        c.out_bytes = c.in_bytes;
    } else
        c.out = tgt_below(r, 2) ? tgt_random_layout(r, out, ndim, shape, &c.out_bytes)
                                : tgt_dense_layout(r, out, ndim, shape, &c.out_bytes);
    c.with_idx = pairs && tgt_below(r, 5) != 0;
    if (c.with_idx)
        c.idx = tgt_below(r, 2) ? tgt_random_layout(r, TGL_DTYPE_I32, ndim, shape, &c.idx_bytes)
                                : tgt_dense_layout(r, TGL_DTYPE_I32, ndim, shape, &c.idx_bytes);
    return c;
}

/* c with random elements (float sums and products: fill_floats's, the rest the edge pools). */
static void run_random(pair *p, tgl_backend *gl, call *c, float spread, size_t special_every, const char *what)
{
    tgt_rng *r = &p->rng;
    uint8_t *init = malloc(c->in_bytes + 1);
    int arith_float = (c->op == CUMSUM || c->op == CUMPROD) && c->in.dtype <= TGL_DTYPE_BF16;
    if (arith_float)
        fill_floats(r, c->op, c->in.dtype, init, c->in_bytes, spread, special_every);
    else
        tgt_pool_fill(r, c->in.dtype, init, c->in_bytes);
    c->in_init = init;
    check(p, gl, c, what);
    free(init);
}

static void random_calls(pair *p, tgl_backend *gl, int count, const char *what)
{
    tgt_rng *r = &p->rng;
    for (int i = 0; i < count; i++) {
        size_t ndim = 1 + tgt_below(r, 4), shape[TGL_MAX_DIMS] = {0}, n = 1;
        for (size_t d = 0; d < ndim; d++) {
            shape[d] = n * 257 <= 20000 ? tgt_awkward_extent(r, 257) : 1 + tgt_below(r, 2);
            n *= shape[d];
        }
        if (tgt_below(r, 15) == 0)
            shape[tgt_below(r, ndim)] = 0; /* empty */
        call c = random_call(r, i % 4, ndim, shape, tgt_below(r, ndim));
        run_random(p, gl, &c, 1.0f, 40, what);
    }
}

static void test_random_calls(void **state)
{
    pair *p = *state;
    random_calls(p, p->gl, 200, "random calls");
}

/* Lines long enough for several chunks, a few lines of them, every op; the longest again with 8
 * elements per invocation, staged (the GPUs' variant), which on llvmpipe's 8-wide workgroups
 * makes more chunks than the GL driver takes, so that its chunks grow. */
static void test_long_lines(void **state)
{
    pair *p = *state;
    tgt_rng *r = &p->rng;
    tgl_backend *narrow = p->gl ? tgt_open(TGL_BACKEND_GL) : NULL;
    if (narrow) { /* the GPU profiles' variant (TGL_DEBUG=1 refuses one tensorgl kernels does not list) */
        tgl_gl_of(narrow)->limits.scan_items = 8;
        tgl_gl_of(narrow)->limits.scan_staged = 1;
    }
    const size_t lens[] = {4097, 30011, 1u << 16, (1u << 19) + 3, (1u << 19) + 3};
    for (int op = 0; op < 4; op++)
        for (size_t k = 0; k < 5; k++) {
            size_t lines = k < 2 ? 3 : 1, shape[2] = {lines, lens[k]};
            int transposed = k == 1; /* the line is the slow dim */
            size_t sh[2] = {transposed ? shape[1] : shape[0], transposed ? shape[0] : shape[1]};
            call c = random_call(r, op, 2, sh, transposed ? 0 : 1);
            /* sums of 2^19 stay within f16 */
            run_random(p, k == 4 ? narrow : p->gl, &c, 0.1f, 40000, "long lines");
        }
    tgl_close(narrow);
}

/* Lines of lines x len 32-bit elements along the last dim, pitch elements apart, in's first at
 * in_front elements into its allocation and out's at out_front (or in place). */
static call pitched_call(tgt_rng *r, int op, tgl_dtype dt, size_t lines, size_t len, size_t pitch, size_t in_front,
                         size_t out_front, int in_place)
{
    call c = {.op = op, .axis = 1, .in_place = in_place};
    c.with_idx = (op == CUMMAX || op == CUMMIN) && tgt_below(r, 3) != 0;
    size_t shape[2] = {lines, len}, span = (lines - 1) * pitch + len;
    c.in = tgl_tensor_contiguous(in_front * 4, dt, 2, shape);
    c.in.strides[0] = (int64_t)pitch;
    c.in_bytes = (in_front + span + tgt_below(r, 5)) * 4;
    c.out = c.in;
    c.out_bytes = c.in_bytes;
    if (!in_place) {
        c.out.data = out_front * 4;
        c.out_bytes = (out_front + span + tgt_below(r, 5)) * 4;
    }
    if (c.with_idx)
        c.idx = tgt_dense_layout(r, TGL_DTYPE_I32, 2, shape, &c.idx_bytes);
    return c;
}

/* f32 and i32 lines of a multiple of 4 elements that start on 16 bytes, which GL's scans read
 * and write 4 elements at a time, and the same lines one element off that alignment or with a
 * pitch off it, which they do not: every op, in place or not; then lines under an 8 KiB SSBO
 * limit, cut into boxes, one layout with its lines in reverse order. */
static void test_quad_lines(void **state)
{
    pair *p = *state;
    tgt_rng *r = &p->rng;
    const size_t shapes[][2] = {{1, 4}, {3, 8}, {5, 60}, {2, 4096}, {1, 1u << 16}, {2, 20004}};
    const tgl_dtype dts[2] = {TGL_DTYPE_F32, TGL_DTYPE_I32};
    for (int op = 0; op < 4; op++)
        for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
            for (int form = 0; form < 4; form++) {
                /* 0 aligned, dense; 1 aligned, a gap of 4 between lines, out in place; 2 in one
                 * element off; 3 a pitch of len + 1 */
                size_t lines = shapes[s][0], len = shapes[s][1];
                size_t pitch = form == 1 ? len + 4 : form == 3 ? len + 1 : len;
                size_t in_front = form == 2 ? 1 : 4 * tgt_below(r, 3), out_front = 4 * tgt_below(r, 3);
                call c = pitched_call(r, op, dts[tgt_below(r, 2)], lines, len, pitch, in_front, out_front, form == 1);
                run_random(p, p->gl, &c, 0.1f, 40000, "32-bit lines");
            }
    if (!p->gl)
        return;
    /* under an 8 KiB SSBO limit, cut into boxes of whole lines (each box's windows start at a
     * line, so on 16 bytes), reversed along the lines' dim for some */
    tgl_backend *gl = tgt_open(TGL_BACKEND_GL);
    tgl_gl_test_set_limits(gl, 8192, NULL);
    const size_t small[][2] = {{40, 64}, {7, 1024}, {300, 4}};
    for (int op = 0; op < 4; op++)
        for (size_t s = 0; s < sizeof small / sizeof *small; s++) {
            size_t lines = small[s][0], len = small[s][1];
            call c = pitched_call(r, op, dts[tgt_below(r, 2)], lines, len, len + 4 * tgt_below(r, 2), 0,
                                  4 * tgt_below(r, 3), tgt_below(r, 3) == 0);
            if (s == 1) { /* the lines' dim walked backwards: line 0 last in memory */
                int64_t pitch = c.in.strides[0];
                c.in.data += (size_t)pitch * (lines - 1) * 4;
                c.in.strides[0] = -pitch;
                if (c.in_place)
                    c.out = c.in;
            }
            run_random(p, gl, &c, 0.1f, 40000, "32-bit lines, 8 KiB limit");
        }
    tgl_close(gl);
}

/* GL's one-pass scans (the profile's scan_one_pass, NVIDIA's): lines of several chunks read 4
 * elements a load, every op, one line and many, dense and with gaps (in place: two passes), chunks
 * of up to 8 tiles and of one (several super-blocks of chunks a line); again and again
 * (each call leaves the ticket counters at zero for the next), across the epoch's wrap, and
 * under an 8 KiB SSBO limit (several boxes, so several epochs a call). */
static void test_one_pass(void **state)
{
    pair *p = *state;
    if (!p->gl)
        skip();
    tgt_rng *r = &p->rng;
    tgl_backend *gls[2] = {tgt_open(TGL_BACKEND_GL), tgt_open(TGL_BACKEND_GL)};
    tgl_gl_test_set_limits(gls[1], 8192, NULL);
    for (int g = 0; g < 2; g++) {
        tgl_gl_limits *l = &tgl_gl_of(gls[g])->limits;
        l->scan_one_pass = 8; /* chunks of any tile count */
        tgl_gl_profile_mark(l, TGL_GL_TRAIT_scan_one_pass, TGL_GL_FROM_TEST);
    }
    const size_t shapes[][2] = {{1, 4096}, {3, 20004}, {2, 1u << 16}, {1, (1u << 19) + 4}, {17, 8192}};
    const tgl_dtype dts[2] = {TGL_DTYPE_F32, TGL_DTYPE_I32};
    uint32_t *epoch = &tgl_gl_of(gls[0])->scan_epoch, before = *epoch;
    /* a device whose SSBO offsets need not be 16-byte aligned never reads quads (softpipe) */
    int quads = tgl_gl_of(gls[0])->limits.ssbo_align % 16 == 0;
    /* chunks of up to 8 tiles, then of one (on llvmpipe 257 chunks of the line of 2^19 + 4, then
     * 256 of each line of 2^16: 4 super-blocks of 64 a line, their chunks' totals read over
     * several rounds of its 8 lanes) */
    for (uint32_t most = 8; most; most /= 8) {
        tgl_gl_of(gls[0])->limits.scan_one_pass = most;
        for (int op = 0; op < 4; op++)
            for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
                for (int form = 0; form < 2; form++) { /* 0 dense; 1 a gap of 4 between lines, in place */
                    size_t lines = shapes[s][0], len = shapes[s][1];
                    call c = pitched_call(r, op, dts[tgt_below(r, 2)], lines, len, form ? len + 4 : len,
                                          4 * tgt_below(r, 3), 4 * tgt_below(r, 3), form == 1);
                    run_random(p, gls[0], &c, 0.1f, 40000, most == 8 ? "one pass" : "one pass, one-tile chunks");
                }
    }
    tgl_gl_of(gls[0])->limits.scan_one_pass = 8;
    assert_true(!quads || *epoch != before); /* the one-pass kernel ran */
    *epoch = UINT32_MAX - 2;
    for (int i = 0; i < 6; i++) {
        call c = pitched_call(r, i % 4, dts[i % 2], 2, 8192, 8192, 0, 0, 0);
        run_random(p, gls[0], &c, 0.1f, 40000, "one pass, the epoch wrapping");
    }
    assert_true(!quads || *epoch < 8);
    const size_t small[][2] = {{40, 1024}, {7, 1024}, {3, 1536}};
    for (int op = 0; op < 4; op++)
        for (size_t s = 0; s < sizeof small / sizeof *small; s++) {
            call c = pitched_call(r, op, dts[tgt_below(r, 2)], small[s][0], small[s][1], small[s][1], 0,
                                  4 * tgt_below(r, 3), tgt_below(r, 3) == 0);
            run_random(p, gls[1], &c, 0.1f, 40000, "one pass, 8 KiB limit");
        }
    tgl_close(gls[0]);
    tgl_close(gls[1]);
}

/* A shrunk SSBO limit: out's index space cut into boxes whose lines fit. */
static void test_small_ssbo_limit(void **state)
{
    pair *p = *state;
    if (!p->gl)
        skip();
    tgl_backend *gl = tgt_open(TGL_BACKEND_GL);
    tgl_gl_test_set_limits(gl, 8192, NULL);
    shrunk_window = tgl_gl_max_window_elems(&tgl_gl_of(gl)->limits, 4) * 4;
    random_calls(p, gl, tgt_count(30), "small SSBO limit");
    shrunk_window = 0;
    /* a line past the window: refused, not cut */
    tgl_ptr x, y;
    TGT_OK(gl, tgl_alloc(gl, 4 * 4096, &x));
    TGT_OK(gl, tgl_alloc(gl, 4 * 4096, &y));
    tgl_tensor a = tgl_tensor_contiguous(x, TGL_DTYPE_F32, 1, (size_t[]){4096});
    tgl_tensor o = tgl_tensor_contiguous(y, TGL_DTYPE_F32, 1, (size_t[]){4096});
    TGT_EXPECT(gl, tgl_cumsum(gl, &a, 0, &o), TGL_ERR_UNSUPPORTED);
    TGT_OK(gl, tgl_free(gl, x));
    TGT_OK(gl, tgl_free(gl, y));
    tgl_close(gl);
}

/* PyTorch's outputs (torch.cummax / cummin / cumsum / cumprod of these inputs). */
static void test_known_values(void **state)
{
    pair *p = *state;
    tgl_backend *bs[2] = {p->cpu, p->gl};
    const float x[7] = {1.0f, 3.0f, 3.0f, NAN, 2.0f, NAN, 5.0f};
    const int32_t xi[5] = {3, 1, 1, 2, 1};
    const uint8_t xb[4] = {1, 0, 7, 1};
    const float xp[5] = {2.0f, -0.5f, 4.0f, 0.0f, INFINITY};
    for (int j = 0; j < 2; j++) {
        tgl_backend *b = bs[j];
        if (!b)
            continue;
        tgl_ptr px, pv, pi, pxi, pxb, pxp;
        TGT_OK(b, tgl_alloc(b, sizeof x, &px));
        TGT_OK(b, tgl_alloc(b, sizeof x, &pv));
        TGT_OK(b, tgl_alloc(b, 7 * 4, &pi));
        TGT_OK(b, tgl_alloc(b, sizeof xi, &pxi));
        TGT_OK(b, tgl_alloc(b, sizeof xb, &pxb));
        TGT_OK(b, tgl_alloc(b, sizeof xp, &pxp));
        TGT_OK(b, tgl_copy_htod(b, px, x, sizeof x));
        TGT_OK(b, tgl_copy_htod(b, pxi, xi, sizeof xi));
        TGT_OK(b, tgl_copy_htod(b, pxb, xb, sizeof xb));
        TGT_OK(b, tgl_copy_htod(b, pxp, xp, sizeof xp));
        tgl_tensor in = tgl_tensor_contiguous(px, TGL_DTYPE_F32, 1, (size_t[]){7});
        tgl_tensor v = tgl_tensor_contiguous(pv, TGL_DTYPE_F32, 1, (size_t[]){7});
        tgl_tensor ix = tgl_tensor_contiguous(pi, TGL_DTYPE_I32, 1, (size_t[]){7});
        float got[7];
        int32_t at[7];
        TGT_OK(b, tgl_cummax(b, &in, 0, &v, &ix));
        TGT_OK(b, tgl_copy_dtoh(b, got, pv, sizeof got));
        TGT_OK(b, tgl_copy_dtoh(b, at, pi, sizeof at));
        const int32_t max_at[7] = {0, 1, 2, 3, 3, 5, 5}, min_at[7] = {0, 0, 0, 3, 3, 5, 5};
        for (int k = 0; k < 7; k++)
            if (at[k] != max_at[k] || (k < 3 ? got[k] != (k ? 3.0f : 1.0f) : !isnan(got[k])))
                fail_msg("%s: cummax[%d] is %g at %d", tgl_backend_name(b), k, (double)got[k], (int)at[k]);
        TGT_OK(b, tgl_cummin(b, &in, 0, &v, &ix));
        TGT_OK(b, tgl_copy_dtoh(b, got, pv, sizeof got));
        TGT_OK(b, tgl_copy_dtoh(b, at, pi, sizeof at));
        for (int k = 0; k < 7; k++)
            if (at[k] != min_at[k] || (k < 3 ? got[k] != 1.0f : !isnan(got[k])))
                fail_msg("%s: cummin[%d] is %g at %d", tgl_backend_name(b), k, (double)got[k], (int)at[k]);
        tgl_tensor ti = tgl_tensor_contiguous(pxi, TGL_DTYPE_I32, 1, (size_t[]){5});
        tgl_tensor vi = tgl_tensor_contiguous(pv, TGL_DTYPE_I32, 1, (size_t[]){5});
        tgl_tensor ii = tgl_tensor_contiguous(pi, TGL_DTYPE_I32, 1, (size_t[]){5});
        int32_t gi[5];
        TGT_OK(b, tgl_cummin(b, &ti, 0, &vi, &ii));
        TGT_OK(b, tgl_copy_dtoh(b, gi, pv, sizeof gi));
        TGT_OK(b, tgl_copy_dtoh(b, at, pi, 5 * 4));
        const int32_t imin[5] = {3, 1, 1, 1, 1}, imin_at[5] = {0, 1, 2, 2, 4};
        for (int k = 0; k < 5; k++)
            if (gi[k] != imin[k] || at[k] != imin_at[k])
                fail_msg("%s: i32 cummin[%d] is %d at %d", tgl_backend_name(b), k, (int)gi[k], (int)at[k]);
        tgl_tensor tb = tgl_tensor_contiguous(pxb, TGL_DTYPE_BOOL, 1, (size_t[]){4});
        tgl_tensor cb = tgl_tensor_contiguous(pv, TGL_DTYPE_I32, 1, (size_t[]){4});
        TGT_OK(b, tgl_cumsum(b, &tb, 0, &cb));
        TGT_OK(b, tgl_copy_dtoh(b, gi, pv, 4 * 4));
        if (gi[0] != 1 || gi[1] != 1 || gi[2] != 2 || gi[3] != 3)
            fail_msg("%s: bool cumsum is %d %d %d %d", tgl_backend_name(b), (int)gi[0], (int)gi[1], (int)gi[2],
                     (int)gi[3]);
        tgl_tensor tp = tgl_tensor_contiguous(pxp, TGL_DTYPE_F32, 1, (size_t[]){5});
        tgl_tensor vp = tgl_tensor_contiguous(pv, TGL_DTYPE_F32, 1, (size_t[]){5});
        TGT_OK(b, tgl_cumprod(b, &tp, 0, &vp));
        TGT_OK(b, tgl_copy_dtoh(b, got, pv, 5 * 4));
        if (got[0] != 2.0f || got[1] != -1.0f || got[2] != -4.0f || !(got[3] == 0.0f && signbit(got[3])) ||
            !isnan(got[4]))
            fail_msg("%s: cumprod is %g %g %g %g %g", tgl_backend_name(b), (double)got[0], (double)got[1],
                     (double)got[2], (double)got[3], (double)got[4]);
        TGT_OK(b, tgl_cumsum(b, &tp, 0, &vp));
        TGT_OK(b, tgl_copy_dtoh(b, got, pv, 5 * 4));
        if (got[0] != 2.0f || got[1] != 1.5f || got[2] != 5.5f || got[3] != 5.5f || !isinf(got[4]))
            fail_msg("%s: cumsum is %g %g %g %g %g", tgl_backend_name(b), (double)got[0], (double)got[1],
                     (double)got[2], (double)got[3], (double)got[4]);
        tgl_ptr ps[6] = {px, pv, pi, pxi, pxb, pxp};
        for (int k = 0; k < 6; k++)
            TGT_OK(b, tgl_free(b, ps[k]));
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
        tgl_ptr x, y, z;
        TGT_OK(b, tgl_alloc(b, 4096, &x));
        TGT_OK(b, tgl_alloc(b, 4096, &y));
        TGT_OK(b, tgl_alloc(b, 4096, &z));
        tgl_tensor in = tgl_tensor_contiguous(x, TGL_DTYPE_F32, 2, (size_t[]){4, 8});
        tgl_tensor out = tgl_tensor_contiguous(y, TGL_DTYPE_F32, 2, (size_t[]){4, 8});
        tgl_tensor ix = tgl_tensor_contiguous(z, TGL_DTYPE_I32, 2, (size_t[]){4, 8});
        TGT_EXPECT(b, tgl_cumsum(b, NULL, 0, &out), TGL_ERR_INVALID_ARGUMENT);
        TGT_EXPECT(b, tgl_cumsum(b, &in, 0, NULL), TGL_ERR_INVALID_ARGUMENT);
        TGT_EXPECT(b, tgl_cumsum(b, &in, 2, &out), TGL_ERR_INVALID_ARGUMENT);
        tgl_tensor bad = out;
        bad.shape[1] = 7;
        TGT_EXPECT(b, tgl_cumsum(b, &in, 1, &bad), TGL_ERR_INVALID_ARGUMENT);
        bad = out;
        bad.dtype = TGL_DTYPE_I32;
        TGT_EXPECT(b, tgl_cumsum(b, &in, 1, &bad), TGL_ERR_INVALID_ARGUMENT); /* floats into a float */
        tgl_tensor ini = in;
        ini.dtype = TGL_DTYPE_I32;
        TGT_EXPECT(b, tgl_cumprod(b, &ini, 1, &out), TGL_ERR_INVALID_ARGUMENT); /* i32 into i32 */
        bad = out;
        bad.dtype = TGL_DTYPE_F16;
        TGT_EXPECT(b, tgl_cummax(b, &in, 1, &bad, &ix), TGL_ERR_INVALID_ARGUMENT); /* in's dtype */
        TGT_EXPECT(b, tgl_cummin(b, &in, 1, &out, &out), TGL_ERR_INVALID_ARGUMENT); /* indices not i32 */
        tgl_tensor inb = in;
        inb.dtype = TGL_DTYPE_BOOL;
        TGT_EXPECT(b, tgl_cummax(b, &inb, 1, &inb, NULL), TGL_ERR_UNSUPPORTED);
        tgl_tensor q = in;
        q.dtype = TGL_DTYPE_Q8_0;
        TGT_EXPECT(b, tgl_cumsum(b, &q, 1, &out), TGL_ERR_UNSUPPORTED);
        tgl_tensor over = in; /* out overlapping in without being it */
        over.data = x + 4;
        TGT_EXPECT(b, tgl_cumsum(b, &in, 1, &over), TGL_ERR_INVALID_ARGUMENT);
        tgl_tensor ixo = ix; /* indices overlapping out */
        ixo.data = y;
        TGT_EXPECT(b, tgl_cummax(b, &in, 1, &out, &ixo), TGL_ERR_INVALID_ARGUMENT);
        tgl_tensor twice = out; /* out reaching an element twice */
        twice.strides[0] = 0;
        TGT_EXPECT(b, tgl_cumsum(b, &in, 1, &twice), TGL_ERR_INVALID_ARGUMENT);
        tgl_tensor far = in; /* past the allocation */
        far.shape[0] = 1000;
        tgl_tensor farout = out;
        farout.shape[0] = 1000;
        TGT_EXPECT(b, tgl_cumsum(b, &far, 1, &farout), TGL_ERR_INVALID_POINTER);
        tgl_tensor huge = in; /* an axis past an i32 index */
        huge.shape[1] = (size_t)1 << 31;
        huge.strides[1] = 0;
        huge.strides[0] = 0;
        tgl_tensor hout = huge;
        TGT_EXPECT(b, tgl_cumsum(b, &huge, 1, &hout), TGL_ERR_INVALID_ARGUMENT);
        tgl_tensor zero = in;
        zero.ndim = 0;
        TGT_EXPECT(b, tgl_cumsum(b, &zero, 0, &zero), TGL_ERR_INVALID_ARGUMENT);
        tgl_tensor empty = in, empty_out = out; /* a no-op */
        empty.shape[0] = empty_out.shape[0] = 0;
        TGT_OK(b, tgl_cumsum(b, &empty, 1, &empty_out));
        TGT_OK(b, tgl_free(b, x));
        TGT_OK(b, tgl_free(b, y));
        TGT_OK(b, tgl_free(b, z));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_values), cmocka_unit_test(test_random_calls), cmocka_unit_test(test_long_lines),
        cmocka_unit_test(test_quad_lines), cmocka_unit_test(test_one_pass),
        cmocka_unit_test(test_small_ssbo_limit), cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
