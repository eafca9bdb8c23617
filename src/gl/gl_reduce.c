/* GL drivers for tgl_reduce and tgl_argmax/argmin (kernels in glsl/reduce/).
 *
 * Strided lines (inner >= 32) take reduce_cols.comp, an invocation per line (and per chunk of
 * it, when there are few lines). Otherwise one workgroup per output line when there are enough
 * outputs to fill the device; otherwise
 * long lines are split into chunks reduced in parallel into the scratch buffer, and a second
 * pass combines the partials. The outer dimension is processed in slabs whose windows fit the
 * SSBO block limit; lines whose slab does not fit are reduced piece by piece into the output. */
#include "gl_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define F32 sizeof(float)
/* Splitting pays when there are fewer outputs than the device's limits.reduce_groups
 * workgroups, and each chunk still holds at least this many elements. */
#define MIN_CHUNK 4096

/* The reductions' flags: the op (tgl_reduce_op for reduce.comp and reduce_cols.comp; 0 argmin,
 * 1 argmax for arg_reduce.comp), whether a long line's earlier pieces are carried in, the
 * input's read and vec4 steps. */
typedef struct red_flags {
    uint32_t op, carry, read, vec4;
} red_flags;
static const char *const reduce_ops[TGL_REDUCE_PROD + 1] = {"OP_SUM", "OP_SUM", "OP_MAX", "OP_MIN", "OP_PROD"};
static const char *const arg_ops[2] = {"ARG_MIN", "ARG_MAX"};
static const tgl_gl_def reduce_defs[] = {
    TGL_GL_NAME(red_flags, op, reduce_ops), TGL_GL_FLAG(red_flags, carry, "REDUCE_CARRY"),
    TGL_GL_READ(red_flags, read), TGL_GL_FLAG(red_flags, vec4, "TGL_VEC4"),
};
static const tgl_gl_def arg_defs[] = {
    TGL_GL_NAME(red_flags, op, arg_ops), TGL_GL_FLAG(red_flags, carry, "ARG_CARRY"),
    TGL_GL_READ(red_flags, read), TGL_GL_FLAG(red_flags, vec4, "TGL_VEC4"),
};
static const char *const reduce_names[TGL_REDUCE_PROD + 1] = {"tgl_reduce(sum)", "tgl_reduce(mean)", "tgl_reduce(max)",
                                                           "tgl_reduce(min)", "tgl_reduce(prod)"};

/* Which reduction runs: tgl_reduce's op, or argmin / argmax (arg). */
typedef struct red_op {
    int arg;
    uint32_t op;
} red_op;

/* A kernel's plan from its flags: the one place reduce's defines are written. */
static tgl_gl_plan red_plan(const char *kernel, red_op o, uint32_t carry, tgl_gl_read read, int vec4)
{
    red_flags f = {o.op, carry, (uint32_t)read, (uint32_t)vec4};
    tgl_gl_plan p = {.op = o.arg ? (o.op ? "tgl_argmax" : "tgl_argmin") : reduce_names[o.op]};
    if (o.arg)
        tgl_gl_plan_kernel(&p, kernel, TGL_GL_DEFS(arg_defs), &f);
    else
        tgl_gl_plan_kernel(&p, kernel, TGL_GL_DEFS(reduce_defs), &f);
    return p;
}

static size_t choose_splits(size_t len, size_t outputs, size_t target_groups)
{
    if (outputs >= target_groups || len < 2 * MIN_CHUNK)
        return 1;
    size_t want = (target_groups + outputs - 1) / outputs;
    size_t most = len / MIN_CHUNK;
    return want < most ? want : most;
}

typedef struct pass {
    tgl_gl_binding src, dst, best;
    size_t src_pad, dst_pad, best_pad; /* bytes */
    size_t len, inner, chunk, splits, groups;
    float scale;
    uint32_t carry;     /* the carry variant (a long line's later pieces) */
    size_t j_base;      /* arg_reduce with carry: the piece's first index along the line */
    int carry_in;       /* ... and whether earlier pieces' best competes */
    unsigned backward;  /* the direction of the walk over lines or chunks (glsl/common/sweep.glsl) */
} pass;

/* Inputs are read through buffer textures where element-wise inputs are (llvmpipe), when the
 * window fits the texel limit; windows then start at the texture alignment too. */
static int use_textures(const tgl_gl_limits *l, size_t elems)
{
    return l->texel_inputs && elems <= l->texture_buffer_texels;
}

