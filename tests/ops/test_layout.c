/* tgl_flip, tgl_roll, tgl_repeat, tgl_pad and tgl_one_hot on GL compared with the CPU oracle,
 * and the oracle with a host reference that maps each out index to its in index by the op's
 * definition (one_hot: to its index, compared with the class):
 * PyTorch's outputs for small cases on both backends; every op and mode on random layouts of
 * 0-6 dims (extents 1, primes, 2^k +- 1, past a workgroup; negative and gapped strides, a
 * conversion between dtypes now and then, empty tensors), shifts and widths at and past the
 * extents, the bytes around out's elements poisoned, bit for bit; repeats whose split dims do
 * not fit in TGL_MAX_DIMS; boxes under a shrunk SSBO limit; refusals, out untouched. */
#include "testing.h"
#include "tensors.h"
#include "cpu/cpu_convert.h"
#include "gl/gl_internal.h"

#include <stdlib.h>
#include <string.h>

typedef tgt_pair pair;

static int setup(void **state)
{
    return tgt_pair_setup(state, 0x1a70);
}

static int teardown(void **state)
{
    return tgt_pair_teardown(state);
}

#define POISON 0xA5

static const tgl_dtype dtypes[] = {TGL_DTYPE_F32, TGL_DTYPE_F16, TGL_DTYPE_BF16, TGL_DTYPE_I32, TGL_DTYPE_BOOL};

typedef enum { FLIP, ROLL, REPEAT, PAD, ONE_HOT } op;
static const char *const op_names[] = {"flip", "roll", "repeat", "pad", "one_hot"};

/* One call: in (data an offset into an allocation of in_bytes holding init) into out (an offset
 * into an allocation of out_bytes, POISON first). */
typedef struct call {
    op op;
    size_t dims[TGL_MAX_DIMS], n; /* flip's dims; roll's dims (n shifts); repeat's repeats (n) */
    int64_t ints[2 * TGL_MAX_DIMS];  /* roll's shifts; pad's widths (n of them) */
    tgl_pad_mode mode;
    double value;
    tgl_tensor in, out;
    size_t in_bytes, out_bytes;
    const uint8_t *init;
} call;

static tgl_status invoke(tgl_backend *b, const call *c, const tgl_tensor *t, const tgl_tensor *o)
{
    switch (c->op) {
    case FLIP: return tgl_flip(b, t, c->dims, c->n, o);
    case ROLL: return tgl_roll(b, t, c->ints, c->n, c->dims, o);
    case REPEAT: return tgl_repeat(b, t, c->dims, c->n, o);
    case ONE_HOT: return tgl_one_hot(b, t, o);
    default: return tgl_pad(b, t, c->ints, c->n, c->mode, c->value, o);
    }
}

static tgl_status run_on(tgl_backend *b, const call *c, uint8_t *got)
{
    tgl_ptr x, d;
    TGT_OK(b, tgl_alloc(b, c->in_bytes, &x));
    TGT_OK(b, tgl_copy_htod(b, x, c->init, c->in_bytes));
    TGT_OK(b, tgl_alloc(b, c->out_bytes, &d));
    memset(got, POISON, c->out_bytes);
    TGT_OK(b, tgl_copy_htod(b, d, got, c->out_bytes));
    tgl_tensor t = c->in, o = c->out;
    t.data += x;
    o.data += d;
    tgl_status st = invoke(b, c, &t, &o);
    TGT_OK(b, tgl_copy_dtoh(b, got, d, c->out_bytes));
    TGT_OK(b, tgl_free(b, x));
    TGT_OK(b, tgl_free(b, d));
    return st;
}

/* Byte offset of the element at idx of t. */
static int64_t offset_of(const tgl_tensor *t, const size_t *idx)
{
    size_t es = tgl_dtype_size(t->dtype);
    int64_t at = (int64_t)(t->data / es);
    for (size_t d = 0; d < t->ndim; d++)
        at += (int64_t)idx[d] * t->strides[d];
    return at * (int64_t)es;
}

/* i mod n in [0, n) for any i. */
static int64_t wrap(int64_t i, int64_t n)
{
    int64_t r = i % n;
    return r < 0 ? r + n : r;
}

