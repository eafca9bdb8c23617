/* GL driver of tgl_sort and tgl_topk (glsl/tensor/sort.comp): the lines in groups whose
 * windows fit the SSBO block limit (the group's pairs, in's box, the outputs' boxes; halving a
 * group until they do), each group loaded as (key, position) pairs, sorted by a bitonic network
 * (shared-memory stages for strides below a workgroup's block, three stages a dispatch above),
 * and its first k written. A topk of lines longer than a block with k up to a quarter of
 * TOPK_CAP selects instead (the TOPK pass: a workgroup a line, no pairs; topk_minima). */
#include "gl_internal.h"

/* The local stages' block of pairs in shared memory: 16 KiB, the least GL ES 3.1 guarantees
 * (GL 4.3: 32 KiB); a workgroup runs it whatever its size. */
#define SORT_BLOCK 2048u
/* TOPK's candidates in shared memory (8 KiB of pairs; its BLOCK): random data gives about k of
 * them; the kernel takes the exact path past this many. At least a workgroup's invocations. */
#define TOPK_CAP 1024u

typedef struct sort_flags {
    uint32_t pass, dtype, block, read, quads;
} sort_flags;
enum { PASS_LOAD, PASS_LOCAL, PASS_GLOBAL, PASS_GLOBAL3, PASS_STORE, PASS_TOPK, PASS_COUNT };
static const char *const pass_names[PASS_COUNT] = {"LOAD", "LOCAL", "GLOBAL", "GLOBAL3", "STORE", "TOPK"};
static const tgl_gl_def sort_defs[] = {
    TGL_GL_NAME(sort_flags, pass, pass_names),
    TGL_GL_UINT(sort_flags, dtype, "DTYPE"),
    TGL_GL_UINT(sort_flags, block, "BLOCK"),
    TGL_GL_READ(sort_flags, read),
    TGL_GL_FLAG(sort_flags, quads, "QUADS"),
};

/* The network's passes are the same for every dtype (DTYPE 0); TOPK reads in as `read`, four
 * words at a time with `quads`. */
static tgl_gl_plan sort_plan(int pass, tgl_dtype dt, tgl_gl_read read, int quads)
{
    int typed = pass == PASS_LOAD || pass == PASS_STORE || pass == PASS_TOPK, topk = pass == PASS_TOPK;
    sort_flags f = {(uint32_t)pass, typed ? (uint32_t)dt : 0u, topk ? TOPK_CAP : SORT_BLOCK, topk ? (uint32_t)read : 0u,
                    (uint32_t)(topk && quads)};
    tgl_gl_plan p = {.op = topk ? "tgl_topk" : "tgl_sort",
                     .why = topk ? "a workgroup a line: the candidates below a bound from the invocations' minima, "
                                   "sorted in shared memory"
                                 : "(key, position) pairs per line, a bitonic network: stable, every device alike"};
    tgl_gl_plan_kernel(&p, "tensor/sort", TGL_GL_DEFS(sort_defs), &f);
    return p;
}

typedef struct sort_run {
    tgl_backend *b;
    const tgl__sort *s;
    GLuint prog[PASS_COUNT];
    unsigned log_p;
    size_t padded, block, max_bytes;
    size_t topk;                      /* TOPK's sets (topk_minima); 0: the network */
    GLuint prog_topk[TGL_GL_READS][2]; /* TOPK by in's read and QUADS, 0 until a group takes it */
    int quads;                           /* TOPK reads whole quads of words (4-byte elements, unit step) */
} sort_run;

static size_t window_bytes(const tgl__tensor_view *v)
{
    return v->span * tgl_dtype_size(v->dtype);
}

/* Dispatches `count` invocations (LOCAL: workgroups), a grid at a time, u_start the first. */
static tgl_status dispatch(sort_run *x, int pass, const tgl_gl_binding *bind, int n_bind, size_t count)
{
    const tgl_gl_limits *l = &tgl_gl_of(x->b)->limits;
    size_t groups_max = (size_t)((uint64_t)l->wg_count[0] * l->wg_count[1]);
    int per_group = pass == PASS_LOCAL || pass == PASS_TOPK; /* count is workgroups */
    size_t grid = per_group ? groups_max : groups_max * l->workgroup_size;
    GLuint prog = x->prog[pass];
    tgl_status st = TGL_OK;
    for (size_t s = 0; !st && s < count; s += grid) {
        size_t k = count - s < grid ? count - s : grid;
        tgl_gl_uniform_ui(x->b, prog, LOC_SRT_START, (GLuint)s);
        if (pass != PASS_LOCAL) /* (LOCAL's is the group's slot count) */
            tgl_gl_uniform_ui(x->b, prog, LOC_SRT_N, (GLuint)k);
        st = tgl_gl_dispatch(x->b, prog, bind, n_bind, per_group ? k : tgl_gl_ceil_div(k, l->workgroup_size));
    }
    return st;
}

