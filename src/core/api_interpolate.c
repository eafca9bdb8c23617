/* tgl_interpolate: checks, the source index's f32 scales (PyTorch's area_pixel_compute_scale),
 * then the backend. */
#include "trace.h"
#include "validate.h"

#include <float.h>
#include <math.h>

/* One axis's scale, in f32 as PyTorch computes it: align_corners ? (in - 1) / (out - 1) (0 for an
 * output of one) : scale > 0 ? (float)(1 / scale) : in / out (an f32 division); with
 * nearest_sizes, 1 for an axis that keeps its size and 0.5 for one that doubles (below). */
static float axis_scale(size_t in, size_t out, int align_corners, double scale, int nearest_sizes)
{
    if (nearest_sizes && (out == in || out == 2 * in))
        return out == in ? 1.0f : 0.5f;
    if (align_corners)
        return out > 1 ? (float)(in - 1) / (float)(out - 1) : 0.0f;
    return scale > 0.0 ? (float)(1.0 / scale) : (float)in / (float)out;
}

static tgl_status check_scale(tgl_backend *b, const char *name, double scale)
{
    if (!isfinite(scale) || scale < 0.0 || (scale > 0.0 && !(1.0 / scale <= FLT_MAX)))
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT,
                         "%s: %g; 0 (from the sizes) or a finite positive scale whose inverse is a finite f32", name,
                         scale);
    return TGL_OK;
}

static tgl_status interpolate(tgl_backend *b, const tgl_interpolate_desc *desc, tgl_ptr input, tgl_ptr output)
{
    if (!desc)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "desc: NULL");
    tgl__interpolate p = {.d = *desc};
    const tgl_interpolate_desc *d = &p.d;
    tgl_status st;
    if ((unsigned)d->mode >= TGL_INTERP_MODE_COUNT)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "mode: %d is not a tgl_interp_mode", (int)d->mode);
    if (d->align_corners != 0 && d->align_corners != 1)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "align_corners: %d is neither 0 nor 1", d->align_corners);
    if (d->align_corners && d->mode <= TGL_INTERP_NEAREST_EXACT)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT,
                         "align_corners: the nearest modes take none (PyTorch refuses it too); 0 is wanted");
    if (d->in_h == 0 || d->in_w == 0 || d->out_h == 0 || d->out_w == 0)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "desc: input %zu x %zu, output %zu x %zu; none may be empty",
                         d->in_h, d->in_w, d->out_h, d->out_w);
    if ((st = check_scale(b, "scale_h", d->scale_h)) || (st = check_scale(b, "scale_w", d->scale_w)))
        return st;
    if (d->batch == 0 || d->channels == 0)
        return TGL_OK;
    size_t n_in, n_out;
    const size_t F = sizeof(float);
    if ((st = tgl__count4(b, "input", d->batch, d->channels, d->in_h, d->in_w, &n_in)) ||
        (st = tgl__count4(b, "output", d->batch, d->channels, d->out_h, d->out_w, &n_out)) ||
        (st = tgl__resolve_array(b, "input", input, n_in, F, &p.in)) ||
        (st = tgl__resolve_array(b, "output", output, n_out, F, &p.out)) ||
        (st = tgl__check_disjoint(b, "input", p.in, n_in * F, p.out, n_out * F)))
        return st;
    /* PyTorch's CPU upsample_nearest2d takes its vectorized kernel where the output's sides sum to
     * 128 or less (_use_vectorized_kernel_cond_2d, for NCHW input), whose nearest_idx copies an
     * axis that keeps its size and halves one that doubles, whatever the scale: the scales 1 and
     * 0.5, whose floor(s * o) are exactly o and o / 2 on both backends */
    int nearest_sizes = d->mode == TGL_INTERP_NEAREST && d->out_h + d->out_w <= 128;
    p.scale_h = axis_scale(d->in_h, d->out_h, d->align_corners, d->scale_h, nearest_sizes);
    p.scale_w = axis_scale(d->in_w, d->out_w, d->align_corners, d->scale_w, nearest_sizes);
    if (!b->vt->interpolate)
        return tgl__unsupported(b, "tgl_interpolate");
    return b->vt->interpolate(b, &p);
}

TGL_API tgl_status tgl_interpolate(tgl_backend *b, const tgl_interpolate_desc *desc, tgl_ptr input, tgl_ptr output)
{
    if (tgl__hooked(b))
        return TGL__HOOK(INTERPOLATE);
    tgl_status st = tgl__enter(b);
    return st ? st : tgl__leave(b, interpolate(b, desc, input, output));
}