/* The in index of out's element at o (into in_idx), or 0 when it is a constant pad's fill. */
static int source_of(const call *c, const size_t *o, size_t *in_idx)
{
    const tgl_tensor *in = &c->in;
    size_t lead = c->out.ndim - in->ndim; /* repeat's leading dims */
    for (size_t d = 0; d < in->ndim; d++) {
        size_t od = d + lead;
        int64_t n = (int64_t)in->shape[d], i = (int64_t)o[od];
        switch (c->op) {
        case FLIP:
            for (size_t k = 0; k < c->n; k++)
                if (c->dims[k] == d)
                    i = n - 1 - i;
            break;
        case ROLL:
            for (size_t k = 0; k < c->n; k++)
                if (c->dims[k] == d)
                    i = wrap(i - wrap(c->ints[k], n), n);
            break;
        case REPEAT: i %= n; break;
        default: {
            size_t back = in->ndim - 1 - d;
            int64_t before = 2 * back < c->n ? c->ints[2 * back] : 0;
            i -= before;
            if (i >= 0 && i < n)
                break;
            if (c->mode == TGL_PAD_CONSTANT)
                return 0;
            if (c->mode == TGL_PAD_REFLECT)
                i = i < 0 ? -i : 2 * (n - 1) - i;
            else if (c->mode == TGL_PAD_REPLICATE)
                i = i < 0 ? 0 : n - 1;
            else
                i = wrap(i, n);
        }
        }
        in_idx[d] = (size_t)i;
    }
    return 1;
}

/* The constant pad's element in dtype dt (values the tests use are exact in every dtype). */
static void fill_element(tgl_dtype dt, double v, uint8_t *dst)
{
    if (dt == TGL_DTYPE_I32) {
        int32_t i = (int32_t)v;
        memcpy(dst, &i, 4);
    } else if (dt == TGL_DTYPE_BOOL) {
        *dst = v != 0.0;
    } else {
        tgl_cpu_store_f32(dt, (float)v, dst);
    }
}

/* out's allocation image: POISON, each element of out set from its in element or the fill. */
static void reference(const call *c, uint8_t *want)
{
    const tgl_tensor *o = &c->out;
    size_t n = 1, idx[TGL_MAX_DIMS] = {0}, from[TGL_MAX_DIMS] = {0};
    memset(want, POISON, c->out_bytes);
    for (size_t d = 0; d < o->ndim; d++)
        n *= o->shape[d];
    for (size_t k = 0; k < n; k++) {
        uint8_t *dst = want + offset_of(o, idx);
        if (c->op == ONE_HOT) { /* indices aligned right with out's dims but the last, 1s repeating */
            for (size_t d = 0; d < c->in.ndim; d++)
                from[d] = c->in.shape[d] == 1 ? 0 : idx[d + o->ndim - 1 - c->in.ndim];
            int32_t v;
            memcpy(&v, c->init + offset_of(&c->in, from), 4);
            fill_element(o->dtype, v == (int64_t)idx[o->ndim - 1] ? 1.0 : 0.0, dst);
        } else if (source_of(c, idx, from))
            tgl_cpu_convert(o->dtype, c->in.dtype, c->init + offset_of(&c->in, from), dst);
        else
            fill_element(o->dtype, c->value, dst);
        for (size_t d = o->ndim; d-- > 0;) {
            if (++idx[d] < o->shape[d])
                break;
            idx[d] = 0;
        }
    }
}

static void describe(const call *c, char *buf, size_t size)
{
    size_t len = (size_t)snprintf(buf, size, "%s %s -> %s, in [", op_names[c->op], tgl_dtype_name(c->in.dtype),
                                  tgl_dtype_name(c->out.dtype));
    for (size_t d = 0; d < c->in.ndim && len < size; d++)
        len += (size_t)snprintf(buf + len, size - len, "%s%zu", d ? "," : "", c->in.shape[d]);
    len += (size_t)snprintf(buf + len, len < size ? size - len : 0, "], args [");
    for (size_t k = 0; k < c->n && len < size; k++)
        len += (size_t)snprintf(buf + len, size - len, "%s%lld/%zu", k ? "," : "",
                                (long long)(c->op == FLIP || c->op == REPEAT ? 0 : c->ints[k]),
                                c->op == PAD ? 0 : c->dims[k]);
    if (len < size)
        snprintf(buf + len, size - len, "] mode %d", (int)c->mode);
}

