/* The profiler's cost models, one per registry row (op_registry.h names it): the floating-point
 * operations and bytes a call moves, estimated from its arguments, for the GFLOP/s and GB/s
 * columns of TGL_PROFILE. Each takes its row's argument struct, so it reads arguments by name. */
#include "calls.h"

#include <math.h>

/* Rows whose work is not worth a figure (allocation, synchronization). */
#define cost_none(s, o) ((void)(s), (void)(o))

typedef struct cost {
    double flops, bytes;
} cost;

static double prod(const size_t *shape, size_t ndim)
{
    double n = shape ? 1.0 : 0.0;
    for (size_t i = 0; shape && i < ndim && i < TGL_MAX_DIMS; i++)
        n *= (double)shape[i];
    return n;
}

static void cost_copy_htod(const tgl__args_COPY_HTOD *a, cost *o) { o->bytes = (double)a->bytes; }
static void cost_copy_dtoh(const tgl__args_COPY_DTOH *a, cost *o) { o->bytes = (double)a->bytes; }
static void cost_copy_dtod(const tgl__args_COPY_DTOD *a, cost *o) { o->bytes = 2.0 * (double)a->bytes; }

static void cost_unary(const tgl__args_UNARY *a, cost *o)
{
    o->flops = (double)a->n;
    o->bytes = 8.0 * (double)a->n;
}

static void cost_binary(const tgl__args_BINARY *a, cost *o)
{
    o->flops = (double)a->n;
    o->bytes = 12.0 * (double)a->n;
}

static void cost_map(const tgl__args_MAP *a, cost *o)
{
    o->flops = (double)a->n;
    o->bytes = 4.0 * (double)(a->n_inputs + 1) * (double)a->n;
}

static void cost_binary_broadcast(const tgl__args_BINARY_BROADCAST *a, cost *o)
{
    double n = prod(a->a_shape, a->a_ndim);
    o->flops = n;
    o->bytes = 8.0 * n;
}

static void cost_permute(const tgl__args_PERMUTE *a, cost *o) { o->bytes = 8.0 * prod(a->shape, a->ndim); }

/* Reductions read every element of the shape once. */
static void reduce_cost(const size_t *shape, size_t ndim, cost *o)
{
    double n = prod(shape, ndim);
    o->flops = n;
    o->bytes = 4.0 * n;
}

#define cost_reduce(s, o) reduce_cost((s)->shape, (s)->ndim, o)
#define cost_argmax(s, o) reduce_cost((s)->shape, (s)->ndim, o)
#define cost_argmin(s, o) reduce_cost((s)->shape, (s)->ndim, o)

static void cost_fill(const tgl__args_FILL *a, cost *o) { o->bytes = 4.0 * (double)a->n; }

static void cost_scale_add(const tgl__args_SCALE_ADD *a, cost *o)
{
    o->flops = 3.0 * (double)a->n;
    o->bytes = 12.0 * (double)a->n;
}

/* Both casts read 4 + write 2 bytes or the reverse: one model for the two rows. */
#define cost_cast(s, o) ((o)->bytes = 6.0 * (double)(s)->n)

static void rows_cost(size_t rows, size_t cols, cost *o)
{
    double n = (double)rows * (double)cols;
    o->flops = 4.0 * n;
    o->bytes = 8.0 * n;
}

#define cost_softmax(s, o) rows_cost((s)->rows, (s)->cols, o)
#define cost_rmsnorm(s, o) rows_cost((s)->rows, (s)->cols, o)
#define cost_layernorm(s, o) rows_cost((s)->rows, (s)->cols, o)

static void gemm_cost(size_t m, size_t n, size_t k, size_t batch, double elem_size, cost *o)
{
    double dm = (double)m, dn = (double)n, dk = (double)k, db = (double)batch;
    o->flops = 2.0 * dm * dn * dk * db;
    o->bytes = elem_size * (dm * dk + dk * dn + dm * dn) * db;
}

#define cost_gemm(s, o) gemm_cost((s)->m, (s)->n, (s)->k, 1, 4.0, o)
#define cost_gemm_f16(s, o) gemm_cost((s)->m, (s)->n, (s)->k, 1, 2.0, o)
#define cost_gemm_batched(s, o) gemm_cost((s)->m, (s)->n, (s)->k, (s)->batch, 4.0, o)

