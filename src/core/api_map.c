/* tgl_map and tgl_map_t: parse the expression (even when there is nothing to compute, so a bad
 * one is always reported), check the inputs it names, then hand the tree to the backend
 * (tgl_map_t through the descriptor element-wise path, api_tensor_ewise.c's checks). Where the
 * expression reads more inputs than the device's kernels may bind beside out, it runs in stages
 * through temporaries (expr_split.c). */
#include "trace.h"
#include "validate.h"

#include <stdlib.h>
#include <string.h>

#define F32 sizeof(float)

/* The inputs one kernel may read on this device where e reads more than that, else 0 (one
 * kernel). Only asked past 3 inputs: every device binds 4 storage blocks. */
static int stage_cap(tgl_backend *b, const tgl_expr *e)
{
    int used = 0;
    for (unsigned m = e->inputs_used; m; m &= m - 1)
        used++;
    if (used <= 3)
        return 0;
    struct tgl_device_info info;
    memset(&info, 0, sizeof info);
    b->vt->device_info(b, &info);
    if (!info.max_storage_blocks || info.max_storage_blocks > (uint32_t)used)
        return 0; /* no bound (CPU), or room for all and out */
    return info.max_storage_blocks - 1 < 3 ? 3 : (int)info.max_storage_blocks - 1;
}

/* The stages' plan and one stage's tree (heap: both are large). */
typedef struct staged {
    tgl_expr_plan plan;
    tgl_expr stage;
    int src[TGL_EXPR_MAX_INPUTS], n_src;
    void *temp;
    size_t temp_bytes, slot_elems;
} staged;

static tgl_status stages_begin(tgl_backend *b, const char *fn, const tgl_expr *e, int cap, size_t n, staged **out)
{
    staged *sg = calloc(1, sizeof *sg);
    tgl_status st;
    *out = NULL;
    if (!sg)
        return tgl__fail(b, TGL_ERR_OUT_OF_MEMORY, "%s: no host memory to plan its stages", fn);
    if (!tgl_expr_split(e, cap, &sg->plan)) {
        free(sg);
        return tgl__fail(b, TGL_ERR_INTERNAL, "%s: no plan of stages reading %d inputs each", fn, cap);
    }
    sg->slot_elems = n;
    if ((st = tgl__mul(b, "the temporaries", (size_t)sg->plan.n_slots * 4, n, &sg->temp_bytes)) ||
        (sg->temp_bytes && (st = tgl__temp_create(b, fn, sg->temp_bytes, &sg->temp)))) {
        free(sg);
        return st;
    }
    *out = sg;
    return TGL_OK;
}

static void stages_end(tgl_backend *b, staged *sg)
{
    if (sg->temp)
        tgl__temp_destroy(b, sg->temp, sg->temp_bytes);
    free(sg);
}

/* Temporary slot k: n elements of 4 bytes (f32 or i32). */
static tgl__view slot_view(const staged *sg, int slot)
{
    return (tgl__view){sg->temp, (size_t)slot * sg->slot_elems * 4};
}

static tgl_status map_in_stages(tgl_backend *b, const tgl_expr *e, const tgl__view *vin, tgl__view vo, size_t n,
                                int cap)
{
    staged *sg;
    tgl_status st = stages_begin(b, "tgl_map", e, cap, n, &sg);
    if (st || !sg) /* (stages_begin sets sg on success) */
        return st;
    for (int s = 0; !st && s < sg->plan.n_stages; s++) {
        tgl__view v[TGL_EXPR_MAX_INPUTS];
        if (!tgl_expr_stage(e, &sg->plan, s, &sg->stage, sg->src, &sg->n_src)) {
            st = tgl__fail(b, TGL_ERR_INTERNAL, "tgl_map: stage %d of %d has no tree", s, sg->plan.n_stages);
            break;
        }
        for (int k = 0; k < sg->n_src; k++)
            v[k] = sg->src[k] >= 0 ? vin[sg->src[k]] : slot_view(sg, -1 - sg->src[k]);
        tgl__view dst = s == sg->plan.n_stages - 1 ? vo : slot_view(sg, sg->plan.slot[s]);
        st = tgl__leave(b, b->vt->map(b, &sg->stage, v, (size_t)sg->n_src, dst, n));
    }
    stages_end(b, sg);
    return st;
}

