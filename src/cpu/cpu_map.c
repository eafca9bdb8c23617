/* CPU tgl_map: evaluates the tree per element. Nodes are stored children first, so one pass in
 * index order computes every node; each node's value is rounded to f32, as GL computes it. */
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
            }
        }
        y[i] = v[e->root];
    }
    return TGL_OK;
}
