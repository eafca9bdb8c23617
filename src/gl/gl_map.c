/* GL driver for tgl_map: generates MAP_EXPR from the parsed tree (glsl/map/map.comp), so the
 * program cache holds one kernel per distinct tree, whatever spacing or spelling produced it. */
#include "gl_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* GLSL function for each tgl_unary_op, indexed by the enum. */
static const char *const unary_fn[TGL__UNARY_FLAT_KERNELS] = {
    "tgl_neg", "abs", "exp", "log", "sqrt", "inversesqrt", "tgl_recip", "tgl_square", "sin",
    "cos", "tgl_tanh", "tgl_sigmoid", "tgl_relu", "tgl_gelu", "tgl_silu", "floor", "ceil",
};
/* + - * / as map.comp's precise functions, so no compiler folds them (a-a, a*0) against IEEE */
static const char *const binary_fn[TGL__BINARY_FLAT_KERNELS] = {"tgl_add", "tgl_sub", "tgl_mul", "tgl_div",
                                                        "tgl_max", "tgl_min", "tgl_pow"};

typedef struct out_text {
    char *p;
    size_t len, cap;
    int slot[TGL_EXPR_MAX_INPUTS]; /* input k -> its binding among the used inputs */
    float nums[TGL_EXPR_MAX_NODES]; /* the numbers, in the order TGL_NUM(k) names them */
    int n_nums;
} out_text;

static int put(out_text *t, const char *s)
{
    size_t n = strlen(s);
    if (t->len + n + 1 > t->cap)
        return 0;
    memcpy(t->p + t->len, s, n + 1);
    t->len += n;
    return 1;
}

/* Writes node k; the tree's depth is bounded by the parser, so recursion is too. */
static int emit(const tgl_expr *e, size_t k, out_text *t)
{
    const tgl_expr_node *n = &e->node[k];
    char buf[48];
    switch (n->kind) {
    case TGL_EXPR_NUMBER: /* a uniform, not a literal the compiler could fold (map.comp) */
        if (t->n_nums >= TGL_EXPR_MAX_NODES)
            return 0;
        t->nums[t->n_nums] = n->value;
        snprintf(buf, sizeof buf, "TGL_NUM(%d)", t->n_nums++);
        return put(t, buf);
    case TGL_EXPR_INPUT:
        snprintf(buf, sizeof buf, "X%d", t->slot[n->op]);
        return put(t, buf);
    case TGL_EXPR_UNARY:
        return put(t, unary_fn[n->op]) && put(t, "(") && emit(e, n->arg[0], t) && put(t, ")");
    case TGL_EXPR_BINARY:
        return put(t, binary_fn[n->op]) && put(t, "(") && emit(e, n->arg[0], t) && put(t, ", ") &&
               emit(e, n->arg[1], t) && put(t, ")");
    case TGL_EXPR_CLAMP:
        return put(t, "tgl_min(tgl_max(") && emit(e, n->arg[0], t) && put(t, ", ") && emit(e, n->arg[1], t) &&
               put(t, "), ") && emit(e, n->arg[2], t) && put(t, ")");
    case TGL_EXPR_SELECT:
        return put(t, "tgl_select(") && emit(e, n->arg[0], t) && put(t, ", ") && emit(e, n->arg[1], t) &&
               put(t, ", ") && emit(e, n->arg[2], t) && put(t, ")");
    }
    return 0;
}

/* Only the inputs the expression uses are bound, renumbered in order, so every uniform the
 * kernel declares is live; the element-wise runner then handles windows, vec4 and chunks, and
 * lists the kernel's read and piece variants (with its standalone default expression). */
tgl_status tgl_gl_map(tgl_backend *b, const tgl_expr *e, const tgl__view *inputs, size_t n_inputs, tgl__view out,
                      size_t n)
{
    /* Every node's text is bounded (a function name is the longest, plus separators). */
    out_text t = {malloc(160 + e->count * 48), 0, 160 + e->count * 48, {0}, {0}, 0};
    tgl_gl_ew_run r = {.op_name = "tgl_map", .kernel = TGL_GL_EW_MAP};
    tgl__view *v = r.v;
    int used = 0;
    if (!t.p)
        return tgl__fail(b, TGL_ERR_OUT_OF_MEMORY, "tgl_map: no host memory for the kernel");
    for (size_t k = 0; k < n_inputs; k++) {
        if (e->inputs_used >> k & 1u) {
            t.slot[k] = used;
            v[used++] = inputs[k];
        }
    }
    v[used] = out;
    int numbers = 0;
    for (size_t k = 0; k < e->count; k++)
        numbers += e->node[k].kind == TGL_EXPR_NUMBER;
    snprintf(t.p, t.cap,
             "#define MAP_INPUTS %d\n#define MAP_OUT_BINDING %d\n#define MAP_OUT_LOC %d\n#define MAP_NUMS %d\n"
             "#define MAP_EXPR ", used, used, LOC_EW_OFF0 + used, numbers);
    t.len = strlen(t.p);
    if (!emit(e, e->root, &t) || !put(&t, "\n")) {
        free(t.p);
        return tgl__fail(b, TGL_ERR_INTERNAL, "tgl_map: generated expression exceeds its bound");
    }
    if (t.n_nums != numbers) {
        free(t.p);
        return tgl__fail(b, TGL_ERR_INTERNAL, "tgl_map: %d numbers emitted of the tree's %d", t.n_nums, numbers);
    }
    r.generated = t.p;
    r.nv = used + 1;
    r.nums = t.nums;
    r.n_nums = t.n_nums;
    tgl_status st = tgl_gl_run_elementwise(b, &r, n);
    free(t.p);
    return st;
}
