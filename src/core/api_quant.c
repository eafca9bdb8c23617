/* The weight formats (tensorgl.h, "weight formats"): tgl_matvec_t (and tgl_matvec_t_fused),
 * tgl_quantize and tgl_dequantize. Operands are checked and seen as matrices of rows x cols (tgl__matvec_t,
 * tgl__quant in internal.h), then the backend runs them. f16 and bf16 conversions in and out of
 * f32 are tgl_copy's (the descriptor element-wise path). */
#include "trace.h"
#include "validate.h"

#define WEIGHT_DTYPES (TGL__DT_FLOATS | TGL__DT(Q8_0) | TGL__DT(Q4_0))

/* t's leading dims (all but the last) as one run of rows: *rows of them, *row_stride elements
 * apart (dims of extent 1 take any stride). */
static tgl_status collapse_rows(tgl_backend *b, const char *arg, const tgl_tensor *t, size_t *rows,
                                int64_t *row_stride)
{
    *rows = 1;
    *row_stride = 0;
    int have = 0;
    for (size_t d = t->ndim - 1; d-- > 0;) {
        if (t->shape[d] == 1)
            continue;
        int64_t want = *row_stride * (int64_t)*rows; /* the stride that continues the run */
        if (have && t->strides[d] != want)
            return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT,
                             "%s: dims 0..%zu are not one run of rows (stride %lld at dim %zu; %lld expected): "
                             "tgl_copy it into a contiguous tensor first",
                             arg, t->ndim - 2, (long long)t->strides[d], d, (long long)want);
        if (!have)
            *row_stride = t->strides[d];
        have = 1;
        *rows *= t->shape[d];
    }
    return TGL_OK;
}

/* A block-format operand of `rows` rows of `cols` elements (cols a multiple of 32, stride 1;
 * row_stride whole blocks, not negative) resolved into v: v->view at block (0, 0), strides[0]
 * the blocks from one row to the next, span the blocks reached. */
static tgl_status resolve_blocks(tgl_backend *b, const char *arg, const tgl_tensor *t, size_t rows, size_t cols,
                                 int64_t row_stride, tgl__tensor_view *v)
{
    size_t block = tgl__unit_bytes(t->dtype);
    *v = (tgl__tensor_view){.dtype = t->dtype};
    if (cols % 32)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "%s: %s rows hold blocks of 32; its last dim is %zu", arg,
                         tgl_dtype_name(t->dtype), cols);
    if (t->strides[t->ndim - 1] != 1 && cols > 1)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "%s: %s needs stride 1 along its last dim, not %lld", arg,
                         tgl_dtype_name(t->dtype), (long long)t->strides[t->ndim - 1]);
    if (rows > 1 && (row_stride < 0 || row_stride % 32))
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT,
                         "%s: a row stride of %lld elements is not whole %s blocks (a multiple of 32, not negative)",
                         arg, (long long)row_stride, tgl_dtype_name(t->dtype));
    uint64_t step = rows > 1 ? (uint64_t)row_stride / 32 : cols / 32;
    if (rows > 1 && step < cols / 32)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "%s: rows %lld elements apart overlap rows of %zu", arg,
                         (long long)row_stride, cols);
    /* blocks reached: (rows - 1) * step + cols / 32, bounded by the allocation limit */
    if (rows > 1 && step > TGL__MAX_ALLOC_BYTES / block / (rows - 1))
        return tgl__fail(b, TGL_ERR_INVALID_POINTER, "%s: %zu rows %llu blocks apart reach past any allocation", arg,
                         rows, (unsigned long long)step);
    uint64_t blocks = (rows - 1) * step + cols / 32;
    if (blocks > TGL__MAX_ALLOC_BYTES / block)
        return tgl__fail(b, TGL_ERR_INVALID_POINTER, "%s: %llu blocks reach past any allocation", arg,
                         (unsigned long long)blocks);
    tgl_status st = tgl__resolve(b, arg, t->data, (size_t)blocks * block, &v->view);
    if (st)
        return st;
    if (v->view.offset % 2)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "%s: offset %zu is not 2-byte aligned (blocks start with a binary16)",
                         arg, v->view.offset);
    v->strides[0] = (int64_t)step;
    v->strides[1] = 1;
    v->span = (size_t)blocks;
    return TGL_OK;
}

