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
#include <stdlib.h>
#include <string.h>

#define F32 sizeof(float)
#define MAX_OPERANDS 9 /* tgl_map: 8 inputs and the output */

/* Per-op defines, indexed by the public enums. */
static const char *const unary_defines[TGL_UNARY_COUNT] = {
    "#define OP_NEG\n", "#define OP_ABS\n", "#define OP_EXP\n", "#define OP_LOG\n", "#define OP_SQRT\n",
    "#define OP_RSQRT\n", "#define OP_RECIP\n", "#define OP_SQUARE\n", "#define OP_SIN\n", "#define OP_COS\n",
    "#define OP_TANH\n", "#define OP_SIGMOID\n", "#define OP_RELU\n", "#define OP_GELU\n", "#define OP_SILU\n",
    "#define OP_FLOOR\n", "#define OP_CEIL\n",
};
static const char *const binary_defines[TGL_BINARY_COUNT] = {
    "#define OP_ADD\n", "#define OP_SUB\n", "#define OP_MUL\n", "#define OP_DIV\n",
    "#define OP_MAX\n", "#define OP_MIN\n", "#define OP_POW\n",
};

/* Whether `kernel` reads its nv - 1 inputs through buffer textures here: the device's
 * element-wise kernels do (l->texel_inputs), the kernel has a TGL_TEX variant
 * (common/texel.glsl), and each input gets one of the texture units the dispatcher binds. */
static int reads_textures(const tgl_gl_limits *l, const char *kernel, int nv)
{
    return l->texel_inputs && nv - 1 <= TGL_GL_MAX_TEXTURE_BINDINGS &&
           (!strcmp(kernel, "elementwise/unary") || !strcmp(kernel, "elementwise/binary") ||
            !strcmp(kernel, "elementwise/scale_add") || !strcmp(kernel, "map/map"));
}

/* Whether `kernel` has the TGL_WIDE variant (pairs of vec4s stored as dvec4s). */
static int has_wide(const char *kernel)
{
    return !strcmp(kernel, "elementwise/unary") || !strcmp(kernel, "elementwise/binary") ||
           !strcmp(kernel, "elementwise/scale_add") || !strcmp(kernel, "map/map") ||
           !strcmp(kernel, "elementwise/fill");
}

/* The variants dispatch_piece runs: one element per invocation, one vec4, or WIDE_PAIRS pairs
 * of vec4s (TGL_WIDE_PAIRS in common/wide_store.glsl). */
enum { PIECE_SCALAR, PIECE_VEC4, PIECE_WIDE };
#define WIDE_PAIRS 2

/* The kernel's own defines, then the variant's for the piece and the inputs' read: "" or a
 * malloc'd string (NULL: no memory). */
static char *defines_for(const char *prefix, int piece, tgl_gl_read read)
{
    size_t size = strlen(prefix) + 112;
    char *out = malloc(size);
    if (out)
        snprintf(out, size, "%s%s%s%s", prefix, piece != PIECE_SCALAR ? "#define TGL_VEC4\n" : "",
                 tgl_gl_read_defines(read), piece == PIECE_WIDE ? "#define TGL_WIDE\n" : "");
    return out;
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
 * workgroups, the output 32-byte aligned) or the scalar one. The kernel's uniforms: 0 the count
 * (in vec4s for the vec4 and wide variants), 1.. the operands' offsets in the same unit, 8..
 * the float parameters, TGL_GL_SWEEP_LOCATION the direction. */
