/* Tensor descriptors for the descriptor-op tests: random layouts and edge-value pools. */
#include "tensors.h"

#include <string.h>

/* A random layout of `shape` for dtype dt: dims permuted in memory, some reversed, gaps between
 * them; *bytes gets the allocation it needs (data at *front bytes, element-aligned) */
tgl_tensor tgt_random_layout(tgt_rng *r, tgl_dtype dt, size_t ndim, const size_t *shape, size_t *bytes)
{
    tgl_tensor t = {.dtype = dt, .ndim = ndim};
    size_t order[TGL_MAX_DIMS] = {0};
    for (size_t d = 0; d < ndim; d++)
        order[d] = d;
    for (size_t d = ndim; d > 1; d--) { /* shuffle */
        size_t k = tgt_below(r, d), tmp = order[d - 1];
        order[d - 1] = order[k];
        order[k] = tmp;
    }
    int64_t stride = 1 + (int64_t)tgt_below(r, 2);
    size_t back = 0, ahead = 0;
    for (size_t k = ndim; k-- > 0;) { /* order[ndim-1] innermost */
        size_t d = order[k];
        t.shape[d] = shape[d];
        int neg = tgt_below(r, 4) == 0;
        t.strides[d] = neg ? -stride : stride;
        size_t reach = (size_t)stride * (shape[d] ? shape[d] - 1 : 0);
        *(neg ? &back : &ahead) += reach;
        stride *= (int64_t)(shape[d] ? shape[d] : 1);
        stride += (int64_t)tgt_below(r, 3); /* a gap */
    }
    size_t es = tgl_dtype_size(dt), front = back + tgt_below(r, 5);
    t.data = front * es;
    *bytes = (front + ahead + 1 + tgt_below(r, 5)) * es;
    return t;
}

tgl_tensor tgt_dense_layout(tgt_rng *r, tgl_dtype dt, size_t ndim, const size_t *shape, size_t *bytes)
{
    size_t es = tgl_dtype_size(dt), n = 1, front = tgt_below(r, 6);
    for (size_t d = 0; d < ndim; d++)
        n *= shape[d];
    tgl_tensor t = tgl_tensor_contiguous(front * es, dt, ndim, shape);
    *bytes = (front + n + tgt_below(r, 6)) * es;
    return t;
}

/* Bytes of dtype dt drawn from a small pool of each type's edge values, so that equal elements,
 * NaNs, signed zeros, subnormals and integer limits meet often. */
void tgt_pool_fill(tgt_rng *r, tgl_dtype dt, uint8_t *p, size_t bytes)
{
    static const uint32_t f32[] = {0u, 0x80000000u, 0x3F800000u, 0xBF800000u, 0x3F000000u, 0x7FC00000u, 0xFFC00001u,
                                   0x7F800000u, 0xFF800000u, 1u, 2u, 0x80000001u, 0x7149F2CAu, 0x4B800001u};
    static const uint32_t f16[] = {0u, 0x8000u, 0x3C00u, 0xBC00u, 0x7C00u, 0xFC00u, 0x7E00u, 0x7C01u, 1u, 2u, 0x8001u};
    static const uint32_t bf16[] = {0u, 0x8000u, 0x3F80u, 0xBF80u, 0x7F80u, 0xFF80u, 0x7FC0u, 1u, 0x8001u, 0x3F81u};
    static const uint32_t i32[] = {0u, 1u, 0xFFFFFFFFu, 0x80000000u, 0x7FFFFFFFu, 2u, 0xFFFFFFFEu};
    static const uint32_t b8[] = {0u, 1u, 2u, 255u, 0u};
    const uint32_t *pool = dt == TGL_DTYPE_F32 ? f32 : dt == TGL_DTYPE_F16 ? f16 : dt == TGL_DTYPE_BF16 ? bf16
                           : dt == TGL_DTYPE_I32 ? i32 : b8;
    size_t count = dt == TGL_DTYPE_F32 ? 14 : dt == TGL_DTYPE_F16 ? 11 : dt == TGL_DTYPE_BF16 ? 10
                   : dt == TGL_DTYPE_I32 ? 7 : 5;
    size_t es = tgl_dtype_size(dt), i = 0;
    for (; i + es <= bytes; i += es) {
        uint32_t v = pool[tgt_below(r, count)];
        memcpy(p + i, &v, es);
    }
    for (; i < bytes; i++)
        p[i] = (uint8_t)tgt_next(r);
}

void tgt_broadcast_shapes(tgt_rng *r, size_t nin, size_t ndim, const size_t *shape, size_t *in_ndim,
                          size_t (*in_shape)[TGL_MAX_DIMS])
{
    /* each input keeps or drops (to 1) each dim; one input, the `full` one, keeps what the
     * others all dropped, so the broadcast is shape */
    size_t full = tgt_below(r, nin);
    for (size_t k = 0; k < nin; k++) {
        in_ndim[k] = k == full ? ndim : ndim - (ndim ? tgt_below(r, ndim + 1) : 0);
        for (size_t d = 0; d < in_ndim[k]; d++)
            in_shape[k][d] = tgt_below(r, 3) == 0 ? 1 : shape[d + ndim - in_ndim[k]];
    }
    for (size_t d = 0; d < ndim; d++) {
        int kept = 0;
        for (size_t k = 0; k < nin; k++)
            kept |= k != full && d + in_ndim[k] >= ndim && in_shape[k][d + in_ndim[k] - ndim] == shape[d];
        if (!kept)
            in_shape[full][d] = shape[d];
    }
}

size_t tgt_awkward_extent(tgt_rng *r, size_t most)
{
    static const size_t pick[] = {1, 2, 3, 5, 7, 13, 31, 33, 63, 65, 127, 129, 257};
    size_t n = sizeof pick / sizeof *pick;
    while (n > 1 && pick[n - 1] > most)
        n--;
    return pick[tgt_below(r, n)];
}