/* Bytes from v's view that the operand reaches. */
static size_t view_bytes(const tgl__tensor_view *v)
{
    return v->span * tgl__unit_bytes(v->dtype);
}

/* A 2-D float operand [rows, cols] with the given strides. */
static tgl_status resolve_matrix(tgl_backend *b, const char *arg, const tgl_tensor *t, size_t rows, size_t cols,
                                 int64_t row_stride, int64_t col_stride, tgl__tensor_view *v)
{
    size_t shape[2] = {rows, cols};
    int64_t strides[2] = {rows > 1 ? row_stride : 0, cols > 1 ? col_stride : 0};
    return tgl__resolve_tensor(b, arg, t->data, t->dtype, 2, shape, strides, v);
}

/* Prompts: past TGL__THIN_ROWS rows of x, a backend's product (GL: a pass over W per 4 rows of x)
 * costs more than turning W into f32 once, slab by slab, and running the GEMM on x and the slab
 * (op(B) = slab^T), whose tiles reuse W's loads across rows of x. The slabs go through a
 * temporary of at most PREFILL_TEMP_BYTES (all of W where it fits: one GEMM keeps a GPU busy
 * where thin slabs would not); an f32 W with unit column stride is B as it is. The
 * CPU backend computes the same sums either way (decoded weights, double sums). */
#define PREFILL_TEMP_BYTES ((size_t)256 << 20)

/* x and y as GEMM operands: unit column strides, rows forward and apart. */
static int gemm_operands(const tgl__matvec_t *m)
{
    return m->n > TGL__THIN_ROWS && m->cols > 0 && m->x.strides[1] == 1 && m->y.strides[1] == 1 &&
           m->x.strides[0] >= (int64_t)m->cols && m->y.strides[0] >= (int64_t)m->rows;
}

