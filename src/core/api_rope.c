/* tgl_rope_t: checks, the rotary frequencies (one place for both backends), then the backend. */
#include "trace.h"
#include "validate.h"

#include <math.h>
#include <stdlib.h>

/* f32 `base ** e` as PyTorch's float32 pow gives it: the exact power rounded once (a
 * correctly rounded powf; PyTorch's own is within an ulp of it). */
static float pow_f32(float base, float e)
{
    return (float)pow((double)base, (double)e);
}

/* The rotary_dim / 2 frequencies of d as Hugging Face's rope_init functions compute inv_freq:
 * float32 tensor arithmetic, each operation rounded to f32 in its order (Python's floats, such
 * as NTK's base and Llama 3's wavelength bounds, in double, then taken as f32 by the tensor op),
 * then divided by freq_factors[i] where given (ggml's). Every step its own statement, so no
 * compiler contracts two into one rounding. Returns the number of them that are finite (all
 * unless a factor scaled one past FLT_MAX). */
static size_t frequencies(const tgl_rope_desc *d, size_t rot, float *freq)
{
    double base = d->theta; /* Python float arithmetic */
    if (d->scaling == TGL_ROPE_SCALE_NTK)
        base *= pow((double)d->factor, (double)rot / (double)(rot - 2));
    const float base32 = (float)base, factor = d->factor;
    for (size_t i = 0; i < rot / 2; i++) {
        float e = (float)(2 * i) / (float)rot; /* arange(0, dim, 2).float() / dim */
        float p = pow_f32(base32, e);
        float f = 1.0f / p; /* inv_freq */
        if (d->scaling == TGL_ROPE_SCALE_LINEAR) {
            f = f / factor;
        } else if (d->scaling == TGL_ROPE_SCALE_LLAMA3) {
            double orig = (double)d->original_context, lo = d->low_freq_factor, hi = d->high_freq_factor;
            float low_wavelen = (float)(orig / lo), high_wavelen = (float)(orig / hi);
            float wavelen = (float)6.283185307179586 / f; /* 2 * math.pi / inv_freq */
            float scaled = wavelen > low_wavelen ? f / factor : f;
            float ratio = (float)orig / wavelen;
            float smooth = (ratio - (float)lo) / (float)(hi - lo);
            float keep = 1.0f - smooth;
            float part = keep * scaled;
            part = part / factor;
            float rest = smooth * scaled;
            float smoothed = part + rest; /* (1 - smooth) * inv_freq_llama / factor + smooth * inv_freq_llama */
            int medium = !(wavelen < high_wavelen) && !(wavelen > low_wavelen);
            f = medium ? smoothed : scaled;
        }
        if (d->freq_factors)
            f = f / d->freq_factors[i];
        freq[i] = f;
        if (!isfinite(freq[i]))
            return i;
    }
    return rot / 2;
}

static tgl_status check_desc(tgl_backend *b, const tgl_rope_desc *d, size_t head_dim, size_t *rot)
{
    if ((unsigned)d->mode > TGL_ROPE_INTERLEAVED)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "d->mode: %d is not a tgl_rope_mode", (int)d->mode);
    if (!(isfinite(d->theta) && d->theta > 1.0f))
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "d->theta: %g is not finite and > 1", (double)d->theta);
    *rot = d->rotary_dim ? d->rotary_dim : head_dim;
    if (*rot % 2 || *rot > head_dim)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "d->rotary_dim: %zu is odd or past head_dim %zu", d->rotary_dim,
                         head_dim);
    if ((unsigned)d->scaling > TGL_ROPE_SCALE_LLAMA3)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "d->scaling: %d is not a tgl_rope_scaling", (int)d->scaling);
    if (d->scaling != TGL_ROPE_SCALE_NONE && !(isfinite(d->factor) && d->factor > 0.0f))
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "d->factor: %g is not finite and > 0", (double)d->factor);
    if (d->scaling == TGL_ROPE_SCALE_NTK && *rot < 4)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "d->scaling: NTK scaling needs a rotary_dim of 4 or more, not %zu",
                         *rot);
    if (d->scaling == TGL_ROPE_SCALE_LLAMA3 &&
        !(isfinite(d->low_freq_factor) && isfinite(d->high_freq_factor) && d->low_freq_factor > 0.0f &&
          d->high_freq_factor > d->low_freq_factor && d->original_context > 0))
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT,
                         "d: Llama 3 scaling needs 0 < low_freq_factor (%g) < high_freq_factor (%g) and an "
                         "original_context (%zu) > 0",
                         (double)d->low_freq_factor, (double)d->high_freq_factor, d->original_context);
    for (size_t i = 0; d->freq_factors && i < *rot / 2; i++)
        if (!(isfinite(d->freq_factors[i]) && d->freq_factors[i] > 0.0f))
            return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "d->freq_factors[%zu]: %g is not finite and > 0", i,
                             (double)d->freq_factors[i]);
    return TGL_OK;
}