/* The call on the CPU against the reference, then GL against the CPU: every byte of out's
 * allocation. */
static void check(pair *p, tgl_backend *gl, const call *c, const char *what)
{
    uint8_t *w = malloc(c->out_bytes), *r = malloc(c->out_bytes), *g = malloc(c->out_bytes);
    char text[300];
    describe(c, text, sizeof text);
    reference(c, r);
    TGT_OK(p->cpu, run_on(p->cpu, c, w));
    for (size_t i = 0; i < c->out_bytes; i++)
        if (w[i] != r[i])
            fail_msg("%s: %s: cpu byte %zu is 0x%02x, the reference's 0x%02x", what, text, i, w[i], r[i]);
    if (gl) {
        TGT_OK(gl, run_on(gl, c, g));
        for (size_t i = 0; i < c->out_bytes; i++)
            if (g[i] != w[i])
                fail_msg("%s: %s: gl byte %zu is 0x%02x, cpu's 0x%02x", what, text, i, g[i], w[i]);
    }
    free(w);
    free(r);
    free(g);
}

/* A dense f32 call of in (shape) holding 1, 2, 3, ... into out (out_shape). */
static void known(tgl_backend *b, call c, size_t ndim, const size_t *shape, const size_t *out_shape, const float *want,
                  size_t n_want)
{
    float x[16], got[32];
    for (int i = 0; i < 16; i++)
        x[i] = (float)(i + 1);
    c.in = tgl_tensor_contiguous(0, TGL_DTYPE_F32, ndim, shape);
    c.out = tgl_tensor_contiguous(0, TGL_DTYPE_F32, ndim + (c.op == REPEAT ? c.n - ndim : 0), out_shape);
    c.in_bytes = sizeof x;
    c.out_bytes = n_want * sizeof(float);
    c.init = (const uint8_t *)x;
    TGT_OK(b, run_on(b, &c, (uint8_t *)got));
    assert_memory_equal(got, want, n_want * sizeof(float));
}

/* PyTorch's outputs (torch.flip, torch.roll, Tensor.repeat, F.pad). */
static void test_known_values(void **state)
{
    pair *p = *state;
    tgl_backend *bs[2] = {p->cpu, p->gl};
    const size_t r2c3[2] = {2, 3}, three[1] = {3}, four[1] = {4}, five[1] = {5};
    for (int j = 0; j < 2; j++) {
        tgl_backend *b = bs[j];
        if (!b)
            continue;
        known(b, (call){.op = FLIP, .dims = {1}, .n = 1}, 2, r2c3, r2c3, (const float[]){3, 2, 1, 6, 5, 4}, 6);
        known(b, (call){.op = FLIP, .dims = {1, 0}, .n = 2}, 2, r2c3, r2c3, (const float[]){6, 5, 4, 3, 2, 1}, 6);
        known(b, (call){.op = ROLL, .dims = {0}, .ints = {2}, .n = 1}, 1, five, five, (const float[]){4, 5, 1, 2, 3}, 5);
        known(b, (call){.op = ROLL, .dims = {0}, .ints = {-1}, .n = 1}, 1, five, five, (const float[]){2, 3, 4, 5, 1}, 5);
        known(b, (call){.op = ROLL, .dims = {0, 1}, .ints = {1, 1}, .n = 2}, 2, r2c3, r2c3,
              (const float[]){6, 4, 5, 3, 1, 2}, 6);
        known(b, (call){.op = ROLL, .dims = {1, 1}, .ints = {2, 5}, .n = 2}, 2, r2c3, r2c3, /* 7 = 1 mod 3 */
              (const float[]){3, 1, 2, 6, 4, 5}, 6);
        known(b, (call){.op = REPEAT, .dims = {2, 2}, .n = 2}, 1, three, (const size_t[]){2, 6},
              (const float[]){1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3}, 12);
        known(b, (call){.op = REPEAT, .dims = {2, 1}, .n = 2}, 2, r2c3, (const size_t[]){4, 3},
              (const float[]){1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6}, 12);
        const size_t six[1] = {6};
        known(b, (call){.op = PAD, .ints = {2, 1}, .n = 2, .mode = TGL_PAD_CONSTANT, .value = -7}, 1, three, six,
              (const float[]){-7, -7, 1, 2, 3, -7}, 6);
        known(b, (call){.op = PAD, .ints = {2, 1}, .n = 2, .mode = TGL_PAD_REFLECT}, 1, three, six,
              (const float[]){3, 2, 1, 2, 3, 2}, 6);
        known(b, (call){.op = PAD, .ints = {2, 1}, .n = 2, .mode = TGL_PAD_REPLICATE}, 1, three, six,
              (const float[]){1, 1, 1, 2, 3, 3}, 6);
        known(b, (call){.op = PAD, .ints = {2, 1}, .n = 2, .mode = TGL_PAD_CIRCULAR}, 1, three, six,
              (const float[]){2, 3, 1, 2, 3, 1}, 6);
        known(b, (call){.op = PAD, .ints = {-1, 2}, .n = 2, .mode = TGL_PAD_CONSTANT, .value = 9}, 1, four, five,
              (const float[]){2, 3, 4, 9, 9}, 5);
        known(b, (call){.op = PAD, .ints = {1, 0, 0, 1}, .n = 4, .mode = TGL_PAD_REFLECT}, 2, r2c3,
              (const size_t[]){3, 4}, (const float[]){2, 1, 2, 3, 5, 4, 5, 6, 2, 1, 2, 3}, 12);
    }
}