/* The product's, plus the bias read (n floats) and, for a gate, C read once more. */
static void cost_gemm_fused(const tgl__args_GEMM_FUSED *a, cost *o)
{
    gemm_cost(a->m, a->n, a->k, 1, 4.0, o);
    o->bytes += 4.0 * ((a->bias ? (double)a->n : 0.0) + (a->gate ? (double)a->m * (double)a->n : 0.0));
}

static void cost_matvec(const tgl__args_MATVEC *a, cost *o)
{
    double r = (double)a->rows, c = (double)a->cols;
    o->flops = 2.0 * r * c;
    o->bytes = 4.0 * (r * c + r + c);
}

static void cost_rope(const tgl__args_ROPE *a, cost *o)
{
    double n = (double)a->batch * (double)a->seq * (double)a->heads * (double)a->head_dim;
    o->flops = 3.0 * n;
    o->bytes = 8.0 * n;
}

static void cost_rope_t(const tgl__args_ROPE_T *a, cost *o)
{
    const tgl_tensor *t = a->in;
    double n = t && t->ndim == 4 ? (double)t->shape[0] * (double)t->shape[1] * (double)t->shape[2] * (double)t->shape[3]
                                 : 0.0;
    o->flops = 3.0 * n;
    o->bytes = 8.0 * n;
}

static void cost_gather_rows_t(const tgl__args_GATHER_ROWS_T *a, cost *o)
{
    const tgl_tensor *out = a->out;
    double n = out && out->ndim == 2 ? (double)out->shape[0] * (double)out->shape[1] : 0.0;
    o->bytes = 8.0 * n;
}

static void cost_gather_rows(const tgl__args_GATHER_ROWS *a, cost *o)
{
    o->bytes = 8.0 * (double)a->cols * (double)a->n_ids + 4.0 * (double)a->n_ids;
}

/* q k^T and p v; causal masks are not discounted. */
static void attention_cost(size_t batch, size_t heads, size_t seq_q, size_t seq_kv, size_t head_dim, cost *o)
{
    double bh = (double)batch * (double)heads, sq = (double)seq_q, sk = (double)seq_kv, d = (double)head_dim;
    o->flops = 4.0 * bh * sq * sk * d;
    o->bytes = 4.0 * bh * d * (2.0 * sq + 2.0 * sk);
}

#define cost_attention(s, o) attention_cost((s)->batch, (s)->heads, (s)->seq_q, (s)->seq_kv, (s)->head_dim, o)
#define cost_attention_kv(s, o) attention_cost((s)->batch, (s)->heads, (s)->seq_q, (s)->seq_kv, (s)->head_dim, o)

/* grouped: the same products, k and v read once per key/value head */
static void cost_attention_gqa(const tgl__args_ATTENTION_GQA *a, cost *o)
{
    attention_cost(a->batch, a->heads, a->seq_q, a->seq_kv, a->head_dim, o);
    double d = (double)a->head_dim, b = (double)a->batch;
    o->bytes = 4.0 * d * (2.0 * b * (double)a->heads * (double)a->seq_q + 2.0 * b * (double)a->heads_kv * (double)a->seq_kv);
}

/* tgl_attention_t: the same products over the keys used (d->seq_kv, else k's capacity); k and v
 * read once per key/value head at their element size. */
static void cost_attention_t(const tgl__args_ATTENTION_T *a, cost *o)
{
    const tgl_tensor *q = a->q, *k = a->k;
    if (!q || !k || q->ndim != 4 || k->ndim != 4)
        return;
    size_t seq_kv = a->d && a->d->seq_kv ? a->d->seq_kv : k->shape[2];
    attention_cost(q->shape[0], q->shape[1], q->shape[2], seq_kv, q->shape[3], o);
    double d = (double)q->shape[3], b = (double)q->shape[0], es = k->dtype == TGL_DTYPE_F16 ? 2.0 : 4.0;
    o->bytes = 8.0 * d * b * (double)q->shape[1] * (double)q->shape[2] + 2.0 * es * d * b * (double)k->shape[1] * (double)seq_kv;
}

