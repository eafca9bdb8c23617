/* GL drivers for tgl_unary, tgl_binary, tgl_fill and tgl_scale_add.
 *
 * Each operand is bound as a window starting at its offset rounded down to the SSBO offset
 * alignment; the kernel adds the remainder (u_off) to its index. When every remainder is a
 * multiple of 4 elements, the vec4 variant runs (one vec4 per invocation); on llvmpipe
 * (l->wide_stores) the wide variant takes the whole workgroups of pairs of vec4s first
 * (common/wide_store.glsl).
 * Tensors larger than the SSBO block limit are processed in chunks. */
#include "gl_internal.h"

#include <stdio.h>
#define F32 sizeof(float)

/* The element-wise kernels: which read their inputs through buffer textures where the device
 * does (common/texel.glsl; fill reads nothing, copy has no such variant) and which have the
 * TGL_WIDE variant (pairs of vec4s stored as dvec4s, common/wide_store.glsl). */
static const struct ew_kernel {
    const char *name;
    int textures, wide;
} ew_kernels[TGL_GL_EW_KERNELS] = {
    [TGL_GL_EW_UNARY] = {"elementwise/unary", 1, 1},
    [TGL_GL_EW_BINARY] = {"elementwise/binary", 1, 1},
    [TGL_GL_EW_SCALE_ADD] = {"elementwise/scale_add", 1, 1},
    [TGL_GL_EW_FILL] = {"elementwise/fill", 0, 1},
    [TGL_GL_EW_COPY] = {"elementwise/copy", 0, 0},
    [TGL_GL_EW_MAP] = {"map/map", 1, 1},
};

/* The variants a dispatch runs: one element per invocation, one vec4, or WIDE_PAIRS pairs of
 * vec4s (TGL_WIDE_PAIRS in common/wide_store.glsl). */
enum { PIECE_SCALAR, PIECE_VEC4, PIECE_WIDE, PIECES };
#define WIDE_PAIRS 2

/* An element-wise kernel's flags: the op (unary ops, then binary ops, after "none"), the
 * piece's vec4 and wide steps, and how inputs are read. */
typedef struct ew_flags {
    uint32_t op, vec4, read, wide;
} ew_flags;
#define OP_NONE 0u
#define OP_UNARY(op) (1u + (uint32_t)(op))
#define OP_BINARY(op) (1u + TGL__UNARY_FLAT_KERNELS + (uint32_t)(op))
static const char *const op_names[1 + TGL__UNARY_FLAT_KERNELS + TGL__BINARY_FLAT_KERNELS] = {
    NULL, "OP_NEG", "OP_ABS", "OP_EXP", "OP_LOG", "OP_SQRT", "OP_RSQRT", "OP_RECIP", "OP_SQUARE", "OP_SIN",
    "OP_COS", "OP_TANH", "OP_SIGMOID", "OP_RELU", "OP_GELU", "OP_SILU", "OP_FLOOR", "OP_CEIL",
    "OP_ADD", "OP_SUB", "OP_MUL", "OP_DIV", "OP_MAX", "OP_MIN", "OP_POW",
};
static const tgl_gl_def ew_defs[] = {
    TGL_GL_NAME(ew_flags, op, op_names),
    TGL_GL_FLAG(ew_flags, vec4, "TGL_VEC4"),
    TGL_GL_READ(ew_flags, read),
    TGL_GL_FLAG(ew_flags, wide, "TGL_WIDE"),
};

/* Whether kernel k reads its nv - 1 inputs through buffer textures here: the device's
 * element-wise kernels do (l->texel_inputs), the kernel has a TGL_TEX variant, and each input
 * gets one of the texture units the dispatcher binds. */
static int reads_textures(const tgl_gl_limits *l, tgl_gl_ew_kernel k, int nv)
{
    return l->texel_inputs && nv - 1 <= TGL_GL_MAX_TEXTURE_BINDINGS && ew_kernels[k].textures;
}

/* The plan of one piece: kernel k with op `op` (OP_NONE for the kernels without one), its
 * inputs read as `read`. Pure: dispatch and the variant list both build plans here. */