/* Dims of one index may carry any stride (the checks ignore them): INT64_MIN must not be negated. */
static void test_strides_of_single_dims(void **state)
{
    pair *p = *state;
    tgl_backend *bs[2] = {p->cpu, p->gl};
    for (int j = 0; j < 2; j++) {
        if (!bs[j])
            continue;
        float x[3] = {1, 2, 3}, got[3];
        call c = {.op = FLIP, .dims = {0, 1}, .n = 2, .init = (const uint8_t *)x, .in_bytes = sizeof x};
        c.in = tgl_tensor_contiguous(0, TGL_DTYPE_F32, 2, (size_t[]){1, 3});
        c.in.strides[0] = INT64_MIN;
        c.out = tgl_tensor_contiguous(0, TGL_DTYPE_F32, 2, (size_t[]){1, 3});
        c.out_bytes = 3 * sizeof(float);
        TGT_OK(bs[j], run_on(bs[j], &c, (uint8_t *)got));
        assert_memory_equal(got, ((const float[]){3, 2, 1}), 3 * sizeof(float));
        c = (call){.op = PAD, .ints = {1, 1, 1, 0}, .n = 4, .mode = TGL_PAD_REPLICATE, .init = (const uint8_t *)x,
                   .in_bytes = sizeof x};
        c.in = tgl_tensor_contiguous(0, TGL_DTYPE_F32, 2, (size_t[]){1, 3});
        c.in.strides[0] = INT64_MIN;
        c.out = tgl_tensor_contiguous(0, TGL_DTYPE_F32, 2, (size_t[]){2, 5});
        c.out_bytes = 10 * sizeof(float);
        float padded[10];
        TGT_OK(bs[j], run_on(bs[j], &c, (uint8_t *)padded));
        assert_memory_equal(padded, ((const float[]){1, 1, 2, 3, 3, 1, 1, 2, 3, 3}), sizeof padded);
    }
}

/* A shift: inside, at or past the extent, negative, or far past it. */
static int64_t some_shift(tgt_rng *r, size_t n)
{
    switch (tgt_below(r, 5)) {
    case 0: return (int64_t)tgt_below(r, n + 1);
    case 1: return -(int64_t)tgt_below(r, n + 1);
    case 2: return (int64_t)n * (int64_t)(1 + tgt_below(r, 3));
    case 3: return tgt_below(r, 2) ? INT64_MAX - (int64_t)tgt_below(r, 3) : INT64_MIN + (int64_t)tgt_below(r, 3);
    default: return (int64_t)tgt_below(r, 7) - 3;
    }
}