static void cost_conv2d(const tgl__args_CONV2D *a, cost *o)
{
    const tgl_conv2d_desc *d = a->desc;
    size_t oh, ow;
    if (!d || tgl_conv2d_output_size(d, &oh, &ow) != TGL_OK)
        return;
    double g = d->groups ? (double)d->groups : 1.0;
    o->flops = 2.0 * (double)d->batch * (double)d->out_channels * (double)oh * (double)ow *
               ((double)d->in_channels / g) * (double)d->kernel_h * (double)d->kernel_w;
    o->bytes = 4.0 * ((double)d->batch * (double)d->in_channels * (double)d->in_h * (double)d->in_w +
                      (double)d->batch * (double)d->out_channels * (double)oh * (double)ow);
}

/* the convolution's, and the residual read once where there is one */
static void cost_conv2d_fused(const tgl__args_CONV2D_FUSED *a, cost *o)
{
    const tgl__args_CONV2D conv = {.desc = a->desc, .input = a->input, .filter = a->filter, .bias = a->bias,
                                   .output = a->output};
    cost_conv2d(&conv, o);
    size_t oh, ow;
    if (a->residual && a->desc && tgl_conv2d_output_size(a->desc, &oh, &ow) == TGL_OK)
        o->bytes += 4.0 * (double)a->desc->batch * (double)a->desc->out_channels * (double)oh * (double)ow;
}

/* every input element meets every tap of its channel's filter slice once */
static void cost_conv_transpose2d(const tgl__args_CONV_TRANSPOSE2D *a, cost *o)
{
    const tgl_conv2d_desc *d = a->desc;
    size_t oh, ow;
    if (!d || tgl_conv_transpose2d_output_size(d, a->output_padding_h, a->output_padding_w, &oh, &ow) != TGL_OK)
        return;
    double g = d->groups ? (double)d->groups : 1.0;
    o->flops = 2.0 * (double)d->batch * (double)d->in_channels * (double)d->in_h * (double)d->in_w *
               ((double)d->out_channels / g) * (double)d->kernel_h * (double)d->kernel_w;
    o->bytes = 4.0 * ((double)d->batch * (double)d->in_channels * (double)d->in_h * (double)d->in_w +
                      (double)d->batch * (double)d->out_channels * (double)oh * (double)ow);
}

/* pooling: the input and output once each (windows overlap in cache), a compare or add per tap */
static void cost_pool2d(const tgl__args_POOL2D *a, cost *o)
{
    const tgl_pool2d_desc *d = a->desc;
    size_t oh, ow;
    if (!d || tgl_pool2d_output_size(d, &oh, &ow) != TGL_OK)
        return;
    double planes = (double)d->batch * (double)d->channels;
    o->flops = planes * (double)oh * (double)ow * (double)d->kernel_h * (double)d->kernel_w;
    o->bytes = 4.0 * planes * ((double)d->in_h * (double)d->in_w + (double)oh * (double)ow);
}

/* each output pixel blends 1 (nearest), 4 (bilinear) or 16 (bicubic) taps: a multiply-add each */
static void cost_interpolate(const tgl__args_INTERPOLATE *a, cost *o)
{
    const tgl_interpolate_desc *d = a->desc;
    if (!d)
        return;
    double planes = (double)d->batch * (double)d->channels, outs = planes * (double)d->out_h * (double)d->out_w;
    o->flops = 2.0 * outs * (d->mode == TGL_INTERP_BICUBIC ? 16.0 : d->mode == TGL_INTERP_BILINEAR ? 4.0 : 0.0);
    o->bytes = 4.0 * (planes * (double)d->in_h * (double)d->in_w + outs);
}

/* each input pixel read about once (windows overlap by at most a pixel a side), each output written */
static void cost_adaptive_pool2d(const tgl__args_ADAPTIVE_POOL2D *a, cost *o)
{
    double planes = (double)a->batch * (double)a->channels, in = planes * (double)a->in_h * (double)a->in_w;
    o->flops = in;
    o->bytes = 4.0 * (in + planes * (double)a->out_h * (double)a->out_w);
}

static void cost_max_pool2d_indices(const tgl__args_MAX_POOL2D_INDICES *a, cost *o)
{
    const tgl__args_POOL2D pool = {.desc = a->desc, .input = a->input, .output = a->output};
    cost_pool2d(&pool, o);
    size_t oh, ow;
    if (a->desc && tgl_pool2d_output_size(a->desc, &oh, &ow) == TGL_OK)
        o->bytes += 4.0 * (double)a->desc->batch * (double)a->desc->channels * (double)oh * (double)ow;
}

