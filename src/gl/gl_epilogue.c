/* tgl_gemm_fused's epilogue as the kernels read it (glsl/common/epilogue.glsl), for the GEMM
 * kernels (gl_gemm.c) and the thin products they hand to matvec_w (gl_quant.c). */
#include "gl_internal.h"

tgl_gl_binding tgl_gl_epilogue(tgl_backend *b, GLuint prog, const tgl__gemm *g, size_t j0, size_t n,
                               tgl_gl_binding stand_in)
{
    size_t pad = 0;
    tgl_gl_binding bind = stand_in;
    bind.writes = 0;
    bind.texture_format = 0;
    if (g->bias.buf)
        bind = tgl_gl_window(b, (tgl__view){g->bias.buf, g->bias.offset + j0 * sizeof(float)}, n * sizeof(float), 0,
                             &pad);
    const tgl_gl_uniform u[] = {
        {LOC_EPI_ACT, (GLuint)g->act},
        {LOC_EPI_GATE, (GLuint)g->gate},
        {LOC_EPI_BIAS, g->bias.buf != NULL},
        {LOC_EPI_BIAS_OFF, (GLuint)(pad / sizeof(float))},
    };
    tgl_gl_uniforms_ui(b, prog, u, sizeof u / sizeof u[0]);
    tgl_gl_uniform_f(b, prog, LOC_EPI_SLOPE, g->slope);
    return bind;
}
