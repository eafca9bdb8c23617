/* CPU row-wise ops, in double precision, one row at a time (rows are read fully before they are
 * written, so out == in works). */
#include "cpu_ops.h"

#include <math.h>

static void row_op(int kind, const float *x, const float *w, const float *bias, float *y, size_t cols,
                   double eps)
{
    double a = 0, s = 0;
    if (cols == 0)
        return;
    if (kind == TGL__ROWS_SOFTMAX || kind == TGL__ROWS_LOG_SOFTMAX) {
        a = -INFINITY; /* the row's max */
        for (size_t j = 0; j < cols; j++)
            a = x[j] > a ? x[j] : a;
        for (size_t j = 0; j < cols; j++)
            s += exp(x[j] - a);
        double log_s = log(s);
        for (size_t j = 0; j < cols; j++)
            y[j] = (float)(kind == TGL__ROWS_SOFTMAX ? exp(x[j] - a) / s : x[j] - a - log_s);
        return;
    }
    if (kind == TGL__ROWS_LAYERNORM) {
        for (size_t j = 0; j < cols; j++)
            a += x[j];
        a /= (double)cols; /* the mean */
    }
    for (size_t j = 0; j < cols; j++)
        s += (x[j] - a) * (x[j] - a);
    double inv = 1.0 / sqrt(s / (double)cols + eps);
    for (size_t j = 0; j < cols; j++) {
        double v = (x[j] - a) * inv;
        if (w)
            v *= w[j];
        if (bias)
            v += bias[j];
        y[j] = (float)v;
    }
}

tgl_status tgl_cpu_rows(tgl_backend *b, int kind, tgl__view in, tgl__view w, tgl__view bias, tgl__view out,
                        size_t rows, size_t cols, float eps)
{
    (void)b;
    const float *x = tgl_cpu_at(in);
    const float *wp = w.buf ? tgl_cpu_at(w) : NULL, *bp = bias.buf ? tgl_cpu_at(bias) : NULL;
    float *y = tgl_cpu_at(out);
    for (size_t r = 0; r < rows; r++)
        row_op(kind, x + r * cols, wp, bp, y + r * cols, cols, eps);
    return TGL_OK;
}
