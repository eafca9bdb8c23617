/* tgl_scatter and tgl_index_add (tensorgl.h): the shapes checked, out apart from index and src
 * (tgl__check_apart), then the descriptors turned into a tgl__scatter over a temporary buffer
 * (its layout: internal.h) and vtable->scatter: the indices checked on the device, then, only
 * when all are in range, the backend's passes. index_add is a scatter ADD whose index is the 1-D
 * index seen with stride 0 along every other dim of src's shape. */
#include "trace.h"
#include "validate.h"

unsigned tgl__scatter_words(tgl_scatter_reduce reduce, tgl_dtype dt)
{
    int is_float = (TGL__DT_FLOATS >> dt) & 1u;
    if (reduce == TGL_SCATTER_ADD_UNORDERED) /* floats only (run_scatter makes the others ADD) */
        return 0u; /* atomics on out itself */
    return reduce == TGL_SCATTER_SET ? 2u : reduce == TGL_SCATTER_ADD && is_float ? 5u : 1u;
}

/* ceil(log2(x)), x >= 1. */
static unsigned ceil_log2(uint64_t x)
{
    unsigned k = 0;
    while (k < 64 && ((uint64_t)1 << k) < x)
        k++;
    return k;
}

/* out, index and src present and of the dtypes the call takes, reduce and axis in range. */
static tgl_status check_operands(tgl_backend *b, const char *fn, const tgl_tensor *out, size_t axis,
                                 const tgl_tensor *index, const tgl_tensor *src, tgl_scatter_reduce reduce)
{
    size_t n;
    if (!out || !index || !src)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "%s: NULL", !out ? "out" : !index ? "index" : "src");
    tgl_status st = tgl__tensor_shape(b, fn, "out", out, TGL__DT_DATA, &n);
    if (st || (st = tgl__tensor_shape(b, fn, "index", index, TGL__DT(I32) | TGL__DT_DATA, &n)) ||
        (st = tgl__tensor_shape(b, fn, "src", src, TGL__DT_DATA, &n)))
        return st;
    if (index->dtype != TGL_DTYPE_I32)
        return tgl__fail(b, TGL_ERR_UNSUPPORTED, "index: %s takes i32 indices, not %s", fn,
                         tgl_dtype_name(index->dtype));
    if (src->dtype != out->dtype)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "src and out: %s and %s differ (tgl_copy converts first)",
                         tgl_dtype_name(src->dtype), tgl_dtype_name(out->dtype));
    if ((unsigned)reduce >= (unsigned)TGL_SCATTER_REDUCE_COUNT)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "reduce: %d is not a tgl_scatter_reduce", (int)reduce);
    if (axis >= (out->ndim ? out->ndim : 1))
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "axis: %zu of a %zu-d out", axis, out->ndim);
    if (!b->vt->scatter)
        return tgl__unsupported(b, fn);
    return TGL_OK;
}

/* The passes: idx is the i32 view over the index space (its shape; src is read over it),
 * check_index the same indices each once where it can be. All three are checked apart from out
 * and inside their allocations; the index space is not empty. */
static tgl_status run_scatter(tgl_backend *b, const char *fn, const tgl_tensor *out, size_t axis,
                              const tgl_tensor *idx, const tgl_tensor *check_index, const tgl_tensor *src,
                              tgl_scatter_reduce reduce)
{
    if (reduce == TGL_SCATTER_ADD_UNORDERED && !((TGL__DT_FLOATS >> out->dtype) & 1u)) /* integer sums are exact in any order */
        reduce = TGL_SCATTER_ADD;
    tgl__scatter s = {.reduce = reduce, .ndim = idx->ndim, .n = 1, .axis = axis, .out_n = 1};
    tgl_status st;
    for (size_t d = 0; d < s.ndim; d++) {
        s.n *= s.shape[d] = idx->shape[d];
        s.out_n *= s.out_shape[d] = out->shape[d];
    }
    if (s.n > (size_t)UINT32_MAX - 1u || s.out_n > (size_t)UINT32_MAX)
        return tgl__fail(b, TGL_ERR_UNSUPPORTED, "%s: %zu indices into %zu elements (positions are 32-bit: at most "
                         "2^32 - 2 indices, 2^32 - 1 elements of out)", fn, s.n, s.out_n);
    tgl__tew check;
    if ((st = tgl__index_check(b, check_index, out->shape[axis], axis, "out", &check)) ||
        (st = tgl__resolve_tensor(b, "index", idx->data, TGL_DTYPE_I32, s.ndim, s.shape, idx->strides, &s.index)) ||
        (st = tgl__resolve_tensor(b, "src", src->data, src->dtype, s.ndim, s.shape, src->strides, &s.src)) ||
        (st = tgl__resolve_tensor(b, "out", out->data, out->dtype, s.ndim, s.out_shape, out->strides, &s.out)))
        return st;
    s.words = tgl__scatter_words(reduce, out->dtype);
    /* the fixed point's headroom: L + 1 terms (out's own) of at most 24 + shift bits in 95 */
    unsigned terms_log2 = ceil_log2((uint64_t)s.shape[axis] + 1u);
    s.shift = 71u - terms_log2;
    size_t bytes;
    if ((st = tgl__mul(b, "the temporary buffer", s.out_n, (size_t)s.words * 4u, &bytes)))
        return st;
    void *buf = NULL;
    if (bytes && (st = tgl__temp_create(b, fn, bytes, &buf)))
        return st;
    s.temp = (tgl__view){buf, 0};
    uint64_t bad_pos = UINT64_MAX;
    int32_t bad_value = 0;
    st = b->vt->scatter(b, &check, &s, &bad_pos, &bad_value);
    if (buf)
        tgl__temp_destroy(b, buf, bytes);
    if ((st = tgl__leave(b, st)) || bad_pos == UINT64_MAX)
        return st;
    return tgl__index_fail(b, &check, bad_pos, bad_value, axis, "out");
}

