/* tgl_map and tgl_map_t: parse the expression (even when there is nothing to compute, so a bad
 * one is always reported), check the inputs it names, then hand the tree to the backend
 * (tgl_map_t through the descriptor element-wise path, api_tensor_ewise.c's checks). */
#include "trace.h"
#include "validate.h"

#include <stdlib.h>

#define F32 sizeof(float)

/* *out = the parsed expression (heap: it is large) of a call with n_inputs inputs at `inputs`;
 * the caller frees it. */
static tgl_status parse(tgl_backend *b, const char *fn, const char *expr, const void *inputs, size_t n_inputs,
                        tgl_expr **out)
{
    *out = NULL;
    if (!expr)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "expr: NULL");
    if (n_inputs > TGL_EXPR_MAX_INPUTS)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "n_inputs: %zu, at most %d inputs (a..h)", n_inputs,
                         TGL_EXPR_MAX_INPUTS);
    if (n_inputs && !inputs)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "inputs: NULL with n_inputs %zu", n_inputs);
    tgl_expr *e = malloc(sizeof *e);
    if (!e)
        return tgl__fail(b, TGL_ERR_OUT_OF_MEMORY, "%s: no host memory for the expression", fn);
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
    *out = e;
    return TGL_OK;
}

TGL_API tgl_status tgl_map(tgl_backend *b, const char *expr, const tgl_ptr *inputs, size_t n_inputs, tgl_ptr out,
                           size_t n)
{
    if (tgl__hooked(b))
        return TGL__HOOK(MAP);
    tgl_status st = tgl__enter(b);
    if (st)
        return st;
    tgl_expr *e;
    if ((st = parse(b, "tgl_map", expr, inputs, n_inputs, &e)))
        return st;
    tgl__view vin[TGL_EXPR_MAX_INPUTS], vo;
    char name[32];
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

TGL_API tgl_status tgl_map_t(tgl_backend *b, const char *expr, const tgl_tensor *inputs, size_t n_inputs,
                             const tgl_tensor *out)
{
    if (tgl__hooked(b))
        return TGL__HOOK(MAP_T);
    tgl_status st = tgl__enter(b);
    if (st)
        return st;
    tgl_expr *parsed;
    if ((st = parse(b, "tgl_map_t", expr, inputs, n_inputs, &parsed)))
        return st;
    tgl__tew e = {.op = TGL__TEW_MAP, .nin = n_inputs, .expr = parsed};
    const tgl_tensor *in[TGL__TEW_MAX_INPUTS] = {NULL};
    char names[TGL__TEW_MAX_INPUTS][32];
    const char *name_of[TGL__TEW_MAX_INPUTS] = {NULL};
    for (size_t k = 0; k < n_inputs; k++) {
        in[k] = &inputs[k];
        snprintf(names[k], sizeof names[k], "inputs[%zu]", k);
        name_of[k] = names[k];
    }
    int empty = 0;
    st = tgl__check_tew(b, TGL__FN_MAP_T, out, "out", in, name_of, &e, &empty);
    uint8_t is_int[TGL_EXPR_MAX_NODES];
    if (!st && !empty) {
        unsigned int_inputs = 0; /* i32 and bool inputs: their nodes compute in i32 */
        for (size_t k = 0; k < n_inputs; k++)
            if (inputs[k].dtype == TGL_DTYPE_I32 || inputs[k].dtype == TGL_DTYPE_BOOL)
                int_inputs |= 1u << k;
        tgl_expr_types(parsed, int_inputs, is_int);
        e.expr_int = is_int;
        st = tgl__run_tew(b, &e, "tgl_map_t");
    }
    free(parsed);
    return st;
}
