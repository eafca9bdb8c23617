/* CPU placement pass of tgl_masked_select and tgl_nonzero (tgl__compact): walks the index space
 * in row-major order (an odometer over the coordinates, the flag's and value's offsets kept as
 * it goes) and writes each taken element at its place from the core's prefix count. */
#include "cpu_ops.h"

#include <string.h>

/* Whether the element of dtype dt at p is taken: a bool's non-zero byte, a number other than
 * +-0 (NaN included), read from its bits. */
static int taken(tgl_dtype dt, const uint8_t *p)
{
    uint32_t bits = 0;
    size_t size = tgl_dtype_size(dt);
    memcpy(&bits, p, size); /* little-endian: the element in the low bytes */
    if (dt == TGL_DTYPE_F32)
        bits &= 0x7FFFFFFFu;
    else if (dt == TGL_DTYPE_F16 || dt == TGL_DTYPE_BF16)
        bits &= 0x7FFFu;
    return bits != 0;
}

tgl_status tgl_cpu_compact(tgl_backend *b, const tgl__compact *c)
{
    const uint8_t *flag = (const uint8_t *)tgl_cpu_at(c->flag.view), *val = (const uint8_t *)tgl_cpu_at(c->val.view);
    const int32_t *prefix = (const int32_t *)tgl_cpu_at(c->prefix);
    uint8_t *out = (uint8_t *)tgl_cpu_at(c->out.view);
    if (!flag || !prefix || (!c->nonzero && !val) || (!out && (!c->nonzero || c->ndim)))
        return tgl__fail(b, TGL_ERR_INTERNAL, "%s: an operand has no buffer", c->nonzero ? "tgl_nonzero" : "tgl_masked_select");
    size_t fs = tgl_dtype_size(c->flag.dtype), os = tgl_dtype_size(c->out.dtype);
    int64_t f_at = (int64_t)c->flag.base, v_at = (int64_t)c->val.base;
    size_t idx[TGL_MAX_DIMS] = {0};
    for (size_t i = 0; i < c->n; i++) {
        if (taken(c->flag.dtype, flag + f_at * (int64_t)fs)) {
            int64_t k = (int64_t)prefix[i] - 1;
            uint8_t *o = out + ((int64_t)c->out.base + k * c->out.strides[0]) * (int64_t)os;
            if (c->nonzero)
                for (size_t d = 0; d < c->ndim; d++) {
                    int32_t coord = (int32_t)idx[d];
                    memcpy(o + (int64_t)d * c->out.strides[1] * 4, &coord, 4);
                }
            else if (c->out.dtype == TGL_DTYPE_BOOL)
                o[0] = val[v_at] != 0;
            else
                memcpy(o, val + v_at * (int64_t)os, os);
        }
        for (size_t d = c->ndim; d-- > 0;) { /* the odometer */
            f_at += c->flag.strides[d];
            v_at += c->val.strides[d];
            if (++idx[d] < c->shape[d])
                break;
            f_at -= c->flag.strides[d] * (int64_t)c->shape[d];
            v_at -= c->val.strides[d] * (int64_t)c->shape[d];
            idx[d] = 0;
        }
    }
    return TGL_OK;
}