/* A random call of op over in's shape (ndim dims, total at most ~30000 elements out). */
static call random_call(tgt_rng *r, op o, size_t ndim, const size_t *shape)
{
    call c = {.op = o, .value = (double)tgt_below(r, 5) - 2.0};
    size_t out_shape[TGL_MAX_DIMS] = {0}, out_ndim = ndim;
    memcpy(out_shape, shape, sizeof out_shape);
    if (o == FLIP) {
        for (size_t d = 0; d < ndim; d++)
            if (tgt_below(r, 2))
                c.dims[c.n++] = d;
        for (size_t k = c.n; k > 1; k--) { /* any order */
            size_t j = tgt_below(r, k), t = c.dims[k - 1];
            c.dims[k - 1] = c.dims[j];
            c.dims[j] = t;
        }
    } else if (o == ROLL) {
        c.n = 1 + tgt_below(r, ndim + 1);
        for (size_t k = 0; k < c.n; k++) {
            c.dims[k] = tgt_below(r, ndim); /* a dim may come twice */
            c.ints[k] = some_shift(r, shape[c.dims[k]]);
        }
    } else if (o == REPEAT) {
        c.n = ndim + tgt_below(r, TGL_MAX_DIMS - ndim < 2 ? TGL_MAX_DIMS - ndim + 1 : 3);
        out_ndim = c.n;
        size_t total = 1;
        for (size_t d = 0; d < c.n; d++) {
            size_t n = d < c.n - ndim ? 1 : shape[d - (c.n - ndim)];
            total *= n ? n : 1;
        }
        for (size_t d = 0; d < c.n; d++) {
            size_t n = d < c.n - ndim ? 1 : shape[d - (c.n - ndim)];
            c.dims[d] = tgt_below(r, 10) == 0 ? 0 : 1 + tgt_below(r, total * 3 <= 30000 ? 3 : 1);
            total *= c.dims[d] ? c.dims[d] : 1;
            out_shape[d] = n * c.dims[d];
        }
    } else {
        c.mode = (tgl_pad_mode)tgt_below(r, TGL_PAD_MODE_COUNT);
        c.n = 2 * tgt_below(r, ndim + 1);
        for (size_t k = 0; k < c.n; k++) {
            size_t d = ndim - 1 - k / 2, n = shape[d];
            int64_t w;
            switch (c.mode) {
            case TGL_PAD_CONSTANT: /* crops of at most n / 2 a side */
                w = (int64_t)tgt_below(r, 4) - (int64_t)tgt_below(r, n / 2 + 1);
                break;
            case TGL_PAD_REFLECT: w = n > 1 ? (int64_t)tgt_below(r, n < 4 ? n : 4) : 0; break;
            case TGL_PAD_REPLICATE: w = n ? (int64_t)tgt_below(r, 5) : 0; break;
            default: w = (int64_t)tgt_below(r, (n < 4 ? n : 4) + 1); break;
            }
            c.ints[k] = w;
            if (k % 2)
                out_shape[d] = (size_t)((int64_t)n + c.ints[k - 1] + w);
        }
    }
    tgl_dtype in_dt = dtypes[tgt_below(r, 5)];
    tgl_dtype out_dt = tgt_below(r, 6) == 0 ? dtypes[tgt_below(r, 5)] : in_dt;
    c.in = tgt_below(r, 3) ? tgt_random_layout(r, in_dt, ndim, shape, &c.in_bytes)
                           : tgt_dense_layout(r, in_dt, ndim, shape, &c.in_bytes);
    c.out = tgt_below(r, 2) ? tgt_random_layout(r, out_dt, out_ndim, out_shape, &c.out_bytes)
                            : tgt_dense_layout(r, out_dt, out_ndim, out_shape, &c.out_bytes);
    return c;
}

