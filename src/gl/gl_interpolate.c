/* GL driver for tgl_interpolate (glsl/conv/interpolate.comp): slabs of whole planes whose input
 * and output windows fit the SSBO block limit, through the pooling kernels' slab runner. */
#include "gl_internal.h"


typedef struct interp_flags {
    uint32_t mode;
} interp_flags;
static const char *const interp_modes[TGL_INTERP_MODE_COUNT] = {"NEAREST", "NEAREST_EXACT", "BILINEAR", "BICUBIC"};
static const tgl_gl_def interp_defs[] = {TGL_GL_NAME(interp_flags, mode, interp_modes)};

static tgl_gl_plan interp_plan(tgl_interp_mode mode)
{
    interp_flags f = {(uint32_t)mode};
    tgl_gl_plan p = {.op = "tgl_interpolate", .why = "an invocation per output pixel, its taps computed in place"};
    tgl_gl_plan_kernel(&p, "conv/interpolate", TGL_GL_DEFS(interp_defs), &f);
    return p;
}

/* interpolate.comp reads its counts and offsets where pool2d.comp does (tgl_gl_run_slabs) */
_Static_assert(LOC_INTERP_N == LOC_POOL_N && LOC_INTERP_START == LOC_POOL_START && LOC_INTERP_X_OFF == LOC_POOL_X_OFF &&
                   LOC_INTERP_Y_OFF == LOC_POOL_Y_OFF,
               "interpolate.comp's slab locations are pool2d.comp's");

tgl_status tgl_gl_interpolate(tgl_backend *b, const tgl__interpolate *p)
{
    const tgl_gl_limits *l = &tgl_gl_of(b)->limits;
    const tgl_interpolate_desc *d = &p->d;
    const size_t most = (size_t)1 << 24; /* indices as exact f32s */
    if (d->in_h >= most || d->in_w >= most || d->out_h >= most || d->out_w >= most)
        return tgl__fail(b, TGL_ERR_UNSUPPORTED, "tgl_interpolate: a side of 2^24 pixels or more (%zu x %zu -> %zu x %zu)",
                         d->in_h, d->in_w, d->out_h, d->out_w);
    tgl_gl_slabs s = {.in = p->in, .out = p->out, .planes = d->batch * d->channels, .in_plane = d->in_h * d->in_w,
                      .out_plane = d->out_h * d->out_w};
    s.per = tgl_gl_slab_planes(l, s.in_plane, s.out_plane);
    if (!s.per)
        return tgl__fail(b, TGL_ERR_UNSUPPORTED,
                         "tgl_interpolate: one plane of %zu x %zu -> %zu x %zu floats exceeds the SSBO block limit",
                         d->in_h, d->in_w, d->out_h, d->out_w);
    GLuint prog;
    tgl_gl_plan plan = interp_plan(d->mode);
    plan.groups = tgl_gl_ceil_div((s.planes < s.per ? s.planes : s.per) * s.out_plane, l->workgroup_size);
    tgl_status st = tgl_gl_plan_program(b, &plan, &prog);
    if (st)
        return st;
    const size_t in[2] = {d->in_h, d->in_w}, out[2] = {d->out_h, d->out_w};
    tgl_gl_uniform_dims(b, prog, LOC_INTERP_IN, in, 2);
    tgl_gl_uniform_dims(b, prog, LOC_INTERP_OUT, out, 2);
    tgl_gl_uniform_ui(b, prog, LOC_INTERP_ALIGN, (GLuint)d->align_corners);
    const GLfloat scales[2] = {p->scale_h, p->scale_w};
    tgl_gl_uniform_fv(b, prog, LOC_INTERP_SCALE, 2, scales);
    return tgl_gl_run_slabs(b, prog, &s);
}

void tgl_gl_interpolate_variants(void (*fn)(void *ctx, const char *kernel, const char *defines), void *ctx)
{
    for (int mode = 0; mode < TGL_INTERP_MODE_COUNT; mode++)
        tgl_gl_list_plan(fn, ctx, interp_plan((tgl_interp_mode)mode));
}
