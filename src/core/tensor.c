/* Tensor descriptors (tgl_tensor): the public helpers, and the checks every descriptor op makes
 * before its backend sees an operand (validate.h): dtype and shape, broadcasting, the byte range
 * the strides reach, and whether an output reaches an element twice. */
#include "validate.h"

#include <stdlib.h>

TGL_API size_t tgl_dtype_size(tgl_dtype dtype)
{
    switch (dtype) {
    case TGL_DTYPE_F32: case TGL_DTYPE_I32: return 4;
    case TGL_DTYPE_F16: case TGL_DTYPE_BF16: return 2;
    case TGL_DTYPE_BOOL: return 1;
    default: return 0; /* block formats, and values out of range */
    }
}

TGL_API tgl_tensor tgl_tensor_contiguous(tgl_ptr data, tgl_dtype dtype, size_t ndim, const size_t *shape)
{
    tgl_tensor t = {.data = data, .dtype = dtype, .ndim = ndim};
    if (ndim > TGL_MAX_DIMS || (ndim && !shape)) {
        t.ndim = TGL_MAX_DIMS + 1;
        return t;
    }
    uint64_t stride = 1;
    for (size_t d = ndim; d-- > 0;) {
        t.shape[d] = shape[d];
        t.strides[d] = (int64_t)stride; /* meaningful while the element count fits, which ops check */
        stride *= shape[d];
    }
    return t;
}

TGL_API size_t tgl_tensor_numel(const tgl_tensor *t)
{
    if (!t || t->ndim > TGL_MAX_DIMS)
        return 0;
    size_t n = 1;
    for (size_t d = 0; d < t->ndim; d++) {
        if (t->shape[d] && n > SIZE_MAX / t->shape[d])
            return 0;
        n *= t->shape[d];
    }
    return n;
}

TGL_API size_t tgl_tensor_bytes(const tgl_tensor *t)
{
    size_t n = tgl_tensor_numel(t);
    if (!t || (unsigned)t->dtype >= TGL_DTYPE_COUNT || t->ndim > TGL_MAX_DIMS)
        return 0;
    size_t es = tgl_dtype_size(t->dtype);
    if (es)
        return n <= SIZE_MAX / es ? n * es : 0;
    /* block formats: 32 elements per block along the last dim */
    size_t block = tgl__unit_bytes(t->dtype);
    if (t->ndim == 0 || t->shape[t->ndim - 1] % 32)
        return 0;
    return n / 32 <= SIZE_MAX / block ? n / 32 * block : 0;
}

tgl_status tgl__tensor_shape(tgl_backend *b, const char *fn, const char *arg, const tgl_tensor *t, unsigned dtypes,
                             size_t *n)
{
    if (!t)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "%s: NULL", arg);
    if (t->ndim > TGL_MAX_DIMS)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "%s: ndim %zu is above TGL_MAX_DIMS (%d)", arg, t->ndim,
                         TGL_MAX_DIMS);
    if ((unsigned)t->dtype >= TGL_DTYPE_COUNT)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "%s: dtype %d is not a tgl_dtype", arg, (int)t->dtype);
    if (!(dtypes & (1u << t->dtype)))
        return tgl__fail(b, TGL_ERR_UNSUPPORTED, "%s: %s does not take %s data", arg, fn, tgl_dtype_name(t->dtype));
    *n = 1;
    for (size_t d = 0; d < t->ndim; d++) {
        if (t->shape[d] && *n > SIZE_MAX / t->shape[d])
            return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "%s: the element count overflows at dim %zu (%zu)", arg, d,
                             t->shape[d]);
        *n *= t->shape[d];
    }
    return TGL_OK;
}

tgl_status tgl__broadcast_to(tgl_backend *b, const char *arg, const tgl_tensor *t, size_t ndim, const size_t *shape,
                             int64_t *strides)
{
    if (t->ndim > ndim)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "%s: %zu dims do not broadcast to %zu", arg, t->ndim, ndim);
    for (size_t d = 0; d < ndim; d++) {
        size_t k = d + t->ndim; /* t's dim aligned with dim d is k - ndim */
        if (k < ndim) {
            strides[d] = 0;
        } else if (t->shape[k - ndim] == shape[d]) {
            strides[d] = shape[d] == 1 ? 0 : t->strides[k - ndim];
        } else if (t->shape[k - ndim] == 1) {
            strides[d] = 0;
        } else {
            return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT,
                             "%s: dim %zu (%zu) does not broadcast to %zu (dim %zu of the result)", arg, k - ndim,
                             t->shape[k - ndim], shape[d], d);
        }
    }
    return TGL_OK;
}

