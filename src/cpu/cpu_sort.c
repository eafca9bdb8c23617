/* CPU tgl_sort and tgl_topk (tgl__sort): each line's (key, position) pairs in the temporary
 * buffer, sorted by key then position (a total order, so the result is the stable sort's and
 * the GL network's), the first k written. The keys are glsl/tensor/sort.comp's. */
#include "cpu_half.h"
#include "cpu_ops.h"

#include <stdlib.h>
#include <string.h>

/* The ascending sort key of an element's bits: unsigned order is the value's, -0 equal to +0,
 * NaN past every number; bool false before true. */
static uint32_t sort_key(tgl_dtype dt, uint32_t x)
{
    if (dt == TGL_DTYPE_I32)
        return x ^ 0x80000000u;
    if (dt == TGL_DTYPE_BOOL)
        return x != 0;
    uint32_t f = dt == TGL_DTYPE_F16 ? tgl_f16_to_f32_bits((uint16_t)x) : dt == TGL_DTYPE_BF16 ? x << 16 : x;
    if ((f & 0x7FFFFFFFu) > 0x7F800000u)
        return 0xFFFFFFFFu;
    if (f == 0x80000000u)
        f = 0;
    return f >> 31 ? ~f : f | 0x80000000u;
}

static int by_key(const void *a, const void *b)
{
    const uint32_t *x = a, *y = b;
    if (x[0] != y[0])
        return x[0] < y[0] ? -1 : 1;
    return x[1] < y[1] ? -1 : x[1] > y[1];
}

/* One line's (key, position) pairs at a time, 8 bytes a pair. */
uint64_t tgl_cpu_sort_temp_bytes(tgl_backend *b, const tgl__sort *s)
{
    (void)b;
    return (uint64_t)s->len * 8;
}

tgl_status tgl_cpu_sort(tgl_backend *b, const tgl__sort *s)
{
    const uint8_t *in = (const uint8_t *)tgl_cpu_at(s->in.view);
    uint8_t *values = (uint8_t *)tgl_cpu_at(s->values.view), *indices = (uint8_t *)tgl_cpu_at(s->indices.view);
    uint32_t *pairs = (uint32_t *)tgl_cpu_at(s->temp);
    if (!in || !pairs || (s->has_values && !values) || (s->has_indices && !indices))
        return tgl__fail(b, TGL_ERR_INTERNAL, "tgl_sort: an operand has no buffer");
    tgl_dtype dt = s->in.dtype;
    size_t es = tgl_dtype_size(dt), idx[TGL_MAX_DIMS] = {0};
    int64_t at[3] = {(int64_t)s->in.base, (int64_t)s->values.base, (int64_t)s->indices.base};
    for (size_t line = 0; line < s->n_lines; line++) {
        for (size_t p = 0; p < s->len; p++) {
            uint32_t x = 0;
            memcpy(&x, in + (at[0] + (int64_t)p * s->in_step) * (int64_t)es, es);
            uint32_t key = sort_key(dt, x);
            pairs[2 * p] = s->descending ? ~key : key;
            pairs[2 * p + 1] = (uint32_t)p;
        }
        qsort(pairs, s->len, 8, by_key);
        for (size_t p = 0; p < s->k; p++) {
            int64_t from = (int64_t)pairs[2 * p + 1];
            if (s->has_values) {
                const uint8_t *e = in + (at[0] + from * s->in_step) * (int64_t)es;
                uint8_t *o = values + (at[1] + (int64_t)p * s->v_step) * (int64_t)es;
                memcpy(o, e, es);
                if (dt == TGL_DTYPE_BOOL)
                    o[0] = e[0] != 0;
            }
            if (s->has_indices) {
                int32_t v = (int32_t)from;
                memcpy(indices + (at[2] + (int64_t)p * s->i_step) * 4, &v, 4);
            }
        }
        for (size_t d = s->ndim; d-- > 0;) { /* the next line: an odometer over the other dims */
            at[0] += s->in.strides[d];
            at[1] += s->has_values ? s->values.strides[d] : 0;
            at[2] += s->has_indices ? s->indices.strides[d] : 0;
            if (++idx[d] < s->shape[d])
                break;
            at[0] -= s->in.strides[d] * (int64_t)s->shape[d];
            at[1] -= s->has_values ? s->values.strides[d] * (int64_t)s->shape[d] : 0;
            at[2] -= s->has_indices ? s->indices.strides[d] * (int64_t)s->shape[d] : 0;
            idx[d] = 0;
        }
    }
    return TGL_OK;
}
