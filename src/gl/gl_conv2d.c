/* GL driver of tgl_conv2d (glsl/conv/): each group is the implicit GEMM
 * out[oc, (image, y, x)] = filter[oc, (ic, ky, kx)] x im2col[(ic, ky, kx), (image, y, x)], with
 * im2col read from the input on the fly. GPUs (the renderer's GEMM runs the shared-memory tile
 * kernel) take conv2d_tiled when a group has at least 16 output channels; devices whose profile
 * says conv_im2col (llvmpipe) write such groups' im2col out and run the GEMM kernels on it
 * (run_im2col); groups of few channels (depthwise), and the rest, take the register-only
 * conv2d_direct. Images are processed in slabs whose windows fit the SSBO block limit and whose
 * grids fit the workgroup limits. */
#include "gl_internal.h"

#define F32 sizeof(float)

/* A kernel configuration: tiled (BM x BN tiles, BK slabs, TM x TN per invocation) or direct
 * (TM x TN per invocation, WG_X x WG_Y invocations; tex: operands through buffer textures). */
typedef struct conv_config {
    int tiled;
    unsigned bm, bn, bk, tm, tn, wg_x, wg_y;
    int tex;
} conv_config;

/* H100, 3x3 64 -> 64 channels, 56x56, batch 32 (BM,BN,BK,TM,TN[,unroll]: ms), with im2col
 * stepping: 64,256,16,4,8,unroll: 0.533; 64,256,8,8,4,unroll and 64,256,8,4,8,unroll: 0.544;
 * 64,128,16,8,4,unroll: 0.559; 64,128,8,4,8,unroll: 0.577; 64,64,16,4,4: 0.583 (unrolled: 0.602);
 * 64,256,8,4,8: 0.584; 64,128,16,4,8,unroll: 0.789; 128,128,16,8,8,unroll: 0.919;
 * 128,256,8,8,8,unroll: 0.902; 128,128,8,8,8,unroll: 1.073. Staging filter rows across the
 * invocations (fewer shared-memory bank conflicts, uncoalesced filter loads) lost: 0.692 against
 * 0.544. The 64 x 256 tile wins while its grid fills the device: 128 -> 128 channels at 28x28 0.609
 * ms against 0.739 for 128,128,8,8,8 and 0.732 for 64 x 64; but 256 -> 256 at 14x14 (100
 * workgroups of 64 x 256) 0.836 against 0.655 for 64 x 64, and 64 -> 64 at 56x56, batch 8 (98
 * workgroups) 0.222 against 0.195. Before the unrolled tiles, without stepping: 64,64,16,4,4:
 * 0.615; 64,128,16,4,8: 0.636; 64,64,32,4,4: 0.802; 32,128,16,4,4: 0.840; 128,64,8,8,4: 1.070.
 * With the filter staged as vec4s (F_VEC4: one branch per vec4, uniform over a
 * warp, instead of a component chosen per element) and two slabs in shared memory, ms, batch 32
 * of 64 -> 64 at 56x56 / 128 -> 128 at 28x28 / 256 -> 256 at 14x14 (before: 0.419 / 0.606 /
 * 0.582): 64,128,16,4,4,unroll,double 0.349 / 0.355 / 0.397; 64,64,16,4,4,double 0.401 / 0.374 /
 * 0.373 (unrolled: the same); 64,256,16,4,8,unroll,double 0.408 / 0.496 / -, one slab 0.460 /
 * 0.412; 64,256,16,8,8,unroll 0.516, double 0.622; 64,128,16,4,8,unroll,double 0.418 / 0.478 /
 * 0.511; 128,128,16,8,4,unroll,double 0.613 / 0.426; 64,64 BK 8 0.389 / 0.394 / 0.405 (but 1x1,
 * 256 -> 1024 at 14x14, batch 8: 0.068 against 0.080); BK 32 0.812. Later that day, with the
 * im2col staged as vec4s of four neighbouring columns too (no component chosen at run time on
 * either side), two slabs each, not unrolled unless said: 64,64,16,4,4 0.341 / 0.330 / 0.333
 * (0.171 at batch 16, where 64 x 128 took 0.184); 64,128,16,4,4 0.422 / 0.387 / 0.333 (unrolled
 * 0.460 / 0.413); 64,128,16,8,4 0.374 / 0.426; 64,256,16,4,8 0.374 / 0.330 / 0.333; 128,128,16,8,8
 * 0.682 (half its rows idle at 64 channels) / 0.330 / 0.333; 128,64,16,8,4 0.605 / 0.409; the
 * im2col vec4 holding columns a quarter tile apart instead (coalesced loads and stores): 0.483 /
 * 0.426 / 0.339 with 64 x 128. So one tile serves every grid.
 * The tiled entry keeps THREADS = (BM/TM)(BN/TN) a divisor of BN*BK/4 and a multiple of BN/4,
 * and BM*BK a multiple of THREADS (see conv2d_tiled.comp). */
static const conv_config configs[] = {
    {1, 64, 64, 16, 4, 4, 0, 0, 0},   /* GPUs, groups of 16 or more output channels */
    {0, 0, 0, 0, 1, 4, 64, 1, 0},     /* GPUs, fewer (depthwise) */
    {0, 0, 0, 0, 4, 4, 16, 4, 1},     /* llvmpipe: 4 channels x 4 pixels, texel gathers */
    {0, 0, 0, 0, 1, 4, 64, 1, 1},     /* llvmpipe, groups of < 4 channels */
    {0, 0, 0, 0, 4, 4, 16, 4, 0},     /* devices without buffer textures */
};
#define N_CONFIGS (sizeof configs / sizeof configs[0])

