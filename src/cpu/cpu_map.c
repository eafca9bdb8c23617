/* CPU tgl_map and tgl_map_t: evaluate the tree per element. Nodes are stored children first, so
 * one pass in index order computes every node; each f32 node's value is rounded to f32, as GL
 * computes it; tgl_map_t's i32 nodes wrap as two's complement (cpu_math.h). */
#include "cpu_convert.h"
#include "cpu_math.h"
#include "cpu_ops.h"

tgl_status tgl_cpu_map(tgl_backend *b, const tgl_expr *e, const tgl__view *inputs, size_t n_inputs, tgl__view out,
                       size_t n)
{
    (void)b;
    const float *x[TGL_EXPR_MAX_INPUTS];
    for (size_t k = 0; k < n_inputs; k++)
        x[k] = tgl_cpu_at(inputs[k]);
    float *y = tgl_cpu_at(out);
    float v[TGL_EXPR_MAX_NODES] = {0}; /* leaves read their unused argument slots too */
    for (size_t i = 0; i < n; i++) {
        for (size_t k = 0; k < e->count; k++) {
            const tgl_expr_node *nd = &e->node[k];
            float a0 = v[nd->arg[0]], a1 = v[nd->arg[1]], a2 = v[nd->arg[2]];
            switch (nd->kind) {
            case TGL_EXPR_NUMBER: v[k] = nd->value; break;
            case TGL_EXPR_INPUT: v[k] = x[nd->op][i]; break;
            case TGL_EXPR_UNARY: v[k] = tgl_cpu_unary((tgl_unary_op)nd->op, a0); break;
            case TGL_EXPR_BINARY: v[k] = tgl_cpu_binary((tgl_binary_op)nd->op, a0, a1); break;
            case TGL_EXPR_CLAMP:
                v[k] = tgl_cpu_binary(TGL_BINARY_MIN, tgl_cpu_binary(TGL_BINARY_MAX, a0, a1), a2);
                break;
            case TGL_EXPR_SELECT: v[k] = a0 != 0.0f ? a1 : a2; break;
            case TGL_EXPR_COMPARE: v[k] = tgl_cpu_compare((tgl_compare_op)nd->op, a0, a1) ? 1.0f : 0.0f; break;
            }
        }
        y[i] = v[e->root];
    }
    return TGL_OK;
}

/* An input element as its node holds it: i32 (bool as 0 or 1) or f32 (halves exact). */
static void load_input(tgl_dtype dt, const uint8_t *p, int32_t *vi, float *vf)
{
    if (dt == TGL_DTYPE_I32)
        memcpy(vi, p, 4);
    else if (dt == TGL_DTYPE_BOOL)
        *vi = p[0] != 0;
    else
        *vf = tgl_cpu_load_f32(dt, p);
}

/* The i32 forms of the unary ops tgl_expr_types keeps in i32. */
static int32_t unary_i32(tgl_unary_op op, int32_t x)
{
    switch (op) {
    case TGL_UNARY_RELU: return x < 0 ? 0 : x;
    case TGL_UNARY_FLOOR:
    case TGL_UNARY_CEIL: return x;
    default: return tgl_cpu_unary_i32(op, x); /* neg, abs, square */
    }
}

void tgl_cpu_map_element(const tgl__tew *t, const uint8_t *const *x, uint8_t *o)
{
    const tgl_expr *e = t->expr;
    const uint8_t *is_int = t->expr_int;
    /* a node's value sits in the array of its type; unused argument slots name node 0, which
     * reads its own slot before writing it, hence the zeros */
    float vf[TGL_EXPR_MAX_NODES];
    int32_t vi[TGL_EXPR_MAX_NODES];
    vf[0] = 0.0f;
    vi[0] = 0;
    for (size_t k = 0; k < e->count; k++) {
        const tgl_expr_node *nd = &e->node[k];
        size_t a0 = nd->arg[0], a1 = nd->arg[1], a2 = nd->arg[2];
        /* each argument as an f32 (an i32 one rounded to nearest) */
        float f0 = is_int[a0] ? (float)vi[a0] : vf[a0], f1 = is_int[a1] ? (float)vi[a1] : vf[a1],
              f2 = is_int[a2] ? (float)vi[a2] : vf[a2];
        switch (nd->kind) {
        case TGL_EXPR_NUMBER:
            vi[k] = nd->ivalue;
            vf[k] = nd->value;
            break;
        case TGL_EXPR_INPUT: load_input(t->in[nd->op].dtype, x[nd->op], &vi[k], &vf[k]); break;
        case TGL_EXPR_UNARY:
            if (is_int[k])
                vi[k] = unary_i32((tgl_unary_op)nd->op, vi[a0]);
            else
                vf[k] = tgl_cpu_unary((tgl_unary_op)nd->op, f0);
            break;
        case TGL_EXPR_BINARY:
            if (is_int[k])
                vi[k] = tgl_cpu_binary_i32((tgl_binary_op)nd->op, vi[a0], vi[a1]);
            else
                vf[k] = tgl_cpu_binary((tgl_binary_op)nd->op, f0, f1);
            break;
        case TGL_EXPR_CLAMP:
            if (is_int[k])
                vi[k] = tgl_cpu_binary_i32(TGL_BINARY_MIN, tgl_cpu_binary_i32(TGL_BINARY_MAX, vi[a0], vi[a1]), vi[a2]);
            else
                vf[k] = tgl_cpu_binary(TGL_BINARY_MIN, tgl_cpu_binary(TGL_BINARY_MAX, f0, f1), f2);
            break;
        case TGL_EXPR_SELECT: {
            int take = is_int[a0] ? vi[a0] != 0 : vf[a0] != 0.0f; /* NaN is non-zero */
            if (is_int[k])
                vi[k] = take ? vi[a1] : vi[a2];
            else
                vf[k] = take ? f1 : f2;
            break;
        }
        case TGL_EXPR_COMPARE:
            if (is_int[a0] && is_int[a1])
                vi[k] = tgl_cpu_compare((tgl_compare_op)nd->op, vi[a0], vi[a1]);
            else
                vi[k] = tgl_cpu_compare((tgl_compare_op)nd->op, f0, f1);
            break;
        }
    }
    size_t r = e->root;
    if (is_int[r])
        tgl_cpu_convert(t->out.dtype, TGL_DTYPE_I32, (const uint8_t *)&vi[r], o);
    else
        tgl_cpu_convert(t->out.dtype, TGL_DTYPE_F32, (const uint8_t *)&vf[r], o);
}
