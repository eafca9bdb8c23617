/* CPU strided gather (tgl_binary_broadcast, tgl_permute): walks the output in order and
 * decomposes each index into coordinates. */
#include "cpu_math.h"
#include "cpu_ops.h"

tgl_status tgl_cpu_strided(tgl_backend *b, int op, tgl__view a, tgl__view bb, tgl__view out, const tgl__strided *s)
{
    (void)b;
    const float *x = tgl_cpu_at(a), *y = op >= 0 ? tgl_cpu_at(bb) : NULL;
    float *z = tgl_cpu_at(out);
    for (size_t i = 0; i < s->n_out; i++) {
        size_t rest = i, ia = 0, ib = 0;
        for (size_t d = s->ndim; d-- > 0;) {
            size_t c = rest % s->shape[d];
            rest /= s->shape[d];
            ia += c * s->a_stride[d];
            ib += c * s->b_stride[d];
        }
        z[i] = op >= 0 ? tgl_cpu_binary((tgl_binary_op)op, x[ia], y[ib]) : x[ia];
    }
    return TGL_OK;
}
