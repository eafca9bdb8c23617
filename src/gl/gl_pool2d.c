/* GL driver for tgl_pool2d, tgl_max_pool2d_indices and tgl_adaptive_pool2d (glsl/conv/pool2d.comp):
 * slabs of whole planes whose input and output (and indices) windows fit the SSBO block limit,
 * each dispatched in grids of at most the device's invocations. */
#include "gl_internal.h"

#define F32 sizeof(float)

typedef struct pool_flags {
    uint32_t kind, adaptive, indices;
} pool_flags;
static const char *const pool_kinds[2] = {"MAX", "AVG"};
static const tgl_gl_def pool_defs[] = {TGL_GL_NAME(pool_flags, kind, pool_kinds),
                                       TGL_GL_FLAG(pool_flags, adaptive, "ADAPTIVE"),
                                       TGL_GL_FLAG(pool_flags, indices, "INDICES")};

/* indices: max pooling (not adaptive) that writes the taken taps' indices too */
static tgl_gl_plan pool_plan(tgl_pool_kind kind, int adaptive, int indices)
{
    pool_flags f = {(uint32_t)kind, (uint32_t)(adaptive != 0), (uint32_t)(indices != 0)};
    tgl_gl_plan p = {.op = adaptive ? "tgl_adaptive_pool2d" : indices ? "tgl_max_pool2d_indices" : "tgl_pool2d",
                     .why = kind == TGL_POOL_MAX ? "max: an invocation per output element, its window's taps"
                                                 : "average: an invocation per output element, its window's taps"};
    tgl_gl_plan_kernel(&p, "conv/pool2d", TGL_GL_DEFS(pool_defs), &f);
    return p;
}

static void set_pair(tgl_backend *b, GLuint prog, GLint loc, size_t h, size_t w)
{
    const size_t v[2] = {h, w};
    tgl_gl_uniform_dims(b, prog, loc, v, 2);
}

size_t tgl_gl_slab_planes(const tgl_gl_limits *l, size_t in_plane, size_t out_plane)
{
    size_t max_elems = tgl_gl_max_window_elems(l, F32);
    if (in_plane > max_elems || out_plane > max_elems)
        return 0;
    size_t per = max_elems / in_plane;
    if (per > max_elems / out_plane)
        per = max_elems / out_plane;
    if (per > UINT32_MAX / out_plane) /* a slab's output elements counted in 32 bits */
        per = UINT32_MAX / out_plane;
    if (per > UINT32_MAX / in_plane) /* ... and its input offsets */
        per = UINT32_MAX / in_plane;
    return per;
}

tgl_status tgl_gl_run_slabs(tgl_backend *b, GLuint prog, const tgl_gl_slabs *s)
{
    const tgl_gl_limits *l = &tgl_gl_of(b)->limits;
    int indices = s->indices.buf != NULL;
    size_t grid = (size_t)((uint64_t)l->wg_count[0] * l->wg_count[1] * l->workgroup_size);
    tgl_status st = TGL_OK;
    for (size_t p0 = 0; !st && p0 < s->planes; p0 += s->per) {
        size_t np = s->planes - p0 < s->per ? s->planes - p0 : s->per, n = np * s->out_plane, pad_x, pad_y, pad_i = 0;
        tgl_gl_binding bind[3] = {
            tgl_gl_window(b, (tgl__view){s->in.buf, s->in.offset + p0 * s->in_plane * F32}, np * s->in_plane * F32, 0,
                          &pad_x),
            tgl_gl_window(b, (tgl__view){s->out.buf, s->out.offset + p0 * s->out_plane * F32}, n * F32, 1, &pad_y),
        };
        if (indices) { /* i32s laid out as the output */
            bind[2] = tgl_gl_window(b, (tgl__view){s->indices.buf, s->indices.offset + p0 * s->out_plane * 4}, n * 4, 1,
                                    &pad_i);
            tgl_gl_uniform_ui(b, prog, LOC_POOL_I_OFF, (GLuint)(pad_i / 4));
        }
        tgl_gl_uniform_ui(b, prog, LOC_POOL_X_OFF, (GLuint)(pad_x / F32));
        tgl_gl_uniform_ui(b, prog, LOC_POOL_Y_OFF, (GLuint)(pad_y / F32));
        for (size_t i = 0; !st && i < n; i += grid) {
            size_t count = n - i < grid ? n - i : grid;
            tgl_gl_uniform_ui(b, prog, LOC_POOL_N, (GLuint)count);
            tgl_gl_uniform_ui(b, prog, LOC_POOL_START, (GLuint)i);
            st = tgl_gl_dispatch(b, prog, bind, indices ? 3 : 2, tgl_gl_ceil_div(count, l->workgroup_size));
        }
    }
    return st;
}