/* Split-K: a tiled grid of fewer than SPLIT_BELOW waves (a workgroup per multiprocessor: the
 * profile's compute_units, 132 on the H100) leaves multiprocessors idle, and a
 * tile's slabs run one after another at the memory's latency (H100: 2.5-2.7 us per
 * slab, 49 workgroups of 64 x 64 at batch 1, 64 -> 64 channels, 56x56: 0.098 ms against 0.133
 * for four times the work at batch 4). Such grids cut K into ranges of at least SPLIT_MIN_SLABS
 * slabs, up to SPLIT_MAX of them, towards SPLIT_TARGET waves in all, one more grid
 * dimension, into a buffer of partial outputs that a column sum (gl_reduce.c) then adds up. H100
 * (docs/performance.md, Convolution): 264 workgroups as the target lost to 528 on layers of 4
 * images of 128 to 512 channels (0.109 against 0.087 ms at 28x28, 128 channels), and splitting
 * grids of 392 lost (batch 8 at 56x56: 0.192 against 0.169); ranges of at least 4 slabs split a
 * 7x7 layer over 3 channels (224x224, 10 slabs) in two, 0.124 ms against 0.078 whole. */
#define SPLIT_BELOW 2
#define SPLIT_TARGET 4
#define SPLIT_MAX 16
#define SPLIT_MIN_SLABS 6

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

static int fits(const tgl_gl_limits *l, const conv_config *c)
{
    uint64_t shared = c->tiled ? 2 * (uint64_t)c->bk * (c->bm + c->bn) * F32 : 0; /* two slabs */
    return threads_of(c) <= l->wg_invocations && threads_of(c) <= l->wg_size[0] && shared <= l->shared_memory;
}

/* ocg: output channels per group. */
static size_t choose(const tgl_gl_limits *l, size_t ocg)
{
    if (l->gemm.tiled && ocg >= 16 && fits(l, &configs[0]))
        return 0;
    if (l->gemm.tiled)
        return 1;
    if (l->gemm.textures && l->texture_buffer_texels)
        return ocg >= 4 ? 2 : 3;
    return ocg >= 4 ? 4 : 1;
}

/* The convolution kernels' flags: the configuration's tiles (conv2d_tiled.comp: BM..THREADS;
 * conv2d_direct.comp: WG_X, WG_Y, TM, TN, TEX), split-K and the filter read as vec4s (K and its
 * window offset in whole vec4s; tiled), a bias, and tgl_conv2d_fused's epilogue (never with split-K,
 * whose partial sums are added after the kernel). */
typedef struct conv_flags {
    uint32_t bm, bn, bk, tm, tn, threads, split, fvec4, wg_x, wg_y, tex, bias, epilogue;
} conv_flags;
static const tgl_gl_def tiled_defs[] = {
    TGL_GL_UINT(conv_flags, bm, "BM"), TGL_GL_UINT(conv_flags, bn, "BN"), TGL_GL_UINT(conv_flags, bk, "BK"),
    TGL_GL_UINT(conv_flags, tm, "TM"), TGL_GL_UINT(conv_flags, tn, "TN"), TGL_GL_UINT(conv_flags, threads, "THREADS"),
    TGL_GL_FLAG(conv_flags, split, "SPLIT_K"), TGL_GL_FLAG(conv_flags, fvec4, "F_VEC4"),
    TGL_GL_FLAG(conv_flags, bias, "HAS_BIAS"), TGL_GL_FLAG(conv_flags, epilogue, "EPILOGUE"),
};
static const tgl_gl_def direct_defs[] = {
    TGL_GL_UINT(conv_flags, wg_x, "WG_X"), TGL_GL_UINT(conv_flags, wg_y, "WG_Y"), TGL_GL_UINT(conv_flags, tm, "TM"),
    TGL_GL_UINT(conv_flags, tn, "TN"), TGL_GL_FLAG(conv_flags, tex, "TEX"), TGL_GL_FLAG(conv_flags, bias, "HAS_BIAS"),
    TGL_GL_FLAG(conv_flags, epilogue, "EPILOGUE"),
};

static tgl_gl_plan conv_plan(const conv_config *c, int bias, int split, int fvec4, int epilogue)
{
    conv_flags f = {c->bm, c->bn, c->bk, c->tm, c->tn, threads_of(c), (uint32_t)split, (uint32_t)fvec4,
                    c->wg_x, c->wg_y, (uint32_t)c->tex, (uint32_t)bias, (uint32_t)epilogue};
    tgl_gl_plan p = {.op = "tgl_conv2d", .wg = threads_of(c)};
    if (c->tiled)
        tgl_gl_plan_kernel(&p, "conv/conv2d_tiled", TGL_GL_DEFS(tiled_defs), &f);
    else
        tgl_gl_plan_kernel(&p, "conv/conv2d_direct", TGL_GL_DEFS(direct_defs), &f);
    return p;
}

/* conv2d_im2col.comp's flags: the pass (IM2COL, else SUMS), its input read as a buffer texture,
 * and SUMS's bias and epilogue. */
typedef struct col_flags {
    uint32_t im2col, sums, tex, bias, epilogue;
} col_flags;
static const tgl_gl_def col_defs[] = {
    TGL_GL_FLAG(col_flags, im2col, "IM2COL"), TGL_GL_FLAG(col_flags, sums, "SUMS"), TGL_GL_FLAG(col_flags, tex, "TEX"),
    TGL_GL_FLAG(col_flags, bias, "HAS_BIAS"), TGL_GL_FLAG(col_flags, epilogue, "EPILOGUE"),
};
#define COL_WG 64

static tgl_gl_plan col_plan(int im2col, int tex, int bias, int epilogue)
{
    col_flags f = {(uint32_t)im2col, (uint32_t)!im2col, (uint32_t)tex, (uint32_t)(!im2col && bias),
                   (uint32_t)(!im2col && epilogue)};
    tgl_gl_plan p = {.op = "tgl_conv2d", .wg = COL_WG};
    tgl_gl_plan_kernel(&p, "conv/conv2d_im2col", TGL_GL_DEFS(col_defs), &f);
    p.why = im2col ? "conv_im2col (device profile), 16 or more output channels per group: im2col written out, "
                     "then the GEMM kernels"
                   : "conv_im2col's products: the bias, then the epilogue, into out";
    return p;
}

/* How many K ranges a tiled grid of `grid` workgroups is cut into (1: none), over `slabs` slabs;
 * `forced` (tests) asks for that many. Every range holds at least one slab. */
