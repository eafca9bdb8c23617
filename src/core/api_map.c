/* tgl_map: parse the expression (even when n is 0, so a bad one is always reported), check
 * the inputs it names, then hand the tree to the backend. */
#include "trace.h"
#include "validate.h"

#include <stdlib.h>

#define F32 sizeof(float)

TGL_API tgl_status tgl_map(tgl_backend *b, const char *expr, const tgl_ptr *inputs, size_t n_inputs, tgl_ptr out,
                           size_t n)
{
    if (tgl__hooked(b))
        return TGL__HOOK(MAP);
    tgl_status st = tgl__enter(b);
    if (st)
        return st;
    if (!expr)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "expr: NULL");
    if (n_inputs > TGL_EXPR_MAX_INPUTS)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "n_inputs: %zu, at most %d inputs (a..h)", n_inputs,
                         TGL_EXPR_MAX_INPUTS);
    if (n_inputs && !inputs)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "inputs: NULL with n_inputs %zu", n_inputs);
    tgl_expr *e = malloc(sizeof *e);
    if (!e)
        return tgl__fail(b, TGL_ERR_OUT_OF_MEMORY, "tgl_map: no host memory for the expression");
    char why[256];
    if (!tgl_expr_parse(expr, e, why, sizeof why)) {
        free(e);
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "expr: %s", why);
    }
    for (size_t k = n_inputs; k < TGL_EXPR_MAX_INPUTS; k++) {
        if (e->inputs_used >> k & 1u) {
            free(e);
            return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "expr uses input '%c' but n_inputs is %zu", (char)('a' + k),
                             n_inputs);
        }
    }
    tgl__view vin[TGL_EXPR_MAX_INPUTS], vo;
    char name[16];
    st = n == 0 ? TGL_OK : tgl__resolve_array(b, "out", out, n, F32, &vo);
    for (size_t k = 0; !st && n && k < n_inputs; k++) {
        snprintf(name, sizeof name, "inputs[%zu]", k);
        if (!(st = tgl__resolve_array(b, name, inputs[k], n, F32, &vin[k])))
            st = tgl__check_alias(b, name, vin[k], n * F32, vo, n * F32);
    }
    if (!st && n && !b->vt->map)
        st = tgl__unsupported(b, "tgl_map");
    if (!st && n)
        st = tgl__leave(b, b->vt->map(b, e, vin, n_inputs, vo, n));
    free(e);
    return st;
}