/* The network over the group's `slots` pairs (temp bound at binding 0). */
static tgl_status run_network(sort_run *x, const tgl_gl_binding *temp, size_t slots)
{
    tgl_backend *b = x->b;
    GLuint local = x->prog[PASS_LOCAL], global = x->prog[PASS_GLOBAL], global3 = x->prog[PASS_GLOBAL3];
    size_t blocks = tgl_gl_ceil_div(slots, x->block), pairs = slots / 2;
    tgl_gl_uniform_ui(b, local, LOC_SRT_N, (GLuint)slots);
    tgl_gl_uniform_ui(b, local, LOC_SRT_SIZE, 0);
    tgl_status st = dispatch(x, PASS_LOCAL, temp, 1, blocks);
    for (size_t size = 2 * x->block; !st && size <= x->padded; size <<= 1) {
        tgl_gl_uniform_ui(b, global, LOC_SRT_SIZE, (GLuint)size);
        tgl_gl_uniform_ui(b, global3, LOC_SRT_SIZE, (GLuint)size);
        /* the strides down to the block's: three a pass while three are left, then one */
        for (size_t stride = size / 2; !st && stride >= x->block;) {
            int three = stride / 4 >= x->block;
            tgl_gl_uniform_ui(b, three ? global3 : global, LOC_SRT_STRIDE, (GLuint)stride);
            st = dispatch(x, three ? PASS_GLOBAL3 : PASS_GLOBAL, temp, 1, three ? slots / 8 : pairs);
            stride >>= three ? 3 : 1;
        }
        tgl_gl_uniform_ui(b, local, LOC_SRT_SIZE, (GLuint)size);
        if (!st)
            st = dispatch(x, PASS_LOCAL, temp, 1, blocks);
    }
    return st;
}

/* Sets a program's view uniforms for a group: line0, the box origin, bases. */
static void group_uniforms(sort_run *x, GLuint prog, size_t l0, const size_t *lo, const GLuint *bases)
{
    tgl_gl_uniform_ui(x->b, prog, LOC_SRT_LINE0, (GLuint)l0);
    tgl_gl_uniform_dims(x->b, prog, LOC_SRT_LO, lo, x->s->ndim);
    tgl_gl_uniform_ui(x->b, prog, LOC_SRT_IN_BASE, bases[0]);
    tgl_gl_uniform_ui(x->b, prog, LOC_SRT_V_BASE, bases[1]);
    tgl_gl_uniform_ui(x->b, prog, LOC_SRT_I_BASE, bases[2]);
    tgl_gl_uniform_ui(x->b, prog, LOC_SRT_TEMP_BASE, bases[3]);
}

/* The box of lines [l0, l1) of v (an operand with `extent` elements along the axis). */
static tgl__tensor_view line_box(const sort_run *x, const tgl__tensor_view *v, size_t l0, size_t l1, size_t extent,
                                 size_t *lo)
{
    const tgl__sort *s = x->s;
    size_t ext[TGL_MAX_DIMS] = {0};
    tgl_gl_run_box(s->ndim, s->shape, l0, l1, lo, ext);
    ext[s->axis] = extent;
    return tgl_gl_sub_view(v, s->ndim, lo, ext);
}

static void set_uniforms(sort_run *x, GLuint prog);

/* TOPK over the group's lines: in bound as texels (R32UI, RGBA32UI with quads) where the device
 * reads inputs so and the window fits the texel and block limits, else as the SSBO. */
static tgl_status run_topk(sort_run *x, size_t l0, size_t lines, const size_t *lo, tgl_gl_binding *bind,
                           GLuint *bases, const tgl__tensor_view *in)
{
    const tgl_gl_limits *l = &tgl_gl_of(x->b)->limits;
    tgl_gl_read read = TGL_GL_READ_SSBO;
    GLenum format = x->quads ? GL_RGBA32UI : GL_R32UI;
    size_t pad;
    if (l->texel_inputs && tgl_gl_texture_window(l, in->view, window_bytes(in), format, &bind[0], &pad)) {
        read = tgl_gl_input_read(l, 1);
        tgl_gl_bind_read(&bind[0], read, format);
        bases[0] = (GLuint)(pad / tgl_dtype_size(in->dtype) + in->base);
    }
    GLuint *prog = &x->prog_topk[read][x->quads];
    if (!*prog) {
        tgl_gl_plan plan = sort_plan(PASS_TOPK, x->s->in.dtype, read, x->quads);
        plan.wg = l->reduce_workgroup_size;
        plan.groups = lines;
        tgl_status st = tgl_gl_plan_program(x->b, &plan, prog);
        if (st)
            return st;
        set_uniforms(x, *prog);
    }
    x->prog[PASS_TOPK] = *prog;
    group_uniforms(x, *prog, l0, lo, bases);
    return dispatch(x, PASS_TOPK, bind, 4, lines);
}