static void random_calls(pair *p, tgl_backend *gl, int count, const char *what)
{
    tgt_rng *r = &p->rng;
    for (int i = 0; i < count; i++) {
        size_t ndim = tgt_below(r, 6), shape[TGL_MAX_DIMS] = {0}, n = 1;
        for (size_t d = 0; d < ndim; d++) {
            shape[d] = n * 129 <= 8000 ? tgt_awkward_extent(r, 129) : 1;
            n *= shape[d];
        }
        if (ndim && tgt_below(r, 15) == 0)
            shape[tgt_below(r, ndim)] = 0; /* empty */
        op o = (op)(i % 4);
        if (ndim == 0 && o == ROLL)
            o = FLIP;
        call c = random_call(r, o, ndim, shape);
        uint8_t *init = malloc(c.in_bytes ? c.in_bytes : 1);
        tgt_pool_fill(r, c.in.dtype, init, c.in_bytes);
        c.init = init;
        check(p, gl, &c, what);
        free(init);
    }
}

/* one_hot: indices in [-2, classes + 2) and at the i32 limits, broadcast now and then. */
static void one_hot_calls(pair *p, tgl_backend *gl, int count, const char *what)
{
    tgt_rng *r = &p->rng;
    for (int i = 0; i < count; i++) {
        size_t ndim = 1 + tgt_below(r, 5), shape[TGL_MAX_DIMS] = {0}, n = 1;
        for (size_t d = 0; d < ndim; d++) {
            shape[d] = n * 129 <= 20000 ? tgt_awkward_extent(r, 129) : 1;
            n *= shape[d];
        }
        if (tgt_below(r, 15) == 0)
            shape[tgt_below(r, ndim)] = 0; /* empty */
        call c = {.op = ONE_HOT};
        size_t in_ndim = ndim - 1, in_shape[1][TGL_MAX_DIMS] = {{0}};
        memcpy(in_shape[0], shape, sizeof shape);
        if (in_ndim && tgt_below(r, 3) == 0)
            tgt_broadcast_shapes(r, 1, in_ndim, shape, &in_ndim, in_shape);
        c.in = tgt_random_layout(r, TGL_DTYPE_I32, in_ndim, in_shape[0], &c.in_bytes);
        tgl_dtype dt = dtypes[tgt_below(r, 5)];
        c.out = tgt_below(r, 2) ? tgt_random_layout(r, dt, ndim, shape, &c.out_bytes)
                                : tgt_dense_layout(r, dt, ndim, shape, &c.out_bytes);
        int32_t *init = malloc(c.in_bytes + 4);
        for (size_t k = 0; k < c.in_bytes / 4; k++) {
            int64_t classes = (int64_t)shape[ndim - 1];
            init[k] = tgt_below(r, 20) == 0 ? (tgt_below(r, 2) ? INT32_MIN : INT32_MAX)
                                            : (int32_t)((int64_t)tgt_below(r, (size_t)classes + 4) - 2);
        }
        c.init = (const uint8_t *)init;
        check(p, gl, &c, what);
        free(init);
    }
}

static void test_one_hot(void **state)
{
    pair *p = *state;
    tgl_backend *bs[2] = {p->cpu, p->gl};
    for (int j = 0; j < 2; j++) { /* F.one_hot(tensor([2, 0, 1, 3]), 3), with 3 out of range: zeros */
        if (!bs[j])
            continue;
        int32_t ids[4] = {2, 0, 1, 3};
        float got[12];
        const float want[12] = {0, 0, 1, 1, 0, 0, 0, 1, 0, 0, 0, 0};
        call c = {.op = ONE_HOT, .init = (const uint8_t *)ids, .in_bytes = sizeof ids, .out_bytes = sizeof got};
        c.in = tgl_tensor_contiguous(0, TGL_DTYPE_I32, 1, (size_t[]){4});
        c.out = tgl_tensor_contiguous(0, TGL_DTYPE_F32, 2, (size_t[]){4, 3});
        TGT_OK(bs[j], run_on(bs[j], &c, (uint8_t *)got));
        assert_memory_equal(got, want, sizeof got);
    }
    one_hot_calls(p, p->gl, tgt_count(120), "one_hot");
    if (p->gl) {
        tgl_backend *gl = tgt_open(TGL_BACKEND_GL);
        tgl_gl_test_set_limits(gl, 256 + 64, NULL);
        one_hot_calls(p, gl, tgt_count(30), "one_hot, small SSBO limit");
        tgl_close(gl);
    }
}