static size_t choose_splits(const tgl_gl_limits *l, const conv_config *cfg, size_t grid, size_t slabs, int forced)
{
    if (!cfg->tiled || slabs < 2 || grid == 0)
        return 1;
    size_t want = forced > 0 ? (size_t)forced : 1;
    if (forced <= 0 && grid < SPLIT_BELOW * (size_t)l->compute_units) {
        want = tgl_gl_ceil_div(SPLIT_TARGET * (size_t)l->compute_units, grid);
        if (want > slabs / SPLIT_MIN_SLABS)
            want = slabs / SPLIT_MIN_SLABS;
        if (want > SPLIT_MAX)
            want = SPLIT_MAX;
    }
    if (want <= 1)
        return 1;
    if (want > slabs)
        want = slabs;
    return tgl_gl_ceil_div(slabs, tgl_gl_ceil_div(slabs, want)); /* no empty range */
}

static int has_epilogue(const tgl__conv2d *cv)
{
    return cv->act != TGL_ACTIVATION_NONE || cv->residual;
}

/* Sets the conv_io.glsl uniforms of a conv kernel (cols: the dispatch's columns; pad: the four
 * windows' offsets in bytes), and the fused epilogue's where the program has it. */
static void conv_uniforms(tgl_backend *b, GLuint prog, const tgl__conv2d *cv, size_t cols, const size_t *pad,
                          int epilogue)
{
    const tgl_conv2d_desc *d = &cv->d;
    const tgl_gl_uniform u[] = {
        {LOC_CONV_C, d->in_channels},   {LOC_CONV_H, d->in_h},          {LOC_CONV_W, d->in_w},
        {LOC_CONV_OC, d->out_channels}, {LOC_CONV_OH, cv->out_h},       {LOC_CONV_OW, cv->out_w},
        {LOC_CONV_KH, d->kernel_h},     {LOC_CONV_KW, d->kernel_w},     {LOC_CONV_SH, d->stride_h},
        {LOC_CONV_SW, d->stride_w},     {LOC_CONV_PH, d->pad_h},        {LOC_CONV_PW, d->pad_w},
        {LOC_CONV_DH, d->dilation_h},   {LOC_CONV_DW, d->dilation_w},
        {LOC_CONV_ICG, d->in_channels / d->groups}, {LOC_CONV_OCG, d->out_channels / d->groups},
        {LOC_CONV_COLS, cols},          {LOC_CONV_IN_OFF, pad[0] / F32}, {LOC_CONV_F_OFF, pad[1] / F32},
        {LOC_CONV_B_OFF, pad[2] / F32}, {LOC_CONV_OUT_OFF, pad[3] / F32},
    };
    tgl_gl_uniforms_ui(b, prog, u, sizeof u / sizeof u[0]);
    if (epilogue) {
        tgl_gl_uniform_ui(b, prog, LOC_CONV_ACT, (GLuint)cv->act);
        tgl_gl_uniform_f(b, prog, LOC_CONV_SLOPE, cv->slope);
        tgl_gl_uniform_ui(b, prog, LOC_CONV_RESIDUAL, (GLuint)cv->residual);
    }
}

static tgl_status run_slab(tgl_backend *b, const tgl__conv2d *cv, const conv_config *cfg, GLuint prog, size_t n0,
                           size_t nb, size_t splits)
{
    const tgl_conv2d_desc *d = &cv->d;
    const tgl_gl_limits *l = &tgl_gl_of(b)->limits;
    size_t align = tgl_gl_window_align(l, cfg->tex);
    size_t img_in = d->in_channels * d->in_h * d->in_w, img_out = d->out_channels * cv->out_h * cv->out_w;
    size_t n_f = d->out_channels * (d->in_channels / d->groups) * d->kernel_h * d->kernel_w;
    size_t pad[4] = {0};
    tgl_gl_binding bind[4];
    bind[0] = tgl_gl_window_aligned((tgl__view){cv->in.buf, cv->in.offset + n0 * img_in * F32}, nb * img_in * F32, 0,
                                    align, &pad[0]);
    bind[1] = tgl_gl_window_aligned(cv->filter, n_f * F32, 0, align, &pad[1]);
    tgl__view out = {cv->out.buf, cv->out.offset + n0 * img_out * F32};
    tgl_gl_buffer *partials = tgl_gl_of(b)->split_partials;
    if (splits > 1)
        bind[3] = (tgl_gl_binding){.buf = partials, .bytes = splits * nb * img_out * F32, .writes = 1};
    else
        bind[3] = tgl_gl_window(b, out, nb * img_out * F32, 1, &pad[3]);
    if (cv->bias.buf)
        bind[2] = tgl_gl_window(b, cv->bias, d->out_channels * F32, 0, &pad[2]);
    else
        bind[2] = bind[1]; /* unused binding: any live read-only window */
    if (cfg->tex)
        bind[0].texture_format = bind[1].texture_format = GL_R32F; /* bind[2] was copied before */
    size_t cols = nb * cv->out_h * cv->out_w;
    conv_uniforms(b, prog, cv, cols, pad, has_epilogue(cv));
    if (splits > 1) {
        size_t k = (d->in_channels / d->groups) * d->kernel_h * d->kernel_w, slabs = tgl_gl_ceil_div(k, cfg->bk);
        tgl_gl_uniform_ui(b, prog, LOC_CONV_K_CHUNK, (GLuint)(tgl_gl_ceil_div(slabs, splits) * cfg->bk));
        tgl_gl_uniform_ui(b, prog, LOC_CONV_SPLIT_STRIDE, (GLuint)(nb * img_out));
        tgl_gl_uniform_ui(b, prog, LOC_CONV_GROUPS, (GLuint)d->groups);
    }
    tgl_status st = tgl_gl_dispatch_grid(b, prog, bind, 4, (uint32_t)tgl_gl_ceil_div(cols, tile_n(cfg)),
                                         (uint32_t)tgl_gl_ceil_div(d->out_channels / d->groups, tile_m(cfg)),
                                         (uint32_t)(d->groups * splits));
    if (st || splits == 1)
        return st;
    /* The splits' partial outputs, summed in order into the output (a column sum). */
    return tgl_gl_reduce(b, TGL_REDUCE_SUM, (tgl__view){partials, 0}, out, 1, splits, nb * img_out);
}