static tgl_status dispatch_piece(tgl_backend *b, const char *kernel, const char *prefix, const tgl__view *v, int nv,
                                 size_t start, size_t count, int piece, const float *params, int nparams,
                                 unsigned backward)
{
    int vec4 = piece != PIECE_SCALAR;
    tgl_gl_binding bind[MAX_OPERANDS];
    GLuint pad[MAX_OPERANDS];
    const tgl_gl_limits *l = &tgl_gl_of(b)->limits;
    int tex = reads_textures(l, kernel, nv);
    tgl_gl_read read = tgl_gl_input_read(l, tex);
    size_t align = tgl_gl_window_align(l, tex);
    for (int i = 0; i < nv; i++) {
        size_t pad_bytes;
        /* The wide variant's output window starts 32-byte aligned: its offset in vec4s is even. */
        size_t a = piece == PIECE_WIDE && i == nv - 1 && align < 32 ? 32 : align;
        bind[i] = tgl_gl_window_aligned((tgl__view){v[i].buf, v[i].offset + start * F32}, count * F32, i == nv - 1,
                                        a, &pad_bytes);
        if (i < nv - 1)
            tgl_gl_bind_read(&bind[i], read, vec4 ? GL_RGBA32F : GL_R32F);
        pad[i] = (GLuint)(pad_bytes / F32);
    }
    char *defines = defines_for(prefix, piece, read);
    if (!defines)
        return tgl__fail(b, TGL_ERR_OUT_OF_MEMORY, "kernel %s: no host memory for its defines", kernel);
    GLuint program;
    uint32_t per_invocation = piece == PIECE_WIDE ? 1 : l->items_per_invocation;
    tgl_status st = tgl_gl_program_get_spec(b, kernel, defines, l->workgroup_size, per_invocation, &program);
    free(defines);
    if (st)
        return st;
    size_t items = vec4 ? count / 4 : count;
    tgl_gl_uniform_ui(b, program, 0, (GLuint)items);
    for (int i = 0; i < nv; i++)
        tgl_gl_uniform_ui(b, program, 1 + i, vec4 ? pad[i] / 4 : pad[i]);
    for (int i = 0; i < nparams; i++)
        tgl_gl_uniform_f(b, program, 8 + i, params[i]);
    tgl_gl_uniform_ui(b, program, TGL_GL_SWEEP_LOCATION, backward);
    uint64_t per_group = (uint64_t)l->workgroup_size * (piece == PIECE_WIDE ? 2 * WIDE_PAIRS : per_invocation);
    return tgl_gl_dispatch(b, program, bind, nv, (items + per_group - 1) / per_group);
}

/* Elements from `start` the wide variant takes: whole workgroups, at most a row of the grid per
 * dispatch (its grid has no bounds test, so none may be rounded up). */
static size_t wide_elements(const tgl_gl_limits *l, const char *kernel, int tex, const tgl__view *out, size_t start,
                            size_t body)
{
    /* (fill reads nothing, so it needs no textures: the wide variant is llvmpipe's either way) */
    int inputs_ok = tex || !strcmp(kernel, "elementwise/fill");
    if (!l->wide_stores || !inputs_ok || !has_wide(kernel) || (out->offset + start * F32) % 32)
        return 0;
    size_t per_group = (size_t)l->workgroup_size * 8 * WIDE_PAIRS, groups = body / per_group;
    return (groups < l->wg_count[0] ? groups : l->wg_count[0]) * per_group;
}

/* Runs `kernel` over n elements, with `prefix` (its own #define lines) ahead of the variant's;
 * operands v[0..nv-2] are read, v[nv-1] is written. Where every
 * operand's window starts 16-byte aligned, the vec4 variant takes all whole vec4s and the
 * scalar one the 1..3 elements left (a tail inside the vec4 kernel slows llvmpipe's code for
 * the whole kernel by ~1.6x). An op over limits.sweep_bytes or more walks every dispatch the
 * other way from the last such op (glsl/common/sweep.glsl); a smaller one walks forward. */
