/* GL drivers for tgl_unary, tgl_binary, tgl_fill and tgl_scale_add.
 *
 * Each operand is bound as a window starting at its offset rounded down to the SSBO offset
 * alignment; the kernel adds the remainder (u_off) to its index. When every remainder is a
 * multiple of 4 elements, the vec4 variant runs (one vec4 per invocation).
 * Tensors larger than the SSBO block limit are processed in chunks. */
#include "gl_internal.h"

#include <stdio.h>

#define F32 sizeof(float)

/* Per-op define names, indexed by the public enums. */
static const char *const unary_defines[TGL_UNARY_COUNT] = {
    "OP_NEG", "OP_ABS", "OP_EXP", "OP_LOG", "OP_SQRT", "OP_RSQRT", "OP_RECIP", "OP_SQUARE",
    "OP_SIN", "OP_COS", "OP_TANH", "OP_SIGMOID", "OP_RELU", "OP_GELU", "OP_SILU", "OP_FLOOR",
    "OP_CEIL",
};
static const char *const binary_defines[TGL_BINARY_COUNT] = {
    "OP_ADD", "OP_SUB", "OP_MUL", "OP_DIV", "OP_MAX", "OP_MIN", "OP_POW",
};

#define MAX_OPERANDS 3

static void defines_for(char *out, size_t size, const char *op, int vec4, uint32_t items)
{
    int n = snprintf(out, size, "%s%s%s%s", op ? "#define " : "", op ? op : "", op ? "\n" : "",
                     vec4 ? "#define TGL_VEC4\n" : "");
    if (items > 1 && n >= 0 && (size_t)n < size)
        snprintf(out + n, size - (size_t)n, "#define TGL_ITEMS %u\n", items);
}

/* Elements one dispatch may cover: every window (alignment pad + data + vec4 rounding) stays
 * within the SSBO block limit, the scalar variant's workgroups fit the 2-D grid, and indices
 * stay far from uint overflow. */
static size_t chunk_elements(const tgl_gl_limits *l)
{
    uint64_t n = tgl_gl_max_window_elems(l, F32) / 4 * 4;
    uint64_t grid = (uint64_t)l->wg_count[0] * l->wg_count[1] * l->workgroup_size / 4 * 4;
    return (size_t)(n < grid ? n : grid);
}

/* One dispatch over `count` elements from element `start` of every operand, with the vec4
 * variant (count a multiple of 4, every window 16-byte aligned) or the scalar one. The kernel's
 * uniforms: 0 the count (in vec4s for the vec4 variant), 1.. the operands' offsets in the same
 * unit, 8.. the float parameters. */
static tgl_status dispatch_piece(tgl_backend *b, const char *kernel, const char *op, const tgl__view *v, int nv,
                                 size_t start, size_t count, int vec4, const float *params, int nparams)
{
    tgl_gl_binding bind[MAX_OPERANDS];
    GLuint pad[MAX_OPERANDS];
    for (int i = 0; i < nv; i++) {
        size_t pad_bytes;
        bind[i] = tgl_gl_window(b, (tgl__view){v[i].buf, v[i].offset + start * F32}, count * F32, i == nv - 1,
                                &pad_bytes);
        pad[i] = (GLuint)(pad_bytes / F32);
    }
    const tgl_gl_limits *l = &tgl_gl_of(b)->limits;
    char defines[128];
    defines_for(defines, sizeof defines, op, vec4, l->items_per_invocation);
    GLuint program;
    tgl_status st = tgl_gl_program_get(b, kernel, defines, &program);
    if (st)
        return st;
    size_t items = vec4 ? count / 4 : count;
    glProgramUniform1ui(program, 0, (GLuint)items);
    for (int i = 0; i < nv; i++)
        glProgramUniform1ui(program, 1 + i, vec4 ? pad[i] / 4 : pad[i]);
    for (int i = 0; i < nparams; i++)
        glProgramUniform1f(program, 8 + i, params[i]);
    uint64_t per_group = (uint64_t)l->workgroup_size * l->items_per_invocation;
    return tgl_gl_dispatch(b, program, bind, nv, (items + per_group - 1) / per_group);
}