/* The narrowest workgroup pass_plan gives a short line: a warp on NVIDIA, half a wave on AMD. */
#define SHORT_LINE_WG 32u

/* The plan of one pass of reduce.comp (a line or chunk per workgroup) or arg_reduce.comp, pure
 * in the pass and the profile; -1 where the device's loop limit stops the line. */
static int pass_plan(const tgl_gl_limits *l, red_op o, const pass *p, tgl_gl_plan *plan, tgl_gl_read *read,
                     int *vec4_out)
{
    *read = tgl_gl_input_read(l, use_textures(l, p->src.bytes / F32));
    /* Contiguous lines whose start, length and chunks are whole vec4s read vec4s: in
     * reduce.comp on every device (llvmpipe: a quarter of the fetches and loop trips; H100, sum
     * of 16M floats with 2048 groups, 0.0304 -> 0.0296 ms, rows of 1024 maxed 0.0070 -> 0.0067),
     * in arg_reduce.comp where limits.vec4_lines says so. */
    int vec4 = p->inner == 1 && p->len % 4 == 0 && (p->src_pad / F32) % 4 == 0 &&
               (!o.arg ? p->chunk % 4 == 0 : l->vec4_lines);
    *plan = red_plan(o.arg ? "reduce/arg_reduce" : "reduce/reduce", o, p->carry, *read, vec4);
    *vec4_out = vec4;
    /* Each invocation walks span / wg elements of its line: under a loop limit (llvmpipe stops
     * an invocation's loops after 65535 iterations) long lines take wider groups (powers of two,
     * for the tree). */
    size_t span = (p->splits ? p->chunk : p->len) / (vec4 ? 4 : 1);
    uint32_t wg = l->reduce_workgroup_size;
    while (l->loop_limit && span / wg + 1 >= l->loop_limit / 2 && wg * 2 <= l->wg_invocations && wg * 2 <= l->wg_size[0])
        wg *= 2;
    /* Lines of at most half a workgroup's loads (a split reduction's partials, short rows) take
     * a narrower one, down to SHORT_LINE_WG: the idle invocations still wait at every step of the
     * tree (H100, 4096 x 4096 summed over axis 0, whose second pass reduces 4096 lines of 128
     * partials: 39.6 -> 35.0 us, alternated; 1024 x 1024 13.9 -> 12.8). */
    while (wg / 2 >= SHORT_LINE_WG && span <= wg / 2)
        wg /= 2;
    plan->wg = wg;
    plan->groups = p->groups;
    plan->why = p->splits > 1 ? "few long lines: chunks in parallel, then a pass over the partials"
                : p->carry    ? "a line past the SSBO block limit, in pieces carried through the output"
                : vec4        ? "a workgroup per line, vec4 loads"
                              : "a workgroup per line";
    return l->loop_limit && span / wg + 1 >= l->loop_limit / 2 ? -1 : 0;
}

static tgl_status run_pass(tgl_backend *b, red_op o, const pass *p)
{
    const tgl_gl_limits *l = &tgl_gl_of(b)->limits;
    tgl_gl_plan plan;
    tgl_gl_read read;
    int vec4;
    if (pass_plan(l, o, p, &plan, &read, &vec4))
        return tgl__fail(b, TGL_ERR_UNSUPPORTED, "a line of %zu elements passes the device's loop limit (%u iterations "
                         "per invocation)", (p->splits ? p->chunk : p->len) / (vec4 ? 4 : 1), l->loop_limit);
    GLuint prog;
    tgl_status st = tgl_gl_plan_program(b, &plan, &prog);
    if (st)
        return st;
    tgl_gl_uniform_ui(b, prog, LOC_RED_LEN, (GLuint)p->len);
    tgl_gl_uniform_ui(b, prog, LOC_RED_INNER, (GLuint)p->inner);
    tgl_gl_uniform_ui(b, prog, LOC_RED_X_OFF, (GLuint)(p->src_pad / F32));
    tgl_gl_uniform_ui(b, prog, LOC_RED_Y_OFF, (GLuint)(p->dst_pad / 4));
    tgl_gl_uniform_ui(b, prog, LOC_RED_GROUPS, (GLuint)p->groups);
    tgl_gl_uniform_ui(b, prog, LOC_SWEEP, p->backward);
    if (p->splits) { /* reduce.comp only */
        tgl_gl_uniform_ui(b, prog, LOC_RED_CHUNK, (GLuint)p->chunk);
        tgl_gl_uniform_ui(b, prog, LOC_RED_SPLITS, (GLuint)p->splits);
        tgl_gl_uniform_f(b, prog, LOC_RED_SCALE, p->scale);
    }
    tgl_gl_binding bind[3] = {p->src, p->dst, p->best};
    tgl_gl_bind_read(&bind[0], read, vec4 ? GL_RGBA32F : GL_R32F);
    int nbind = 2;
    if (!p->splits && p->carry) { /* arg_reduce.comp's carry */
        tgl_gl_uniform_ui(b, prog, LOC_RED_J_BASE, (GLuint)p->j_base);
        tgl_gl_uniform_ui(b, prog, LOC_RED_CARRY, (GLuint)p->carry_in);
        tgl_gl_uniform_ui(b, prog, LOC_RED_V_OFF, (GLuint)(p->best_pad / F32));
        nbind = 3;
    }
    return tgl_gl_dispatch(b, prog, bind, nbind, p->groups);
}