/* The im2col elements (per image) past which conv_im2col cuts a batch into slabs: the buffer's
 * size, not the speed (the GEMM's columns are already an image's pixels). */
#define COL_SLAB_ELEMS ((size_t)8 << 20)

/* conv_im2col (the device profile's trait): per slab of images, every group's im2col into
 * gl->conv_cols, then per group one batched GEMM (its filter rows, shared by every image, times
 * each image's im2col rows) into out or, with a bias or an epilogue, into gl->conv_sums, which
 * the SUMS pass then adds the bias to and runs the epilogue on into out. Returns 0 without
 * doing anything (the direct kernels then run) where a slab of one image does not fit a window
 * or the grids do not fit the workgroup limits. */
static int run_im2col(tgl_backend *b, const tgl__conv2d *cv, tgl_status *st)
{
    tgl_gl *gl = tgl_gl_of(b);
    const tgl_gl_limits *l = &gl->limits;
    const tgl_conv2d_desc *d = &cv->d;
    size_t icg = d->in_channels / d->groups, ocg = d->out_channels / d->groups, p = cv->out_h * cv->out_w;
    size_t k = icg * d->kernel_h * d->kernel_w, img_in = d->in_channels * d->in_h * d->in_w;
    size_t img_cols = d->groups * k * p, img_out = d->out_channels * p;
    size_t max = tgl_gl_max_window_elems(l, F32);
    if (!l->conv_im2col || ocg < 16 || k > l->wg_count[1] || ocg > l->wg_count[1] || d->groups > l->wg_count[2] ||
        img_cols > max || img_in > max || img_out > max || k > ((size_t)1 << 22))
        return 0;
    size_t nb = (COL_SLAB_ELEMS > img_cols ? COL_SLAB_ELEMS : img_cols) / img_cols;
    if (nb > max / img_in)
        nb = max / img_in;
    if (nb > max / img_out)
        nb = max / img_out;
    if (nb > (size_t)l->wg_count[0] * COL_WG / p)
        nb = (size_t)l->wg_count[0] * COL_WG / p;
    if (nb > d->batch)
        nb = d->batch;
    int sums = cv->bias.buf || has_epilogue(cv);
    /* slabs whose buffers TGL_MAX_MEMORY has room for; none: the direct kernels, which need none */
    while (nb && !tgl__within_budget(b, tgl_gl_grow_extra(gl->conv_cols, nb * img_cols * F32) +
                                            (sums ? tgl_gl_grow_extra(gl->conv_sums, nb * img_out * F32) : 0)))
        nb /= 2;
    if (nb == 0)
        return 0;
    /* inputs as buffer textures where the device reads them so and the windows fit */
    int tex_in = l->texel_inputs && tgl_gl_texture_fits(l, nb * img_in, F32);
    int tex_sums = l->texel_inputs && tgl_gl_texture_fits(l, nb * img_out, F32);
    tgl_gl_plan plans[2] = {col_plan(1, tex_in, 0, 0), col_plan(0, tex_sums, cv->bias.buf != NULL, has_epilogue(cv))};
    plans[0].groups = tgl_gl_ceil_div(d->batch * cv->out_h, COL_WG) * k * d->groups;
    plans[1].groups = tgl_gl_ceil_div(d->batch * p, COL_WG) * ocg * d->groups;
    GLuint prog[2] = {0, 0};
    if ((*st = tgl_gl_plan_program(b, &plans[0], &prog[0])) || (sums && (*st = tgl_gl_plan_program(b, &plans[1], &prog[1]))) ||
        (*st = tgl_gl_grow(b, &gl->conv_cols, nb * img_cols * F32, "tgl_conv2d's im2col columns")) ||
        (sums && (*st = tgl_gl_grow(b, &gl->conv_sums, nb * img_out * F32, "tgl_conv2d's column sums"))))
        return 1;
    size_t n_f = d->out_channels * k;
    for (size_t n0 = 0; n0 < d->batch && !*st; n0 += nb) {
        size_t cnt = d->batch - n0 < nb ? d->batch - n0 : nb, pad[4] = {0};
        tgl__view out = {cv->out.buf, cv->out.offset + n0 * img_out * F32};
        tgl_gl_binding bind[4];
        bind[0] = tgl_gl_window_aligned((tgl__view){cv->in.buf, cv->in.offset + n0 * img_in * F32}, cnt * img_in * F32, 0,
                                        tgl_gl_window_align(l, tex_in), &pad[0]);
        bind[1] = tgl_gl_window(b, cv->filter, n_f * F32, 0, &pad[1]);
        bind[2] = bind[1]; /* unused: any live read-only window */
        bind[3] = (tgl_gl_binding){.buf = gl->conv_cols, .bytes = cnt * img_cols * F32, .writes = 1};
        if (tex_in)
            bind[0].texture_format = GL_R32F;
        conv_uniforms(b, prog[0], cv, cnt * p, pad, 0);
        if ((*st = tgl_gl_dispatch_grid(b, prog[0], bind, 4, (uint32_t)tgl_gl_ceil_div(cnt * cv->out_h, COL_WG),
                                        (uint32_t)k, (uint32_t)d->groups)))
            return 1;
        for (size_t g = 0; g < d->groups; g++) {
            tgl__gemm mm = {.m = ocg, .n = p, .k = k, .batch = cnt, .alpha = 1.0f, .beta = 0.0f,
                            .a = {cv->filter.buf, cv->filter.offset + g * ocg * k * F32},
                            .b = {gl->conv_cols, g * k * p * F32},
                            .c = sums ? (tgl__view){gl->conv_sums, g * ocg * p * F32}
                                      : (tgl__view){out.buf, out.offset + g * ocg * p * F32},
                            .lda = k, .ldb = p, .ldc = p, .stride_a = 0, .stride_b = img_cols, .stride_c = img_out};
            if ((*st = tgl_gl_gemm(b, &mm)))
                return 1;
        }
        if (!sums)
            continue;
        size_t spad[4] = {0};
        bind[0] = tgl_gl_window_aligned((tgl__view){gl->conv_sums, 0}, cnt * img_out * F32, 0,
                                        tgl_gl_window_align(l, tex_sums), &spad[0]);
        if (tex_sums)
            bind[0].texture_format = GL_R32F;
        bind[2] = cv->bias.buf ? tgl_gl_window(b, cv->bias, d->out_channels * F32, 0, &spad[2]) : bind[1];
        bind[3] = tgl_gl_window(b, out, cnt * img_out * F32, 1, &spad[3]);
        conv_uniforms(b, prog[1], cv, cnt * p, spad, has_epilogue(cv));
        *st = tgl_gl_dispatch_grid(b, prog[1], bind, 4, (uint32_t)tgl_gl_ceil_div(cnt * p, COL_WG), (uint32_t)ocg,
                                   (uint32_t)d->groups);
    }
    return 1;
}

