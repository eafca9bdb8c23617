/* A linear layer with bias and GELU, PyTorch's nn.Linear layout: y = gelu(x W^T + b) for x
 * [batch, in], W [out, in], b [out]. The bias is broadcast into y by one tgl_copy (a source
 * stride of 0 repeats its row), then tgl_gemm adds x W^T on top of it (beta = 1), then GELU
 * runs in place. Checked against plain C loops.
 * Build against an installed tensorgl:  cc -std=c11 linear.c $(pkg-config --cflags --libs tensorgl) -lm */
#include <tensorgl.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define BATCH 5
#define IN 37
#define OUT 23

#define TRY(call)                                                                                   \
    do {                                                                                            \
        tgl_status st_ = (call);                                                                    \
        if (st_) {                                                                                  \
            fprintf(stderr, "%s: %s (%s)\n", #call, tgl_status_string(st_), tgl_last_error(be));    \
            tgl_close(be);                                                                          \
            return 1;                                                                               \
        }                                                                                           \
    } while (0)

int main(void)
{
    static float x[BATCH * IN], w[OUT * IN], bias[OUT], y[BATCH * OUT];
    srand(7);
    for (int i = 0; i < BATCH * IN; i++)
        x[i] = (float)rand() / RAND_MAX * 2.0f - 1.0f;
    for (int i = 0; i < OUT * IN; i++)
        w[i] = ((float)rand() / RAND_MAX * 2.0f - 1.0f) / sqrtf(IN);
    for (int i = 0; i < OUT; i++)
        bias[i] = (float)rand() / RAND_MAX - 0.5f;

    tgl_backend *be;
    if (tgl_open(NULL, &be)) {
        fprintf(stderr, "tgl_open: %s\n", tgl_last_error(NULL));
        return 1;
    }
    tgl_ptr dx, dw, db, dy;
    TRY(tgl_alloc(be, sizeof x, &dx));
    TRY(tgl_alloc(be, sizeof w, &dw));
    TRY(tgl_alloc(be, sizeof bias, &db));
    TRY(tgl_alloc(be, sizeof y, &dy));
    TRY(tgl_copy_htod(be, dx, x, sizeof x));
    TRY(tgl_copy_htod(be, dw, w, sizeof w));
    TRY(tgl_copy_htod(be, db, bias, sizeof bias));

    /* y = b in every row: the bias seen as a [BATCH, OUT] tensor whose row stride is 0 */
    tgl_tensor rows = tgl_tensor_contiguous(dy, TGL_DTYPE_F32, 2, (size_t[]){BATCH, OUT});
    tgl_tensor repeated = rows;
    repeated.data = db;
    repeated.strides[0] = 0;
    TRY(tgl_copy(be, &rows, &repeated));
    /* y += x W^T: m = BATCH, n = OUT, k = IN, W read transposed, beta = 1 keeps the bias */
    TRY(tgl_gemm(be, TGL_NO_TRANS, TGL_TRANS, BATCH, OUT, IN, 1.0f, dx, IN, dw, IN, 1.0f, dy, OUT));
    TRY(tgl_unary(be, TGL_UNARY_GELU_ERF, dy, dy, BATCH * OUT));
    TRY(tgl_copy_dtoh(be, y, dy, sizeof y)); /* waits for the three calls */

    double worst = 0.0;
    for (int r = 0; r < BATCH; r++)
        for (int o = 0; o < OUT; o++) {
            double s = bias[o];
            for (int i = 0; i < IN; i++)
                s += (double)x[r * IN + i] * w[o * IN + i];
            double want = 0.5 * s * (1.0 + erf(s / sqrt(2.0)));
            double err = fabs(y[r * OUT + o] - want);
            worst = err > worst ? err : worst;
        }
    printf("linear %dx%d -> %d with bias and GELU on %s: largest difference from the host loop %.2g\n", BATCH, IN,
           OUT, tgl_backend_name(be), worst);
    TRY(tgl_free(be, dx));
    TRY(tgl_free(be, dw));
    TRY(tgl_free(be, db));
    TRY(tgl_free(be, dy));
    tgl_close(be);
    return worst < 1e-4 ? 0 : 1;
}