tgl_status tgl_gl_run_elementwise(tgl_backend *b, const char *kernel, const char *prefix, const tgl__view *v,
                                  int nv, size_t n, const float *params, int nparams)
{
    tgl_gl *gl = tgl_gl_of(b);
    const tgl_gl_limits *l = &gl->limits;
    int tex = reads_textures(l, kernel, nv);
    size_t chunk = chunk_elements(l, tex), align = tgl_gl_window_align(l, tex);
    uint64_t bytes = (uint64_t)n * F32 * (uint64_t)nv;
    unsigned backward = tgl_gl_sweep_direction(gl, bytes);
    int blocks = tex ? 1 : nv; /* inputs read as textures take texture units instead */
    if ((uint32_t)blocks > l->storage_blocks)
        return tgl__fail(b, TGL_ERR_UNSUPPORTED, "kernel %s binds %d storage buffers (%d inputs and the output); "
                         "compute shaders on this device may bind %u (GL_MAX_COMPUTE_SHADER_STORAGE_BLOCKS)",
                         kernel, blocks, nv - 1, l->storage_blocks);
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
        while (!st && (wide = wide_elements(l, kernel, tex, &v[nv - 1], start + done, body - done)) > 0) {
            st = dispatch_piece(b, kernel, prefix, v, nv, start + done, wide, PIECE_WIDE, params, nparams,
                                backward);
            done += wide;
        }
        if (!st && body > done)
            st = dispatch_piece(b, kernel, prefix, v, nv, start + done, body - done, PIECE_VEC4, params, nparams,
                                backward);
        if (!st && count > body)
            st = dispatch_piece(b, kernel, prefix, v, nv, start + body, count - body, PIECE_SCALAR, params, nparams,
                                backward);
        if (st)
            return st;
    }
    tgl_gl_sweep_done(gl, bytes);
    return TGL_OK;
}

tgl_status tgl_gl_unary(tgl_backend *b, tgl_unary_op op, tgl__view in, tgl__view out, size_t n)
{
    const tgl__view v[2] = {in, out};
    return tgl_gl_run_elementwise(b, "elementwise/unary", unary_defines[op], v, 2, n, NULL, 0);
}

tgl_status tgl_gl_binary(tgl_backend *b, tgl_binary_op op, tgl__view a, tgl__view bb, tgl__view out,
                         size_t n)
{
    const tgl__view v[3] = {a, bb, out};
    return tgl_gl_run_elementwise(b, "elementwise/binary", binary_defines[op], v, 3, n, NULL, 0);
}

tgl_status tgl_gl_fill(tgl_backend *b, tgl__view out, float value, size_t n)
{
    return tgl_gl_run_elementwise(b, "elementwise/fill", "", &out, 1, n, &value, 1);
}

tgl_status tgl_gl_scale_add(tgl_backend *b, float alpha, tgl__view x, float beta, tgl__view y, size_t n)
{
    const tgl__view v[2] = {x, y};
    const float ab[2] = {alpha, beta};
    return tgl_gl_run_elementwise(b, "elementwise/scale_add", "", v, 2, n, ab, 2);
}

void tgl_gl_elementwise_variants(void (*fn)(void *ctx, const char *kernel, const char *defines),
                                 void *ctx)
{
    for (int variant = 0; variant < 3 * TGL_GL_READS; variant++) {
        int piece = variant % 3;
        tgl_gl_read read = (tgl_gl_read)(variant / 3);
        /* the wide variants of kernels with inputs read through textures; fill reads nothing */
        int reading_kernels = piece != PIECE_WIDE || read != TGL_GL_READ_SSBO;
        char *d = defines_for("", piece, read);
        if (d && read == TGL_GL_READ_SSBO)
            fn(ctx, "elementwise/fill", d);
        if (d && read == TGL_GL_READ_SSBO && piece != PIECE_WIDE)
            fn(ctx, "elementwise/copy", d);
        if (d && reading_kernels)
            fn(ctx, "elementwise/scale_add", d);
        free(d);
        for (int op = 0; reading_kernels && op < TGL_UNARY_COUNT + TGL_BINARY_COUNT; op++) {
            int unary = op < TGL_UNARY_COUNT;
            char *dv = defines_for(unary ? unary_defines[op] : binary_defines[op - TGL_UNARY_COUNT], piece, read);
            if (dv)
                fn(ctx, unary ? "elementwise/unary" : "elementwise/binary", dv);
            free(dv);
        }
    }
}