/* Runs `kernel` over n elements; operands v[0..nv-2] are read, v[nv-1] is written. Where every
 * operand's window starts 16-byte aligned, the vec4 variant takes all whole vec4s and the
 * scalar one the 1..3 elements left (a tail inside the vec4 kernel slows llvmpipe's code for
 * the whole kernel by ~1.6x). */
static tgl_status run_elementwise(tgl_backend *b, const char *kernel, const char *op,
                                  const tgl__view *v, int nv, size_t n, const float *params, int nparams)
{
    const tgl_gl_limits *l = &tgl_gl_of(b)->limits;
    size_t chunk = chunk_elements(l);
    if (chunk == 0)
        return tgl__fail(b, TGL_ERR_UNSUPPORTED, "the device's SSBO block limit (%llu bytes) is too small",
                         (unsigned long long)l->max_ssbo_block);
    for (size_t start = 0; start < n; start += chunk) {
        size_t count = n - start < chunk ? n - start : chunk;
        int vec4 = count >= 4;
        for (int i = 0; i < nv; i++)
            if ((v[i].offset + start * F32) % l->ssbo_align % 16)
                vec4 = 0;
        size_t body = vec4 ? count / 4 * 4 : 0;
        tgl_status st = TGL_OK;
        if (body)
            st = dispatch_piece(b, kernel, op, v, nv, start, body, 1, params, nparams);
        if (!st && count > body)
            st = dispatch_piece(b, kernel, op, v, nv, start + body, count - body, 0, params, nparams);
        if (st)
            return st;
    }
    return TGL_OK;
}

tgl_status tgl_gl_unary(tgl_backend *b, tgl_unary_op op, tgl__view in, tgl__view out, size_t n)
{
    const tgl__view v[2] = {in, out};
    return run_elementwise(b, "elementwise/unary", unary_defines[op], v, 2, n, NULL, 0);
}

tgl_status tgl_gl_binary(tgl_backend *b, tgl_binary_op op, tgl__view a, tgl__view bb, tgl__view out,
                         size_t n)
{
    const tgl__view v[3] = {a, bb, out};
    return run_elementwise(b, "elementwise/binary", binary_defines[op], v, 3, n, NULL, 0);
}

tgl_status tgl_gl_fill(tgl_backend *b, tgl__view out, float value, size_t n)
{
    return run_elementwise(b, "elementwise/fill", NULL, &out, 1, n, &value, 1);
}

tgl_status tgl_gl_scale_add(tgl_backend *b, float alpha, tgl__view x, float beta, tgl__view y, size_t n)
{
    const tgl__view v[2] = {x, y};
    const float ab[2] = {alpha, beta};
    return run_elementwise(b, "elementwise/scale_add", NULL, v, 2, n, ab, 2);
}

void tgl_gl_elementwise_variants(void (*fn)(void *ctx, const char *kernel, const char *defines),
                                 void *ctx)
{
    char defines[128];
    for (int vec4 = 0; vec4 <= 1; vec4++) {
        defines_for(defines, sizeof defines, NULL, vec4, 1);
        fn(ctx, "elementwise/fill", defines);
        fn(ctx, "elementwise/scale_add", defines);
        for (int op = 0; op < TGL_UNARY_COUNT; op++) {
            defines_for(defines, sizeof defines, unary_defines[op], vec4, 1);
            fn(ctx, "elementwise/unary", defines);
        }
        for (int op = 0; op < TGL_BINARY_COUNT; op++) {
            defines_for(defines, sizeof defines, binary_defines[op], vec4, 1);
            fn(ctx, "elementwise/binary", defines);
        }
    }
}