/* Outer indices per dispatch: whole [len, inner] slabs whose window fits the block limit
 * (the caller has checked that one does). */
static size_t slab_count(const tgl_gl_limits *l, size_t outer, size_t len, size_t inner)
{
    size_t max_elems = tgl_gl_max_window_elems(l, F32);
    size_t slab = len * inner;
    size_t per = slab ? max_elems / slab : outer;
    /* Keep the workgroups of one dispatch well inside the grid. */
    size_t grid = (size_t)1 << 26;
    if (per * inner > grid)
        per = grid / inner ? grid / inner : 1;
    return per < outer ? per : outer;
}

/* Lines too long for one window ([len, inner] slabs past the block limit) are taken piece by
 * piece, in order: `rows` indices along the line at a time (whole rows of `inner`), or, when
 * not even one row fits, one index at a time over `cols` columns. Each piece combines into
 * the output (the carry variants), so nothing but the output is written. */
typedef struct pieces {
    size_t rows, cols;
} pieces;

static pieces long_line_pieces(const tgl_gl_limits *l, size_t inner)
{
    size_t max_elems = tgl_gl_max_window_elems(l, F32);
    size_t grid = (size_t)1 << 26;
    if (inner <= max_elems && inner <= grid)
        return (pieces){max_elems / inner, inner};
    return (pieces){1, max_elems < grid ? max_elems : grid};
}

/* Strided lines (inner at least this) take reduce_cols.comp: an invocation per line and chunk,
 * neighbours reading neighbours. The old way (a workgroup per line, its invocations reading
 * elements inner apart) summed 4096 x 4096 over axis 0 at 1.3 GB/s on llvmpipe and a
 * [2^17, 4096] one at 1.4 GB/s on the H100. */
#define COLS_MIN_INNER 32

/* How many chunks reduce_cols cuts each line into (0: the grid cannot hold the dispatch): about
 * limits.cols_invocations invocations in all, each chunk at least limits.cols_min_chunk long. */
static size_t cols_splits(const tgl_gl_limits *l, size_t no, size_t len, size_t inner)
{
    size_t lines = no * inner;
    if (lines == 0 || len == 0 || l->workgroup_size == 0)
        return 0;
    size_t target = l->cols_invocations, min_chunk = l->cols_min_chunk ? l->cols_min_chunk : 1;
    /* A reduction of fewer elements than that target is left in one pass: the second pass's
     * dispatch costs more than the chunks gain (H100, 64 x 1024 over axis 0: 0.0079 ms in one
     * pass, 0.0123 in chunks of 16 rows and a pass over their partials). */
    size_t splits = lines >= target || len < target / lines ? 1 : tgl_gl_ceil_div(target, lines);
    if (splits == 0 || splits > len / min_chunk)
        splits = len / min_chunk ? len / min_chunk : 1;
    /* Under a loop limit (llvmpipe) an invocation walks at most about half of it. */
    if (l->loop_limit > 4 && tgl_gl_ceil_div(len, splits) >= l->loop_limit / 2)
        splits = tgl_gl_ceil_div(len, l->loop_limit / 2 - 1);
    if (tgl_gl_ceil_div(inner, l->workgroup_size) > l->wg_count[0] || no * splits > l->wg_count[1])
        return 0;
    return splits;
}

