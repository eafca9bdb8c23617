/* GL drivers for tgl_reduce and tgl_argmax/argmin (kernels in glsl/reduce/).
 *
 * One workgroup per output line when there are enough outputs to fill the device; otherwise
 * long lines are split into chunks reduced in parallel into the scratch buffer, and a second
 * pass combines the partials. The outer dimension is processed in slabs whose windows fit the
 * SSBO block limit. */
#include "gl_internal.h"

#include <math.h>
#include <stdio.h>

#define F32 sizeof(float)
/* Splitting pays when there are fewer outputs than this many workgroups... */
#define TARGET_GROUPS 512
/* ...and each chunk still holds at least this many elements. */
#define MIN_CHUNK 4096

static const char *const op_defines[TGL_REDUCE_COUNT] = {
    "#define OP_SUM\n", "#define OP_SUM\n", "#define OP_MAX\n", "#define OP_MIN\n", "#define OP_PROD\n",
};

static size_t choose_splits(size_t len, size_t outputs)
{
    if (outputs >= TARGET_GROUPS || len < 2 * MIN_CHUNK)
        return 1;
    size_t want = (TARGET_GROUPS + outputs - 1) / outputs;
    size_t most = len / MIN_CHUNK;
    return want < most ? want : most;
}

typedef struct pass {
    tgl_gl_binding src, dst;
    size_t src_pad, dst_pad; /* bytes */
    size_t len, inner, chunk, splits, groups;
    float scale;
} pass;

/* Inputs are read through buffer textures where element-wise inputs are (llvmpipe), when the
 * window fits the texel limit; windows then start at the texture alignment too. */
static int use_textures(const tgl_gl_limits *l, size_t elems)
{
    return l->elementwise_textures && elems <= l->texture_buffer_texels;
}

static size_t src_align(const tgl_gl_limits *l, int tex)
{
    return tex && l->texture_align > l->ssbo_align ? (size_t)l->texture_align : (size_t)l->ssbo_align;
}

static tgl_status run_pass(tgl_backend *b, const char *kernel, const char *op_defines_, const pass *p)
{
    const tgl_gl_limits *l = &tgl_gl_of(b)->limits;
    int tex = use_textures(l, p->src.bytes / F32);
    char defines[96];
    snprintf(defines, sizeof defines, "%s%s", op_defines_, tex ? "#define TGL_TEX\n" : "");
    /* Each invocation walks span / wg elements of its line: under a loop limit (llvmpipe stops
     * an invocation's loops after 65535 iterations) long lines take wider groups (powers of two,
     * for the tree). */
    size_t span = p->splits ? p->chunk : p->len;
    uint32_t wg = l->reduce_workgroup_size;
    while (l->loop_limit && span / wg + 1 >= l->loop_limit / 2 && wg * 2 <= l->wg_invocations && wg * 2 <= l->wg_size[0])
        wg *= 2;
    if (l->loop_limit && span / wg + 1 >= l->loop_limit / 2)
        return tgl__fail(b, TGL_ERR_UNSUPPORTED, "a line of %zu elements passes the device's loop limit (%u iterations "
                         "per invocation)", span, l->loop_limit);
    GLuint prog;
    tgl_status st = tgl_gl_program_get_wg(b, kernel, defines, wg, &prog);
    if (st)
        return st;
    glProgramUniform1ui(prog, 0, (GLuint)p->len);
    glProgramUniform1ui(prog, 1, (GLuint)p->inner);
    glProgramUniform1ui(prog, 4, (GLuint)(p->src_pad / F32));
    glProgramUniform1ui(prog, 5, (GLuint)(p->dst_pad / 4));
    glProgramUniform1ui(prog, 7, (GLuint)p->groups);
    if (p->splits) { /* reduce.comp only */
        glProgramUniform1ui(prog, 2, (GLuint)p->chunk);
        glProgramUniform1ui(prog, 3, (GLuint)p->splits);
        glProgramUniform1f(prog, 6, p->scale);
    }
    tgl_gl_binding bind[2] = {p->src, p->dst};
    bind[0].texture_format = tex ? GL_R32F : 0;
    return tgl_gl_dispatch(b, prog, bind, 2, p->groups);
}

/* Outer indices per dispatch: whole [len, inner] slabs whose window fits the block limit. */
static tgl_status slab_count(tgl_backend *b, size_t outer, size_t len, size_t inner, size_t *out)
{
    size_t max_elems = tgl_gl_max_window_elems(&tgl_gl_of(b)->limits, F32);
    size_t slab = len * inner;
    if (slab > max_elems)
        return tgl__fail(b, TGL_ERR_UNSUPPORTED,
                         "a slice of %zu x %zu elements along the reduced axis exceeds the device's "
                         "SSBO block limit (%zu elements)", len, inner, max_elems);
    size_t per = slab ? max_elems / slab : outer;
    /* Keep the workgroups of one dispatch well inside the grid. */
    size_t grid = (size_t)1 << 26;
    if (per * inner > grid)
        per = grid / inner ? grid / inner : 1;
    *out = per < outer ? per : outer;
    return TGL_OK;
}