static void test_random_layouts(void **state)
{
    pair *p = *state;
    random_calls(p, p->gl, tgt_count(240), "random layouts");
}

/* Six dims of 2 repeated twice each: twelve split dims, so the outer four repeats run as loops. */
static void test_repeat_past_max_dims(void **state)
{
    pair *p = *state;
    tgt_rng *r = &p->rng;
    const size_t shape[6] = {2, 3, 2, 2, 3, 2};
    for (int i = 0; i < 4; i++) {
        call c = {.op = REPEAT, .n = 6 + (size_t)(i % 3)};
        size_t out_shape[TGL_MAX_DIMS], lead = c.n - 6;
        for (size_t d = 0; d < c.n; d++) {
            c.dims[d] = 2 + (d % 2);
            out_shape[d] = (d < lead ? 1 : shape[d - lead]) * c.dims[d];
        }
        tgl_dtype dt = dtypes[i];
        c.in = tgt_random_layout(r, dt, 6, shape, &c.in_bytes);
        c.out = tgt_random_layout(r, dt, c.n, out_shape, &c.out_bytes);
        uint8_t *init = malloc(c.in_bytes);
        tgt_pool_fill(r, dt, init, c.in_bytes);
        c.init = init;
        check(p, p->gl, &c, "past TGL_MAX_DIMS");
        free(init);
    }
}

