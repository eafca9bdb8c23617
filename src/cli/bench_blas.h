/* OpenBLAS for the bench commands' CPU reference, loaded at run time when installed
 * (libopenblas0), so neither the library nor the command depends on it. */
#ifndef TGL_CLI_BENCH_BLAS_H
#define TGL_CLI_BENCH_BLAS_H

/* CBLAS entry points, by their ABI (enum arguments are ints). */
typedef void (*tgl_sgemm_fn)(int, int, int, int, int, int, float, const float *, int, const float *, int, float,
                             float *, int);
typedef void (*tgl_sgemv_fn)(int, int, int, int, float, const float *, int, const float *, int, float, float *, int);
enum { TGL_CBLAS_ROW_MAJOR = 101, TGL_CBLAS_NO_TRANS = 111 };

typedef struct tgl_blas {
    void *lib;
    tgl_sgemm_fn sgemm; /* NULL when OpenBLAS is missing */
    tgl_sgemv_fn sgemv;
} tgl_blas;

tgl_blas tgl_blas_load(void);
void tgl_blas_unload(tgl_blas *o);

#endif
