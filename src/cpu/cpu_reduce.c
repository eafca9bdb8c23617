/* CPU reductions: double-precision accumulation along the axis, one output at a time. */
#include "../core/internal.h"
#include "cpu_ops.h"

#include <math.h>
#include <stdint.h>

tgl_status tgl_cpu_reduce(tgl_backend *b, tgl_reduce_op op, tgl__view in, tgl__view out, size_t outer,
                          size_t len, size_t inner)
{
    (void)b;
    const float *x = tgl_cpu_at(in);
    float *y = tgl_cpu_at(out);
    for (size_t o = 0; o < outer; o++) {
        for (size_t i = 0; i < inner; i++) {
            double acc = op == TGL_REDUCE_PROD ? 1.0 : op == TGL_REDUCE_MAX ? -INFINITY
                         : op == TGL_REDUCE_MIN ? INFINITY : 0.0;
            for (size_t j = 0; j < len; j++) {
                double v = x[(o * len + j) * inner + i];
                if (op == TGL_REDUCE_SUM || op == TGL_REDUCE_MEAN)
                    acc += v;
                else if (op == TGL_REDUCE_PROD)
                    acc *= v;
                else if (isnan(v) || isnan(acc))
                    acc = NAN;
                else if (op == TGL_REDUCE_MAX ? v > acc : v < acc)
                    acc = v;
            }
            if (op == TGL_REDUCE_MEAN)
                acc = len ? acc / (double)len : NAN;
            y[o * inner + i] = (float)acc;
        }
    }
    return TGL_OK;
}

tgl_status tgl_cpu_arg_reduce(tgl_backend *b, int want_max, tgl__view in, tgl__view out, size_t outer,
                              size_t len, size_t inner)
{
    (void)b;
    const float *x = tgl_cpu_at(in);
    int32_t *y = tgl_cpu_at(out);
    for (size_t o = 0; o < outer; o++) {
        for (size_t i = 0; i < inner; i++) {
            size_t best = 0;
            float bv = x[o * len * inner + i];
            for (size_t j = 1; j < len && !isnan(bv); j++) {
                float v = x[(o * len + j) * inner + i];
                if (isnan(v) || (want_max ? v > bv : v < bv)) {
                    best = j;
                    bv = v;
                }
            }
            y[o * inner + i] = (int32_t)best;
        }
    }
    return TGL_OK;
}
