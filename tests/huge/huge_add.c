/* `make check-huge`: an add of 2^LOG2 floats (default 2^29: 2 GiB per array, 6 GiB in all) on
 * the GL backend, far past GL_MAX_SHADER_STORAGE_BLOCK_SIZE (128 MiB on llvmpipe) and past one
 * dispatch's workgroup limit, so it runs as many windows; every element is read back and
 * checked. Not in `make check`: it needs ~6.5 GiB of RAM (llvmpipe) or device memory.
 * Usage: huge_add [LOG2]   Exit 0 when every element is right. */
#include "tensorgl.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

#define TRY(call)                                                                        \
    do {                                                                                 \
        if ((call) != TGL_OK) {                                                          \
            fprintf(stderr, "huge_add: %s: %s\n", #call, tgl_last_error(b));             \
            return 1;                                                                    \
        }                                                                                \
    } while (0)

int main(int argc, char **argv)
{
    int log2n = argc > 1 ? atoi(argv[1]) : 29;
    if (log2n < 10 || log2n > 34) {
        fprintf(stderr, "usage: huge_add [LOG2 in 10..34]\n");
        return 2;
    }
    size_t n = (size_t)1 << log2n, chunk = (size_t)1 << 20, wrong = 0;
    tgl_options o = {.kind = TGL_BACKEND_GL};
    tgl_backend *b = NULL;
    if (tgl_open(&o, &b)) {
        fprintf(stderr, "huge_add: %s\n", tgl_last_error(NULL));
        return 1;
    }
    struct tgl_device_info info;
    tgl_device_info(b, &info);
    tgl_ptr x, y, z;
    TRY(tgl_alloc(b, n * sizeof(float), &x));
    TRY(tgl_alloc(b, n * sizeof(float), &y));
    TRY(tgl_alloc(b, n * sizeof(float), &z));
    /* x[i] = i mod 4096, y = 0.5: every element's sum is distinct within a window and exact. */
    float *h = malloc(chunk * sizeof(float));
    if (!h)
        return 1;
    for (size_t i = 0; i < chunk; i++)
        h[i] = (float)(i % 4096);
    double t0 = now();
    for (size_t off = 0; off < n; off += chunk)
        TRY(tgl_copy_htod(b, x + off * sizeof(float), h, chunk * sizeof(float)));
    TRY(tgl_fill(b, y, 0.5f, n));
    TRY(tgl_synchronize(b));
    double t1 = now();
    TRY(tgl_binary(b, TGL_BINARY_ADD, x, y, z, n));
    TRY(tgl_synchronize(b));
    double t2 = now();
    for (size_t off = 0; off < n; off += chunk) {
        TRY(tgl_copy_dtoh(b, h, z + off * sizeof(float), chunk * sizeof(float)));
        for (size_t i = 0; i < chunk; i++)
            wrong += h[i] != (float)(i % 4096) + 0.5f;
    }
    printf("huge_add on %s: 2^%d floats (%.2f GiB per array, max SSBO block %.0f MiB): upload+fill %.2f s, "
           "add %.2f s (%.1f GB/s), %zu wrong elements\n",
           info.renderer, log2n, (double)n * 4.0 / (1 << 30), (double)info.max_ssbo_block_size / (1 << 20), t1 - t0,
           t2 - t1, 12.0 * (double)n / (t2 - t1) * 1e-9, wrong);
    free(h);
    tgl_close(b);
    return wrong != 0;
}
