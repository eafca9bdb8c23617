/* tgl_broadcast_shape, tgl_binary_broadcast, tgl_permute: shape algebra, then vtable->strided. */
#include "trace.h"
#include "validate.h"

#define F32 sizeof(float)

static tgl_status check_dims(tgl_backend *b, const char *arg, const size_t *shape, size_t ndim, size_t *count)
{
    if (!shape)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "%s: NULL", arg);
    if (ndim < 1 || ndim > TGL_MAX_DIMS)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "%s: ndim %zu is not in 1..%d", arg, ndim, TGL_MAX_DIMS);
    *count = 1;
    for (size_t d = 0; d < ndim; d++) {
        tgl_status st = tgl__mul(b, arg, *count, shape[d], count);
        if (st)
            return st;
    }
    return tgl__mul(b, arg, *count, F32, &(size_t){0});
}

/* Row-major strides of a shape, in elements. */
static void row_major_strides(const size_t *shape, size_t ndim, size_t *strides)
{
    size_t s = 1;
    for (size_t d = ndim; d-- > 0;) {
        strides[d] = s;
        s *= shape[d];
    }
}

static tgl_status broadcast(tgl_backend *b, const size_t *as, size_t an, const size_t *bs, size_t bn, size_t *os,
                            size_t *on)
{
    size_t count;
    tgl_status st;
    if ((st = check_dims(b, "a_shape", as, an, &count)) || (st = check_dims(b, "b_shape", bs, bn, &count)))
        return st;
    if (!os || !on)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "out_shape or out_ndim: NULL");
    size_t n = an > bn ? an : bn;
    for (size_t i = 0; i < n; i++) { /* i counts from the right */
        size_t x = i < an ? as[an - 1 - i] : 1, y = i < bn ? bs[bn - 1 - i] : 1;
        if (x != y && x != 1 && y != 1)
            return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT,
                             "shapes do not broadcast: dim %zu from the right is %zu in a and %zu in b", i, x, y);
        os[n - 1 - i] = x == 1 ? y : x;
    }
    *on = n;
    return TGL_OK;
}

TGL_API tgl_status tgl_broadcast_shape(const size_t *a_shape, size_t a_ndim, const size_t *b_shape,
                                       size_t b_ndim, size_t *out_shape, size_t *out_ndim)
{
    return broadcast(NULL, a_shape, a_ndim, b_shape, b_ndim, out_shape, out_ndim);
}

/* Strides of an input seen in the output's index space: 0 along broadcast dims. */
static void broadcast_strides(const size_t *shape, size_t ndim, size_t out_ndim, size_t *strides)
{
    size_t own[TGL_MAX_DIMS];
    row_major_strides(shape, ndim, own);
    for (size_t d = 0; d < out_ndim; d++) {
        size_t k = d + ndim; /* the input's dim aligned with out dim d is k - out_ndim */
        strides[d] = k < out_ndim ? 0 : shape[k - out_ndim] == 1 ? 0 : own[k - out_ndim];
    }
}

static tgl_status run_strided(tgl_backend *b, const char *fn, int op, tgl__view va, tgl__view vb, tgl__view vo,
                              const tgl__strided *s)
{
    if (!b->vt->strided)
        return tgl__unsupported(b, fn);
    return tgl__leave(b, b->vt->strided(b, op, va, vb, vo, s));
}

TGL_API tgl_status tgl_binary_broadcast(tgl_backend *b, tgl_binary_op op, tgl_ptr a, const size_t *a_shape,
                                        size_t a_ndim, tgl_ptr bb, const size_t *b_shape, size_t b_ndim,
                                        tgl_ptr out)
{
    if (tgl__hooked(b))
        return TGL__HOOK(BINARY_BROADCAST);
    tgl_status st = tgl__enter(b);
    tgl__strided s = {0};
    tgl__view va, vb, vo;
    if (st)
        return st;
    if ((unsigned)op >= TGL__BINARY_FLAT_KERNELS && (unsigned)op < TGL_BINARY_COUNT)
        return tgl__fail(b, TGL_ERR_UNSUPPORTED, "op: %s is not taken by tgl_binary_broadcast: tgl_binary_t runs it",
                         tgl_binary_name(op));
    if ((unsigned)op >= TGL_BINARY_COUNT)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "op: %d is not a tgl_binary_op", (int)op);
    if ((st = broadcast(b, a_shape, a_ndim, b_shape, b_ndim, s.shape, &s.ndim)) ||
        (st = check_dims(b, "a_shape", a_shape, a_ndim, &s.n_a)) ||
        (st = check_dims(b, "b_shape", b_shape, b_ndim, &s.n_b)) ||
        (st = check_dims(b, "the broadcast shape", s.shape, s.ndim, &s.n_out)))
        return st;
    if (s.n_out == 0)
        return TGL_OK;
    if ((st = tgl__resolve_array(b, "a", a, s.n_a, F32, &va)) || (st = tgl__resolve_array(b, "bb", bb, s.n_b, F32, &vb)) ||
        (st = tgl__resolve_array(b, "out", out, s.n_out, F32, &vo)) ||
        (st = tgl__check_alias(b, "a", va, s.n_a * F32, vo, s.n_out * F32)) ||
        (st = tgl__check_alias(b, "bb", vb, s.n_b * F32, vo, s.n_out * F32)))
        return st;
    broadcast_strides(a_shape, a_ndim, s.ndim, s.a_stride);
    broadcast_strides(b_shape, b_ndim, s.ndim, s.b_stride);
    return run_strided(b, "tgl_binary_broadcast", (int)op, va, vb, vo, &s);
}

TGL_API tgl_status tgl_permute(tgl_backend *b, tgl_ptr in, tgl_ptr out, const size_t *shape, size_t ndim,
                               const size_t *perm)
{
    if (tgl__hooked(b))
        return TGL__HOOK(PERMUTE);
    tgl_status st = tgl__enter(b);
    tgl__strided s = {0};
    tgl__view vi, vo;
    if (st || (st = check_dims(b, "shape", shape, ndim, &s.n_a)))
        return st;
    if (!perm)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "perm: NULL");
    unsigned seen = 0;
    for (size_t d = 0; d < ndim; d++) {
        if (perm[d] >= ndim || (seen >> perm[d]) & 1u)
            return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "perm: entry %zu (%zu) repeats or is not below ndim %zu",
                             d, perm[d], ndim);
        seen |= 1u << perm[d];
    }
    if (s.n_a == 0)
        return TGL_OK;
    if ((st = tgl__resolve_array(b, "in", in, s.n_a, F32, &vi)) ||
        (st = tgl__resolve_array(b, "out", out, s.n_a, F32, &vo)) ||
        (st = tgl__check_disjoint(b, "in", vi, s.n_a * F32, vo, s.n_a * F32)))
        return st;
    size_t in_strides[TGL_MAX_DIMS];
    row_major_strides(shape, ndim, in_strides);
    s.ndim = ndim;
    s.n_out = s.n_a;
    for (size_t d = 0; d < ndim; d++) {
        s.shape[d] = shape[perm[d]];
        s.a_stride[d] = in_strides[perm[d]];
    }
    return run_strided(b, "tgl_permute", -1, vi, (tgl__view){0}, vo, &s);
}