static void cost_copy(const tgl__args_COPY *a, cost *o)
{
    const tgl_tensor *d = a->dst, *s = a->src;
    if (!d || !s || d->ndim > TGL_MAX_DIMS)
        return;
    o->bytes = prod(d->shape, d->ndim) * (double)(tgl_dtype_size(d->dtype) + tgl_dtype_size(s->dtype));
}

/* Bytes of a descriptor's elements (none for NULL or a bad ndim). */
static double tensor_bytes(const tgl_tensor *t)
{
    return t && t->ndim <= TGL_MAX_DIMS ? prod(t->shape, t->ndim) * (double)tgl_dtype_size(t->dtype) : 0.0;
}

static void cost_compare(const tgl__args_COMPARE *a, cost *o)
{
    o->flops = a->out && a->out->ndim <= TGL_MAX_DIMS ? prod(a->out->shape, a->out->ndim) : 0.0;
    o->bytes = tensor_bytes(a->a) + tensor_bytes(a->bb) + tensor_bytes(a->out);
}

static void cost_where(const tgl__args_WHERE *a, cost *o)
{
    o->bytes = tensor_bytes(a->cond) + tensor_bytes(a->a) + tensor_bytes(a->bb) + tensor_bytes(a->out);
}

static void cost_unary_t(const tgl__args_UNARY_T *a, cost *o)
{
    o->flops = a->out && a->out->ndim <= TGL_MAX_DIMS ? prod(a->out->shape, a->out->ndim) : 0.0;
    o->bytes = tensor_bytes(a->in) + tensor_bytes(a->out);
}

static void cost_binary_t(const tgl__args_BINARY_T *a, cost *o)
{
    o->flops = a->out && a->out->ndim <= TGL_MAX_DIMS ? prod(a->out->shape, a->out->ndim) : 0.0;
    o->bytes = tensor_bytes(a->a) + tensor_bytes(a->bb) + tensor_bytes(a->out);
}

static void cost_clamp(const tgl__args_CLAMP *a, cost *o)
{
    o->flops = a->out && a->out->ndim <= TGL_MAX_DIMS ? 2.0 * prod(a->out->shape, a->out->ndim) : 0.0;
    o->bytes = tensor_bytes(a->x) + tensor_bytes(a->lo) + tensor_bytes(a->hi) + tensor_bytes(a->out);
}

static void cost_fill_t(const tgl__args_FILL_T *a, cost *o)
{
    o->bytes = tensor_bytes(a->out);
}

static void cost_arange(const tgl__args_ARANGE *a, cost *o)
{
    o->flops = a->out && a->out->ndim == 1 ? 2.0 * (double)a->out->shape[0] : 0.0;
    o->bytes = tensor_bytes(a->out);
}

static void cost_cat(const tgl__args_CAT *a, cost *o)
{
    o->bytes = tensor_bytes(a->out);
    for (size_t k = 0; a->inputs && k < a->n_inputs; k++)
        o->bytes += tensor_bytes(&a->inputs[k]);
}

/* tgl_map_t: as tgl_map, an op per element; bytes of every operand (n_inputs is checked at most
 * 8 only by the call: a hostile count reads no further than it). */
static void cost_map_t(const tgl__args_MAP_T *a, cost *o)
{
    o->flops = a->out && a->out->ndim <= TGL_MAX_DIMS ? prod(a->out->shape, a->out->ndim) : 0.0;
    o->bytes = tensor_bytes(a->out);
    for (size_t k = 0; a->inputs && k < a->n_inputs && k < 8; k++)
        o->bytes += tensor_bytes(&a->inputs[k]);
}

/* Philox's ten rounds (about 40 integer operations) and the kind's transform per element. */
static void cost_random(const tgl__args_RANDOM *a, cost *o)
{
    o->flops = a->out && a->out->ndim <= TGL_MAX_DIMS ? 50.0 * prod(a->out->shape, a->out->ndim) : 0.0;
    o->bytes = tensor_bytes(a->out);
}

static void cost_dropout(const tgl__args_DROPOUT *a, cost *o)
{
    o->flops = a->out && a->out->ndim <= TGL_MAX_DIMS ? 45.0 * prod(a->out->shape, a->out->ndim) : 0.0;
    o->bytes = tensor_bytes(a->in) + tensor_bytes(a->out);
}

