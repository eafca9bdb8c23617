/* GL driver for tgl_conv_transpose2d (glsl/conv/conv_transpose2d.comp): slabs of whole images
 * whose input and output windows fit the SSBO block limit, the filter (and bias) one window
 * each, every slab dispatched in grids of at most the device's invocations and of bounded time
 * (TGL_MAX_DISPATCH_MS). */
#include "gl_internal.h"

#define F32 sizeof(float)

typedef struct ctr_flags {
    uint32_t bias;
} ctr_flags;
static const tgl_gl_def ctr_defs[] = {TGL_GL_FLAG(ctr_flags, bias, "HAS_BIAS")};

static tgl_gl_plan ctr_plan(int bias)
{
    ctr_flags f = {(uint32_t)(bias != 0)};
    tgl_gl_plan p = {.op = "tgl_conv_transpose2d",
                     .why = "an invocation per output element, gathering the taps that reach it"};
    tgl_gl_plan_kernel(&p, "conv/conv_transpose2d", TGL_GL_DEFS(ctr_defs), &f);
    return p;
}

tgl_status tgl_gl_conv_transpose2d(tgl_backend *b, const tgl__conv_transpose2d *c)
{
    const tgl_gl_limits *l = &tgl_gl_of(b)->limits;
    const tgl_conv2d_desc *d = &c->d;
    /* int coordinates in the kernel: every extent and reach below 2^30 */
    const size_t most = (size_t)1 << 30;
    if (d->in_h >= most || d->in_w >= most || c->out_h >= most || c->out_w >= most || d->pad_h >= most ||
        d->pad_w >= most || d->kernel_h * d->dilation_h >= most || d->kernel_w * d->dilation_w >= most ||
        d->stride_h >= most || d->stride_w >= most)
        return tgl__fail(b, TGL_ERR_UNSUPPORTED, "tgl_conv_transpose2d: a spatial extent past 2^30");
    size_t img_in = d->in_channels * d->in_h * d->in_w, img_out = d->out_channels * c->out_h * c->out_w;
    size_t icg = d->in_channels / d->groups, ocg = d->out_channels / d->groups;
    size_t n_f = d->in_channels * ocg * d->kernel_h * d->kernel_w;
    size_t per = tgl_gl_slab_planes(l, img_in, img_out);
    if (!per || n_f > tgl_gl_max_window_elems(l, F32))
        return tgl__fail(b, TGL_ERR_UNSUPPORTED, "tgl_conv_transpose2d: one image (%zu input, %zu output elements) "
                         "or the filter (%zu) exceeds the SSBO block limit", img_in, img_out, n_f);
    int bias = c->bias.buf != NULL;
    tgl_gl_plan plan = ctr_plan(bias);
    size_t slab = d->batch < per ? d->batch : per;
    plan.groups = tgl_gl_ceil_div(slab * img_out, l->workgroup_size);
    GLuint prog;
    tgl_status st = tgl_gl_plan_program(b, &plan, &prog);
    if (st)
        return st;
    size_t pad_f, pad_b = 0;
    tgl_gl_binding bind[4];
    bind[1] = tgl_gl_window(b, c->filter, n_f * F32, 0, &pad_f);
    bind[2] = bias ? tgl_gl_window(b, c->bias, d->out_channels * F32, 0, &pad_b) : bind[1];
    const tgl_gl_uniform u[] = {
        {LOC_CTR_IN_H, d->in_h},    {LOC_CTR_IN_W, d->in_w},     {LOC_CTR_OUT_H, c->out_h},
        {LOC_CTR_OUT_W, c->out_w},  {LOC_CTR_KH, d->kernel_h},   {LOC_CTR_KW, d->kernel_w},
        {LOC_CTR_SH, d->stride_h},  {LOC_CTR_SW, d->stride_w},   {LOC_CTR_PH, d->pad_h},
        {LOC_CTR_PW, d->pad_w},     {LOC_CTR_DH, d->dilation_h}, {LOC_CTR_DW, d->dilation_w},
        {LOC_CTR_IC, d->in_channels}, {LOC_CTR_OC, d->out_channels}, {LOC_CTR_ICG, icg},
        {LOC_CTR_OCG, ocg},         {LOC_CTR_F_OFF, pad_f / F32},
    };
    tgl_gl_uniforms_ui(b, prog, u, sizeof u / sizeof u[0]);
    if (bias)
        tgl_gl_uniform_ui(b, prog, LOC_CTR_B_OFF, (GLuint)(pad_b / F32));
    /* a dispatch's elements: the grid, and the work TGL_MAX_DISPATCH_MS allows (2 flops per
     * channel of each tap that can reach an element) */
    size_t grid = (size_t)((uint64_t)l->wg_count[0] * l->wg_count[1] * l->workgroup_size);
    double flops = tgl_gl_dispatch_flops(b);
    double per_elem = 2.0 * (double)icg * (double)tgl_gl_ceil_div(d->kernel_h, d->stride_h) *
                      (double)tgl_gl_ceil_div(d->kernel_w, d->stride_w);
    if (flops > 0 && (double)grid * per_elem > flops)
        grid = flops / per_elem >= (double)l->workgroup_size ? (size_t)(flops / per_elem) : l->workgroup_size;
    for (size_t n0 = 0; !st && n0 < d->batch; n0 += per) {
        size_t nb = d->batch - n0 < per ? d->batch - n0 : per, n = nb * img_out, pad_i, pad_o;
        bind[0] = tgl_gl_window(b, (tgl__view){c->in.buf, c->in.offset + n0 * img_in * F32}, nb * img_in * F32, 0,
                                &pad_i);
        bind[3] = tgl_gl_window(b, (tgl__view){c->out.buf, c->out.offset + n0 * img_out * F32}, n * F32, 1, &pad_o);
        tgl_gl_uniform_ui(b, prog, LOC_CTR_IN_OFF, (GLuint)(pad_i / F32));
        tgl_gl_uniform_ui(b, prog, LOC_CTR_OUT_OFF, (GLuint)(pad_o / F32));
        for (size_t i = 0; !st && i < n; i += grid) {
            size_t count = n - i < grid ? n - i : grid;
            tgl_gl_uniform_ui(b, prog, LOC_CTR_N, (GLuint)count);
            tgl_gl_uniform_ui(b, prog, LOC_CTR_START, (GLuint)i);
            st = tgl_gl_dispatch(b, prog, bind, 4, tgl_gl_ceil_div(count, l->workgroup_size));
        }
    }
    return st;
}

void tgl_gl_conv_transpose2d_variants(void (*fn)(void *ctx, const char *kernel, const char *defines), void *ctx)
{
    for (int bias = 0; bias < 2; bias++)
        tgl_gl_list_plan(fn, ctx, ctr_plan(bias));
}