/* conv2d_winograd.comp's flags: the output tile (2 or 4: F(2x2, 3x3) or F(4x4, 3x3)), the pass
 * (FILTER, INPUT or OUTPUT), its reads as buffer textures, and OUTPUT's bias and epilogue. */
typedef struct wino_flags {
    uint32_t tile, filter, input, output, tex, bias, epilogue;
} wino_flags;
static const tgl_gl_def wino_defs[] = {
    TGL_GL_UINT(wino_flags, tile, "TILE"),    TGL_GL_FLAG(wino_flags, filter, "FILTER"),
    TGL_GL_FLAG(wino_flags, input, "INPUT"),  TGL_GL_FLAG(wino_flags, output, "OUTPUT"),
    TGL_GL_FLAG(wino_flags, tex, "TEX"),      TGL_GL_FLAG(wino_flags, bias, "HAS_BIAS"),
    TGL_GL_FLAG(wino_flags, epilogue, "EPILOGUE"),
};
enum { WINO_FILTER, WINO_INPUT, WINO_OUTPUT };

static tgl_gl_plan wino_plan(int tile, int pass, int tex, int bias, int epilogue)
{
    wino_flags f = {(uint32_t)tile, pass == WINO_FILTER, pass == WINO_INPUT, pass == WINO_OUTPUT, (uint32_t)tex,
                    (uint32_t)(pass == WINO_OUTPUT && bias), (uint32_t)(pass == WINO_OUTPUT && epilogue)};
    tgl_gl_plan p = {.op = "tgl_conv2d", .wg = COL_WG};
    tgl_gl_plan_kernel(&p, "conv/conv2d_winograd", TGL_GL_DEFS(wino_defs), &f);
    static const char *const why[2][3] = {
        {"conv_winograd=2 (device profile), 3x3 stride 1: the filter's transform G g G^T (4x4)",
         "conv_winograd=2: the input tiles' transform B^T d B, then 16 batched GEMMs",
         "conv_winograd=2: the products' transform A^T M A into 2x2 outputs, the bias, then the epilogue"},
        {"conv_winograd=4 (device profile), 3x3 stride 1: the filter's transform G g G^T (6x6)",
         "conv_winograd=4: the input tiles' transform B^T d B, then 36 batched GEMMs",
         "conv_winograd=4: the products' transform A^T M A into 4x4 outputs, the bias, then the epilogue"},
    };
    p.why = why[tile == 4][pass];
    return p;
}

/* Elements of the transformed input (V) and products (M) per slab past which conv_winograd cuts a
 * batch into slabs: the buffers' size (64 MiB each at most), not the speed. */
#define WINO_SLAB_ELEMS ((size_t)16 << 20)

/* The output tile m of F(m x m, 3x3) for a batch of out_h x out_w outputs: the profile's
 * conv_winograd, 4 cut to 2 where the batch holds fewer 4x4 tiles than its
 * conv_winograd_f4_tiles (the GEMM's columns would be too few). */
static size_t wino_tile(const tgl_gl_limits *l, size_t batch, size_t out_h, size_t out_w)
{
    if (l->conv_winograd != 4)
        return 2;
    return batch * ((out_h + 3) / 4) * ((out_w + 3) / 4) >= l->conv_winograd_f4_tiles ? 4 : 2;
}

/* The row length of V and M for `tiles` tiles: rounded up to a multiple of 4, so the GEMM reads
 * and writes them as vec4s (conv2d_winograd.comp). */
static size_t wino_ld(size_t tiles)
{
    return (tiles + 3) / 4 * 4;
}

/* Whether a slab of nb images (tiles_img tiles each) has V and M within a window of max elements
 * and its padded tiles within the grid's most_tiles. */
static int wino_slab_fits(size_t xis, size_t c, size_t oc, size_t tiles_img, size_t nb, size_t max, size_t most_tiles)
{
    size_t ld = wino_ld(nb * tiles_img);
    return ld <= most_tiles && ld <= max / (xis * c) && ld <= max / (xis * oc);
}

/* conv_winograd (the device profile's trait, the output tile m: 2 or 4): a 3x3 kernel of stride
 * and dilation 1 in one group of at least 16 channels in and out as Winograd's F(m x m, 3x3)
 * (conv2d_winograd.comp): the filter's transform U into gl->conv_filter once, then per slab of
 * images the input's transform V into gl->conv_cols, the (m + 2)^2 products M[xi] = U[xi] V[xi]
 * (one batched GEMM) into gl->conv_sums, and their transform, with the bias and the epilogue,
 * into out. 2.25x (m 2) or 4x (m 4) fewer multiplies than the direct sum, at a slightly
 * different rounding (each output a sum of transformed terms; the tests hold it to the CPU
 * backend's double sums as every kernel).
 * Returns 0 without doing anything (the other kernels then run) where the shape does not qualify,
 * a slab of one image does not fit a window or TGL_MAX_MEMORY, or the grids do not fit. */
