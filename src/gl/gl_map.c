/* GL driver for tgl_map: generates MAP_EXPR from the parsed tree (glsl/map/map.comp), so the
 * program cache holds one kernel per distinct tree, whatever spacing or spelling produced it. */
#include "gl_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* GLSL function for each tgl_unary_op, indexed by the enum. */
static const char *const unary_fn[TGL_UNARY_COUNT] = {
    "tgl_neg", "abs", "exp", "log", "sqrt", "inversesqrt", "tgl_recip", "tgl_square", "sin",
    "cos", "tgl_tanh", "tgl_sigmoid", "tgl_relu", "tgl_gelu", "tgl_silu", "floor", "ceil",
};
static const char *const binary_fn[TGL_BINARY_COUNT] = {NULL, NULL, NULL, NULL, "tgl_max", "tgl_min", "tgl_pow"};
static const char binary_sym[TGL_BINARY_COUNT] = {'+', '-', '*', '/', 0, 0, 0};

typedef struct out_text {
    char *p;
    size_t len, cap;
    int slot[TGL_EXPR_MAX_INPUTS]; /* input k -> its binding among the used inputs */
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
    case TGL_EXPR_NUMBER: {
        uint32_t bits;
        memcpy(&bits, &n->value, sizeof bits);
        snprintf(buf, sizeof buf, "TGL_NUM(0x%08xu)", bits);
        return put(t, buf);
    }
    case TGL_EXPR_INPUT:
        snprintf(buf, sizeof buf, "X%d", t->slot[n->op]);
        return put(t, buf);
    case TGL_EXPR_UNARY:
        return put(t, unary_fn[n->op]) && put(t, "(") && emit(e, n->arg[0], t) && put(t, ")");
    case TGL_EXPR_BINARY:
        if (binary_sym[n->op]) {
            snprintf(buf, sizeof buf, " %c ", binary_sym[n->op]);
            return put(t, "(") && emit(e, n->arg[0], t) && put(t, buf) && emit(e, n->arg[1], t) && put(t, ")");
        }
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
    /* Every node's text is bounded (a number is the longest, 24 characters, plus separators). */
    out_text t = {malloc(128 + e->count * 48), 0, 128 + e->count * 48, {0}};
    tgl_gl_ew_run r = {"tgl_map", TGL_GL_EW_MAP, 0, NULL, {{0}}, 0, {0}, 0};
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
    snprintf(t.p, t.cap, "#define MAP_INPUTS %d\n#define MAP_OUT_BINDING %d\n#define MAP_OUT_LOC %d\n#define MAP_EXPR ",
             used, used, LOC_EW_OFF0 + used);
    t.len = strlen(t.p);
    if (!emit(e, e->root, &t) || !put(&t, "\n")) {
        free(t.p);
        return tgl__fail(b, TGL_ERR_INTERNAL, "tgl_map: generated expression exceeds its bound");
    }
    r.generated = t.p;
    r.nv = used + 1;
    tgl_status st = tgl_gl_run_elementwise(b, &r, n);
    free(t.p);
    return st;
}
