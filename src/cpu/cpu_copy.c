/* CPU tgl_copy: walks dst's index space in row-major order (an odometer over the coordinates),
 * converting each element (cpu_convert.h). */
#include "cpu_convert.h"
#include "cpu_ops.h"

tgl_status tgl_cpu_copy_tensor(tgl_backend *b, const tgl__copy *c)
{
    (void)b;
    if (c->in_place && c->dst.dtype != TGL_DTYPE_BOOL)
        return TGL_OK; /* every element is already what it would be written as */
    const size_t ds = tgl_dtype_size(c->dst.dtype), ss = tgl_dtype_size(c->src.dtype);
    uint8_t *dst = (uint8_t *)tgl_cpu_at(c->dst.view);
    const uint8_t *src = (const uint8_t *)tgl_cpu_at(c->src.view);
    size_t idx[TGL_MAX_DIMS] = {0};
    int64_t at_d = (int64_t)c->dst.base, at_s = (int64_t)c->src.base; /* element offsets from the views */
    for (size_t i = 0; i < c->n; i++) {
        tgl_cpu_convert(c->dst.dtype, c->src.dtype, src + at_s * (int64_t)ss, dst + at_d * (int64_t)ds);
        for (size_t d = c->ndim; d-- > 0;) { /* next index: carry through the dims */
            if (++idx[d] < c->shape[d]) {
                at_d += c->dst.strides[d];
                at_s += c->src.strides[d];
                break;
            }
            at_d -= c->dst.strides[d] * (int64_t)(c->shape[d] - 1);
            at_s -= c->src.strides[d] * (int64_t)(c->shape[d] - 1);
            idx[d] = 0;
        }
    }
    return TGL_OK;
}
