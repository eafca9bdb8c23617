/* GL driver for tgl_interpolate (glsl/conv/interpolate.comp): slabs of whole planes whose input
 * and output windows fit the SSBO block limit, each dispatched in grids of at most the device's
 * invocations. */
#include "gl_internal.h"

#define F32 sizeof(float)

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

static void set_pair(tgl_backend *b, GLuint prog, GLint loc, size_t h, size_t w)
{
    const size_t v[2] = {h, w};
    tgl_gl_uniform_dims(b, prog, loc, v, 2);
}

tgl_status tgl_gl_interpolate(tgl_backend *b, const tgl__interpolate *p)
{
    const tgl_gl_limits *l = &tgl_gl_of(b)->limits;
    const tgl_interpolate_desc *d = &p->d;
    const size_t most = (size_t)1 << 24; /* indices as exact f32s */
    if (d->in_h >= most || d->in_w >= most || d->out_h >= most || d->out_w >= most)
        return tgl__fail(b, TGL_ERR_UNSUPPORTED, "tgl_interpolate: a side of 2^24 pixels or more (%zu x %zu -> %zu x %zu)",
                         d->in_h, d->in_w, d->out_h, d->out_w);
    size_t in_plane = d->in_h * d->in_w, out_plane = d->out_h * d->out_w, max_elems = tgl_gl_max_window_elems(l, F32);
    if (in_plane > max_elems || out_plane > max_elems)
        return tgl__fail(b, TGL_ERR_UNSUPPORTED,
                         "tgl_interpolate: one plane of %zu x %zu -> %zu x %zu floats exceeds the SSBO block limit",
                         d->in_h, d->in_w, d->out_h, d->out_w);
    size_t planes = d->batch * d->channels, per = max_elems / in_plane;
    if (per > max_elems / out_plane)
        per = max_elems / out_plane;
    if (per > UINT32_MAX / out_plane) /* a slab's output elements counted in 32 bits */
        per = UINT32_MAX / out_plane;
    if (per > UINT32_MAX / in_plane) /* ... and its input offsets */
        per = UINT32_MAX / in_plane;
    GLuint prog;
    tgl_gl_plan plan = interp_plan(d->mode);
    plan.groups = tgl_gl_ceil_div((planes < per ? planes : per) * out_plane, l->workgroup_size);
    tgl_status st = tgl_gl_plan_program(b, &plan, &prog);
    if (st)
        return st;
    set_pair(b, prog, LOC_INTERP_IN, d->in_h, d->in_w);
    set_pair(b, prog, LOC_INTERP_OUT, d->out_h, d->out_w);
    tgl_gl_uniform_ui(b, prog, LOC_INTERP_ALIGN, (GLuint)d->align_corners);
    const GLfloat scales[2] = {p->scale_h, p->scale_w};
    tgl_gl_uniform_fv(b, prog, LOC_INTERP_SCALE, 2, scales);
    size_t grid = (size_t)((uint64_t)l->wg_count[0] * l->wg_count[1] * l->workgroup_size);
    for (size_t p0 = 0; !st && p0 < planes; p0 += per) {
        size_t np = planes - p0 < per ? planes - p0 : per, n = np * out_plane, pad_x, pad_y;
        tgl_gl_binding bind[2] = {
            tgl_gl_window(b, (tgl__view){p->in.buf, p->in.offset + p0 * in_plane * F32}, np * in_plane * F32, 0, &pad_x),
            tgl_gl_window(b, (tgl__view){p->out.buf, p->out.offset + p0 * out_plane * F32}, n * F32, 1, &pad_y),
        };
        tgl_gl_uniform_ui(b, prog, LOC_INTERP_X_OFF, (GLuint)(pad_x / F32));
        tgl_gl_uniform_ui(b, prog, LOC_INTERP_Y_OFF, (GLuint)(pad_y / F32));
        for (size_t i = 0; !st && i < n; i += grid) {
            size_t count = n - i < grid ? n - i : grid;
            tgl_gl_uniform_ui(b, prog, LOC_INTERP_N, (GLuint)count);
            tgl_gl_uniform_ui(b, prog, LOC_INTERP_START, (GLuint)i);
            st = tgl_gl_dispatch(b, prog, bind, 2, tgl_gl_ceil_div(count, l->workgroup_size));
        }
    }
    return st;
}

void tgl_gl_interpolate_variants(void (*fn)(void *ctx, const char *kernel, const char *defines), void *ctx)
{
    for (int mode = 0; mode < TGL_INTERP_MODE_COUNT; mode++)
        tgl_gl_list_plan(fn, ctx, interp_plan((tgl_interp_mode)mode));
}