static tgl_status run_cols(tgl_backend *b, red_op o, uint32_t carry, tgl_gl_binding src, size_t src_pad,
                           tgl_gl_binding dst, size_t dst_pad, size_t no, size_t len, size_t inner, size_t splits,
                           float scale, unsigned backward)
{
    const tgl_gl_limits *l = &tgl_gl_of(b)->limits;
    tgl_gl_read read = tgl_gl_input_read(l, use_textures(l, src.bytes / F32));
    /* Four neighbouring lines per invocation where they start as whole vec4s, on llvmpipe
     * (vec4_lines): a quarter of the texel fetches there (4096 x 4096 over axis 0: 13.6 -> 6.6
     * ms); on the H100 the quarter as many invocations left it latency-bound (0.054 -> 0.144). */
    int vec4 = l->vec4_lines && inner % 4 == 0 && src_pad % 16 == 0;
    tgl_gl_plan plan = red_plan("reduce/reduce_cols", o, carry, read, vec4);
    plan.groups = tgl_gl_ceil_div(inner / (vec4 ? 4 : 1), l->workgroup_size) * no * splits;
    plan.why = splits > 1 ? "strided lines (inner >= 32): an invocation per line and chunk, then a pass over the partials"
                          : "strided lines (inner >= 32): an invocation per line";
    GLuint prog;
    tgl_status st = tgl_gl_plan_program(b, &plan, &prog);
    if (st)
        return st;
    tgl_gl_uniform_ui(b, prog, LOC_RED_LEN, (GLuint)len);
    tgl_gl_uniform_ui(b, prog, LOC_RED_INNER, (GLuint)inner);
    tgl_gl_uniform_ui(b, prog, LOC_RED_CHUNK, (GLuint)tgl_gl_ceil_div(len, splits));
    tgl_gl_uniform_ui(b, prog, LOC_RED_SPLITS, (GLuint)splits);
    tgl_gl_uniform_ui(b, prog, LOC_RED_X_OFF, (GLuint)(src_pad / F32));
    tgl_gl_uniform_ui(b, prog, LOC_RED_Y_OFF, (GLuint)(dst_pad / F32));
    tgl_gl_uniform_f(b, prog, LOC_RED_SCALE, scale);
    tgl_gl_uniform_ui(b, prog, LOC_SWEEP, backward);
    tgl_gl_binding bind[2] = {src, dst};
    tgl_gl_bind_read(&bind[0], read, vec4 ? GL_RGBA32F : GL_R32F);
    return tgl_gl_dispatch_grid(b, prog, bind, 2, (uint32_t)tgl_gl_ceil_div(inner / (vec4 ? 4 : 1), l->workgroup_size),
                                (uint32_t)(no * splits), 1);
}

/* Reduces `lines` = no * inner lines of [no, len, inner] at src into dst (splitting long lines
 * into chunks reduced in parallel, with a second pass over the partials); the pass over src
 * walks its lines or chunks `backward` or not. */
static tgl_status reduce_lines(tgl_backend *b, red_op o, uint32_t carry, tgl__view src,
                               tgl__view dst, size_t no, size_t len, size_t inner, float scale, unsigned backward)
{
    const tgl_gl_limits *l = &tgl_gl_of(b)->limits;
    size_t lines = no * inner;
    size_t col_splits = inner >= COLS_MIN_INNER && len ? cols_splits(l, no, len, inner) : 0;
    if (col_splits) {
        size_t src_pad, dst_pad;
        size_t src_align = tgl_gl_window_align(l, use_textures(l, lines * len));
        tgl_gl_binding sb = tgl_gl_window_aligned(src, lines * len * F32, 0, src_align, &src_pad);
        if (col_splits == 1) {
            tgl_gl_binding db = tgl_gl_window(b, dst, lines * F32, 1, &dst_pad);
            return run_cols(b, o, carry, sb, src_pad, db, dst_pad, no, len, inner, 1, scale, backward);
        }
        tgl_gl_buffer *scratch;
        tgl_status st = tgl_gl_scratch(b, lines * col_splits * F32, "a column reduction's partials", &scratch);
        if (st)
            return st;
        tgl_gl_binding part = {.buf = scratch, .bytes = lines * col_splits * F32, .writes = 1};
        if ((st = run_cols(b, o, 0, sb, src_pad, part, 0, no, len, inner, col_splits, scale, backward)))
            return st;
        /* Each line's partials are contiguous, scaled already: reduce.comp combines them. */
        pass q = {.len = col_splits, .inner = 1, .chunk = col_splits, .splits = 1, .groups = lines, .scale = 1.0f,
                  .carry = carry};
        q.src = (tgl_gl_binding){.buf = scratch, .bytes = lines * col_splits * F32};
        q.dst = tgl_gl_window(b, dst, lines * F32, 1, &q.dst_pad);
        return run_pass(b, o, &q);
    }
    size_t splits = choose_splits(len, lines, l->reduce_groups);
    pass p = {.len = len, .inner = inner, .splits = splits, .groups = lines * splits, .carry = 0,
              .backward = backward};
    p.chunk = (len + splits - 1) / splits;
    if (inner == 1 && len % 4 == 0)
        p.chunk = (p.chunk + 3) / 4 * 4; /* whole vec4s per chunk (the last may be shorter or empty) */
    size_t align = tgl_gl_window_align(l, use_textures(l, lines * len));
    if (len)
        p.src = tgl_gl_window_aligned(src, lines * len * F32, 0, align, &p.src_pad);
    else /* nothing to read: bind the output's window as a harmless source */
        p.src = tgl_gl_window_aligned(dst, lines * F32, 0, align, &p.src_pad);
    if (splits == 1) {
        p.scale = scale;
        p.carry = carry;
        p.dst = tgl_gl_window(b, dst, lines * F32, 1, &p.dst_pad);
        return run_pass(b, o, &p);
    }
    tgl_gl_buffer *scratch;
    tgl_status st = tgl_gl_scratch(b, lines * splits * F32, "a reduction's partials", &scratch);
    if (st)
        return st;
    p.scale = scale;
    p.dst = (tgl_gl_binding){.buf = scratch, .bytes = lines * splits * F32, .writes = 1};
    p.dst_pad = 0;
    if ((st = run_pass(b, o, &p)))
        return st;
    /* Second pass: each line's partials are contiguous, scaled already. */
    pass q = {.len = splits, .inner = 1, .chunk = splits, .splits = 1, .groups = lines, .scale = 1.0f, .carry = carry};
    q.src = (tgl_gl_binding){.buf = scratch, .bytes = lines * splits * F32};
    q.dst = tgl_gl_window(b, dst, lines * F32, 1, &q.dst_pad);
    return run_pass(b, o, &q);
}

