/* tgl_flip, tgl_roll, tgl_repeat and tgl_pad (tensorgl.h): each one's arguments and shapes
 * checked, then in and out whole (tgl__check_apart), and only then out written in pieces:
 * strided copies of views of in (and, for a constant pad, fills), each through the descriptor
 * element-wise path that tgl_copy and tgl_fill_t take. Views are made after the memory check,
 * so the offsets they add up are bounded by in's allocation. */
#include "trace.h"
#include "validate.h"

#include <stdio.h>

/* A copy of src into dst (src NULL: a fill of dst with the element `bits`). */
static tgl_status run_piece(tgl_backend *b, tgl__fn row, const tgl_tensor *dst, const tgl_tensor *src, uint32_t bits)
{
    tgl__tew e = {.op = src ? TGL__TEW_COPY : TGL__TEW_FILL, .nin = 1};
    const tgl_tensor *in[TGL__TEW_MAX_INPUTS] = {src ? src : dst}; /* a fill's input: dst, never read */
    static const char *const names[TGL__TEW_MAX_INPUTS] = {"in"};
    int empty = 0;
    tgl_status st = tgl__check_tew(b, row, dst, "out", in, names, &e, &empty);
    if (st || empty)
        return st;
    e.value = bits;
    return tgl__run_tew(b, &e, tgl__fn_name(row));
}

/* t moved by index[d] along each dim (indices below t's extents, or at them for an empty dim). */
static tgl_ptr address_of(const tgl_tensor *t, const size_t *index)
{
    int64_t at = 0;
    for (size_t d = 0; d < t->ndim; d++)
        at += (int64_t)index[d] * t->strides[d];
    return t->data + (tgl_ptr)(at * (int64_t)tgl_dtype_size(t->dtype));
}

/* The box of out at start with the given extents receives in seen from index `first` with
 * strides in->strides[d] * step[d] (step -1 walks backwards, 0 repeats the element), or, when
 * fill, the element `bits`. */
typedef struct piece {
    size_t start[TGL_MAX_DIMS], extent[TGL_MAX_DIMS], first[TGL_MAX_DIMS];
    int step[TGL_MAX_DIMS];
    int fill;
} piece;

static tgl_status run_box(tgl_backend *b, tgl__fn row, const tgl_tensor *in, const tgl_tensor *out, const piece *p,
                          uint32_t bits)
{
    tgl_tensor dst = *out, src = *in;
    for (size_t d = 0; d < out->ndim; d++) {
        if (p->extent[d] == 0)
            return TGL_OK;
        dst.shape[d] = src.shape[d] = p->extent[d];
        /* a dim of one index: its stride unchecked (any int64) and unused */
        src.strides[d] = in->shape[d] > 1 ? in->strides[d] * p->step[d] : 0;
    }
    dst.data = address_of(out, p->start);
    src.data = address_of(in, p->first);
    return run_piece(b, row, &dst, p->fill ? NULL : &src, bits);
}

/* in and out of one shape when same_shape, then (out not empty) both checked whole. *skip is
 * set when out is empty: nothing to write. */
static tgl_status check_operands(tgl_backend *b, tgl__fn row, const tgl_tensor *in, const tgl_tensor *out,
                                 int same_shape, int *skip)
{
    const char *fn = tgl__fn_name(row);
    unsigned dtypes = tgl__fn_dtypes(row);
    size_t n_in, n_out;
    tgl_status st = tgl__tensor_shape(b, fn, "in", in, dtypes, &n_in);
    if (st || (st = tgl__tensor_shape(b, fn, "out", out, dtypes, &n_out)))
        return st;
    if (in->ndim != out->ndim && same_shape)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "out: %zu dims where in has %zu", out->ndim, in->ndim);
    for (size_t d = 0; same_shape && d < in->ndim; d++)
        if (in->shape[d] != out->shape[d])
            return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "out: dim %zu is %zu where in's is %zu (%s keeps the shape)",
                             d, out->shape[d], in->shape[d], fn);
    *skip = n_out == 0;
    return TGL_OK;
}