static int run_winograd(tgl_backend *b, const tgl__conv2d *cv, tgl_status *st)
{
    tgl_gl *gl = tgl_gl_of(b);
    const tgl_gl_limits *l = &gl->limits;
    const tgl_conv2d_desc *d = &cv->d;
    size_t c = d->in_channels, oc = d->out_channels, m = wino_tile(l, d->batch, cv->out_h, cv->out_w);
    size_t xis = (m + 2) * (m + 2);
    /* OUTPUT binds five storage buffers (its direct sums for outputs that come out NaN or
     * infinite read the input): desktop GL, past ES 3.1's four (tgl_gl_es_excluded) */
    if (!l->conv_winograd || gl->egl.es || l->storage_blocks < 5 || d->groups != 1 || d->kernel_h != 3 ||
        d->kernel_w != 3 || d->stride_h != 1 || d->stride_w != 1 || d->dilation_h != 1 || d->dilation_w != 1 ||
        c < 16 || oc < 16 || d->batch * ((cv->out_h + 1) / 2) * ((cv->out_w + 1) / 2) < l->conv_winograd_min_tiles)
        return 0;
    size_t tiles_img = ((cv->out_h + m - 1) / m) * ((cv->out_w + m - 1) / m), img_in = c * d->in_h * d->in_w;
    size_t img_out = oc * cv->out_h * cv->out_w, v_img = xis * c * tiles_img, m_img = xis * oc * tiles_img;
    size_t n_u = xis * oc * c, max = tgl_gl_max_window_elems(l, F32);
    /* the grids: tiles in x (64 a workgroup), channels in y; tile and filter indices below 2^22
     * (conv_div's range) */
    size_t most_tiles = (size_t)l->wg_count[0] * COL_WG < ((size_t)1 << 22) ? (size_t)l->wg_count[0] * COL_WG
                                                                          : ((size_t)1 << 22);
    if (c > l->wg_count[1] || oc > l->wg_count[1] || oc * c > (size_t)l->wg_count[0] * COL_WG || n_u > max ||
        !wino_slab_fits(xis, c, oc, tiles_img, 1, max, most_tiles) || img_in > max || img_out > max)
        return 0;
    size_t big = v_img > m_img ? v_img : m_img;
    size_t nb = (WINO_SLAB_ELEMS > big ? WINO_SLAB_ELEMS : big) / big;
    if (nb > max / v_img)
        nb = max / v_img;
    if (nb > max / m_img)
        nb = max / m_img;
    if (nb > max / img_in)
        nb = max / img_in;
    if (nb > max / img_out)
        nb = max / img_out;
    if (nb > most_tiles / tiles_img)
        nb = most_tiles / tiles_img;
    if (nb > d->batch)
        nb = d->batch;
    while (nb > 1 && !wino_slab_fits(xis, c, oc, tiles_img, nb, max, most_tiles)) /* (the rows' padding) */
        nb--;
    /* slabs whose buffers TGL_MAX_MEMORY has room for; none: the other kernels, which need none */
    while (nb && !tgl__within_budget(b, tgl_gl_grow_extra(gl->conv_filter, n_u * F32) +
                                            tgl_gl_grow_extra(gl->conv_cols, xis * c * wino_ld(nb * tiles_img) * F32) +
                                            tgl_gl_grow_extra(gl->conv_sums, xis * oc * wino_ld(nb * tiles_img) * F32)))
        nb /= 2;
    if (nb == 0)
        return 0;
    size_t slab_ld = wino_ld(nb * tiles_img); /* a full slab's V and M rows */
    int tex_in = l->texel_inputs && tgl_gl_texture_fits(l, nb * img_in, F32);
    int tex_f = l->texel_inputs && tgl_gl_texture_fits(l, oc * c * 9, F32);
    /* OUTPUT reads M and the filter alike: both as textures, or neither */
    int tex_out = tex_f && tgl_gl_texture_fits(l, xis * oc * slab_ld, F32);
    tgl_gl_plan plans[3] = {wino_plan((int)m, WINO_FILTER, tex_f, 0, 0), wino_plan((int)m, WINO_INPUT, tex_in, 0, 0),
                            wino_plan((int)m, WINO_OUTPUT, tex_out, cv->bias.buf != NULL, has_epilogue(cv))};
    plans[0].groups = (uint32_t)tgl_gl_ceil_div(oc * c, COL_WG);
    plans[1].groups = (uint32_t)(tgl_gl_ceil_div(d->batch * tiles_img, COL_WG) * c);
    plans[2].groups = (uint32_t)(tgl_gl_ceil_div(d->batch * tiles_img, COL_WG) * oc);
    GLuint prog[3];
    for (int i = 0; i < 3; i++)
        if ((*st = tgl_gl_plan_program(b, &plans[i], &prog[i])))
            return 1;
    if ((*st = tgl_gl_grow(b, &gl->conv_filter, n_u * F32, "tgl_conv2d's Winograd filter")) ||
        (*st = tgl_gl_grow(b, &gl->conv_cols, xis * c * slab_ld * F32, "tgl_conv2d's Winograd input tiles")) ||
        (*st = tgl_gl_grow(b, &gl->conv_sums, xis * oc * slab_ld * F32, "tgl_conv2d's Winograd products")))
        return 1;
    /* the filter's transform: U[xi] is oc x c, xi = 0..xis-1 */
    size_t pad[4] = {0};
    tgl_gl_binding bind[4];
    bind[1] = tgl_gl_window_aligned(cv->filter, oc * c * 9 * F32, 0, tgl_gl_window_align(l, tex_f), &pad[1]);
    bind[0] = bind[2] = bind[1]; /* unused: any live read-only window */
    bind[3] = (tgl_gl_binding){.buf = gl->conv_filter, .bytes = n_u * F32, .writes = 1};
    if (tex_f)
        bind[1].texture_format = GL_R32F;
    conv_uniforms(b, prog[0], cv, 0, pad, 0);
    if ((*st = tgl_gl_dispatch_grid(b, prog[0], bind, 4, plans[0].groups, 1, 1)))
        return 1;
    gl->conv_winograd_calls[m == 4]++;
    for (size_t n0 = 0; n0 < d->batch; n0 += nb) {
        size_t cnt = d->batch - n0 < nb ? d->batch - n0 : nb, tiles = cnt * tiles_img, ld = wino_ld(tiles);
        size_t xg = tgl_gl_ceil_div(ld, COL_WG);
        size_t ipad[4] = {0};
        tgl__view in = {cv->in.buf, cv->in.offset + n0 * img_in * F32};
        bind[0] = tgl_gl_window_aligned(in, cnt * img_in * F32, 0, tgl_gl_window_align(l, tex_in), &ipad[0]);
        bind[1] = bind[2] = bind[0];
        bind[3] = (tgl_gl_binding){.buf = gl->conv_cols, .bytes = xis * c * ld * F32, .writes = 1};
        if (tex_in)
            bind[0].texture_format = GL_R32F;
        conv_uniforms(b, prog[1], cv, tiles, ipad, 0);
        tgl_gl_uniform_ui(b, prog[1], LOC_CONV_LD, (GLuint)ld);
        if ((*st = tgl_gl_dispatch_grid(b, prog[1], bind, 4, (uint32_t)xg, (uint32_t)c, 1)))
            return 1;
        tgl__gemm mm = {.m = oc, .n = ld, .k = c, .batch = xis, .alpha = 1.0f, .beta = 0.0f,
                        .a = {gl->conv_filter, 0}, .b = {gl->conv_cols, 0}, .c = {gl->conv_sums, 0},
                        .lda = c, .ldb = ld, .ldc = ld, .stride_a = oc * c, .stride_b = c * ld,
                        .stride_c = oc * ld};
        if ((*st = tgl_gl_gemm(b, &mm)))
            return 1;
        /* M, the filter and the input (for outputs summed again directly), the bias, out */
        size_t opad[4] = {0}, img_pad;
        tgl__view out = {cv->out.buf, cv->out.offset + n0 * img_out * F32};
        tgl_gl_binding obind[5];
        obind[0] = tgl_gl_window_aligned((tgl__view){gl->conv_sums, 0}, xis * oc * ld * F32, 0,
                                         tgl_gl_window_align(l, tex_out), &opad[0]);
        obind[1] = tgl_gl_window_aligned(cv->filter, oc * c * 9 * F32, 0, tgl_gl_window_align(l, tex_out), &opad[1]);
        obind[2] = cv->bias.buf ? tgl_gl_window(b, cv->bias, oc * F32, 0, &opad[2]) : obind[0];
        obind[3] = tgl_gl_window(b, out, cnt * img_out * F32, 1, &opad[3]);
        obind[4] = tgl_gl_window(b, in, cnt * img_in * F32, 0, &img_pad);
        if (tex_out)
            obind[0].texture_format = obind[1].texture_format = GL_R32F;
        conv_uniforms(b, prog[2], cv, tiles, opad, has_epilogue(cv));
        tgl_gl_uniform_ui(b, prog[2], LOC_CONV_IMG_OFF, (GLuint)(img_pad / F32));
        tgl_gl_uniform_ui(b, prog[2], LOC_CONV_LD, (GLuint)ld);
        if ((*st = tgl_gl_dispatch_grid(b, prog[2], obind, 5, (uint32_t)xg, (uint32_t)oc, 1)))
            return 1;
    }
    return 1;
}

