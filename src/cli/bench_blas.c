/* Run-time loading of OpenBLAS for the bench commands (bench_blas.h). */
#include "bench_blas.h"

#include <dlfcn.h>
#include <stddef.h>

tgl_blas tgl_blas_load(void)
{
    tgl_blas o = {0};
    o.lib = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
    if (o.lib) {
        *(void **)&o.sgemm = dlsym(o.lib, "cblas_sgemm");
        *(void **)&o.sgemv = dlsym(o.lib, "cblas_sgemv");
    }
    return o;
}

void tgl_blas_unload(tgl_blas *o)
{
    if (o->lib)
        dlclose(o->lib);
    o->lib = NULL;
    o->sgemm = NULL;
    o->sgemv = NULL;
}