static tgl_gl_plan piece_plan(const tgl_gl_limits *l, const char *op_name, tgl_gl_ew_kernel k, uint32_t op,
                              int piece, tgl_gl_read read)
{
    tgl_gl_plan p = {.op = op_name, .wg = l ? l->workgroup_size : 0};
    ew_flags f = {op, piece != PIECE_SCALAR, (uint32_t)read, piece == PIECE_WIDE};
    tgl_gl_plan_kernel(&p, ew_kernels[k].name, TGL_GL_DEFS(ew_defs), &f);
    p.items = piece == PIECE_WIDE || !l ? 1 : l->items_per_invocation;
    static const char *const why[PIECES][TGL_GL_READS] = {
        {"a window not 16-byte aligned, or the 1..3 elements after the vec4s",
         "unaligned or the tail; inputs as buffer textures (texel_inputs)",
         "unaligned or the tail; inputs as images (image_inputs)"},
        {"every window 16-byte aligned: one vec4 per item", "aligned: vec4s; inputs as buffer textures (texel_inputs)",
         "aligned: vec4s; inputs as images (image_inputs)"},
        {"whole workgroups of vec4 pairs, output 32-byte aligned (wide_stores)",
         "vec4 pairs (wide_stores); inputs as buffer textures (texel_inputs)",
         "vec4 pairs (wide_stores); inputs as images (image_inputs)"},
    };
    p.why = why[piece][read];
    return p;
}

/* Elements one dispatch may cover: every window (alignment pad + data + vec4 rounding) stays
 * within the SSBO block limit, the scalar variant's workgroups fit the 2-D grid, and indices
 * stay far from uint overflow. */
static size_t chunk_elements(const tgl_gl_limits *l, int tex)
{
    uint64_t n = tgl_gl_max_window_elems(l, F32) / 4 * 4;
    if (tex) { /* one texel per element in the scalar variant; room for the larger alignment pad */
        if (l->texture_buffer_texels < n)
            n = l->texture_buffer_texels / 4 * 4;
        n = n > l->texture_align ? (n - l->texture_align) / 4 * 4 : 0;
    }
    uint64_t grid = (uint64_t)l->wg_count[0] * l->wg_count[1] * l->workgroup_size / 4 * 4;
    return (size_t)(n < grid ? n : grid);
}

/* One dispatch over `count` elements from element `start` of every operand, with the vec4
 * variant (count a multiple of 4, every window 16-byte aligned), the wide one (whole
 * workgroups, the output 32-byte aligned) or the scalar one. The kernel's uniforms
 * (common/locations.glsl): the count (in vec4s for the vec4 and wide variants), the operands'
 * offsets in the same unit, the float parameters, the direction. */
static tgl_status dispatch_piece(tgl_backend *b, const tgl_gl_ew_run *r, size_t start, size_t count, int piece,
                                 unsigned backward)
{
    int vec4 = piece != PIECE_SCALAR, nv = r->nv;
    tgl_gl_binding bind[TGL_GL_EW_OPERANDS];
    GLuint pad[TGL_GL_EW_OPERANDS];
    const tgl_gl_limits *l = &tgl_gl_of(b)->limits;
    int tex = reads_textures(l, r->kernel, nv);
    tgl_gl_read read = tgl_gl_input_read(l, tex);
    size_t align = tgl_gl_window_align(l, tex);
    for (int i = 0; i < nv; i++) {
        size_t pad_bytes;
        /* The wide variant's output window starts 32-byte aligned: its offset in vec4s is even. */
        size_t a = piece == PIECE_WIDE && i == nv - 1 && align < 32 ? 32 : align;
        bind[i] = tgl_gl_window_aligned((tgl__view){r->v[i].buf, r->v[i].offset + start * F32}, count * F32,
                                        i == nv - 1, a, &pad_bytes);
        if (i < nv - 1)
            tgl_gl_bind_read(&bind[i], read, vec4 ? GL_RGBA32F : GL_R32F);
        pad[i] = (GLuint)(pad_bytes / F32);
    }
    tgl_gl_plan plan = piece_plan(l, r->op_name, r->kernel, r->op, piece, read);
    plan.generated = r->generated;
    size_t items = vec4 ? count / 4 : count;
    uint64_t per_group = (uint64_t)plan.wg * (piece == PIECE_WIDE ? 2 * WIDE_PAIRS : plan.items);
    plan.groups = (items + per_group - 1) / per_group;
    GLuint program;
    tgl_status st = tgl_gl_plan_program(b, &plan, &program);
    if (st)
        return st;
    tgl_gl_uniform_ui(b, program, LOC_EW_N, (GLuint)items);
    for (int i = 0; i < nv; i++)
        tgl_gl_uniform_ui(b, program, LOC_EW_OFF0 + i, vec4 ? pad[i] / 4 : pad[i]);
    for (int i = 0; i < r->nparams; i++)
        tgl_gl_uniform_f(b, program, LOC_EW_PARAM0 + i, r->params[i]);
    if (r->n_nums)
        tgl_gl_uniform_fv(b, program, LOC_MAP_NUM0, r->n_nums, r->nums);
    tgl_gl_uniform_ui(b, program, LOC_SWEEP, backward);
    return tgl_gl_dispatch(b, program, bind, nv, plan.groups);
}

