/* tgl_triu and tgl_tril (tensorgl.h): the descriptors through the element-wise checking path
 * (api_tensor_ewise.c), the diagonal clamped once here to the range the kernels compare in. */
#include "trace.h"
#include "validate.h"

static tgl_status triangle(tgl_backend *b, tgl__fn row, const char *fn, int upper, const tgl_tensor *in,
                           const tgl_tensor *out, int64_t diagonal)
{
    tgl_status st = tgl__enter(b);
    if (st)
        return st;
    tgl__tew e = {.op = TGL__TEW_TRIANGLE, .sub = upper, .nin = 1};
    const tgl_tensor *ins[TGL__TEW_MAX_INPUTS] = {in};
    static const char *const names[TGL__TEW_MAX_INPUTS] = {"in"};
    int empty = 0;
    if ((st = tgl__check_tew(b, row, out, "out", ins, names, &e, &empty)))
        return st;
    if (e.ndim < 2)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "out: %s takes matrices in the last two dims, not %zu dims", fn,
                         e.ndim);
    /* |col - row| < 2^31 for matrices the kernels take: a diagonal past it keeps all or nothing */
    int64_t d = diagonal > INT32_MAX ? INT32_MAX : diagonal < -INT32_MAX ? -INT32_MAX : diagonal;
    e.value = (uint32_t)(int32_t)d;
    return empty ? TGL_OK : tgl__run_tew(b, &e, fn);
}

TGL_API tgl_status tgl_triu(tgl_backend *b, const tgl_tensor *in, const tgl_tensor *out, int64_t diagonal)
{
    if (tgl__hooked(b))
        return TGL__HOOK(TRIU);
    return triangle(b, TGL__FN_TRIU, "tgl_triu", 1, in, out, diagonal);
}

TGL_API tgl_status tgl_tril(tgl_backend *b, const tgl_tensor *in, const tgl_tensor *out, int64_t diagonal)
{
    if (tgl__hooked(b))
        return TGL__HOOK(TRIL);
    return triangle(b, TGL__FN_TRIL, "tgl_tril", 0, in, out, diagonal);
}
