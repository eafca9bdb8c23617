/* tgl_copy: one descriptor copied into another, broadcasting and converting (tensorgl.h). */
#include "trace.h"
#include "validate.h"

/* The same elements: one byte range, dtype and stride along every dim that has more than one
 * index (src's strides already in dst's index space). */
static int same_elements(const tgl__copy *c)
{
    if (c->dst.view.offset != c->src.view.offset || c->dst.dtype != c->src.dtype || c->dst.base != c->src.base)
        return 0;
    for (size_t d = 0; d < c->ndim; d++)
        if (c->shape[d] > 1 && c->dst.strides[d] != c->src.strides[d])
            return 0;
    return 1;
}

TGL_API tgl_status tgl_copy(tgl_backend *b, const tgl_tensor *dst, const tgl_tensor *src)
{
    if (tgl__hooked(b))
        return TGL__HOOK(COPY);
    tgl_status st = tgl__enter(b);
    tgl__copy c = {0};
    size_t n_src;
    int64_t src_strides[TGL_MAX_DIMS] = {0};
    const unsigned dtypes = tgl__fn_dtypes(TGL__FN_COPY);
    if (st || (st = tgl__tensor_shape(b, "tgl_copy", "dst", dst, dtypes, &c.n)) ||
        (st = tgl__tensor_shape(b, "tgl_copy", "src", src, dtypes, &n_src)))
        return st;
    c.ndim = dst->ndim;
    for (size_t d = 0; d < c.ndim; d++)
        c.shape[d] = dst->shape[d];
    if ((st = tgl__broadcast_to(b, "src", src, c.ndim, c.shape, src_strides)))
        return st;
    if (c.n == 0)
        return TGL_OK;
    if ((st = tgl__resolve_tensor(b, "dst", dst->data, dst->dtype, c.ndim, c.shape, dst->strides, &c.dst)) ||
        (st = tgl__resolve_tensor(b, "src", src->data, src->dtype, c.ndim, c.shape, src_strides, &c.src)) ||
        (st = tgl__check_unique(b, "dst", c.ndim, c.shape, dst->strides)))
        return st;
    size_t dst_bytes = c.dst.span * tgl_dtype_size(c.dst.dtype), src_bytes = c.src.span * tgl_dtype_size(c.src.dtype);
    if (tgl__overlaps(c.dst.view, dst_bytes, c.src.view, src_bytes)) {
        if (!same_elements(&c))
            return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT,
                             "dst overlaps src (bytes %zu..%zu and %zu..%zu of one allocation) without being the "
                             "same elements",
                             c.dst.view.offset, c.dst.view.offset + dst_bytes - 1, c.src.view.offset,
                             c.src.view.offset + src_bytes - 1);
        c.in_place = 1;
    }
    if (!b->vt->copy_tensor)
        return tgl__unsupported(b, "tgl_copy");
    return tgl__leave(b, b->vt->copy_tensor(b, &c));
}