static tgl_status run_group(sort_run *x, size_t l0, size_t l1)
{
    tgl_backend *b = x->b;
    const tgl__sort *s = x->s;
    size_t lo[TGL_MAX_DIMS] = {0}, lines = l1 - l0, slots = lines * x->padded;
    tgl__tensor_view in = line_box(x, &s->in, l0, l1, s->len, lo);
    tgl__tensor_view values = s->has_values ? line_box(x, &s->values, l0, l1, s->k, lo) : in;
    tgl__tensor_view indices = s->has_indices ? line_box(x, &s->indices, l0, l1, s->k, lo) : in;
    if ((!x->topk && slots * 8 > x->max_bytes) || window_bytes(&in) > x->max_bytes || window_bytes(&values) > x->max_bytes ||
        window_bytes(&indices) > x->max_bytes || slots > UINT32_MAX) {
        if (lines == 1)
            return tgl__fail(b, TGL_ERR_UNSUPPORTED, "tgl_sort: a line of %zu elements: its %zu bytes of pairs or "
                             "its windows exceed the SSBO block limit", s->len, slots * 8);
        size_t mid = l0 + lines / 2;
        tgl_status st = run_group(x, l0, mid);
        return st ? st : run_group(x, mid, l1);
    }
    size_t pad_in, pad_v = 0, pad_i = 0, pad_t;
    tgl_gl_binding bind[4];
    bind[0] = tgl_gl_window(b, in.view, window_bytes(&in), 0, &pad_in);
    if (x->topk) /* no pairs: in's window stands in at binding 1, which TOPK does not read */
        bind[1] = bind[0], pad_t = 0;
    else
        bind[1] = tgl_gl_window(b, (tgl__view){s->temp.buf, s->temp.offset + l0 * x->padded * 8}, slots * 8, 1, &pad_t);
    if (s->has_values)
        bind[2] = tgl_gl_window(b, values.view, window_bytes(&values), 1, &pad_v);
    if (s->has_indices)
        bind[3] = tgl_gl_window(b, indices.view, window_bytes(&indices), 1, &pad_i);
    if (!s->has_values)
        bind[2] = bind[3];
    if (!s->has_indices)
        bind[3] = bind[2];
    size_t es = tgl_dtype_size(s->in.dtype);
    GLuint bases[4] = {(GLuint)(pad_in / es + in.base), (GLuint)(pad_v / es + values.base),
                       (GLuint)(pad_i / 4 + indices.base), (GLuint)(pad_t / 8)};
    if (x->topk)
        return run_topk(x, l0, lines, lo, bind, bases, &in);
    for (int pass = 0; pass < PASS_TOPK; pass++)
        group_uniforms(x, x->prog[pass], l0, lo, bases);
    tgl_status st = dispatch(x, PASS_LOAD, bind, 2, slots);
    if (!st)
        st = run_network(x, &bind[1], slots);
    return st ? st : dispatch(x, PASS_STORE, bind, 4, lines * s->k);
}

/* TOPK's sets (glsl/tensor/sort.comp) for a topk of k of lines of len: a power of two, 2 to 4
 * times k and at least the workgroup (whose invocations take them); 0 where it does not run: a
 * line the network sorts in one block, a k past a quarter of the candidates' room. */
static size_t topk_minima(const tgl_gl_limits *l, size_t len, size_t k)
{
    size_t m = l->reduce_workgroup_size;
    while (m < 2 * k)
        m <<= 1;
    return k < len && len > SORT_BLOCK && k <= TOPK_CAP / 4 && m <= TOPK_CAP ? m : 0;
}

int tgl_gl_topk_selects(const tgl_gl_limits *l, size_t len, size_t k)
{
    return topk_minima(l, len, k) != 0;
}