/* y = x W^T as GEMMs: W (or its slabs in f32) as B transposed. */
static tgl_status prefill(tgl_backend *b, const tgl__matvec_t *m)
{
    tgl__gemm g = {.trans_b = 1, .m = m->n, .k = m->cols, .batch = 1, .alpha = 1.0f, .beta = 0.0f};
    if (m->epilogue) /* tgl_matvec_t_fused: alpha 1, its beta and epilogue */
        g = *m->epilogue;
    g.trans_a = 0, g.trans_b = 1, g.f16 = 0, g.m = m->n, g.k = m->cols, g.batch = 1;
    g.a = tgl__view_at_base(&m->x);
    g.lda = (size_t)m->x.strides[0];
    g.ldc = (size_t)m->y.strides[0];
    const tgl__view bias = g.bias;
    int direct = m->w.dtype == TGL_DTYPE_F32 && m->w.strides[1] == 1 && m->w.strides[0] >= (int64_t)m->cols;
    if (direct) {
        g.n = m->rows;
        g.b = tgl__view_at_base(&m->w);
        g.ldb = (size_t)m->w.strides[0];
        g.c = tgl__view_at_base(&m->y);
        return b->vt->gemm(b, &g);
    }
    size_t per = PREFILL_TEMP_BYTES / (m->cols * 4);
    if (per > m->rows)
        per = m->rows;
    if (per == 0)
        per = 1;
    void *temp;
    tgl_status st;
    /* where memory (or TGL_MAX_MEMORY) runs short, slabs of half as many rows; without room for
     * one row, the backend's own product */
    while ((st = tgl__temp_create(b, "tgl_matvec_t", per * m->cols * 4, &temp)) == TGL_ERR_OUT_OF_MEMORY && per > 1)
        per = (per + 1) / 2;
    if (st == TGL_ERR_OUT_OF_MEMORY)
        return b->vt->matvec_t(b, m);
    if (st)
        return st;
    for (size_t r0 = 0; r0 < m->rows && !st; r0 += per) {
        size_t nr = m->rows - r0 < per ? m->rows - r0 : per;
        tgl__tensor_view f = {.view = {temp, 0}, .dtype = TGL_DTYPE_F32, .span = nr * m->cols,
                              .strides = {(int64_t)m->cols, 1}};
        tgl__tensor_view w = tgl__sub_view(&m->w, r0, nr, 0, tgl__is_block(m->w.dtype) ? m->cols / 32 : m->cols);
        if (tgl__is_block(m->w.dtype)) {
            tgl__quant q = {.to_blocks = 0, .rows = nr, .cols = m->cols, .f = f, .q = w};
            st = b->vt->quantize(b, &q);
        } else { /* f32 with other strides, f16, bf16: tgl_copy's conversion */
            tgl__tew e = {.op = TGL__TEW_COPY, .nin = 1, .ndim = 2, .n = nr * m->cols, .shape = {nr, m->cols},
                          .out = f, .in = {w}};
            st = b->vt->tensor_ewise(b, &e);
        }
        if (st)
            break;
        g.n = nr;
        g.b = (tgl__view){temp, 0};
        g.ldb = m->cols;
        g.c = (tgl__view){m->y.view.buf, m->y.view.offset + (m->y.base + r0) * 4};
        if (bias.buf) /* the slab's columns of the bias */
            g.bias = (tgl__view){bias.buf, bias.offset + r0 * 4};
        st = b->vt->gemm(b, &g);
    }
    tgl__temp_destroy(b, temp, per * m->cols * 4);
    return st;
}

/* tgl_matvec_t's checks (the backend entered), then the product: on the backend, or as GEMMs
 * (prefill). epi: NULL, or tgl_matvec_t_fused's epilogue (alpha 1; its bias, a tensor, resolved
 * here). */