tgl_status tgl_gl_conv2d(tgl_backend *b, const tgl__conv2d *cv)
{
    tgl_gl *gl = tgl_gl_of(b);
    const tgl_gl_limits *l = &gl->limits;
    const tgl_conv2d_desc *d = &cv->d;
    /* The kernels index the padded input in 32-bit ints (conv_io.glsl): a descriptor past that
     * is refused, not cut to 32 bits (which computed other pixels than the CPU backend). */
    const size_t most = (size_t)INT32_MAX;
    if (d->in_h + 2 * d->pad_h > most || d->in_w + 2 * d->pad_w > most || d->stride_h > most || d->stride_w > most ||
        d->dilation_h * (d->kernel_h - 1) > most || d->dilation_w * (d->kernel_w - 1) > most)
        return tgl__fail(b, TGL_ERR_UNSUPPORTED, "tgl_conv2d: the padded input (%zu x %zu), a stride or the dilated "
                         "kernel passes 2^31 - 1, the GL kernels' index range", d->in_h + 2 * d->pad_h,
                         d->in_w + 2 * d->pad_w);
    size_t ocg = d->out_channels / d->groups;
    tgl_status st = TGL_OK;
    /* a forced configuration runs as forced */
    if (gl->test.conv2d_config < 0 && (run_winograd(b, cv, &st) || run_im2col(b, cv, &st)))
        return st;
    size_t ci = gl->test.conv2d_config >= 0 && (size_t)gl->test.conv2d_config < N_CONFIGS ? (size_t)gl->test.conv2d_config
                                                                                 : choose(l, ocg);
    if (!fits(l, &configs[ci])) /* a forced configuration this device cannot run: the shape's */
        ci = choose(l, ocg);
    const conv_config *cfg = &configs[ci];
    size_t img_in = d->in_channels * d->in_h * d->in_w, img_out = d->out_channels * cv->out_h * cv->out_w;
    size_t n_f = d->out_channels * (d->in_channels / d->groups) * d->kernel_h * d->kernel_w;
    /* A texture variant on ES without buffer textures, or where one image or the filter is
     * longer than a buffer texture may be (65536 texels under TGL_LIMITS): its SSBO twin. */
    if (cfg->tex && (!l->texture_buffer_texels || img_in > l->texture_buffer_texels || n_f > l->texture_buffer_texels))
        cfg = cfg->tm == 4 ? &configs[4] : &configs[1];
    size_t max = tgl_gl_max_window_elems(l, F32);
    if (cfg->tex && l->texture_buffer_texels < max)
        max = (size_t)l->texture_buffer_texels;
    size_t k = (d->in_channels / d->groups) * d->kernel_h * d->kernel_w;
    size_t per_img_cols = cv->out_h * cv->out_w;
    size_t nb = max / (img_in > img_out ? img_in : img_out);
    size_t grid_nb = (size_t)l->wg_count[0] * tile_n(cfg) / per_img_cols;
    if (nb > grid_nb)
        nb = grid_nb;
    if (nb > d->batch)
        nb = d->batch;
    /* Split-K where the grid of the whole batch (or of the slab) is small; the partials of a slab
     * of images are one window. */
    size_t grid = tgl_gl_ceil_div(nb * per_img_cols, tile_n(cfg)) * tgl_gl_ceil_div(ocg, tile_m(cfg)) * d->groups;
    size_t splits = has_epilogue(cv) ? 1
                                     : choose_splits(&gl->limits, cfg, grid, tgl_gl_ceil_div(k, cfg->tiled ? cfg->bk : 1),
                                                     gl->test.conv2d_splits);
    while (splits > 1 && d->groups * splits > l->wg_count[2])
        splits--;
    size_t split_nb = splits > 1 ? max / (splits * img_out) : 0;
    if (split_nb == 0) /* not even one image's partials fit a window: no split */
        splits = 1;
    else if (nb > split_nb)
        nb = split_nb;
    /* partials TGL_MAX_MEMORY has no room for beside the live allocations: no split */
    if (splits > 1 && !tgl__within_budget(b, tgl_gl_grow_extra(gl->split_partials, splits * nb * img_out * F32)))
        splits = 1;
    /* Dispatches of bounded time (TGL_MAX_DISPATCH_MS): 2 k flops per output element. */
    double flops = tgl_gl_dispatch_flops(b), per_img = 2.0 * (double)k * (double)img_out;
    if (flops > 0 && per_img > 0 && (double)nb * per_img > flops)
        nb = flops / per_img >= 1.0 ? (size_t)(flops / per_img) : 1;
    if (nb == 0 || n_f > max || k > ((size_t)1 << 22) || d->groups > l->wg_count[2] ||
        tgl_gl_ceil_div(ocg, tile_m(cfg)) > l->wg_count[1])
        return tgl__fail(b, TGL_ERR_UNSUPPORTED, "tgl_conv2d: one image (%zu input, %zu output elements), the "
                         "filter (%zu; 2^22 per output channel at most) or %zu groups exceed the device's SSBO "
                         "block or workgroup limits", img_in, img_out, n_f, d->groups);
    /* The filter's window starts at its offset modulo the window alignment (run_slab). */
    int fvec4 = cfg->tiled && k % 4 == 0 && cv->filter.offset % tgl_gl_window_align(l, cfg->tex) % 16 == 0;
    tgl_gl_plan plan = conv_plan(cfg, cv->bias.buf != NULL, splits > 1, fvec4, has_epilogue(cv));
    plan.groups = tgl_gl_ceil_div(d->batch * per_img_cols, tile_n(cfg)) * tgl_gl_ceil_div(ocg, tile_m(cfg)) * d->groups *
                  splits;
    static const char *const why[N_CONFIGS] = {
        "16 or more output channels per group on a tiled-GEMM device: shared-memory tiles",
        "fewer than 16 output channels per group (depthwise): direct, a channel per invocation",
        "no tiled GEMM, buffer textures: direct, 4 channels x 4 pixels through texel gathers",
        "no tiled GEMM, fewer than 4 channels per group: direct, through texel gathers",
        "no tiled GEMM, no buffer textures: direct, 4 channels x 4 pixels",
    };
    plan.why = splits > 1 ? "a grid of fewer than two waves (compute_units): split-K, then a column sum"
                          : why[cfg - configs];
    GLuint prog;
    st = tgl_gl_plan_program(b, &plan, &prog);
    if (st || (splits > 1 && (st = tgl_gl_grow(b, &gl->split_partials, splits * nb * img_out * F32, "tgl_conv2d's split-K partials"))))
        return st;
    for (size_t n0 = 0; n0 < d->batch; n0 += nb)
        if ((st = run_slab(b, cv, cfg, prog, n0, d->batch - n0 < nb ? d->batch - n0 : nb, splits)))
            return st;
    return TGL_OK;
}

