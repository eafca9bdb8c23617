/* GL driver of tgl_conv2d (glsl/conv/): each group is the implicit GEMM
 * out[oc, (image, y, x)] = filter[oc, (ic, ky, kx)] x im2col[(ic, ky, kx), (image, y, x)], with
 * im2col read from the input on the fly. GPUs (the renderer's GEMM runs the shared-memory tile
 * kernel) take conv2d_tiled when a group has at least 16 output channels; llvmpipe and groups
 * of few channels (depthwise) take the register-only conv2d_direct. Images are processed in
 * slabs whose windows fit the SSBO block limit and whose grids fit the workgroup limits. */
#include "gl_internal.h"

#include <stdio.h>

#define F32 sizeof(float)

/* A kernel configuration: tiled (BM x BN tiles, BK slabs, TM x TN per invocation) or direct
 * (TM x TN per invocation, WG_X x WG_Y invocations; tex: operands through buffer textures). */
typedef struct conv_config {
    int tiled;
    unsigned bm, bn, bk, tm, tn, wg_x, wg_y;
    int tex;
} conv_config;

/* H100, 3x3 64 -> 64 channels, 56x56, batch 32 (BM,BN,BK,TM,TN: ms): 64,64,16,4,4: 0.615;
 * 64,128,16,4,8: 0.636; 64,256,8,4,8: 0.649; 64,128,8,4,8: 0.670; 64,64,8,4,4: 0.723;
 * 64,64,32,4,4: 0.802; 32,128,16,4,4: 0.840; 128,64,8,8,4: 1.070; 128,128,16,8,8: 1.157. With
 * im2col stepping instead of dividing: 64,64,16,4,4: 0.583; 64,128,16,4,8 and 64,256,8,4,8:
 * 0.584; 64,64,32,4,4: 0.771; 64,256,16,8,8: 0.817; 64,128,16,8,8: 0.941; 64,128,16,8,4: 1.285.
 * Tiled entries keep THREADS = (BM/TM)(BN/TN) a multiple of BN and BM*BK, BN*BK multiples of
 * THREADS (see conv2d_tiled.comp). */
static const conv_config configs[] = {
    {1, 128, 128, 8, 8, 8, 0, 0, 0}, /* GPUs, groups of >= 128 output channels */
    {1, 64, 64, 16, 4, 4, 0, 0, 0},  /* GPUs, 16 .. 127 */
    {0, 0, 0, 0, 1, 4, 64, 1, 0},    /* GPUs, fewer (depthwise) */
    {0, 0, 0, 0, 4, 4, 16, 4, 1},    /* llvmpipe: 4 channels x 4 pixels, texel gathers */
    {0, 0, 0, 0, 1, 4, 64, 1, 1},    /* llvmpipe, groups of < 4 channels */
    {0, 0, 0, 0, 4, 4, 16, 4, 0},    /* devices without buffer textures */
};
#define N_CONFIGS (sizeof configs / sizeof configs[0])

static unsigned threads_of(const conv_config *c)
{
    return c->tiled ? (c->bm / c->tm) * (c->bn / c->tn) : c->wg_x * c->wg_y;
}

static size_t tile_m(const conv_config *c)
{
    return c->tiled ? c->bm : (size_t)c->tm * c->wg_y;
}

static size_t tile_n(const conv_config *c)
{
    return c->tiled ? c->bn : (size_t)c->tn * c->wg_x;
}

static size_t choose(const tgl_gl_limits *l, size_t ocg)
{
    if (l->gemm.tiled)
        return ocg >= 128 ? 0 : ocg >= 16 ? 1 : 2;
    if (l->gemm.textures && l->texture_buffer_texels)
        return ocg >= 4 ? 3 : 4;
    return ocg >= 4 ? 5 : 2;
}

static void conv_defines(const conv_config *c, int bias, char *out, size_t size)
{
    int n;
    if (c->tiled)
        n = snprintf(out, size, "#define BM %u\n#define BN %u\n#define BK %u\n#define TM %u\n#define TN %u\n"
                     "#define THREADS %u\n", c->bm, c->bn, c->bk, c->tm, c->tn, threads_of(c));
    else
        n = snprintf(out, size, "#define WG_X %u\n#define WG_Y %u\n#define TM %u\n#define TN %u\n%s", c->wg_x,
                     c->wg_y, c->tm, c->tn, c->tex ? "#define TEX\n" : "");
    if (bias && n > 0 && (size_t)n < size)
        snprintf(out + n, size - (size_t)n, "#define HAS_BIAS\n");
}