static tgl_status matvec_common(tgl_backend *b, const char *fn, const tgl_tensor *w, const tgl_tensor *x,
                                const tgl_tensor *y, tgl__gemm *epi, const tgl_tensor *bias)
{
    tgl_status st;
    size_t n_el;
    if ((st = tgl__tensor_shape(b, fn, "w", w, WEIGHT_DTYPES, &n_el)) ||
        (st = tgl__tensor_shape(b, fn, "x", x, TGL__DT(F32), &n_el)) ||
        (st = tgl__tensor_shape(b, fn, "y", y, TGL__DT(F32), &n_el)) ||
        (bias && (st = tgl__tensor_shape(b, fn, "bias", bias, TGL__DT(F32), &n_el))))
        return st;
    if (w->ndim != 2)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "w: %zu dims; a weight is [rows, cols]", w->ndim);
    if (x->ndim < 1 || x->ndim > 2 || y->ndim != x->ndim)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "x and y: %zu and %zu dims; [cols] and [rows], or [n, cols] and [n, rows]",
                         x->ndim, y->ndim);
    tgl__matvec_t m = {.rows = w->shape[0], .cols = w->shape[1], .n = x->ndim == 2 ? x->shape[0] : 1};
    size_t x_cols = x->shape[x->ndim - 1], y_rows = y->shape[y->ndim - 1];
    if (x_cols != m.cols)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "x: %zu columns; w has %zu", x_cols, m.cols);
    if (y_rows != m.rows)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "y: %zu elements per row; w has %zu rows", y_rows, m.rows);
    if (x->ndim == 2 && y->shape[0] != m.n)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "y: %zu rows; x has %zu", y->shape[0], m.n);
    if (bias && (bias->ndim != 1 || bias->shape[0] != m.rows || (m.rows > 1 && bias->strides[0] != 1)))
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "bias: [%zu] with stride 1 expected (one per row of w)", m.rows);
    if (!b->vt->matvec_t)
        return tgl__unsupported(b, fn);
    if (m.rows == 0 || m.n == 0)
        return TGL_OK;
    int64_t x_rs = x->ndim == 2 ? x->strides[0] : 0, y_rs = y->ndim == 2 ? y->strides[0] : 0;
    if ((st = resolve_matrix(b, "y", y, m.n, m.rows, y_rs, y->strides[y->ndim - 1], &m.y)) ||
        (st = tgl__check_unique(b, "y", 2, (size_t[]){m.n, m.rows}, m.y.strides)))
        return st;
    size_t y_bytes = view_bytes(&m.y);
    if (bias && ((st = tgl__resolve_array(b, "bias", bias->data, m.rows, sizeof(float), &epi->bias)) ||
                 (st = tgl__check_disjoint(b, "bias", epi->bias, m.rows * sizeof(float), m.y.view, y_bytes))))
        return st;
    /* an epilogue that changes nothing (beta 0, no bias, activation or gate) is none */
    if (epi && (epi->beta != 0.0f || tgl__gemm_has_epilogue(epi)))
        m.epilogue = epi;
    if (m.cols == 0 && !m.epilogue) { /* empty sums: y = 0, by tgl_fill_t's path (w and x reach nothing) */
        tgl__tew e = {.op = TGL__TEW_FILL, .nin = 1};
        const tgl_tensor *ins[TGL__TEW_MAX_INPUTS] = {y};
        static const char *const names[TGL__TEW_MAX_INPUTS] = {"y"};
        int empty = 0;
        if ((st = tgl__check_tew(b, TGL__FN_FILL_T, y, "y", ins, names, &e, &empty)) || empty)
            return st;
        e.value = tgl__fill_bits(TGL_DTYPE_F32, 0.0);
        return tgl__run_tew(b, &e, fn);
    }
    if (m.cols == 0) { /* the epilogue of empty sums: w and x reach nothing (no view) */
        m.w.dtype = w->dtype, m.x.dtype = TGL_DTYPE_F32;
        return tgl__leave(b, b->vt->matvec_t(b, &m));
    }
    if ((st = resolve_matrix(b, "x", x, m.n, m.cols, x_rs, x->strides[x->ndim - 1], &m.x)))
        return st;
    st = tgl__is_block(w->dtype) ? resolve_blocks(b, "w", w, m.rows, m.cols, w->strides[0], &m.w)
                            : resolve_matrix(b, "w", w, m.rows, m.cols, w->strides[0], w->strides[1], &m.w);
    if (st || (st = tgl__check_disjoint(b, "w", m.w.view, view_bytes(&m.w), m.y.view, y_bytes)) ||
        (st = tgl__check_disjoint(b, "x", m.x.view, view_bytes(&m.x), m.y.view, y_bytes)))
        return st;
    return tgl__leave(b, gemm_operands(&m) && b->vt->gemm && b->vt->quantize && b->vt->tensor_ewise
                             ? prefill(b, &m)
                             : b->vt->matvec_t(b, &m));
}

TGL_API tgl_status tgl_matvec_t(tgl_backend *b, const tgl_tensor *w, const tgl_tensor *x, const tgl_tensor *y)
{
    if (tgl__hooked(b))
        return TGL__HOOK(MATVEC_T);
    tgl_status st = tgl__enter(b);
    return st ? st : matvec_common(b, "tgl_matvec_t", w, x, y, NULL, NULL);
}

TGL_API tgl_status tgl_matvec_t_fused(tgl_backend *b, const tgl_tensor *w, const tgl_tensor *x, float beta,
                                      const tgl_tensor *bias, tgl_activation activation, float slope, int gate,
                                      const tgl_tensor *y)
{
    if (tgl__hooked(b))
        return TGL__HOOK(MATVEC_T_FUSED);
    tgl__gemm e = {.alpha = 1.0f, .beta = beta, .act = activation, .gate = gate, .slope = slope};
    tgl_status st = tgl__enter(b);
    if (st || (st = tgl__check_gemm_epilogue(b, &e, "y")))
        return st;
    return matvec_common(b, "tgl_matvec_t_fused", w, x, y, &e, bias);
}