tgl_status tgl_gl_reduce(tgl_backend *b, tgl_reduce_op op, tgl__view in, tgl__view out, size_t outer,
                         size_t len, size_t inner)
{
    tgl_gl *gl = tgl_gl_of(b);
    const tgl_gl_limits *l = &gl->limits;
    const red_op ro = {0, (uint32_t)op};
    int mean = op == TGL_REDUCE_MEAN;
    float scale = !mean ? 1.0f : len ? (float)(1.0 / (double)len) : NAN;
    tgl_status st;
    if (len * inner <= tgl_gl_max_window_elems(l, F32)) {
        size_t per = slab_count(l, outer, len, inner);
        uint64_t bytes = (uint64_t)outer * len * inner * F32;
        unsigned backward = tgl_gl_sweep_direction(gl, bytes);
        for (size_t o0 = 0; o0 < outer; o0 += per) {
            size_t no = outer - o0 < per ? outer - o0 : per;
            st = reduce_lines(b, ro, 0, (tgl__view){in.buf, in.offset + o0 * len * inner * F32},
                              (tgl__view){out.buf, out.offset + o0 * inner * F32}, no, len, inner, scale, backward);
            if (st)
                return st;
        }
        tgl_gl_sweep_done(gl, bytes);
        return TGL_OK;
    }
    /* Long lines: each piece's result is combined into the output, a mean's pieces each scaled
     * by 1 / len. Sums stay accurate: each piece is summed in a tree, and a line has few pieces
     * (its length over the block limit). */
    pieces pc = long_line_pieces(l, inner);
    for (size_t o = 0; o < outer; o++)
        for (size_t c0 = 0; c0 < inner; c0 += pc.cols) {
            size_t nc = inner - c0 < pc.cols ? inner - c0 : pc.cols;
            for (size_t j0 = 0; j0 < len; j0 += pc.rows) {
                size_t nj = len - j0 < pc.rows ? len - j0 : pc.rows;
                tgl__view src = {in.buf, in.offset + ((o * len + j0) * inner + c0) * F32};
                tgl__view dst = {out.buf, out.offset + (o * inner + c0) * F32};
                st = reduce_lines(b, ro, j0 > 0, src, dst, 1, nj, nc, scale, 0u);
                if (st)
                    return st;
            }
        }
    return TGL_OK;
}