/* The uniforms every group shares. */
static void set_uniforms(sort_run *x, GLuint prog)
{
    tgl_backend *b = x->b;
    const tgl__sort *s = x->s;
    GLuint v[TGL_MAX_DIMS] = {0};
    tgl_gl_uniform_ui(b, prog, LOC_SRT_NDIM, (GLuint)s->ndim);
    tgl_gl_uniform_ui(b, prog, LOC_SRT_LEN, (GLuint)s->len);
    tgl_gl_uniform_ui(b, prog, LOC_SRT_LOG_P, (GLuint)x->log_p);
    tgl_gl_uniform_ui(b, prog, LOC_SRT_DESC, (GLuint)s->descending);
    tgl_gl_uniform_ui(b, prog, LOC_SRT_K, (GLuint)s->k);
    tgl_gl_uniform_ui(b, prog, LOC_SRT_HAS, (GLuint)(s->has_values | s->has_indices << 1));
    tgl_gl_uniform_ui(b, prog, LOC_SRT_MINIMA, (GLuint)x->topk);
    tgl_gl_uniform_dims(b, prog, LOC_SRT_SHAPE, s->shape, s->ndim);
    tgl_gl_stride_bits(v, s->in.strides, s->ndim);
    tgl_gl_uniform_uiv(b, prog, LOC_SRT_IN_STRIDE, (GLsizei)s->ndim, v);
    tgl_gl_stride_bits(v, s->has_values ? s->values.strides : s->in.strides, s->ndim);
    tgl_gl_uniform_uiv(b, prog, LOC_SRT_V_STRIDE, (GLsizei)s->ndim, v);
    tgl_gl_stride_bits(v, s->has_indices ? s->indices.strides : s->in.strides, s->ndim);
    tgl_gl_uniform_uiv(b, prog, LOC_SRT_I_STRIDE, (GLsizei)s->ndim, v);
    tgl_gl_stride_bits(v, &s->in_step, 1);
    tgl_gl_uniform_ui(b, prog, LOC_SRT_IN_STEP, v[0]);
    tgl_gl_stride_bits(v, &s->v_step, 1);
    tgl_gl_uniform_ui(b, prog, LOC_SRT_V_STEP, v[0]);
    tgl_gl_stride_bits(v, &s->i_step, 1);
    tgl_gl_uniform_ui(b, prog, LOC_SRT_I_STEP, v[0]);
}

/* The network sorts every line's pairs in place; TOPK's selection keeps its candidates in
 * shared memory. */
size_t tgl_gl_sort_temp_lines(tgl_backend *b, const tgl__sort *s)
{
    return topk_minima(&tgl_gl_of(b)->limits, s->len, s->k) ? 0 : s->n_lines;
}

tgl_status tgl_gl_sort(tgl_backend *b, const tgl__sort *s)
{
    const tgl_gl_limits *l = &tgl_gl_of(b)->limits;
    sort_run x = {.b = b, .s = s, .padded = 1, .max_bytes = tgl_gl_max_window_elems(l, 4) * 4, .block = SORT_BLOCK};
    while (x.padded < s->len) {
        x.padded <<= 1;
        x.log_p++;
    }
    /* TOPK: a line the network would sort in several dispatches, k within a workgroup (its
     * invocations' minima bound the k-th key), the workgroup within the candidates' room */
    x.topk = topk_minima(l, s->len, s->k); /* (a sort has k == len) */
    /* every set a quad inside the line: at least topk + 2 quads */
    x.quads = x.topk && tgl_dtype_size(s->in.dtype) == 4 && s->in_step == 1 && s->len / 4 >= x.topk + 2;
    for (int pass = 0; !x.topk && pass < PASS_TOPK; pass++) {
        tgl_gl_plan plan = sort_plan(pass, s->in.dtype, TGL_GL_READ_SSBO, 0);
        tgl_status st = tgl_gl_plan_program(b, &plan, &x.prog[pass]);
        if (st)
            return st;
        set_uniforms(&x, x.prog[pass]);
    }
    return run_group(&x, 0, s->n_lines);
}

void tgl_gl_sort_variants(void (*fn)(void *ctx, const char *kernel, const char *defines), void *ctx)
{
    for (int pass = 0; pass < PASS_COUNT; pass++)
        for (int dt = TGL_DTYPE_F32; dt <= TGL_DTYPE_BOOL; dt++)
            for (int read = 0; read < (pass == PASS_TOPK ? TGL_GL_READS : 1); read++)
                for (int quads = 0; quads < (pass == PASS_TOPK && tgl_dtype_size((tgl_dtype)dt) == 4 ? 2 : 1); quads++)
                    if (dt == TGL_DTYPE_F32 || pass == PASS_LOAD || pass == PASS_STORE || pass == PASS_TOPK)
                        tgl_gl_list_plan(fn, ctx, sort_plan(pass, (tgl_dtype)dt, (tgl_gl_read)read, quads));
}
