/* tgl_one_hot (tensorgl.h): the indices seen with a last dim of out's classes at stride 0,
 * through the descriptor element-wise path, whose kernels compare each element's index with its
 * last coordinate. */
#include "trace.h"
#include "validate.h"

TGL_API tgl_status tgl_one_hot(tgl_backend *b, const tgl_tensor *indices, const tgl_tensor *out)
{
    if (tgl__hooked(b))
        return TGL__HOOK(ONE_HOT);
    tgl_status st = tgl__enter(b);
    if (st)
        return st;
    if (!indices || !out)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "%s: NULL", indices ? "out" : "indices");
    if (out->ndim == 0)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "out: 0 dims (its last dim holds the classes)");
    if (indices->ndim >= TGL_MAX_DIMS)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "indices: %zu dims; out has one more, at most %d", indices->ndim,
                         TGL_MAX_DIMS);
    tgl_tensor classes = *indices; /* one index per row of out: a last dim of stride 0 repeats it */
    classes.shape[classes.ndim] = out->ndim <= TGL_MAX_DIMS ? out->shape[out->ndim - 1] : 1;
    classes.strides[classes.ndim] = 0;
    classes.ndim++;
    tgl__tew e = {.op = TGL__TEW_ONE_HOT, .nin = 1};
    const tgl_tensor *ins[TGL__TEW_MAX_INPUTS] = {&classes};
    static const char *const names[TGL__TEW_MAX_INPUTS] = {"indices"};
    int empty = 0;
    if ((st = tgl__check_tew(b, TGL__FN_ONE_HOT, out, "out", ins, names, &e, &empty)) || empty)
        return st;
    return tgl__run_tew(b, &e, "tgl_one_hot");
}