tgl_status tgl_gl_arg_reduce(tgl_backend *b, int want_max, tgl__view in, tgl__view out, size_t outer,
                             size_t len, size_t inner)
{
    tgl_gl *gl = tgl_gl_of(b);
    const tgl_gl_limits *l = &gl->limits;
    const red_op ro = {1, want_max ? 1u : 0u};
    /* One workgroup walks a whole line: under a loop limit (llvmpipe), longer lines than its
     * widest group can walk take pieces too. */
    uint32_t widest = l->wg_invocations < l->wg_size[0] ? l->wg_invocations : l->wg_size[0];
    size_t walk = l->loop_limit ? (size_t)(l->loop_limit / 2 - 2) * widest : SIZE_MAX;
    tgl_status st;
    if (len * inner <= tgl_gl_max_window_elems(l, F32) && len <= walk) {
        size_t per = slab_count(l, outer, len, inner);
        uint64_t bytes = (uint64_t)outer * len * inner * F32;
        unsigned backward = tgl_gl_sweep_direction(gl, bytes);
        for (size_t o0 = 0; o0 < outer; o0 += per) {
            size_t no = outer - o0 < per ? outer - o0 : per;
            pass p = {.len = len, .inner = inner, .groups = no * inner, .backward = backward};
            size_t align = tgl_gl_window_align(l, use_textures(l, no * len * inner));
            p.src = tgl_gl_window_aligned((tgl__view){in.buf, in.offset + o0 * len * inner * F32},
                                          no * len * inner * F32, 0, align, &p.src_pad);
            p.dst = tgl_gl_window(b, (tgl__view){out.buf, out.offset + o0 * inner * sizeof(int32_t)},
                                  no * inner * sizeof(int32_t), 1, &p.dst_pad);
            if ((st = run_pass(b, ro, &p)))
                return st;
        }
        tgl_gl_sweep_done(gl, bytes);
        return TGL_OK;
    }
    /* Long lines: pieces in order, the best (value, index) so far carried in the output and in
     * the scratch buffer's values. */
    pieces pc = long_line_pieces(l, inner);
    if (pc.rows > walk)
        pc.rows = walk;
    tgl_gl_buffer *best;
    if ((st = tgl_gl_scratch(b, pc.cols * F32, "an argmax/argmin's best values", &best)))
        return st;
    for (size_t o = 0; o < outer; o++)
        for (size_t c0 = 0; c0 < inner; c0 += pc.cols) {
            size_t nc = inner - c0 < pc.cols ? inner - c0 : pc.cols;
            for (size_t j0 = 0; j0 < len; j0 += pc.rows) {
                size_t nj = len - j0 < pc.rows ? len - j0 : pc.rows;
                pass p = {.len = nj, .inner = nc, .groups = nc, .carry = 1, .j_base = j0,
                          .carry_in = j0 > 0};
                size_t align = tgl_gl_window_align(l, use_textures(l, nj * nc));
                p.src = tgl_gl_window_aligned((tgl__view){in.buf, in.offset + ((o * len + j0) * inner + c0) * F32},
                                              nj * nc * F32, 0, align, &p.src_pad);
                p.dst = tgl_gl_window(b, (tgl__view){out.buf, out.offset + (o * inner + c0) * sizeof(int32_t)},
                                      nc * sizeof(int32_t), 1, &p.dst_pad);
                p.best = (tgl_gl_binding){.buf = best, .bytes = nc * F32, .writes = 1};
                if ((st = run_pass(b, ro, &p)))
                    return st;
            }
        }
    return TGL_OK;
}

void tgl_gl_reduce_variants(void (*fn)(void *ctx, const char *kernel, const char *defines), void *ctx)
{
    for (tgl_gl_read read = TGL_GL_READ_SSBO; read < TGL_GL_READS; read++)
        for (uint32_t carry = 0; carry < 2; carry++) /* long lines, in pieces */
            for (int vec4 = 0; vec4 < 2; vec4++) {
                /* (mean is sum's kernel) */
                for (uint32_t op = TGL_REDUCE_MEAN; op <= TGL_REDUCE_PROD; op++) {
                    tgl_gl_plan p = red_plan("reduce/reduce", (red_op){0, op}, carry, read, vec4);
                    fn(ctx, p.kernel, p.defines); /* vec4: contiguous rows of whole vec4s */
                    p = red_plan("reduce/reduce_cols", (red_op){0, op}, carry, read, vec4);
                    fn(ctx, p.kernel, p.defines); /* strided lines; vec4: four per invocation */
                }
                for (uint32_t max = 0; max < 2; max++) {
                    tgl_gl_plan p = red_plan("reduce/arg_reduce", (red_op){1, max}, carry, read, vec4);
                    fn(ctx, p.kernel, p.defines);
                }
            }
}