tgl_status tgl_gl_reduce(tgl_backend *b, tgl_reduce_op op, tgl__view in, tgl__view out, size_t outer,
                         size_t len, size_t inner)
{
    const char *defines = op_defines[op];
    int mean = op == TGL_REDUCE_MEAN;
    float scale = !mean ? 1.0f : len ? (float)(1.0 / (double)len) : NAN;
    size_t per;
    tgl_status st = slab_count(b, outer, len, inner, &per);
    if (st)
        return st;
    for (size_t o0 = 0; o0 < outer; o0 += per) {
        size_t no = outer - o0 < per ? outer - o0 : per;
        size_t lines = no * inner;
        size_t splits = choose_splits(len, lines);
        pass p = {.len = len, .inner = inner, .splits = splits, .groups = lines * splits};
        p.chunk = (len + splits - 1) / splits;
        tgl__view src = {in.buf, in.offset + o0 * len * inner * F32};
        tgl__view dst = {out.buf, out.offset + o0 * inner * F32};
        size_t align = src_align(&tgl_gl_of(b)->limits, use_textures(&tgl_gl_of(b)->limits, lines * len));
        if (len)
            p.src = tgl_gl_window_aligned(src, lines * len * F32, 0, align, &p.src_pad);
        else /* nothing to read: bind the output's window as a harmless source */
            p.src = tgl_gl_window_aligned(dst, lines * F32, 0, align, &p.src_pad);
        if (splits == 1) {
            p.scale = scale;
            p.dst = tgl_gl_window(b, dst, lines * F32, 1, &p.dst_pad);
            if ((st = run_pass(b, "reduce/reduce", defines, &p)))
                return st;
            continue;
        }
        tgl_gl_buffer *scratch;
        if ((st = tgl_gl_scratch(b, lines * splits * F32, &scratch)))
            return st;
        p.scale = 1.0f;
        p.dst = (tgl_gl_binding){.buf = scratch, .bytes = lines * splits * F32, .writes = 1};
        p.dst_pad = 0;
        if ((st = run_pass(b, "reduce/reduce", defines, &p)))
            return st;
        /* Second pass: each line's partials are contiguous. */
        pass q = {.len = splits, .inner = 1, .chunk = splits, .splits = 1, .groups = lines, .scale = scale};
        q.src = (tgl_gl_binding){.buf = scratch, .bytes = lines * splits * F32};
        q.dst = tgl_gl_window(b, dst, lines * F32, 1, &q.dst_pad);
        if ((st = run_pass(b, "reduce/reduce", defines, &q)))
            return st;
    }
    return TGL_OK;
}

tgl_status tgl_gl_arg_reduce(tgl_backend *b, int want_max, tgl__view in, tgl__view out, size_t outer,
                             size_t len, size_t inner)
{
    const char *defines = want_max ? "#define ARG_MAX\n" : "#define ARG_MIN\n";
    size_t per;
    tgl_status st = slab_count(b, outer, len, inner, &per);
    if (st)
        return st;
    for (size_t o0 = 0; o0 < outer; o0 += per) {
        size_t no = outer - o0 < per ? outer - o0 : per;
        pass p = {.len = len, .inner = inner, .groups = no * inner};
        size_t align = src_align(&tgl_gl_of(b)->limits, use_textures(&tgl_gl_of(b)->limits, no * len * inner));
        p.src = tgl_gl_window_aligned((tgl__view){in.buf, in.offset + o0 * len * inner * F32},
                                      no * len * inner * F32, 0, align, &p.src_pad);
        p.dst = tgl_gl_window(b, (tgl__view){out.buf, out.offset + o0 * inner * sizeof(int32_t)},
                              no * inner * sizeof(int32_t), 1, &p.dst_pad);
        if ((st = run_pass(b, "reduce/arg_reduce", defines, &p)))
            return st;
    }
    return TGL_OK;
}

void tgl_gl_reduce_variants(void (*fn)(void *ctx, const char *kernel, const char *defines), void *ctx)
{
    static const char *const tex_defines[2] = {"", "#define TGL_TEX\n"};
    char d[96];
    for (int tex = 0; tex < 2; tex++) {
        for (int op = TGL_REDUCE_MEAN; op < TGL_REDUCE_COUNT; op++) {
            snprintf(d, sizeof d, "%s%s", op_defines[op], tex_defines[tex]);
            fn(ctx, "reduce/reduce", d);
        }
        snprintf(d, sizeof d, "#define ARG_MAX\n%s", tex_defines[tex]);
        fn(ctx, "reduce/arg_reduce", d);
        snprintf(d, sizeof d, "#define ARG_MIN\n%s", tex_defines[tex]);
        fn(ctx, "reduce/arg_reduce", d);
    }
}