/* After the shapes: in and out whole, and a backend that runs the pieces. */
static tgl_status check_memory(tgl_backend *b, tgl__fn row, const tgl_tensor *in, const tgl_tensor *out)
{
    tgl_status st = tgl__check_apart(b, tgl__fn_name(row), in, 1, "in", 0, out);
    if (!st && !b->vt->tensor_ewise)
        st = tgl__unsupported(b, tgl__fn_name(row));
    return st;
}

/* The identity piece over out's whole shape. */
static piece whole(const tgl_tensor *out)
{
    piece p = {.fill = 0};
    for (size_t d = 0; d < out->ndim; d++) {
        p.extent[d] = out->shape[d];
        p.step[d] = 1;
    }
    return p;
}

TGL_API tgl_status tgl_flip(tgl_backend *b, const tgl_tensor *in, const size_t *dims, size_t n_dims,
                            const tgl_tensor *out)
{
    if (tgl__hooked(b))
        return TGL__HOOK(FLIP);
    int skip = 0;
    tgl_status st = tgl__enter(b);
    if (st || (st = check_operands(b, TGL__FN_FLIP, in, out, 1, &skip)))
        return st;
    if (n_dims && !dims)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "dims: NULL with n_dims %zu", n_dims);
    if (n_dims > in->ndim)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "n_dims: %zu dims of a %zu-d tensor (none may be named twice)",
                         n_dims, in->ndim);
    piece p = whole(out);
    for (size_t k = 0; k < n_dims; k++) {
        size_t d = dims[k];
        if (d >= in->ndim)
            return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "dims[%zu]: %zu is not below ndim %zu", k, d, in->ndim);
        if (p.step[d] < 0)
            return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "dims[%zu]: dim %zu is named twice", k, d);
        p.step[d] = -1;
        p.first[d] = in->shape[d] ? in->shape[d] - 1 : 0;
    }
    if (skip || (st = check_memory(b, TGL__FN_FLIP, in, out)))
        return st;
    return run_box(b, TGL__FN_FLIP, in, out, &p, 0);
}

/* shift modulo n, in [0, n), for any int64 shift (no overflow). */
static size_t wrap_shift(int64_t shift, size_t n)
{
    if (shift >= 0)
        return (size_t)((uint64_t)shift % n);
    size_t back = (size_t)((uint64_t)(-(shift + 1)) % n); /* -shift - 1, mod n */
    return n - 1 - back;
}

TGL_API tgl_status tgl_roll(tgl_backend *b, const tgl_tensor *in, const int64_t *shifts, size_t n_shifts,
                            const size_t *dims, const tgl_tensor *out)
{
    if (tgl__hooked(b))
        return TGL__HOOK(ROLL);
    int skip = 0;
    tgl_status st = tgl__enter(b);
    if (st || (st = check_operands(b, TGL__FN_ROLL, in, out, 1, &skip)))
        return st;
    if (!shifts || !dims)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "%s: NULL", shifts ? "dims" : "shifts");
    if (n_shifts == 0 || n_shifts > TGL_MAX_DIMS)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT,
                         "n_shifts: %zu is not in 1..%d (to roll the flattened tensor, pass 1-d views)", n_shifts,
                         TGL_MAX_DIMS);
    size_t total[TGL_MAX_DIMS] = {0};
    for (size_t k = 0; k < n_shifts; k++) {
        size_t d = dims[k];
        if (d >= in->ndim)
            return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "dims[%zu]: %zu is not below ndim %zu", k, d, in->ndim);
        size_t n = in->shape[d];
        if (n) { /* (total + s) mod n without overflow: both below n */
            size_t s = wrap_shift(shifts[k], n);
            total[d] = total[d] >= n - s ? total[d] - (n - s) : total[d] + s;
        }
    }
    if (skip || (st = check_memory(b, TGL__FN_ROLL, in, out)))
        return st;
    /* Two pieces along each rolled dim, every combination: out [s, n) from in [0, n - s) and
     * out [0, s) from in [n - s, n). */
    size_t rolled[TGL_MAX_DIMS], nr = 0;
    for (size_t d = 0; d < in->ndim; d++)
        if (total[d])
            rolled[nr++] = d;
    for (unsigned mask = 0; mask < 1u << nr; mask++) {
        piece p = whole(out);
        for (size_t r = 0; r < nr; r++) {
            size_t d = rolled[r], n = in->shape[d], s = total[d];
            int wrapped = (mask >> r) & 1u;
            p.start[d] = wrapped ? 0 : s;
            p.extent[d] = wrapped ? s : n - s;
            p.first[d] = wrapped ? n - s : 0;
        }
        if ((st = run_box(b, TGL__FN_ROLL, in, out, &p, 0)))
            return st;
    }
    return TGL_OK;
}