TGL_API tgl_status tgl_gather_rows_t(tgl_backend *b, const tgl_tensor *table, const tgl_tensor *ids,
                                     const tgl_tensor *out)
{
    if (tgl__hooked(b))
        return TGL__HOOK(GATHER_ROWS_T);
    tgl_status st = tgl__enter(b);
    if (st)
        return st;
    size_t n_el;
    if ((st = tgl__tensor_shape(b, "tgl_gather_rows_t", "table", table, WEIGHT_DTYPES, &n_el)) ||
        (st = tgl__tensor_shape(b, "tgl_gather_rows_t", "ids", ids, TGL__DT(I32), &n_el)) ||
        (st = tgl__tensor_shape(b, "tgl_gather_rows_t", "out", out, TGL__DT(F32), &n_el)))
        return st;
    if (table->ndim != 2 || ids->ndim != 1 || out->ndim != 2)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT,
                         "tgl_gather_rows_t: table [rows, cols], ids [n] and out [n, cols]; they have %zu, %zu and %zu "
                         "dims", table->ndim, ids->ndim, out->ndim);
    tgl__gather_w g = {.rows = table->shape[0], .cols = table->shape[1], .n = ids->shape[0]};
    if (out->shape[0] != g.n || out->shape[1] != g.cols)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "out: [%zu, %zu]; [n, cols] is [%zu, %zu]", out->shape[0],
                         out->shape[1], g.n, g.cols);
    if (tgl__is_block(table->dtype) && g.cols % 32)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "table: %s rows hold blocks of 32; its last dim is %zu",
                         tgl_dtype_name(table->dtype), g.cols);
    if (!b->vt->gather_rows_t)
        return tgl__unsupported(b, "tgl_gather_rows_t");
    if (g.n == 0 || g.cols == 0)
        return TGL_OK;
    tgl__tew check;
    if ((st = tgl__index_check(b, ids, g.rows, 0, "table", &check)))
        return st;
    g.ids = check.in[0];
    st = tgl__is_block(table->dtype) ? resolve_blocks(b, "table", table, g.rows, g.cols, table->strides[0], &g.w)
                                     : resolve_matrix(b, "table", table, g.rows, g.cols, table->strides[0],
                                                      table->strides[1], &g.w);
    if (st || (st = resolve_matrix(b, "out", out, g.n, g.cols, out->strides[0], out->strides[1], &g.out)) ||
        (st = tgl__check_unique(b, "out", 2, (size_t[]){g.n, g.cols}, g.out.strides)))
        return st;
    size_t out_bytes = view_bytes(&g.out);
    if ((st = tgl__check_disjoint(b, "table", g.w.view, view_bytes(&g.w), g.out.view, out_bytes)) ||
        (st = tgl__check_disjoint(b, "ids", g.ids.view, view_bytes(&g.ids), g.out.view, out_bytes)))
        return st;
    uint64_t bad_pos = UINT64_MAX;
    int32_t bad_value = 0;
    if ((st = tgl__leave(b, b->vt->gather_rows_t(b, &check, &g, &bad_pos, &bad_value))) || bad_pos == UINT64_MAX)
        return st;
    return tgl__index_fail(b, &check, bad_pos, bad_value, 0, "table");
}

