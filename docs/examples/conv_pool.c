/* A convolution block: conv2d (3x3, pad 1, with bias), ReLU, then 2x2 max pooling with stride 2
 * (tgl_pool2d, PyTorch's F.max_pool2d), all NCHW f32. Checked against plain C loops.
 * Build against an installed tensorgl:  cc -std=c11 conv_pool.c $(pkg-config --cflags --libs tensorgl) -lm */
#include <tensorgl.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define N 2
#define C 3
#define H 12
#define W 10
#define O 4
#define K 3

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
    static float image[N * C * H * W], filter[O * C * K * K], bias[O], pooled[N * O * (H / 2) * (W / 2)];
    srand(11);
    for (int i = 0; i < N * C * H * W; i++)
        image[i] = (float)rand() / RAND_MAX * 2.0f - 1.0f;
    for (int i = 0; i < O * C * K * K; i++)
        filter[i] = ((float)rand() / RAND_MAX * 2.0f - 1.0f) / 3.0f;
    for (int i = 0; i < O; i++)
        bias[i] = (float)rand() / RAND_MAX - 0.5f;

    tgl_backend *be;
    if (tgl_open(NULL, &be)) {
        fprintf(stderr, "tgl_open: %s\n", tgl_last_error(NULL));
        return 1;
    }
    tgl_conv2d_desc d = {.batch = N, .in_channels = C, .in_h = H, .in_w = W, .out_channels = O, .kernel_h = K,
                         .kernel_w = K, .pad_h = 1, .pad_w = 1};
    size_t oh, ow;
    TRY(tgl_conv2d_output_size(&d, &oh, &ow)); /* 12 x 10: "same" padding */
    const size_t conv_n = N * O * oh * ow;
    tgl_ptr dimg, dfil, dbias, dconv, dpool;
    TRY(tgl_alloc(be, sizeof image, &dimg));
    TRY(tgl_alloc(be, sizeof filter, &dfil));
    TRY(tgl_alloc(be, sizeof bias, &dbias));
    TRY(tgl_alloc(be, conv_n * sizeof(float), &dconv));
    TRY(tgl_alloc(be, sizeof pooled, &dpool));
    TRY(tgl_copy_htod(be, dimg, image, sizeof image));
    TRY(tgl_copy_htod(be, dfil, filter, sizeof filter));
    TRY(tgl_copy_htod(be, dbias, bias, sizeof bias));

    TRY(tgl_conv2d(be, &d, dimg, dfil, dbias, dconv));
    TRY(tgl_unary(be, TGL_UNARY_RELU, dconv, dconv, conv_n));
    /* stride 0: the kernel's (2 x 2), no padding: [N, O, oh / 2, ow / 2] */
    tgl_pool2d_desc pool = {.batch = N, .channels = O, .in_h = oh, .in_w = ow, .kernel_h = 2, .kernel_w = 2};
    TRY(tgl_pool2d(be, &pool, dconv, dpool));
    TRY(tgl_copy_dtoh(be, pooled, dpool, sizeof pooled));

    /* the same on the host: conv in double, ReLU, 2x2 max */
    static double conv[N * O * H * W];
    for (int n = 0; n < N; n++)
        for (int o = 0; o < O; o++)
            for (int y = 0; y < H; y++)
                for (int x = 0; x < W; x++) {
                    double s = bias[o];
                    for (int c = 0; c < C; c++)
                        for (int i = 0; i < K; i++)
                            for (int j = 0; j < K; j++) {
                                int iy = y + i - 1, ix = x + j - 1;
                                if (iy >= 0 && iy < H && ix >= 0 && ix < W)
                                    s += (double)image[((n * C + c) * H + iy) * W + ix] *
                                         filter[((o * C + c) * K + i) * K + j];
                            }
                    conv[((n * O + o) * H + y) * W + x] = s > 0.0 ? s : 0.0;
                }
    double worst = 0.0;
    for (int n = 0; n < N; n++)
        for (int o = 0; o < O; o++)
            for (int y = 0; y < H / 2; y++)
                for (int x = 0; x < W / 2; x++) {
                    const double *p = &conv[((n * O + o) * H + 2 * y) * W + 2 * x];
                    double m = fmax(fmax(p[0], p[1]), fmax(p[W], p[W + 1]));
                    double err = fabs(pooled[((n * O + o) * (H / 2) + y) * (W / 2) + x] - m);
                    worst = err > worst ? err : worst;
                }
    printf("conv %dx%dx%dx%d -> %d channels, ReLU, 2x2 max pool on %s: largest difference from the host loops %.2g\n",
           N, C, H, W, O, tgl_backend_name(be), worst);
    TRY(tgl_free(be, dimg));
    TRY(tgl_free(be, dfil));
    TRY(tgl_free(be, dbias));
    TRY(tgl_free(be, dconv));
    TRY(tgl_free(be, dpool));
    tgl_close(be);
    return worst < 1e-4 ? 0 : 1;
}