TGL_API tgl_status tgl_repeat(tgl_backend *b, const tgl_tensor *in, const size_t *repeats, size_t n_repeats,
                              const tgl_tensor *out)
{
    if (tgl__hooked(b))
        return TGL__HOOK(REPEAT);
    int skip = 0;
    tgl_status st = tgl__enter(b);
    if (st || (st = check_operands(b, TGL__FN_REPEAT, in, out, 0, &skip)))
        return st;
    if (!repeats)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "repeats: NULL");
    if (n_repeats < in->ndim || n_repeats > TGL_MAX_DIMS)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "n_repeats: %zu is not in in's ndim %zu .. %d", n_repeats,
                         in->ndim, TGL_MAX_DIMS);
    if (out->ndim != n_repeats)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "out: %zu dims where n_repeats is %zu", out->ndim, n_repeats);
    /* in seen with out's ndim: leading dims of 1 */
    const size_t lead = n_repeats - in->ndim;
    tgl_tensor src = *in;
    src.ndim = n_repeats;
    for (size_t d = 0; d < n_repeats; d++) {
        src.shape[d] = d < lead ? 1 : in->shape[d - lead];
        src.strides[d] = d < lead ? 0 : in->strides[d - lead];
        size_t want;
        if ((st = tgl__mul(b, "out's shape", src.shape[d], repeats[d], &want)))
            return st;
        if (out->shape[d] != want)
            return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "out: dim %zu is %zu, not in's %zu times %zu repeats", d,
                             out->shape[d], src.shape[d], repeats[d]);
    }
    if (skip || (st = check_memory(b, TGL__FN_REPEAT, in, out)))
        return st;
    /* Each dim whose repeat and extent both pass 1 splits in two in the views (repeat, extent);
     * the outermost ones that do not fit in TGL_MAX_DIMS run as one copy per repeat index. */
    size_t splits = 0;
    for (size_t d = 0; d < n_repeats; d++)
        splits += repeats[d] > 1 && src.shape[d] > 1;
    size_t looped = n_repeats + splits > TGL_MAX_DIMS ? n_repeats + splits - TGL_MAX_DIMS : 0;
    size_t loop_dim[TGL_MAX_DIMS] = {0}, nl = 0;
    for (size_t d = 0; d < n_repeats && nl < looped; d++)
        if (repeats[d] > 1 && src.shape[d] > 1)
            loop_dim[nl++] = d;
    size_t rep[TGL_MAX_DIMS] = {0}; /* the looped dims' repeat indices, an odometer */
    for (;;) {
        tgl_tensor dst = {.dtype = out->dtype}, from = {.dtype = in->dtype};
        size_t at[TGL_MAX_DIMS] = {0};
        for (size_t d = 0, l = 0; d < n_repeats; d++) {
            int split = repeats[d] > 1 && src.shape[d] > 1;
            if (l < nl && loop_dim[l] == d) { /* one repeat: this copy's */
                at[d] = rep[l++] * src.shape[d];
                split = 0;
                dst.shape[dst.ndim] = src.shape[d];
            } else {
                dst.shape[dst.ndim] = split ? repeats[d] : out->shape[d];
            }
            if (split) { /* (repeat, extent): out strides (extent x stride, stride); in's repeat stride 0 */
                dst.strides[dst.ndim] = out->strides[d] * (int64_t)src.shape[d];
                from.shape[from.ndim] = 1;
                from.strides[from.ndim++] = 0;
                dst.ndim++;
                dst.shape[dst.ndim] = src.shape[d];
            }
            dst.strides[dst.ndim++] = out->strides[d];
            from.shape[from.ndim] = src.shape[d];
            from.strides[from.ndim++] = src.shape[d] > 1 ? src.strides[d] : 0;
        }
        dst.data = address_of(out, at);
        from.data = in->data;
        if ((st = run_piece(b, TGL__FN_REPEAT, &dst, &from, 0)))
            return st;
        size_t l = nl;
        while (l > 0 && ++rep[l - 1] == repeats[loop_dim[l - 1]])
            rep[--l] = 0;
        if (l == 0)
            return TGL_OK;
    }
}