static tgl_status run_slab(tgl_backend *b, const tgl__conv2d *cv, const conv_config *cfg, GLuint prog, size_t n0,
                           size_t nb)
{
    const tgl_conv2d_desc *d = &cv->d;
    const tgl_gl_limits *l = &tgl_gl_of(b)->limits;
    size_t align = cfg->tex && l->texture_align > l->ssbo_align ? l->texture_align : l->ssbo_align;
    size_t img_in = d->in_channels * d->in_h * d->in_w, img_out = d->out_channels * cv->out_h * cv->out_w;
    size_t n_f = d->out_channels * (d->in_channels / d->groups) * d->kernel_h * d->kernel_w;
    size_t pad[4] = {0};
    tgl_gl_binding bind[4];
    bind[0] = tgl_gl_window_aligned((tgl__view){cv->in.buf, cv->in.offset + n0 * img_in * F32}, nb * img_in * F32, 0,
                                    align, &pad[0]);
    bind[1] = tgl_gl_window_aligned(cv->filter, n_f * F32, 0, align, &pad[1]);
    bind[3] = tgl_gl_window(b, (tgl__view){cv->out.buf, cv->out.offset + n0 * img_out * F32}, nb * img_out * F32, 1,
                            &pad[3]);
    if (cv->bias.buf)
        bind[2] = tgl_gl_window(b, cv->bias, d->out_channels * F32, 0, &pad[2]);
    else
        bind[2] = bind[1]; /* unused binding: any live read-only window */
    if (cfg->tex)
        bind[0].texture_format = bind[1].texture_format = GL_R32F; /* bind[2] was copied before */
    size_t cols = nb * cv->out_h * cv->out_w;
    const size_t u[] = {d->in_channels, d->in_h, d->in_w, d->out_channels, cv->out_h, cv->out_w, d->kernel_h,
                        d->kernel_w, d->stride_h, d->stride_w, d->pad_h, d->pad_w, d->dilation_h, d->dilation_w,
                        d->in_channels / d->groups, d->out_channels / d->groups, cols, pad[0] / F32,
                        pad[1] / F32, pad[2] / F32, pad[3] / F32};
    for (GLint i = 0; i < (GLint)(sizeof u / sizeof u[0]); i++)
        tgl_gl_uniform_ui(b, prog, i, (GLuint)u[i]);
    return tgl_gl_dispatch_grid(b, prog, bind, 4, (uint32_t)tgl_gl_ceil_div(cols, tile_n(cfg)),
                                (uint32_t)tgl_gl_ceil_div(d->out_channels / d->groups, tile_m(cfg)),
                                (uint32_t)d->groups);
}

tgl_status tgl_gl_conv2d(tgl_backend *b, const tgl__conv2d *cv)
{
    tgl_gl *gl = tgl_gl_of(b);
    const tgl_gl_limits *l = &gl->limits;
    const tgl_conv2d_desc *d = &cv->d;
    size_t ocg = d->out_channels / d->groups;
    size_t ci = gl->conv2d_config >= 0 && (size_t)gl->conv2d_config < N_CONFIGS ? (size_t)gl->conv2d_config
                                                                                 : choose(l, ocg);
    const conv_config *cfg = &configs[ci];
    if (cfg->tex && !l->texture_buffer_texels) /* a forced texture variant on ES: its SSBO twin */
        cfg = cfg->tm == 4 ? &configs[5] : &configs[2];
    size_t max = tgl_gl_max_window_elems(l, F32);
    if (cfg->tex && l->texture_buffer_texels < max)
        max = (size_t)l->texture_buffer_texels;
    size_t img_in = d->in_channels * d->in_h * d->in_w, img_out = d->out_channels * cv->out_h * cv->out_w;
    size_t n_f = d->out_channels * (d->in_channels / d->groups) * d->kernel_h * d->kernel_w;
    size_t k = (d->in_channels / d->groups) * d->kernel_h * d->kernel_w;
    size_t per_img_cols = cv->out_h * cv->out_w;
    size_t nb = max / (img_in > img_out ? img_in : img_out);
    size_t grid_nb = (size_t)l->wg_count[0] * tile_n(cfg) / per_img_cols;
    if (nb > grid_nb)
        nb = grid_nb;
    if (nb > d->batch)
        nb = d->batch;
    /* Dispatches of bounded time (TGL_MAX_DISPATCH_MS): 2 k flops per output element. */
    double flops = tgl_gl_dispatch_flops(b), per_img = 2.0 * (double)k * (double)img_out;
    if (flops > 0 && per_img > 0 && (double)nb * per_img > flops)
        nb = flops / per_img >= 1.0 ? (size_t)(flops / per_img) : 1;
    if (nb == 0 || n_f > max || k > ((size_t)1 << 22) || d->groups > l->wg_count[2] ||
        tgl_gl_ceil_div(ocg, tile_m(cfg)) > l->wg_count[1])
        return tgl__fail(b, TGL_ERR_UNSUPPORTED, "tgl_conv2d: one image (%zu input, %zu output elements), the "
                         "filter (%zu; 2^22 per output channel at most) or %zu groups exceed the device's SSBO "
                         "block or workgroup limits", img_in, img_out, n_f, d->groups);
    char defines[192];
    conv_defines(cfg, cv->bias.buf != NULL, defines, sizeof defines);
    GLuint prog;
    tgl_status st = tgl_gl_program_get_wg(b, cfg->tiled ? "conv/conv2d_tiled" : "conv/conv2d_direct", defines,
                                          threads_of(cfg), &prog);
    if (st)
        return st;
    for (size_t n0 = 0; n0 < d->batch; n0 += nb)
        if ((st = run_slab(b, cv, cfg, prog, n0, d->batch - n0 < nb ? d->batch - n0 : nb)))
            return st;
    return TGL_OK;
}

void tgl_gl_test_force_conv2d(tgl_backend *b, int config)
{
    tgl_gl_of(b)->conv2d_config = config;
}

size_t tgl_gl_conv2d_config_count(void)
{
    return N_CONFIGS;
}

void tgl_gl_conv2d_variants(void (*fn)(void *ctx, const char *kernel, const char *defines), void *ctx)
{
    char defines[192];
    for (size_t i = 0; i < N_CONFIGS; i++)
        for (int bias = 0; bias < 2; bias++) {
            conv_defines(&configs[i], bias, defines, sizeof defines);
            fn(ctx, configs[i].tiled ? "conv/conv2d_tiled" : "conv/conv2d_direct", defines);
        }
}