void tgl_gl_test_force_conv2d(tgl_backend *b, int config)
{
    tgl_gl_of(b)->test.conv2d_config = config;
}

void tgl_gl_test_force_conv2d_splits(tgl_backend *b, int splits)
{
    tgl_gl_of(b)->test.conv2d_splits = splits;
}

uint64_t tgl_gl_test_conv2d_winograd_calls(tgl_backend *b, int m)
{
    return tgl_gl_of(b)->conv_winograd_calls[m == 4];
}

size_t tgl_gl_conv2d_config_count(void)
{
    return N_CONFIGS;
}

void tgl_gl_conv2d_variants(void (*fn)(void *ctx, const char *kernel, const char *defines), void *ctx)
{
    for (size_t i = 0; i < N_CONFIGS; i++)
        for (int bias = 0; bias < 2; bias++)
            for (int split = 0; split <= configs[i].tiled; split++)
                for (int fvec4 = 0; fvec4 <= configs[i].tiled; fvec4++)
                    for (int epilogue = 0; epilogue < (split ? 1 : 2); epilogue++) {
                        tgl_gl_plan p = conv_plan(&configs[i], bias, split, fvec4, epilogue);
                        fn(ctx, p.kernel, p.defines);
                    }
    for (int tex = 0; tex < 2; tex++) {
        tgl_gl_plan p = col_plan(1, tex, 0, 0);
        fn(ctx, p.kernel, p.defines);
        for (int bias = 0; bias < 2; bias++)
            for (int epilogue = 0; epilogue < 2; epilogue++) {
                if (!bias && !epilogue) /* the GEMMs then write out themselves */
                    continue;
                p = col_plan(0, tex, bias, epilogue);
                fn(ctx, p.kernel, p.defines);
            }
        for (int tile = 2; tile <= 4; tile += 2)
            for (int pass = WINO_FILTER; pass <= WINO_OUTPUT; pass++) {
                int last = pass == WINO_OUTPUT ? 1 : 0; /* only OUTPUT has a bias and an epilogue */
                for (int bias = 0; bias <= last; bias++)
                    for (int epilogue = 0; epilogue <= last; epilogue++) {
                        p = wino_plan(tile, pass, tex, bias, epilogue);
                        fn(ctx, p.kernel, p.defines);
                    }
            }
    }
}