/* One dim's blocks for tgl_pad: up to three (before, in's extent, after), each a piece's values
 * along that dim. */
typedef struct pad_dim {
    size_t n;
    size_t start[3], extent[3], first[3];
    int step[3], fill[3];
} pad_dim;

/* Dim d's blocks for widths before and after, or the call's failure when mode does not take
 * them or out's extent is not in's padded. */
static tgl_status pad_blocks(tgl_backend *b, tgl_pad_mode mode, const tgl_tensor *in, const tgl_tensor *out, size_t d,
                             int64_t before, int64_t after, pad_dim *o)
{
    static const char *const modes[TGL_PAD_MODE_COUNT] = {"constant", "reflect", "replicate", "circular"};
    const size_t n = in->shape[d];
    /* magnitudes without overflow: a width's growth or crop */
    size_t grow_b = before > 0 ? (size_t)before : 0, grow_a = after > 0 ? (size_t)after : 0;
    size_t crop_b = before < 0 ? (size_t)(-(before + 1)) + 1 : 0, crop_a = after < 0 ? (size_t)(-(after + 1)) + 1 : 0;
    if ((crop_b || crop_a) && mode != TGL_PAD_CONSTANT)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "pads: dim %zu's widths %lld, %lld: %s padding takes no negative width",
                         d, (long long)before, (long long)after, modes[mode]);
    if (crop_b > n || crop_a > n - crop_b)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "pads: dim %zu's widths %lld, %lld crop more than its extent %zu",
                         d, (long long)before, (long long)after, n);
    const size_t largest = grow_b > grow_a ? grow_b : grow_a;
    if (mode == TGL_PAD_REFLECT && largest && largest >= n)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT,
                         "pads: dim %zu's widths %lld, %lld: reflect padding takes widths below the extent %zu", d,
                         (long long)before, (long long)after, n);
    if (mode == TGL_PAD_REPLICATE && largest && n == 0)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "pads: dim %zu is empty: replicate padding has no edge to repeat",
                         d);
    if (mode == TGL_PAD_CIRCULAR && largest > n)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT,
                         "pads: dim %zu's widths %lld, %lld: circular padding takes widths up to the extent %zu", d,
                         (long long)before, (long long)after, n);
    const size_t kept = n - crop_b - crop_a;
    if (grow_b > SIZE_MAX - kept || grow_a > SIZE_MAX - kept - grow_b || out->shape[d] != kept + grow_b + grow_a)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "out: dim %zu is %zu, not in's %zu padded by %lld and %lld", d,
                         out->shape[d], n, (long long)before, (long long)after);
    *o = (pad_dim){.n = 3};
    /* before: constant fills; reflect reads in[before - j]; replicate in[0]; circular in[n - before + j] */
    o->extent[0] = grow_b;
    o->fill[0] = mode == TGL_PAD_CONSTANT;
    o->first[0] = mode == TGL_PAD_REFLECT ? grow_b : mode == TGL_PAD_CIRCULAR ? n - grow_b : 0;
    o->step[0] = mode == TGL_PAD_REFLECT ? -1 : mode == TGL_PAD_REPLICATE ? 0 : 1;
    /* in's kept elements */
    o->start[1] = grow_b;
    o->extent[1] = kept;
    o->first[1] = crop_b;
    o->step[1] = 1;
    /* after: reflect reads in[n - 2 - j]; replicate in[n - 1]; circular in[j] */
    o->start[2] = grow_b + kept;
    o->extent[2] = grow_a;
    o->fill[2] = mode == TGL_PAD_CONSTANT;
    o->first[2] = mode == TGL_PAD_REFLECT ? n - 2 : mode == TGL_PAD_REPLICATE ? n - 1 : 0;
    o->step[2] = mode == TGL_PAD_REFLECT ? -1 : mode == TGL_PAD_REPLICATE ? 0 : 1;
    if (!grow_b && !grow_a) { /* an unpadded dim: the kept block alone */
        o->n = 1;
        o->start[0] = grow_b;
        o->extent[0] = kept;
        o->first[0] = crop_b;
        o->step[0] = 1;
        o->fill[0] = 0;
    }
    return TGL_OK;
}

