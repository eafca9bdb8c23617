/* C = A * B with tgl_gemm (row-major, f32), checked against a host loop.
 * Build against an installed tensorgl:  cc -std=c11 gemm.c $(pkg-config --cflags --libs tensorgl) -lm */
#include <tensorgl.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define M 67
#define N 45
#define K 130

int main(void)
{
    static float a[M * K], b[K * N], c[M * N];
    srand(1);
    for (int i = 0; i < M * K; i++)
        a[i] = (float)rand() / RAND_MAX - 0.5f;
    for (int i = 0; i < K * N; i++)
        b[i] = (float)rand() / RAND_MAX - 0.5f;

    tgl_backend *be;
    if (tgl_open(NULL, &be)) {
        fprintf(stderr, "tgl_open: %s\n", tgl_last_error(NULL));
        return 1;
    }
    tgl_ptr da = 0, db = 0, dc = 0;
    tgl_status st;
    if ((st = tgl_alloc(be, sizeof a, &da)) || (st = tgl_alloc(be, sizeof b, &db)) ||
        (st = tgl_alloc(be, sizeof c, &dc)) || (st = tgl_copy_htod(be, da, a, sizeof a)) ||
        (st = tgl_copy_htod(be, db, b, sizeof b)) ||
        /* m, n, k, alpha, A and its row length, B and its row length, beta (0: C is not read), C */
        (st = tgl_gemm(be, TGL_NO_TRANS, TGL_NO_TRANS, M, N, K, 1.0f, da, K, db, N, 0.0f, dc, N)) ||
        (st = tgl_copy_dtoh(be, c, dc, sizeof c))) {
        fprintf(stderr, "%s: %s\n", tgl_status_string(st), tgl_last_error(be));
        tgl_close(be);
        return 1;
    }
    double worst = 0;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double ref = 0;
            for (int p = 0; p < K; p++)
                ref += (double)a[i * K + p] * b[p * N + j];
            worst = fmax(worst, fabs(ref - c[i * N + j]));
        }
    printf("gemm %dx%dx%d on %s: largest error %.2g\n", M, N, K, tgl_backend_name(be), worst);
    tgl_close(be);
    return worst > 1e-4;
}