/* Elements from `start` the wide variant takes: whole workgroups, at most a row of the grid per
 * dispatch (its grid has no bounds test, so none may be rounded up). */
static size_t wide_elements(const tgl_gl_limits *l, tgl_gl_ew_kernel k, int tex, const tgl__view *out, size_t start,
                            size_t body)
{
    /* (fill reads nothing, so it needs no textures: the wide variant is llvmpipe's either way) */
    int inputs_ok = tex || k == TGL_GL_EW_FILL;
    if (!l->wide_stores || !inputs_ok || !ew_kernels[k].wide || (out->offset + start * F32) % 32)
        return 0;
    size_t per_group = (size_t)l->workgroup_size * 8 * WIDE_PAIRS, groups = body / per_group;
    return (groups < l->wg_count[0] ? groups : l->wg_count[0]) * per_group;
}

/* Runs r's kernel over n elements; operands v[0..nv-2] are read, v[nv-1] is written. Where
 * every operand's window starts 16-byte aligned, the vec4 variant takes all whole vec4s and the
 * scalar one the 1..3 elements left (a tail inside the vec4 kernel slows llvmpipe's code for
 * the whole kernel by ~1.6x). An op over limits.sweep_bytes or more walks every dispatch the
 * other way from the last such op (glsl/common/sweep.glsl); a smaller one walks forward. */
tgl_status tgl_gl_run_elementwise(tgl_backend *b, const tgl_gl_ew_run *r, size_t n)
{
    tgl_gl *gl = tgl_gl_of(b);
    const tgl_gl_limits *l = &gl->limits;
    const tgl__view *v = r->v;
    int nv = r->nv;
    int tex = reads_textures(l, r->kernel, nv);
    size_t chunk = chunk_elements(l, tex), align = tgl_gl_window_align(l, tex);
    uint64_t bytes = (uint64_t)n * F32 * (uint64_t)nv;
    unsigned backward = tgl_gl_sweep_direction(gl, bytes);
    int blocks = tex ? 1 : nv; /* inputs read as textures take texture units instead */
    if ((uint32_t)blocks > l->storage_blocks)
        return tgl__fail(b, TGL_ERR_UNSUPPORTED, "kernel %s binds %d storage buffers (%d inputs and the output); "
                         "compute shaders on this device may bind %u (GL_MAX_COMPUTE_SHADER_STORAGE_BLOCKS)",
                         ew_kernels[r->kernel].name, blocks, nv - 1, l->storage_blocks);
    if (chunk == 0)
        return tgl__fail(b, TGL_ERR_UNSUPPORTED, "the device's SSBO block limit (%llu bytes) is too small",
                         (unsigned long long)l->max_ssbo_block);
    for (size_t start = 0; start < n; start += chunk) {
        size_t count = n - start < chunk ? n - start : chunk;
        int vec4 = count >= 4;
        for (int i = 0; i < nv; i++)
            if ((v[i].offset + start * F32) % align % 16)
                vec4 = 0;
        size_t body = vec4 ? count / 4 * 4 : 0, done = 0, wide;
        tgl_status st = TGL_OK;
        while (!st && (wide = wide_elements(l, r->kernel, tex, &v[nv - 1], start + done, body - done)) > 0) {
            st = dispatch_piece(b, r, start + done, wide, PIECE_WIDE, backward);
            done += wide;
        }
        if (!st && body > done)
            st = dispatch_piece(b, r, start + done, body - done, PIECE_VEC4, backward);
        if (!st && count > body)
            st = dispatch_piece(b, r, start + body, count - body, PIECE_SCALAR, backward);
        if (st)
            return st;
    }
    tgl_gl_sweep_done(gl, bytes);
    return TGL_OK;
}