tgl_status tgl__resolve_tensor(tgl_backend *b, const char *arg, tgl_ptr data, tgl_dtype dtype, size_t ndim,
                               const size_t *shape, const int64_t *strides, tgl__tensor_view *v)
{
    /* The extreme indices: `back` elements before data (negative strides), `ahead` after. No
     * allocation exceeds TGL__MAX_ALLOC_BYTES, so sums past it are out of range, not overflow. */
    const uint64_t limit = TGL__MAX_ALLOC_BYTES;
    uint64_t back = 0, ahead = 0, es = tgl_dtype_size(dtype);
    *v = (tgl__tensor_view){.dtype = dtype};
    if (!es) /* callers pass checked dtypes: never a block format */
        return tgl__fail(b, TGL_ERR_INTERNAL, "%s: %s has no element size", arg, tgl_dtype_name(dtype));
    for (size_t d = 0; d < ndim; d++) {
        uint64_t ext = shape[d] ? shape[d] - 1 : 0;
        uint64_t mag = strides[d] < 0 ? 0 - (uint64_t)strides[d] : (uint64_t)strides[d];
        if (ext && mag > limit / ext)
            return tgl__fail(b, TGL_ERR_INVALID_POINTER,
                             "%s: stride %lld over %zu elements reaches past any allocation (dim %zu)", arg,
                             (long long)strides[d], shape[d], d);
        *(strides[d] < 0 ? &back : &ahead) += mag * ext;
        if (back > limit || ahead > limit)
            return tgl__fail(b, TGL_ERR_INVALID_POINTER, "%s: the strides reach past any allocation (dim %zu)", arg, d);
        v->strides[d] = strides[d];
    }
    if ((back + ahead + 1) * es > limit)
        return tgl__fail(b, TGL_ERR_INVALID_POINTER, "%s: the strides reach past any allocation", arg);
    tgl__view at;
    tgl_status st = tgl__resolve(b, arg, data, (size_t)((ahead + 1) * es), &at);
    if (st)
        return st;
    if (at.offset % es)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "%s: offset %zu is not %llu-byte aligned", arg, at.offset,
                         (unsigned long long)es);
    if (at.offset < back * es)
        return tgl__fail(b, TGL_ERR_INVALID_POINTER,
                         "%s: negative strides reach %llu bytes before data, which is %zu bytes into its allocation",
                         arg, (unsigned long long)back * es, at.offset);
    v->view = (tgl__view){at.buf, at.offset - (size_t)(back * es)};
    v->base = (size_t)back;
    v->span = (size_t)(back + ahead + 1);
    return TGL_OK;
}

static int by_stride(const void *x, const void *y)
{
    const uint64_t *a = x, *c = y;
    return a[0] < c[0] ? -1 : a[0] > c[0];
}

tgl_status tgl__check_unique(tgl_backend *b, const char *arg, size_t ndim, const size_t *shape, const int64_t *strides)
{
    /* Sufficient for no two indices sharing an element: with the dims of extent > 1 in order of
     * |stride|, each stride passes everything the smaller ones reach. Layouts that interleave
     * without meeting (a stride of 2 inside one of 3 over 2 elements) are refused too. */
    uint64_t dims[TGL_MAX_DIMS][2];
    size_t k = 0;
    for (size_t d = 0; d < ndim; d++)
        if (shape[d] > 1) {
            dims[k][0] = strides[d] < 0 ? 0 - (uint64_t)strides[d] : (uint64_t)strides[d];
            dims[k++][1] = d;
        }
    qsort(dims, k, sizeof dims[0], by_stride);
    uint64_t reach = 0; /* elements spanned by the dims so far, minus one */
    for (size_t i = 0; i < k; i++) {
        size_t d = (size_t)dims[i][1];
        if (dims[i][0] <= reach)
            return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT,
                             "%s: reaches one element through two indices (dim %zu, stride %lld): an output may "
                             "not repeat elements",
                             arg, d, (long long)strides[d]);
        reach += dims[i][0] * (shape[d] - 1); /* bounded by the resolved range */
    }
    return TGL_OK;
}

int tgl__same_tensor(const tgl_tensor *a, const tgl_tensor *b)
{
    if (a->data != b->data || a->dtype != b->dtype || a->ndim != b->ndim)
        return 0;
    for (size_t d = 0; d < a->ndim; d++)
        if (a->strides[d] != b->strides[d])
            return 0;
    return 1;
}

int tgl__row_major(size_t ndim, const size_t *shape, const int64_t *strides)
{
    uint64_t want = 1; /* the next dim's stride; past INT64_MAX (a dim of 0 elsewhere) no stride is it */
    for (size_t d = ndim; d-- > 0;) {
        if (shape[d] == 1)
            continue;
        if (want > (uint64_t)INT64_MAX || strides[d] != (int64_t)want)
            return 0;
        want = shape[d] && want > UINT64_MAX / shape[d] ? UINT64_MAX : want * shape[d];
    }
    return 1;
}

tgl_tensor tgl__one_dim(const tgl_tensor *t)
{
    tgl_tensor r = *t;
    if (r.ndim == 0) {
        r.ndim = 1;
        r.shape[0] = 1;
        r.strides[0] = 0;
    }
    return r;
}
