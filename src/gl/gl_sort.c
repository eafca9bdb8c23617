/* GL driver of tgl_sort and tgl_topk (glsl/tensor/sort.comp): the lines in groups whose
 * windows fit the SSBO block limit (the group's pairs, in's box, the outputs' boxes; halving a
 * group until they do), each group loaded as (key, position) pairs, sorted by a bitonic network
 * (shared-memory stages for strides below a workgroup's block, three stages a dispatch above),
 * and its first k written. A topk of lines longer than a block with k up to a quarter of
 * TOPK_CAP selects instead (the TOPK pass: a workgroup a line, no pairs; topk_minima). Lines of
 * the profile's radix_min or more whose arrays fit the windows take radix passes instead, a line
 * at a time (glsl/tensor/radix.comp; radix_fits). */
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

/* The radix passes' workgroup (ES 3.1's least maximum), each invocation holding the profile's
 * radix_items pairs of a tile; digits of 4 bits. */
#define RADIX_WG 128u
#define RADIX_DIGITS 16u

typedef struct radix_flags {
    uint32_t pass, dtype, items, staged, wide;
} radix_flags;
enum { R_LOAD, R_COUNT, R_SCATTER, R_STORE, R_PASSES };
static const char *const radix_names[R_PASSES] = {"RLOAD", "RCOUNT", "RSCATTER", "RSTORE"};
static const tgl_gl_def radix_defs[] = {
    TGL_GL_NAME(radix_flags, pass, radix_names),
    TGL_GL_UINT(radix_flags, dtype, "DTYPE"),
    TGL_GL_UINT(radix_flags, items, "ITEMS"),
    TGL_GL_FLAG(radix_flags, staged, "STAGED"),
    TGL_GL_FLAG(radix_flags, wide, "WIDE"),
};

/* How a device's radix passes run (radix_mode). */
enum { RADIX_DIRECT, RADIX_STAGED, RADIX_WIDE };

/* LOAD and STORE by in's dtype; the tiled passes (COUNT, SCATTER) by `items` and the mode
 * (SCATTER staged in shared memory or not, both of 8-bit digits or of 4). */
static tgl_gl_plan radix_plan(int pass, tgl_dtype dt, uint32_t items, int mode)
{
    int tiled = pass == R_COUNT || pass == R_SCATTER;
    radix_flags f = {(uint32_t)pass, tiled ? 0u : (uint32_t)dt, tiled ? items : 0u,
                     (uint32_t)(pass == R_SCATTER && mode == RADIX_STAGED), (uint32_t)(tiled && mode == RADIX_WIDE)};
    tgl_gl_plan p = {.op = "tgl_sort",
                     .why = f.wide     ? "a long line: radix passes over its (key, position) arrays, 8 bits a pass, each "
                                         "stable, each tile put in digit order in shared memory (radix_bits)"
                            : f.staged ? "a long line: radix passes over its (key, position) arrays, 4 bits a pass, each "
                                         "stable, each tile written in digit order from shared memory (radix_staged)"
                                       : "a long line: radix passes over its (key, position) arrays, 4 bits a pass, each stable",
                     .wg = tiled ? RADIX_WG : 0};
    tgl_gl_plan_kernel(&p, "tensor/radix", TGL_GL_DEFS(radix_defs), &f);
    return p;
}

