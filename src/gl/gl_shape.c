/* GL driver for the strided gather (glsl/shape/strided.comp): tgl_binary_broadcast and
 * tgl_permute. Inputs are bound whole; the output is processed in chunks that fit the SSBO
 * block limit and the grid. */
#include "gl_internal.h"

#include <stdio.h>

#define F32 sizeof(float)

static const char *const op_names[TGL_BINARY_COUNT] = {"OP_ADD", "OP_SUB", "OP_MUL", "OP_DIV",
                                                       "OP_MAX", "OP_MIN", "OP_POW"};

static void defines_for(char *out, size_t size, int op, int rows, int tex)
{
    snprintf(out, size, "#define %s\n%s%s", op < 0 ? "COPY" : op_names[op], rows ? "#define ROWS\n" : "",
             tex ? "#define TGL_TEX\n" : "");
}

/* Rows at least this long take the ROWS variant (a group per row piece); shorter ones would
 * leave most of a group idle. */
#define ROWS_MIN_INNER 32

static void set_uints(GLuint prog, GLint loc, const size_t *v, size_t n)
{
    GLuint u[TGL_MAX_DIMS] = {0};
    for (size_t i = 0; i < n; i++)
        u[i] = (GLuint)v[i];
    glProgramUniform1uiv(prog, loc, TGL_MAX_DIMS, u);
}

tgl_status tgl_gl_strided(tgl_backend *b, int op, tgl__view a, tgl__view bb, tgl__view out, const tgl__strided *s)
{
    const tgl_gl_limits *l = &tgl_gl_of(b)->limits;
    size_t max_elems = tgl_gl_max_window_elems(l, F32);
    if (s->n_a > max_elems || s->n_b > max_elems || s->n_out > (size_t)UINT32_MAX)
        return tgl__fail(b, TGL_ERR_UNSUPPORTED, "an operand of %zu / %zu / %zu floats exceeds the device's SSBO "
                         "block limit (%zu floats)", s->n_a, s->n_b, s->n_out, max_elems);
    size_t grid = (size_t)((uint64_t)l->wg_count[0] * l->wg_count[1] * l->workgroup_size);
    size_t chunk = max_elems < grid ? max_elems : grid;
    size_t inner = s->shape[s->ndim - 1], gx = tgl_gl_ceil_div(inner, l->workgroup_size);
    int rows = inner >= ROWS_MIN_INNER && gx <= l->wg_count[0];
    if (rows) { /* whole rows per dispatch, at most one grid column of them */
        size_t per = chunk / inner < l->wg_count[1] ? chunk / inner : l->wg_count[1];
        chunk = per * inner;
    }
    /* Inputs through buffer textures where element-wise kernels read them so (llvmpipe). */
    int tex = l->elementwise_textures && s->n_a <= l->texture_buffer_texels && s->n_b <= l->texture_buffer_texels;
    size_t align = tex && l->texture_align > l->ssbo_align ? l->texture_align : l->ssbo_align;
    char defines[64];
    defines_for(defines, sizeof defines, op, rows, tex);
    GLuint prog;
    tgl_status st = tgl_gl_program_get(b, "shape/strided", defines, &prog);
    if (st)
        return st;
    size_t pad_a, pad_b = 0, pad_y;
    tgl_gl_binding bind[3];
    bind[0] = tgl_gl_window_aligned(a, s->n_a * F32, 0, align, &pad_a);
    /* COPY leaves binding 1 unused */
    bind[1] = op >= 0 ? tgl_gl_window_aligned(bb, s->n_b * F32, 0, align, &pad_b) : bind[0];
    if (tex)
        bind[0].texture_format = bind[1].texture_format = GL_R32F;
    glProgramUniform1ui(prog, 2, (GLuint)s->ndim);
    glProgramUniform1ui(prog, 3, (GLuint)(pad_a / F32));
    set_uints(prog, 8, s->shape, s->ndim);
    set_uints(prog, 16, s->a_stride, s->ndim);
    if (op >= 0) {
        glProgramUniform1ui(prog, 4, (GLuint)(pad_b / F32));
        set_uints(prog, 24, s->b_stride, s->ndim);
    }
    for (size_t start = 0; start < s->n_out; start += chunk) {
        size_t count = s->n_out - start < chunk ? s->n_out - start : chunk;
        bind[2] = tgl_gl_window(b, (tgl__view){out.buf, out.offset + start * F32}, count * F32, 1, &pad_y);
        glProgramUniform1ui(prog, 0, (GLuint)count);
        glProgramUniform1ui(prog, 1, (GLuint)(rows ? start / inner : start));
        glProgramUniform1ui(prog, 5, (GLuint)(pad_y / F32));
        st = rows ? tgl_gl_dispatch_grid(b, prog, bind, 3, (uint32_t)gx, (uint32_t)(count / inner), 1)
                  : tgl_gl_dispatch(b, prog, bind, 3, (count + l->workgroup_size - 1) / l->workgroup_size);
        if (st)
            return st;
    }
    return TGL_OK;
}

void tgl_gl_shape_variants(void (*fn)(void *ctx, const char *kernel, const char *defines), void *ctx)
{
    char defines[64];
    for (int variant = 0; variant < 4; variant++)
        for (int op = -1; op < TGL_BINARY_COUNT; op++) {
            defines_for(defines, sizeof defines, op, variant & 1, variant >> 1);
            fn(ctx, "shape/strided", defines);
        }
}