/* Either pooling over slabs of whole planes (the checks on extents done by the caller). */
static tgl_status run_pool(tgl_backend *b, const tgl__pool2d *p, int adaptive)
{
    const tgl_gl_limits *l = &tgl_gl_of(b)->limits;
    const tgl_pool2d_desc *d = &p->d;
    tgl_gl_slabs s = {.in = p->in, .out = p->out, .indices = p->indices, .planes = d->batch * d->channels,
                      .in_plane = d->in_h * d->in_w, .out_plane = p->out_h * p->out_w};
    s.per = tgl_gl_slab_planes(l, s.in_plane, s.out_plane);
    if (!s.per)
        return tgl__fail(b, TGL_ERR_UNSUPPORTED,
                         "%s: one plane (%zu x %zu floats in, %zu x %zu out) exceeds the SSBO block limit",
                         adaptive ? "tgl_adaptive_pool2d" : "tgl_pool2d", d->in_h, d->in_w, p->out_h, p->out_w);
    GLuint prog;
    tgl_gl_plan plan = pool_plan(d->kind, adaptive, p->indices.buf != NULL);
    plan.groups = tgl_gl_ceil_div((s.planes < s.per ? s.planes : s.per) * s.out_plane, l->workgroup_size);
    tgl_status st = tgl_gl_plan_program(b, &plan, &prog);
    if (st)
        return st;
    set_pair(b, prog, LOC_POOL_IN, d->in_h, d->in_w);
    set_pair(b, prog, LOC_POOL_KERNEL, d->kernel_h, d->kernel_w);
    set_pair(b, prog, LOC_POOL_STRIDE, d->stride_h, d->stride_w);
    set_pair(b, prog, LOC_POOL_PAD, d->pad_h, d->pad_w);
    set_pair(b, prog, LOC_POOL_DILATION, d->dilation_h, d->dilation_w);
    set_pair(b, prog, LOC_POOL_OUT, p->out_h, p->out_w);
    tgl_gl_uniform_ui(b, prog, LOC_POOL_INCLUDE_PAD, (GLuint)(d->count_include_pad != 0));
    return tgl_gl_run_slabs(b, prog, &s);
}

tgl_status tgl_gl_pool2d(tgl_backend *b, const tgl__pool2d *p)
{
    const tgl_pool2d_desc *d = &p->d;
    /* int coordinates: every extent, and the window's reach, below 2^30 */
    const size_t most = (size_t)1 << 30;
    if (d->in_h >= most || d->in_w >= most || d->kernel_h * d->dilation_h >= most ||
        d->kernel_w * d->dilation_w >= most || d->stride_h * p->out_h >= most || d->stride_w * p->out_w >= most)
        return tgl__fail(b, TGL_ERR_UNSUPPORTED, "tgl_pool2d: a spatial extent past 2^30");
    return run_pool(b, p, 0);
}

tgl_status tgl_gl_adaptive_pool2d(tgl_backend *b, const tgl__pool2d *p)
{
    const tgl_pool2d_desc *d = &p->d;
    /* the windows' bounds in uint: (o + 1) * in below 2^32 along each axis */
    if (d->in_h > UINT32_MAX / p->out_h || d->in_w > UINT32_MAX / p->out_w)
        return tgl__fail(b, TGL_ERR_UNSUPPORTED,
                         "tgl_adaptive_pool2d: %zu x %zu -> %zu x %zu: an input side times its output side past 2^32",
                         d->in_h, d->in_w, p->out_h, p->out_w);
    return run_pool(b, p, 1);
}

void tgl_gl_pool2d_variants(void (*fn)(void *ctx, const char *kernel, const char *defines), void *ctx)
{
    for (int adaptive = 0; adaptive < 2; adaptive++) {
        tgl_gl_list_plan(fn, ctx, pool_plan(TGL_POOL_MAX, adaptive, 0));
        tgl_gl_list_plan(fn, ctx, pool_plan(TGL_POOL_AVG, adaptive, 0));
    }
    tgl_gl_list_plan(fn, ctx, pool_plan(TGL_POOL_MAX, 0, 1));
}