tgl_status tgl_gl_unary(tgl_backend *b, tgl_unary_op op, tgl__view in, tgl__view out, size_t n)
{
    const tgl_gl_ew_run r = {.op_name = "tgl_unary", .kernel = TGL_GL_EW_UNARY, .op = OP_UNARY(op), .v = {in, out}, .nv = 2};
    return tgl_gl_run_elementwise(b, &r, n);
}

tgl_status tgl_gl_binary(tgl_backend *b, tgl_binary_op op, tgl__view a, tgl__view bb, tgl__view out,
                         size_t n)
{
    const tgl_gl_ew_run r = {.op_name = "tgl_binary", .kernel = TGL_GL_EW_BINARY, .op = OP_BINARY(op), .v = {a, bb, out},
                             .nv = 3};
    return tgl_gl_run_elementwise(b, &r, n);
}

tgl_status tgl_gl_fill(tgl_backend *b, tgl__view out, float value, size_t n)
{
    const tgl_gl_ew_run r = {.op_name = "tgl_fill", .kernel = TGL_GL_EW_FILL, .op = OP_NONE, .v = {out}, .nv = 1,
                             .params = {value}, .nparams = 1};
    return tgl_gl_run_elementwise(b, &r, n);
}

tgl_status tgl_gl_scale_add(tgl_backend *b, float alpha, tgl__view x, float beta, tgl__view y, size_t n)
{
    const tgl_gl_ew_run r = {.op_name = "tgl_scale_add", .kernel = TGL_GL_EW_SCALE_ADD, .op = OP_NONE, .v = {x, y},
                             .nv = 2, .params = {alpha, beta}, .nparams = 2};
    return tgl_gl_run_elementwise(b, &r, n);
}

void tgl_gl_elementwise_variants(void (*fn)(void *ctx, const char *kernel, const char *defines),
                                 void *ctx)
{
    for (int k = 0; k < TGL_GL_EW_KERNELS; k++)
        for (int piece = 0; piece < PIECES; piece++)
            for (tgl_gl_read read = TGL_GL_READ_SSBO; read < TGL_GL_READS; read++) {
                /* inputs through textures only in kernels that have them; the wide piece only in
                 * kernels that have it, with textures for those with inputs (wide_elements) */
                if ((read != TGL_GL_READ_SSBO && !ew_kernels[k].textures) || (piece == PIECE_WIDE && !ew_kernels[k].wide) ||
                    (piece == PIECE_WIDE && read == TGL_GL_READ_SSBO && ew_kernels[k].textures))
                    continue;
                /* tgl_map's expression is generated per call: its read and piece variants are
                 * listed with the kernel's standalone default expression */
                uint32_t first = k == TGL_GL_EW_UNARY ? OP_UNARY(0) : k == TGL_GL_EW_BINARY ? OP_BINARY(0) : OP_NONE;
                uint32_t last = k == TGL_GL_EW_UNARY ? OP_UNARY(TGL__UNARY_FLAT_KERNELS - 1)
                                : k == TGL_GL_EW_BINARY ? OP_BINARY(TGL__BINARY_FLAT_KERNELS - 1)
                                                        : OP_NONE;
                for (uint32_t op = first; op <= last; op++) {
                    tgl_gl_plan p = piece_plan(NULL, NULL, (tgl_gl_ew_kernel)k, op, piece, read);
                    fn(ctx, p.kernel, p.defines);
                }
            }
}