TGL_API tgl_status tgl_rope_t(tgl_backend *b, const tgl_tensor *in, const tgl_tensor *out, const tgl_tensor *positions,
                              const tgl_rope_desc *d)
{
    if (tgl__hooked(b))
        return TGL__HOOK(ROPE_T);
    tgl_status st = tgl__enter(b);
    if (st)
        return st;
    if (!in || !out || !d)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "tgl_rope_t: %s is NULL", !in ? "in" : !out ? "out" : "d");
    size_t n_in, n_out, n_pos = 0, rot = 0;
    if ((st = tgl__tensor_shape(b, "tgl_rope_t", "in", in, TGL__DT(F32), &n_in)) ||
        (st = tgl__tensor_shape(b, "tgl_rope_t", "out", out, TGL__DT(F32), &n_out)) ||
        (positions && (st = tgl__tensor_shape(b, "tgl_rope_t", "positions", positions, TGL__DT(I32), &n_pos))))
        return st;
    if (in->ndim != 4 || out->ndim != 4)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "tgl_rope_t: in and out are [batch, seq, heads, head_dim]; they "
                         "have %zu and %zu dims", in->ndim, out->ndim);
    for (size_t k = 0; k < 4; k++)
        if (in->shape[k] != out->shape[k])
            return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "tgl_rope_t: out's dim %zu is %zu, in's %zu", k,
                             out->shape[k], in->shape[k]);
    size_t batch = in->shape[0], seq = in->shape[1], head_dim = in->shape[3];
    if (head_dim % 2)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "tgl_rope_t: head_dim %zu is odd", head_dim);
    if ((st = check_desc(b, d, head_dim, &rot)))
        return st;
    if (positions && (positions->ndim != 2 || positions->shape[0] != batch || positions->shape[1] != seq))
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "tgl_rope_t: positions is [batch, seq] = [%zu, %zu]", batch, seq);
    if (!positions && (d->pos_offset > UINT32_MAX || seq > UINT32_MAX - d->pos_offset))
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "tgl_rope_t: positions up to %zu + %zu pass 2^32", d->pos_offset,
                         seq);
    if (n_in == 0)
        return TGL_OK;
    if ((in->strides[3] != 1 || out->strides[3] != 1))
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "tgl_rope_t: %s has stride %lld along head_dim; 1 is needed",
                         in->strides[3] != 1 ? "in" : "out",
                         (long long)(in->strides[3] != 1 ? in->strides[3] : out->strides[3]));
    tgl__rope_t r = {.batch = batch, .seq = seq, .heads = in->shape[2], .head_dim = head_dim, .rotary_dim = rot,
                     .pos_offset = d->pos_offset, .mode = d->mode, .has_pos = positions != NULL};
    if ((st = tgl__resolve_tensor(b, "in", in->data, in->dtype, 4, in->shape, in->strides, &r.x)) ||
        (st = tgl__resolve_tensor(b, "out", out->data, out->dtype, 4, out->shape, out->strides, &r.y)) ||
        (st = tgl__check_unique(b, "out", 4, out->shape, out->strides)) ||
        (positions && (st = tgl__resolve_tensor(b, "positions", positions->data, positions->dtype, 2,
                                                positions->shape, positions->strides, &r.pos))))
        return st;
    if (!tgl__same_tensor(in, out) &&
        (st = tgl__check_disjoint(b, "in", r.x.view, r.x.span * sizeof(float), r.y.view, r.y.span * sizeof(float))))
        return st;
    if (positions && (st = tgl__check_disjoint(b, "positions", r.pos.view, r.pos.span * sizeof(int32_t), r.y.view,
                                               r.y.span * sizeof(float))))
        return st;
    if (!b->vt->rope_t)
        return tgl__unsupported(b, "tgl_rope_t");
    float *freq = malloc((rot / 2 ? rot / 2 : 1) * sizeof *freq);
    if (!freq)
        return tgl__fail(b, TGL_ERR_OUT_OF_MEMORY, "tgl_rope_t: no host memory for %zu frequencies", rot / 2);
    size_t finite = frequencies(d, rot, freq);
    if (finite < rot / 2) {
        free(freq);
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "tgl_rope_t: frequency %zu, scaled, is past f32's range",
                         finite);
    }
    r.freq = freq;
    st = b->vt->rope_t(b, &r);
    free(freq);
    return tgl__leave(b, st);
}