/* tgl_quantize (to_blocks 1) and tgl_dequantize: f is the f32 side, q the weight-format side. */
static tgl_status convert(tgl_backend *b, tgl__fn row, int to_blocks, const tgl_tensor *in, const tgl_tensor *out)
{
    const char *fn = tgl__fn_name(row);
    const tgl_tensor *f = to_blocks ? in : out, *q = to_blocks ? out : in;
    const char *f_arg = to_blocks ? "in" : "out", *q_arg = to_blocks ? "out" : "in";
    size_t n;
    tgl_status st;
    if (!in || !out)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "%s: NULL", in ? "out" : "in");
    if ((st = tgl__tensor_shape(b, fn, f_arg, f, TGL__DT(F32), &n)) ||
        (st = tgl__tensor_shape(b, fn, q_arg, q, TGL__DT(F16) | TGL__DT(BF16) | TGL__DT(Q8_0) | TGL__DT(Q4_0), &n)))
        return st;
    if (f->ndim != q->ndim)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "in and out: %zu and %zu dims; the shapes must be equal", in->ndim,
                         out->ndim);
    for (size_t d = 0; d < f->ndim; d++)
        if (f->shape[d] != q->shape[d])
            return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "in and out: dim %zu is %zu and %zu; the shapes must be equal",
                             d, in->shape[d], out->shape[d]);
    if (!tgl__is_block(q->dtype)) { /* f16, bf16: tgl_copy's conversion */
        tgl__tew e = {.op = TGL__TEW_COPY, .nin = 1};
        const tgl_tensor *ins[TGL__TEW_MAX_INPUTS] = {in};
        static const char *const names[TGL__TEW_MAX_INPUTS] = {"in"};
        int empty = 0;
        if ((st = tgl__check_tew(b, TGL__FN_COPY, out, "out", ins, names, &e, &empty)) || empty)
            return st;
        return tgl__run_tew(b, &e, fn);
    }
    if (q->ndim == 0)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "%s: a scalar; %s holds rows of 32", q_arg, tgl_dtype_name(q->dtype));
    if (!b->vt->quantize)
        return tgl__unsupported(b, fn);
    tgl__quant c = {.to_blocks = to_blocks, .cols = q->shape[q->ndim - 1]};
    int64_t f_rs, q_rs;
    if ((st = collapse_rows(b, f_arg, f, &c.rows, &f_rs)) || (st = collapse_rows(b, q_arg, q, &c.rows, &q_rs)))
        return st;
    if (c.cols % 32)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "%s: %s rows hold blocks of 32; its last dim is %zu", q_arg,
                         tgl_dtype_name(q->dtype), c.cols);
    if (n == 0)
        return TGL_OK;
    if ((st = resolve_blocks(b, q_arg, q, c.rows, c.cols, q_rs, &c.q)))
        return st;
    if ((st = resolve_matrix(b, f_arg, f, c.rows, c.cols, f_rs, f->strides[f->ndim - 1], &c.f)))
        return st;
    if (!to_blocks && (st = tgl__check_unique(b, "out", 2, (size_t[]){c.rows, c.cols}, c.f.strides)))
        return st;
    if ((st = tgl__check_disjoint(b, "in", to_blocks ? c.f.view : c.q.view, view_bytes(to_blocks ? &c.f : &c.q),
                                  to_blocks ? c.q.view : c.f.view, view_bytes(to_blocks ? &c.q : &c.f))))
        return st;
    return tgl__leave(b, b->vt->quantize(b, &c));
}

TGL_API tgl_status tgl_quantize(tgl_backend *b, const tgl_tensor *in, const tgl_tensor *out)
{
    if (tgl__hooked(b))
        return TGL__HOOK(QUANTIZE);
    tgl_status st = tgl__enter(b);
    return st ? st : convert(b, TGL__FN_QUANTIZE, 1, in, out);
}

TGL_API tgl_status tgl_dequantize(tgl_backend *b, const tgl_tensor *in, const tgl_tensor *out)
{
    if (tgl__hooked(b))
        return TGL__HOOK(DEQUANTIZE);
    tgl_status st = tgl__enter(b);
    return st ? st : convert(b, TGL__FN_DEQUANTIZE, 0, in, out);
}