static void cost_triu(const tgl__args_TRIU *a, cost *o)
{
    o->bytes = tensor_bytes(a->in) + tensor_bytes(a->out);
}

static void cost_tril(const tgl__args_TRIL *a, cost *o)
{
    o->bytes = tensor_bytes(a->in) + tensor_bytes(a->out);
}

/* flip, roll, repeat, pad: out written once, in read once (repeat and pad re-read parts of it) */
static void cost_flip(const tgl__args_FLIP *a, cost *o)
{
    o->bytes = tensor_bytes(a->in) + tensor_bytes(a->out);
}

static void cost_roll(const tgl__args_ROLL *a, cost *o)
{
    o->bytes = tensor_bytes(a->in) + tensor_bytes(a->out);
}

static void cost_repeat(const tgl__args_REPEAT *a, cost *o)
{
    o->bytes = 2.0 * tensor_bytes(a->out);
}

static void cost_pad(const tgl__args_PAD *a, cost *o)
{
    o->bytes = 2.0 * tensor_bytes(a->out);
}

static void cost_one_hot(const tgl__args_ONE_HOT *a, cost *o)
{
    o->bytes = tensor_bytes(a->indices) + tensor_bytes(a->out);
}

/* the weight read once per 4 rows of x (its stored bytes, blocks included), x and y once */
static void cost_matvec_t(const tgl__args_MATVEC_T *a, cost *o)
{
    if (!a->w || !a->x || a->w->ndim != 2 || a->x->ndim < 1 || a->x->ndim > 2)
        return;
    double n = a->x->ndim == 2 ? (double)a->x->shape[0] : 1.0;
    o->flops = 2.0 * n * (double)a->w->shape[0] * (double)a->w->shape[1];
    o->bytes = ceil(n / 4.0) * (double)tgl_tensor_bytes(a->w) + tensor_bytes(a->x) + tensor_bytes(a->y);
}

static void cost_matvec_t_fused(const tgl__args_MATVEC_T_FUSED *a, cost *o)
{
    const tgl__args_MATVEC_T plain = {.w = a->w, .x = a->x, .y = a->y};
    cost_matvec_t(&plain, o);
    if (a->beta != 0.0f || a->gate) /* y read too */
        o->bytes += tensor_bytes(a->y);
    o->bytes += tensor_bytes(a->bias);
}

static void cost_quantize(const tgl__args_QUANTIZE *a, cost *o)
{
    o->bytes = tensor_bytes(a->in) + (double)tgl_tensor_bytes(a->out) + tensor_bytes(a->out);
}

static void cost_dequantize(const tgl__args_DEQUANTIZE *a, cost *o)
{
    o->bytes = (double)tgl_tensor_bytes(a->in) + tensor_bytes(a->in) + tensor_bytes(a->out);
}

/* gather: the indices read twice (the check, the gather), an element of in and of out per index */
static void cost_gather(const tgl__args_GATHER *a, cost *o)
{
    o->bytes = 2.0 * tensor_bytes(a->index) + 2.0 * tensor_bytes(a->out);
}

static void cost_index_select(const tgl__args_INDEX_SELECT *a, cost *o)
{
    o->bytes = 2.0 * tensor_bytes(a->index) + 2.0 * tensor_bytes(a->out);
}

static void cost_masked_fill(const tgl__args_MASKED_FILL *a, cost *o)
{
    o->bytes = tensor_bytes(a->in) + tensor_bytes(a->mask) + tensor_bytes(a->out);
}

static void cost_reduce_t(const tgl__args_REDUCE_T *a, cost *o)
{
    o->bytes = tensor_bytes(a->in) + tensor_bytes(a->out);
    o->flops = a->in && a->in->ndim <= TGL_MAX_DIMS ? prod(a->in->shape, a->in->ndim) : 0.0;
}

/* argmax_t / argmin_t: reads in once, writes out (a comparison per element) */
static void arg_t_cost(const tgl_tensor *in, const tgl_tensor *out, cost *o)
{
    o->bytes = tensor_bytes(in) + tensor_bytes(out);
    o->flops = in && in->ndim <= TGL_MAX_DIMS ? prod(in->shape, in->ndim) : 0.0;
}
#define cost_arg_t(s, o) arg_t_cost((s)->in, (s)->out, o)
/* the row-wise descriptor ops: in read (norms twice or three times, counted once), out written,
 * a handful of flops per element */