typedef struct sort_run {
    tgl_backend *b;
    const tgl__sort *s;
    GLuint prog[PASS_COUNT];
    GLuint radix[R_PASSES]; /* the radix passes' programs, where they run */
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

/* Dispatches prog over `count` invocations of workgroups of wg (per_group: count workgroups), a
 * grid at a time, u_start the first and u_n the count (unless keep_n). */
static tgl_status dispatch_prog(sort_run *x, GLuint prog, size_t wg, int per_group, int keep_n,
                                const tgl_gl_binding *bind, int n_bind, size_t count)
{
    const tgl_gl_limits *l = &tgl_gl_of(x->b)->limits;
    size_t groups_max = (size_t)((uint64_t)l->wg_count[0] * l->wg_count[1]);
    size_t grid = per_group ? groups_max : groups_max * wg;
    tgl_status st = TGL_OK;
    for (size_t s = 0; !st && s < count; s += grid) {
        size_t k = count - s < grid ? count - s : grid;
        tgl_gl_uniform_ui(x->b, prog, LOC_SRT_START, (GLuint)s);
        if (!keep_n)
            tgl_gl_uniform_ui(x->b, prog, LOC_SRT_N, (GLuint)k);
        st = tgl_gl_dispatch(x->b, prog, bind, n_bind, per_group ? k : tgl_gl_ceil_div(k, wg));
    }
    return st;
}

/* A pass of the network or TOPK: count invocations (LOCAL, TOPK: workgroups). */
static tgl_status dispatch(sort_run *x, int pass, const tgl_gl_binding *bind, int n_bind, size_t count)
{
    int per_group = pass == PASS_LOCAL || pass == PASS_TOPK;
    /* (LOCAL's u_n is the group's slot count) */
    return dispatch_prog(x, x->prog[pass], tgl_gl_of(x->b)->limits.workgroup_size, per_group, pass == PASS_LOCAL, bind,
                         n_bind, count);
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

/* ---- radix passes ---- */

/* How the passes run: 8-bit digits (the profile's radix_bits), else 4-bit ones staged (its
 * radix_staged), else 4-bit ones scattered directly, each where the device holds its scatter
 * kernel's shared memory: radix.comp's 4-bit counts per invocation (a word skipped every 16), the
 * invocations' sums and the digits' bases; staged, a word per pair of the tile; wide, two per pair
 * (a word skipped every 32) and a word per 8-bit digit. */
static int radix_mode(const tgl_gl_limits *l)
{
    uint64_t tile = (uint64_t)RADIX_WG * l->radix_items;
    uint64_t words = RADIX_DIGITS * RADIX_WG + RADIX_DIGITS * RADIX_WG / 16 + RADIX_WG + RADIX_DIGITS;
    if (l->radix_bits == 8 && (words + 2 * (tile + tile / 32) + 256) * 4 <= l->shared_memory)
        return RADIX_WIDE;
    return l->radix_staged && (words + tile) * 4 <= l->shared_memory ? RADIX_STAGED : RADIX_DIRECT;
}

unsigned tgl_gl_radix_digits(const tgl_gl_limits *l)
{
    return radix_mode(l) == RADIX_WIDE ? 256u : RADIX_DIGITS;
}

/* A radix line's arrays in the temporary buffer (byte offsets at[]: keys A, positions A, keys
 * B, positions B): the keys followed by a count per digit per tile, the positions. */
typedef struct radix_layout {
    size_t tiles;
    uint64_t keys_bytes, pos_bytes, at[4], bytes;
} radix_layout;

static radix_layout radix_layout_of(const tgl_gl_limits *l, size_t len)
{
    radix_layout r = {.tiles = tgl_gl_ceil_div(len, (size_t)RADIX_WG * l->radix_items)};
    r.keys_bytes = ((uint64_t)len + (uint64_t)tgl_gl_radix_digits(l) * r.tiles) * 4;
    r.pos_bytes = (uint64_t)len * 4;
    uint64_t k = (r.keys_bytes + 255) / 256 * 256, p = (r.pos_bytes + 255) / 256 * 256; /* windows start aligned */
    r.at[0] = 0, r.at[1] = k, r.at[2] = k + p, r.at[3] = 2 * k + p;
    r.bytes = 2 * (k + p);
    return r;
}

/* Radix passes sort s's lines where they are the profile's radix_min long or longer, a whole
 * sort or a topk the selection does not take, and a line's arrays fit the windows. */
static int radix_fits(const tgl_gl_limits *l, const tgl__sort *s, int topk)
{
    return !topk && l->radix_min && s->len >= l->radix_min &&
           radix_layout_of(l, s->len).keys_bytes <= tgl_gl_max_window_elems(l, 4) * 4;
}

/* The digits [*lo, *hi) whose passes can change the order of dt's keys (sort_line.glsl's
 * sort_key, complemented or not): a digit below *lo is a function of the bits above it (an f16's
 * f32 bits end in 13 zeros, a bf16's in 16, complemented with the sign; a bool's key is 0 or 1
 * or their complements), so its pass leaves the final order as it is. */
static void radix_digits(tgl_dtype dt, unsigned bits, unsigned *lo, unsigned *hi)
{
    *lo = (dt == TGL_DTYPE_F16 ? 13 : dt == TGL_DTYPE_BF16 ? 16 : 0) / bits;
    *hi = dt == TGL_DTYPE_BOOL ? 1 : 32 / bits;
}

/* The passes' programs and their uniforms (those of sort_line.glsl set as for the network). */
static tgl_status radix_programs(sort_run *x)
{
    const tgl_gl_limits *l = &tgl_gl_of(x->b)->limits;
    for (int pass = 0; pass < R_PASSES; pass++) {
        tgl_gl_plan plan = radix_plan(pass, x->s->in.dtype, l->radix_items, radix_mode(l));
        plan.groups = pass == R_COUNT || pass == R_SCATTER ? radix_layout_of(l, x->s->len).tiles : 0;
        tgl_status st = tgl_gl_plan_program(x->b, &plan, &x->radix[pass]);
        if (st)
            return st;
        set_uniforms(x, x->radix[pass]);
        tgl_gl_uniform_ui(x->b, x->radix[pass], LOC_SRT_TILES, (GLuint)plan.groups);
    }
    return TGL_OK;
}

/* Line l: RLOAD into arrays A, a COUNT, scan and SCATTER per digit from one pair of arrays into
 * the other, RSTORE from the last. */
static tgl_status run_radix_line(sort_run *x, const radix_layout *r, size_t l)
{
    tgl_backend *b = x->b;
    const tgl__sort *s = x->s;
    size_t lo[TGL_MAX_DIMS] = {0}, pad, es = tgl_dtype_size(s->in.dtype);
    tgl__tensor_view in = line_box(x, &s->in, l, l + 1, s->len, lo);
    tgl__tensor_view values = s->has_values ? line_box(x, &s->values, l, l + 1, s->k, lo) : in;
    tgl__tensor_view indices = s->has_indices ? line_box(x, &s->indices, l, l + 1, s->k, lo) : in;
    if (window_bytes(&in) > x->max_bytes || window_bytes(&values) > x->max_bytes || window_bytes(&indices) > x->max_bytes)
        return tgl__fail(b, TGL_ERR_UNSUPPORTED, "tgl_sort: a line of %zu elements: its windows exceed the SSBO "
                         "block limit", s->len);
    tgl_gl_binding io[4] = {{0}}, arr[4];
    GLuint bases[4] = {0}, at[4];
    io[0] = tgl_gl_window(b, in.view, window_bytes(&in), 0, &pad);
    bases[0] = (GLuint)(pad / es + in.base);
    if (s->has_values) {
        io[2] = tgl_gl_window(b, values.view, window_bytes(&values), 1, &pad);
        bases[1] = (GLuint)(pad / es + values.base);
    }
    if (s->has_indices) {
        io[3] = tgl_gl_window(b, indices.view, window_bytes(&indices), 1, &pad);
        bases[2] = (GLuint)(pad / 4 + indices.base);
    }
    if (!s->has_values)
        io[2] = io[3];
    if (!s->has_indices)
        io[3] = io[2];
    for (int a = 0; a < 4; a++) {
        arr[a] = tgl_gl_window(b, (tgl__view){s->temp.buf, s->temp.offset + (size_t)r->at[a]},
                               (size_t)(a % 2 ? r->pos_bytes : r->keys_bytes), 1, &pad);
        at[a] = (GLuint)(pad / 4);
    }
    GLuint load = x->radix[R_LOAD], count = x->radix[R_COUNT], scatter = x->radix[R_SCATTER], store = x->radix[R_STORE];
    group_uniforms(x, load, l, lo, bases);
    group_uniforms(x, store, l, lo, bases);
    tgl_gl_uniform_ui(b, load, LOC_SRT_KEYS_OUT, at[0]);
    tgl_gl_uniform_ui(b, load, LOC_SRT_POS_OUT, at[1]);
    tgl_gl_binding bind[4] = {io[0], arr[0], arr[1]};
    size_t wg = tgl_gl_of(b)->limits.workgroup_size;
    tgl_status st = dispatch_prog(x, load, wg, 0, 0, bind, 3, s->len);
    unsigned d0, d1, digits = tgl_gl_radix_digits(&tgl_gl_of(b)->limits), bits = digits == 256 ? 8 : 4;
    radix_digits(s->in.dtype, bits, &d0, &d1);
    int from = 0; /* arrays A (0) or B (2) hold the pairs */
    for (unsigned d = d0; !st && d < d1; d++, from ^= 2) {
        int to = from ^ 2;
        tgl__tensor_view counts = {.view = {s->temp.buf, s->temp.offset + (size_t)r->at[from] + 4 * s->len},
                                   .dtype = TGL_DTYPE_I32, .span = digits * r->tiles, .strides = {1}};
        tgl__rdt scan = {.op = TGL__RDT_CUMSUM, .n_out = 1, .len = counts.span, .in_step = 1, .out_step = 1,
                         .in = counts, .out = counts};
        tgl_gl_uniform_ui(b, count, LOC_SRT_SHIFT, bits * d);
        tgl_gl_uniform_ui(b, count, LOC_SRT_KEYS, at[from]);
        tgl_gl_uniform_ui(b, count, LOC_SRT_COUNTS, at[from] + (GLuint)s->len);
        bind[0] = arr[from];
        st = dispatch_prog(x, count, RADIX_WG, 1, 0, bind, 1, r->tiles);
        if (!st)
            st = tgl_gl_reduce_t(b, &scan);
        tgl_gl_uniform_ui(b, scatter, LOC_SRT_SHIFT, bits * d);
        tgl_gl_uniform_ui(b, scatter, LOC_SRT_KEYS, at[from]);
        tgl_gl_uniform_ui(b, scatter, LOC_SRT_POS, at[from + 1]);
        tgl_gl_uniform_ui(b, scatter, LOC_SRT_COUNTS, at[from] + (GLuint)s->len);
        tgl_gl_uniform_ui(b, scatter, LOC_SRT_KEYS_OUT, at[to]);
        tgl_gl_uniform_ui(b, scatter, LOC_SRT_POS_OUT, at[to + 1]);
        bind[0] = arr[from], bind[1] = arr[from + 1], bind[2] = arr[to], bind[3] = arr[to + 1];
        bind[0].writes = bind[1].writes = 0;
        if (!st)
            st = dispatch_prog(x, scatter, RADIX_WG, 1, 0, bind, 4, r->tiles);
    }
    tgl_gl_uniform_ui(b, store, LOC_SRT_POS, at[from + 1]);
    bind[0] = io[0], bind[1] = arr[from + 1], bind[2] = io[2], bind[3] = io[3];
    bind[1].writes = 0;
    return st ? st : dispatch_prog(x, store, wg, 0, 0, bind, 4, s->k);
}

static tgl_status run_radix(sort_run *x)
{
    radix_layout r = radix_layout_of(&tgl_gl_of(x->b)->limits, x->s->len);
    tgl_status st = radix_programs(x);
    for (size_t l = 0; !st && l < x->s->n_lines; l++)
        st = run_radix_line(x, &r, l);
    return st;
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

/* The network sorts every line's pairs in place, each line's padded to a power of two at 8
 * bytes a pair; the radix passes keep two pairs of arrays for a line at a time (radix_layout);
 * TOPK's selection keeps its candidates in shared memory. */
uint64_t tgl_gl_sort_temp_bytes(tgl_backend *b, const tgl__sort *s)
{
    const tgl_gl_limits *l = &tgl_gl_of(b)->limits;
    int topk = topk_minima(l, s->len, s->k) != 0;
    if (topk)
        return 0;
    if (radix_fits(l, s, topk))
        return radix_layout_of(l, s->len).bytes;
    uint64_t padded = 1;
    while (padded < s->len)
        padded <<= 1;
    return s->n_lines > UINT64_MAX / (padded * 8) ? UINT64_MAX : (uint64_t)s->n_lines * padded * 8;
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
    if (radix_fits(l, s, x.topk != 0))
        return run_radix(&x);
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
    for (int pass = 0; pass < R_PASSES; pass++)
        for (int dt = TGL_DTYPE_F32; dt <= TGL_DTYPE_BOOL; dt++)
            for (uint32_t items = 8; items <= 32; items *= 2)
                for (int mode = RADIX_DIRECT; mode <= RADIX_WIDE; mode++)
                    if (pass == R_LOAD || pass == R_STORE ? items == 8 && mode == RADIX_DIRECT
                                                          : dt == TGL_DTYPE_F32 &&
                                                                (mode != RADIX_STAGED || pass == R_SCATTER))
                        tgl_gl_list_plan(fn, ctx, radix_plan(pass, (tgl_dtype)dt, items, mode));
}
