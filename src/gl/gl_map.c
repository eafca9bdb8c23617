/* GL driver for tgl_map: generates MAP_EXPR from the parsed tree (glsl/map/map.comp), so the
 * program cache holds one kernel per distinct tree, whatever spacing or spelling produced it. */
#include "gl_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* GLSL function for each tgl_unary_op, indexed by the enum. */
static const char *const unary_fn[TGL__UNARY_FLAT_KERNELS] = {
    "tgl_neg", "abs", "exp", "tgl_log", "sqrt", "inversesqrt", "tgl_recip", "tgl_square", "tgl_sin",
    "tgl_cos", "tgl_tanh", "tgl_sigmoid", "tgl_relu", "tgl_gelu", "tgl_silu", "floor", "ceil",
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
    case TGL_EXPR_COMPARE: /* 1.0 or 0.0 (common/map_ops.glsl) */
        snprintf(buf, sizeof buf, "tgl_fcmpf(%uu, ", (unsigned)n->op);
        return put(t, buf) && emit(e, n->arg[0], t) && put(t, ", ") && emit(e, n->arg[1], t) && put(t, ")");
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

/* ---- tgl_map_t: typed nodes over descriptors (glsl/tensor/map.comp) ---- */

typedef struct typed_text {
    out_text t;
    const uint8_t *is_int; /* tgl_expr_types */
    GLuint *nums;          /* the numbers' bits, in the order TGL_FNUM / TGL_INUM name them */
} typed_text;

static int emit_t(const tgl_expr *e, size_t k, typed_text *x, int as_float);

/* Node k as an f32 (an i32 node rounded by tgl_itof) or in its own type. */
static int arg_t(const tgl_expr *e, size_t k, typed_text *x, int as_float)
{
    if (as_float && x->is_int[k])
        return put(&x->t, "tgl_itof(") && emit_t(e, k, x, 0) && put(&x->t, ")");
    return emit_t(e, k, x, 0);
}

/* Writes node k in its type (as_float: converted to f32). */
static int emit_t(const tgl_expr *e, size_t k, typed_text *x, int as_float)
{
    const tgl_expr_node *n = &e->node[k];
    out_text *t = &x->t;
    char buf[48];
    int in = x->is_int[k];
    if (as_float && in)
        return arg_t(e, k, x, 1);
    switch (n->kind) {
    case TGL_EXPR_NUMBER:
        if (t->n_nums >= TGL_EXPR_MAX_NODES)
            return 0;
        if (in)
            x->nums[t->n_nums] = (GLuint)(uint32_t)n->ivalue;
        else
            memcpy(&x->nums[t->n_nums], &n->value, 4);
        snprintf(buf, sizeof buf, in ? "TGL_INUM(%d)" : "TGL_FNUM(%d)", t->n_nums++);
        return put(t, buf);
    case TGL_EXPR_INPUT:
        snprintf(buf, sizeof buf, "X%d", t->slot[n->op]);
        return put(t, buf);
    case TGL_EXPR_UNARY:
        if (!in)
            return put(t, unary_fn[n->op]) && put(t, "(") && arg_t(e, n->arg[0], x, 1) && put(t, ")");
        if (n->op == TGL_UNARY_RELU)
            return put(t, "max(") && arg_t(e, n->arg[0], x, 0) && put(t, ", 0)");
        if (n->op == TGL_UNARY_FLOOR || n->op == TGL_UNARY_CEIL)
            return put(t, "(") && arg_t(e, n->arg[0], x, 0) && put(t, ")");
        snprintf(buf, sizeof buf, "tgl_iun(%uu, ", (unsigned)n->op); /* neg, abs, square */
        return put(t, buf) && arg_t(e, n->arg[0], x, 0) && put(t, ")");
    case TGL_EXPR_BINARY:
        if (in)
            snprintf(buf, sizeof buf, "tgl_ibin(%uu, ", (unsigned)n->op);
        else
            snprintf(buf, sizeof buf, "%s(", binary_fn[n->op]);
        return put(t, buf) && arg_t(e, n->arg[0], x, !in) && put(t, ", ") && arg_t(e, n->arg[1], x, !in) &&
               put(t, ")");
    case TGL_EXPR_CLAMP:
        return put(t, in ? "min(max(" : "tgl_min(tgl_max(") && arg_t(e, n->arg[0], x, !in) && put(t, ", ") &&
               arg_t(e, n->arg[1], x, !in) && put(t, "), ") && arg_t(e, n->arg[2], x, !in) && put(t, ")");
    case TGL_EXPR_SELECT: /* the condition in its own type */
        return put(t, "(tgl_true(") && arg_t(e, n->arg[0], x, 0) && put(t, ") ? ") && arg_t(e, n->arg[1], x, !in) &&
               put(t, " : ") && arg_t(e, n->arg[2], x, !in) && put(t, ")");
    case TGL_EXPR_COMPARE: {
        int ints = x->is_int[n->arg[0]] && x->is_int[n->arg[1]];
        snprintf(buf, sizeof buf, "%s(%uu, ", ints ? "tgl_icmp" : "tgl_fcmp", (unsigned)n->op);
        return put(t, buf) && arg_t(e, n->arg[0], x, !ints) && put(t, ", ") && arg_t(e, n->arg[1], x, !ints) &&
               put(t, ")");
    }
    }
    return 0;
}

/* How the kernel reads input slot s (binding s) of dtype dt: its node's value (tgl_expr_types:
 * i32 and bool inputs are i32 nodes). */
static void input_macro(char *buf, size_t size, int s, tgl_dtype dt)
{
    switch (dt) {
    case TGL_DTYPE_I32: snprintf(buf, size, "#define X%d int(x%d[o[%d]])\n", s, s, s); break;
    case TGL_DTYPE_BOOL: snprintf(buf, size, "#define X%d (LOAD_1(x%d, o[%d]) != 0u ? 1 : 0)\n", s, s, s); break;
    case TGL_DTYPE_F32: snprintf(buf, size, "#define X%d uintBitsToFloat(x%d[o[%d]])\n", s, s, s); break;
    default: /* f16, bf16: exact in f32 */
        snprintf(buf, size, "#define X%d uintBitsToFloat(tgl_to_f32(LOAD_2(x%d, o[%d]), %uu))\n", s, s, s,
                 (unsigned)dt);
        break;
    }
}

tgl_status tgl_gl_map_t_begin(tgl_backend *b, const tgl__tew *e, tgl_gl_map_t *m)
{
    const tgl_expr *ex = e->expr;
    const tgl_gl_limits *l = &tgl_gl_of(b)->limits;
    memset(m, 0, sizeof *m);
    m->e = e;
    for (size_t k = 0; k < e->nin; k++)
        if (ex->inputs_used >> k & 1u)
            m->slot[k] = m->used++;
    if ((uint32_t)m->used + 1u > l->storage_blocks)
        return tgl__fail(b, TGL_ERR_UNSUPPORTED,
                         "tgl_map_t: the expression reads %d inputs, and with out that is more than the %u storage "
                         "blocks this device binds per kernel",
                         m->used, l->storage_blocks);
    /* a head of at most 8 input lines and 3 defines, then every node's text: its function (16
     * bytes at most), separators, and a tgl_itof( ) around each of up to 3 arguments */
    size_t cap = 1024 + ex->count * 96;
    typed_text x = {{malloc(cap), 0, cap, {0}, {0}, 0}, e->expr_int, m->nums};
    if (!x.t.p)
        return tgl__fail(b, TGL_ERR_OUT_OF_MEMORY, "tgl_map_t: no host memory for the kernel");
    memcpy(x.t.slot, m->slot, sizeof m->slot);
    int numbers = 0;
    for (size_t k = 0; k < ex->count; k++)
        numbers += ex->node[k].kind == TGL_EXPR_NUMBER;
    snprintf(x.t.p, cap, "#define MAP_NIN %d\n#define MAP_NUMS %d\n#define MAP_INT %d\n", m->used, numbers,
             e->expr_int[ex->root]);
    x.t.len = strlen(x.t.p);
    char line[128];
    for (size_t k = 0; k < e->nin; k++) {
        if (ex->inputs_used >> k & 1u) {
            input_macro(line, sizeof line, m->slot[k], e->in[k].dtype);
            put(&x.t, line);
        }
    }
    if (!put(&x.t, "#define MAP_EXPR ") || !emit_t(ex, ex->root, &x, 0) || !put(&x.t, "\n") ||
        x.t.n_nums != numbers) {
        free(x.t.p);
        return tgl__fail(b, TGL_ERR_INTERNAL, "tgl_map_t: generated expression exceeds its bound");
    }
    m->generated = x.t.p;
    m->n_nums = numbers;
    m->itof = strstr(x.t.p, "tgl_itof(") != NULL;
    return TGL_OK;
}

void tgl_gl_map_t_end(tgl_gl_map_t *m)
{
    free(m->generated);
    m->generated = NULL;
}

typedef struct map_t_flags {
    uint32_t out, words, linear;
} map_t_flags;
static const tgl_gl_def map_t_defs[] = {
    TGL_GL_UINT(map_t_flags, out, "OUT_DTYPE"),
    TGL_GL_FLAG(map_t_flags, words, "WORDS"),
    TGL_GL_FLAG(map_t_flags, linear, "LINEAR"),
};

static tgl_gl_plan map_t_plan(tgl_dtype out, int words, int linear)
{
    map_t_flags f = {(uint32_t)out, (uint32_t)words, (uint32_t)linear};
    tgl_gl_plan p = {.op = "tgl_map_t"};
    tgl_gl_plan_kernel(&p, "tensor/map", TGL_GL_DEFS(map_t_defs), &f);
    p.why = words    ? "a dense out of 1- or 2-byte elements: a whole word per invocation"
            : linear ? "every operand dense: an invocation per element, no coordinates"
            : tgl_dtype_size(out) < 4 ? "a strided out of 1- or 2-byte elements: atomic stores into its words"
                                      : "an invocation per element";
    return p;
}

tgl_status tgl_gl_map_t_box(tgl_backend *b, tgl_gl_map_t *m, const tgl__tensor_view *out,
                            const tgl__tensor_view *in, const size_t *shape, size_t n, int words, int linear)
{
    const tgl__tew *e = m->e;
    const tgl_gl_limits *l = &tgl_gl_of(b)->limits;
    size_t ndim = e->ndim, os = tgl_dtype_size(out->dtype), pad;
    tgl_gl_binding bind[TGL_EXPR_MAX_INPUTS + 1];
    GLuint base[TGL_EXPR_MAX_INPUTS] = {0}, stride[8 * TGL_EXPR_MAX_INPUTS] = {0}, out_stride[8] = {0};
    for (size_t k = 0; k < e->nin; k++) {
        if (!(e->expr->inputs_used >> k & 1u))
            continue;
        int s = m->slot[k];
        size_t es = tgl_dtype_size(in[k].dtype);
        bind[s] = tgl_gl_window(b, in[k].view, in[k].span * es, 0, &pad);
        base[s] = (GLuint)(pad / es + in[k].base);
        tgl_gl_stride_bits(stride + 8 * s, in[k].strides, ndim);
    }
    bind[m->used] = tgl_gl_window(b, out->view, out->span * os, 1, &pad);
    GLuint out_base = (GLuint)(pad / os + out->base);
    tgl_gl_stride_bits(out_stride, out->strides, ndim);
    GLuint *prog = &m->prog[words][linear];
    size_t grid = (size_t)((uint64_t)l->wg_count[0] * l->wg_count[1] * l->workgroup_size);
    size_t per = words ? 4 / os : 1, first = words ? out_base / per : 0;
    size_t end = words ? (out_base + n + per - 1) / per : n; /* words: whole words of the window */
    tgl_status st = TGL_OK;
    if (!*prog) {
        tgl_gl_plan plan = map_t_plan(out->dtype, words, linear);
        plan.generated = m->generated;
        plan.items = 1;
        plan.groups = tgl_gl_ceil_div(end - first, l->workgroup_size);
        if ((st = tgl_gl_plan_program(b, &plan, prog)))
            return st;
    }
    GLuint p = *prog;
    tgl_gl_uniform_ui(b, p, LOC_TMAP_NDIM, (GLuint)ndim);
    tgl_gl_uniform_ui(b, p, LOC_TMAP_OUT_BASE, out_base);
    tgl_gl_uniform_dims(b, p, LOC_TMAP_SHAPE, shape, ndim);
    if (ndim)
        tgl_gl_uniform_uiv(b, p, LOC_TMAP_OUT_STRIDE, (GLsizei)ndim, out_stride);
    if (m->used) {
        tgl_gl_uniform_uiv(b, p, LOC_TMAP_BASE, m->used, base);
        tgl_gl_uniform_uiv(b, p, LOC_TMAP_STRIDE, 8 * m->used, stride);
    }
    if (m->n_nums)
        tgl_gl_uniform_uiv(b, p, LOC_TMAP_NUM, m->n_nums, m->nums);
    if (m->itof)
        tgl_gl_uniform_ui(b, p, LOC_TMAP_ZERO, 0u);
    if (words)
        tgl_gl_uniform_ui(b, p, LOC_TMAP_N, (GLuint)n);
    for (size_t i = first; !st && i < end; i += grid) {
        size_t count = end - i < grid ? end - i : grid;
        if (!words)
            tgl_gl_uniform_ui(b, p, LOC_TMAP_N, (GLuint)count);
        tgl_gl_uniform_ui(b, p, LOC_TMAP_START, (GLuint)i);
        st = tgl_gl_dispatch(b, p, bind, m->used + 1, tgl_gl_ceil_div(count, l->workgroup_size));
    }
    return st;
}

/* The kernel's variants with its standalone expression (the one the file holds): out's dtype,
 * words where out's elements are below 4 bytes, linear. */
void tgl_gl_map_t_variants(void (*fn)(void *ctx, const char *kernel, const char *defines), void *ctx)
{
    static const tgl_dtype data[] = {TGL_DTYPE_F32, TGL_DTYPE_F16, TGL_DTYPE_BF16, TGL_DTYPE_I32, TGL_DTYPE_BOOL};
    for (size_t o = 0; o < sizeof data / sizeof *data; o++)
        for (int words = 0; words < (tgl_dtype_size(data[o]) < 4 ? 2 : 1); words++)
            for (int linear = 0; linear < 2; linear++)
                tgl_gl_list_plan(fn, ctx, map_t_plan(data[o], words, linear));
}