TGL_API tgl_status tgl_pad(tgl_backend *b, const tgl_tensor *in, const int64_t *pads, size_t n_pads, tgl_pad_mode mode,
                           double value, const tgl_tensor *out)
{
    if (tgl__hooked(b))
        return TGL__HOOK(PAD);
    int skip = 0;
    tgl_status st = tgl__enter(b);
    if (st || (st = check_operands(b, TGL__FN_PAD, in, out, 0, &skip)))
        return st;
    if ((unsigned)mode >= TGL_PAD_MODE_COUNT)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "mode: %d is not a tgl_pad_mode", (int)mode);
    if (n_pads && !pads)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "pads: NULL with n_pads %zu", n_pads);
    if (n_pads % 2 || n_pads > 2 * in->ndim)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "n_pads: %zu is not an even count up to 2 x ndim (%zu)", n_pads,
                         2 * in->ndim);
    if (out->ndim != in->ndim)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "out: %zu dims where in has %zu", out->ndim, in->ndim);
    pad_dim dims[TGL_MAX_DIMS] = {{0}};
    for (size_t d = 0; d < in->ndim; d++) {
        size_t from_last = in->ndim - 1 - d; /* pads run from the last dim backwards */
        int64_t before = 2 * from_last < n_pads ? pads[2 * from_last] : 0;
        int64_t after = 2 * from_last < n_pads ? pads[2 * from_last + 1] : 0;
        if ((st = pad_blocks(b, mode, in, out, d, before, after, &dims[d])))
            return st;
    }
    if (skip || (st = check_memory(b, TGL__FN_PAD, in, out)))
        return st;
    const uint32_t bits = tgl__fill_bits(out->dtype, value);
    size_t pick[TGL_MAX_DIMS] = {0}; /* each dim's block, an odometer over every combination */
    for (;;) {
        piece p = {.fill = 0};
        for (size_t d = 0; d < in->ndim; d++) {
            const pad_dim *x = &dims[d];
            size_t j = pick[d];
            p.start[d] = x->start[j];
            p.extent[d] = x->extent[j];
            p.first[d] = x->first[j];
            p.step[d] = x->step[j];
            p.fill |= x->fill[j];
        }
        if ((st = run_box(b, TGL__FN_PAD, in, out, &p, bits)))
            return st;
        size_t d = in->ndim;
        while (d > 0 && ++pick[d - 1] == dims[d - 1].n)
            pick[--d] = 0;
        if (d == 0)
            return TGL_OK;
    }
}