/* Windows past a shrunk SSBO block limit: each piece cut into boxes on GL. */
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
        uint8_t before[256], after[256];
        memset(before, POISON, sizeof before);
        TGT_OK(b, tgl_alloc(b, sizeof before, &d));
        TGT_OK(b, tgl_copy_htod(b, d, before, sizeof before));
        tgl_tensor m = tgl_tensor_contiguous(d, TGL_DTYPE_F32, 2, (size_t[]){2, 3}), o = m;
        o.data += 128;
        tgl_tensor part = m, q = o, wide = o, big = o, col = o;
        part.data += 4; /* overlaps m one element along */
        q.dtype = TGL_DTYPE_Q8_0;
        wide.shape[1] = 4;
        big = tgl_tensor_contiguous(o.data, TGL_DTYPE_F32, 2, (size_t[]){4, 6});
        col = tgl_tensor_contiguous(o.data, TGL_DTYPE_F32, 2, (size_t[]){2, 1});
        const tgl_status A = TGL_ERR_INVALID_ARGUMENT;
        const size_t one[1] = {1}, twice[2] = {1, 1}, far[1] = {2};
        const int64_t shift[2] = {1, 1}, w1[2] = {1, 1}, w3[2] = {3, 3}, wneg[2] = {-1, 0}, crop[2] = {-2, -2};
        TGT_EXPECT(b, tgl_flip(b, NULL, one, 1, &o), A);
        TGT_EXPECT(b, tgl_flip(b, &m, NULL, 1, &o), A);
        TGT_EXPECT(b, tgl_flip(b, &m, far, 1, &o), A);        /* dim 2 of 2 */
        TGT_EXPECT(b, tgl_flip(b, &m, twice, 2, &o), A);      /* a dim named twice */
        TGT_EXPECT(b, tgl_flip(b, &m, one, 1, &wide), A);     /* shapes differ */
        TGT_EXPECT(b, tgl_flip(b, &m, one, 1, &part), A);     /* overlap */
        TGT_EXPECT(b, tgl_flip(b, &m, one, 1, &q), TGL_ERR_UNSUPPORTED);
        TGT_EXPECT(b, tgl_roll(b, &m, shift, 0, one, &o), A); /* no dims */
        TGT_EXPECT(b, tgl_roll(b, &m, NULL, 1, one, &o), A);
        TGT_EXPECT(b, tgl_roll(b, &m, shift, 1, NULL, &o), A);
        TGT_EXPECT(b, tgl_roll(b, &m, shift, 1, far, &o), A);
        TGT_EXPECT(b, tgl_roll(b, &m, shift, 9, one, &o), A); /* more than TGL_MAX_DIMS */
        TGT_EXPECT(b, tgl_roll(b, &m, shift, 1, one, &part), A);
        TGT_EXPECT(b, tgl_repeat(b, &m, NULL, 2, &big), A);
        TGT_EXPECT(b, tgl_repeat(b, &m, (const size_t[]){2}, 1, &big), A);    /* fewer repeats than dims */
        TGT_EXPECT(b, tgl_repeat(b, &m, (const size_t[]){2, 3}, 2, &o), A);   /* out is not 4 x 9 */
        TGT_EXPECT(b, tgl_repeat(b, &m, (const size_t[]){1, 1, 1}, 3, &o), A); /* out has 2 dims, not 3 */
        TGT_EXPECT(b, tgl_repeat(b, &m, (const size_t[]){SIZE_MAX, 2}, 2, &big), A); /* overflow */
        TGT_EXPECT(b, tgl_pad(b, &m, NULL, 2, TGL_PAD_CONSTANT, 0.0, &big), A);
        TGT_EXPECT(b, tgl_pad(b, &m, w1, 1, TGL_PAD_CONSTANT, 0.0, &big), A);  /* odd count */
        TGT_EXPECT(b, tgl_pad(b, &m, (const int64_t[6]){0}, 6, TGL_PAD_CONSTANT, 0.0, &m), A); /* 3 dims of 2 */
        TGT_EXPECT(b, tgl_pad(b, &m, w1, 2, (tgl_pad_mode)7, 0.0, &big), A);
        TGT_EXPECT(b, tgl_pad(b, &m, w1, 2, TGL_PAD_CONSTANT, 0.0, &big), A);  /* out is not 2 x 5 */
        TGT_EXPECT(b, tgl_pad(b, &m, w3, 2, TGL_PAD_REFLECT, 0.0, &big), A);   /* 3 is not below 3 */
        TGT_EXPECT(b, tgl_pad(b, &m, (const int64_t[]){4, 0}, 2, TGL_PAD_CIRCULAR, 0.0, &big), A); /* past 3 */
        TGT_EXPECT(b, tgl_pad(b, &m, wneg, 2, TGL_PAD_REPLICATE, 0.0, &col), A); /* negative, not constant */
        TGT_EXPECT(b, tgl_pad(b, &m, crop, 2, TGL_PAD_CONSTANT, 0.0, &col), A);  /* crops 4 of 3 */
        TGT_EXPECT(b, tgl_pad(b, &m, (const int64_t[]){INT64_MIN, INT64_MAX}, 2, TGL_PAD_CONSTANT, 0.0, &col), A);
        TGT_EXPECT(b, tgl_pad(b, &m, (const int64_t[]){1, 0}, 2, TGL_PAD_CONSTANT, 0.0, &part), A);
        tgl_tensor ids = tgl_tensor_contiguous(d, TGL_DTYPE_I32, 1, (size_t[]){2}), scalar = o;
        scalar.ndim = 0;
        tgl_tensor eight = ids;
        eight.ndim = TGL_MAX_DIMS;
        for (size_t k = 1; k < TGL_MAX_DIMS; k++)
            eight.shape[k] = 1;
        TGT_EXPECT(b, tgl_one_hot(b, NULL, &o), A);
        TGT_EXPECT(b, tgl_one_hot(b, &ids, NULL), A);
        TGT_EXPECT(b, tgl_one_hot(b, &ids, &scalar), A);  /* no class dim */
        TGT_EXPECT(b, tgl_one_hot(b, &eight, &o), A);     /* no room for the class dim */
        TGT_EXPECT(b, tgl_one_hot(b, &ids, &m), A);       /* out overlaps the indices */
        TGT_EXPECT(b, tgl_one_hot(b, &m, &o), TGL_ERR_UNSUPPORTED); /* f32 indices */
        TGT_EXPECT(b, tgl_one_hot(b, &ids, &big), A);     /* 4 rows for 2 indices */
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
        cmocka_unit_test(test_one_hot),
        cmocka_unit_test(test_strides_of_single_dims),
        cmocka_unit_test(test_repeat_past_max_dims),
        cmocka_unit_test(test_small_ssbo_limit),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests_name("ops/layout (gl vs cpu)", tests, setup, teardown);
}