/* out apart from index and from src, reaching each element once. */
static tgl_status check_apart(tgl_backend *b, const char *fn, const tgl_tensor *out, const tgl_tensor *index,
                              const tgl_tensor *src)
{
    tgl_status st = tgl__check_apart(b, fn, index, 1, "index", 0, out);
    return st ? st : tgl__check_apart(b, fn, src, 1, "src", 0, out);
}

static tgl_status scatter(tgl_backend *b, const tgl_tensor *src, size_t axis, const tgl_tensor *index,
                          const tgl_tensor *out, tgl_scatter_reduce reduce)
{
    const char *fn = "tgl_scatter";
    tgl_status st = check_operands(b, fn, out, axis, index, src, reduce);
    if (st)
        return st;
    if (index->ndim != out->ndim || src->ndim != out->ndim)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "%s: %zu dims, out's %zu (one ndim for all three)",
                         index->ndim != out->ndim ? "index" : "src",
                         index->ndim != out->ndim ? index->ndim : src->ndim, out->ndim);
    for (size_t d = 0; d < out->ndim; d++) {
        if (index->shape[d] > src->shape[d])
            return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "index: extent %zu along dim %zu, past src's %zu",
                             index->shape[d], d, src->shape[d]);
        if (d != axis && index->shape[d] > out->shape[d])
            return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "index: extent %zu along dim %zu, past out's %zu",
                             index->shape[d], d, out->shape[d]);
    }
    if (tgl_tensor_numel(index) == 0)
        return TGL_OK;
    if ((st = check_apart(b, fn, out, index, src)))
        return st;
    tgl_tensor o = tgl__one_dim(out), i = tgl__one_dim(index), x = tgl__one_dim(src);
    return run_scatter(b, fn, &o, axis, &i, &i, &x, reduce);
}

static tgl_status index_add(tgl_backend *b, const tgl_tensor *src, size_t axis, const tgl_tensor *index,
                            const tgl_tensor *out)
{
    const char *fn = "tgl_index_add";
    tgl_status st = check_operands(b, fn, out, axis, index, src, TGL_SCATTER_ADD);
    if (st)
        return st;
    if (index->ndim != 1)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "index: %zu dims, not 1", index->ndim);
    if (out->ndim == 0)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "out: 0 dims (index_add adds along a dim)");
    if (src->ndim != out->ndim)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "src: %zu dims, out's %zu", src->ndim, out->ndim);
    for (size_t d = 0; d < out->ndim; d++) {
        size_t want = d == axis ? index->shape[0] : out->shape[d];
        if (src->shape[d] != want)
            return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "src: extent %zu along dim %zu, not %zu (%s)", src->shape[d],
                             d, want, d == axis ? "index's length" : "out's");
    }
    if (tgl_tensor_numel(src) == 0)
        return TGL_OK;
    if ((st = check_apart(b, fn, out, index, src)))
        return st;
    tgl_tensor idx = *src; /* index along the axis, repeating along every other dim */
    idx.data = index->data;
    idx.dtype = TGL_DTYPE_I32;
    for (size_t d = 0; d < src->ndim; d++)
        idx.strides[d] = d == axis ? index->strides[0] : 0;
    return run_scatter(b, fn, out, axis, &idx, index, src, TGL_SCATTER_ADD);
}

TGL_API tgl_status tgl_scatter(tgl_backend *b, const tgl_tensor *src, size_t axis, const tgl_tensor *index,
                               const tgl_tensor *out, tgl_scatter_reduce reduce)
{
    if (tgl__hooked(b))
        return TGL__HOOK(SCATTER);
    tgl_status st = tgl__enter(b);
    return st ? st : scatter(b, src, axis, index, out, reduce);
}

TGL_API tgl_status tgl_index_add(tgl_backend *b, const tgl_tensor *src, size_t axis, const tgl_tensor *index,
                                 const tgl_tensor *out)
{
    if (tgl__hooked(b))
        return TGL__HOOK(INDEX_ADD);
    tgl_status st = tgl__enter(b);
    return st ? st : index_add(b, src, axis, index, out);
}