static void rows_t_cost(const tgl_tensor *in, const tgl_tensor *out, cost *o)
{
    o->bytes = tensor_bytes(in) + tensor_bytes(out);
    o->flops = in && in->ndim <= TGL_MAX_DIMS ? 5.0 * prod(in->shape, in->ndim) : 0.0;
}
#define cost_rows_t(s, o) rows_t_cost((s)->in, (s)->out, o)
/* the scans: in read twice where a line is cut into chunks (counted once), out written, one
 * combine per element */
static void scan_cost(const tgl_tensor *in, const tgl_tensor *out, cost *o)
{
    o->bytes = tensor_bytes(in) + tensor_bytes(out);
    o->flops = in && in->ndim <= TGL_MAX_DIMS ? prod(in->shape, in->ndim) : 0.0;
}
#define cost_scan(s, o) scan_cost((s)->in, (s)->out, o)
#define cost_scan_arg(s, o) (scan_cost((s)->in, (s)->out, o), (o)->bytes += tensor_bytes((s)->indices))
/* masked_select, nonzero: the flags read, copied as bools (1 byte) and scanned into i32s (4
 * written, 4 read back), the inputs read again by the placement; out's capacity counted as
 * written (the count is not known here) */
static void compact_cost(const tgl_tensor *in, const tgl_tensor *mask, const tgl_tensor *out, cost *o)
{
    double n = in && in->ndim <= TGL_MAX_DIMS ? prod(in->shape, in->ndim) : 0.0;
    o->bytes = 2.0 * (tensor_bytes(in) + tensor_bytes(mask)) + 10.0 * n + tensor_bytes(out);
    o->flops = n;
}
/* The index space's indices and src read once per pass over it (two for SET and float ADD,
 * counted as two), out read and written, the temporary words written and read. */
static void scatter_cost(const tgl_tensor *out, const tgl_tensor *space, const tgl_tensor *src, cost *o)
{
    double n = space && space->ndim <= TGL_MAX_DIMS ? prod(space->shape, space->ndim) : 0.0;
    double src_elem = src ? (double)tgl_dtype_size(src->dtype) : 0.0;
    o->bytes = 2.0 * n * (4.0 + src_elem) + 2.0 * tensor_bytes(out);
}
#define cost_scatter(s, o) scatter_cost((s)->out, (s)->index, (s)->src, o)
#define cost_index_add(s, o) scatter_cost((s)->out, (s)->src, (s)->src, o)
/* in read into the pairs, the pairs read and written once per size of the network (log2(P)
 * sizes, the stages of small strides in shared memory), the outputs written. */
static void sort_cost(const tgl_tensor *in, size_t axis, int topk, size_t k, cost *o)
{
    if (!in || in->ndim > TGL_MAX_DIMS || (in->ndim && axis >= in->ndim))
        return;
    size_t len = in->ndim ? in->shape[axis] : 1, sizes = 1;
    while (sizes < 64 && ((size_t)1 << sizes) < len)
        sizes++;
    double n = prod(in->shape, in->ndim), lines = len ? n / (double)len : 0.0;
    double kept = (double)(topk ? k : len);
    o->bytes = tensor_bytes(in) + 16.0 * n * (double)sizes + lines * kept * ((double)tgl_dtype_size(in->dtype) + 4.0);
}
#define cost_sort(s, o) sort_cost((s)->in, (s)->axis, 0, 0, o)
#define cost_topk(s, o) sort_cost((s)->in, (s)->axis, 1, (s)->k, o)
#define cost_masked_select(s, o) compact_cost((s)->in, (s)->mask, (s)->out, o)
#define cost_nonzero(s, o) compact_cost((s)->in, NULL, (s)->out, o)

void tgl__call_cost(const tgl__call *c, double *flops, double *bytes)
{
    cost o = {0, 0};
    switch (c->fn) {
#define COST(id, cname, family, slot, dtypes, cmp, model, warm) \
    case TGL__FN_##id: {                                  \
        tgl__args_##id s;                                 \
        tgl__unpack_##id(c, &s);                          \
        model(&s, &o);                                    \
        break;                                            \
    }
        TGL__OPS(COST)
#undef COST
    default: break;
    }
    *flops = o.flops;
    *bytes = o.bytes;
}