static int is_int_dtype(tgl_dtype dt)
{
    return dt == TGL_DTYPE_I32 || dt == TGL_DTYPE_BOOL; /* their nodes compute in i32 */
}

static tgl__tensor_view temp_tensor(const staged *sg, int slot, int as_int, size_t ndim, const int64_t *dense)
{
    tgl__tensor_view t = {.view = slot_view(sg, slot), .dtype = as_int ? TGL_DTYPE_I32 : TGL_DTYPE_F32,
                          .base = 0, .span = sg->slot_elems};
    memcpy(t.strides, dense, ndim * sizeof *dense);
    return t;
}

/* tgl_map_t's stages: a temporary is a dense tensor of out's shape in its node's type (f32, or
 * i32 where the node computes in i32), so every stage reads its operands as one kernel would. */
static tgl_status map_t_in_stages(tgl_backend *b, const tgl__tew *e, const uint8_t *is_int, int cap)
{
    staged *sg;
    tgl_status st = stages_begin(b, "tgl_map_t", e->expr, cap, e->n, &sg);
    if (st || !sg) /* (stages_begin sets sg on success) */
        return st;
    int64_t dense[TGL_MAX_DIMS];
    int64_t step = 1;
    for (size_t d = e->ndim; d-- > 0;) {
        dense[d] = step;
        step *= (int64_t)e->shape[d];
    }
    uint8_t stage_int[TGL_EXPR_MAX_NODES];
    for (int s = 0; !st && s < sg->plan.n_stages; s++) {
        if (!tgl_expr_stage(e->expr, &sg->plan, s, &sg->stage, sg->src, &sg->n_src)) {
            st = tgl__fail(b, TGL_ERR_INTERNAL, "tgl_map_t: stage %d of %d has no tree", s, sg->plan.n_stages);
            break;
        }
        tgl__tew x = *e;
        unsigned int_inputs = 0;
        x.nin = (size_t)sg->n_src;
        for (int k = 0; k < sg->n_src; k++) {
            int src = sg->src[k];
            if (src >= 0) {
                x.in[k] = e->in[src];
                int_inputs |= (unsigned)is_int_dtype(e->in[src].dtype) << k;
                continue;
            }
            /* the temporary of the stage that wrote this slot most recently before s */
            int w = s - 1;
            while (w >= 0 && sg->plan.slot[w] != -1 - src)
                w--;
            int as_int = w >= 0 && is_int[sg->plan.root[w]];
            x.in[k] = temp_tensor(sg, -1 - src, as_int, e->ndim, dense);
            int_inputs |= (unsigned)as_int << k;
        }
        if (s < sg->plan.n_stages - 1)
            x.out = temp_tensor(sg, sg->plan.slot[s], is_int[sg->plan.root[s]], e->ndim, dense);
        x.expr = &sg->stage;
        tgl_expr_types(&sg->stage, int_inputs, stage_int);
        x.expr_int = stage_int;
        st = tgl__leave(b, b->vt->tensor_ewise(b, &x));
    }
    stages_end(b, sg);
    return st;
}

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
    if ((st = parse(b, "tgl_map", expr, inputs, n_inputs, &e)) || !e) /* (parse sets e on success) */
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
    int cap = !st && n ? stage_cap(b, e) : 0;
    if (!st && n)
        st = cap ? map_in_stages(b, e, vin, vo, n, cap) : tgl__leave(b, b->vt->map(b, e, vin, n_inputs, vo, n));
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
    if ((st = parse(b, "tgl_map_t", expr, inputs, n_inputs, &parsed)) || !parsed)
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
        unsigned int_inputs = 0;
        for (size_t k = 0; k < n_inputs; k++)
            int_inputs |= (unsigned)is_int_dtype(inputs[k].dtype) << k;
        tgl_expr_types(parsed, int_inputs, is_int);
        e.expr_int = is_int;
        int cap = b->vt->tensor_ewise ? stage_cap(b, parsed) : 0;
        st = cap ? map_t_in_stages(b, &e, is_int, cap) : tgl__run_tew(b, &e, "tgl_map_t");
    }
    free(parsed);
    return st;
}
