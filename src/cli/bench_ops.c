/* The standard benchmark set (bench_suite.h): per op, its three sizes, what it needs and
 * moves, and the call. Sizes are picked so that the large one is a real workload on a GPU while
 * the CPU backend (the double-precision oracle) still finishes it in seconds. */
#include "bench_suite.h"

#include <math.h>
#include <stdio.h>

const char *const tgl_bench_size_names[BENCH_SIZES] = {"small", "medium", "large"};

#define F4 4.0 /* bytes per f32 */

static void buf(bench_spec *s, size_t count, bench_fill fill, size_t range)
{
    s->bufs[s->n_bufs++] = (bench_buf){count, fill, range};
}

/* ---- element-wise: p = {n} ------------------------------------------------------------ */

static void spec_n(const size_t *p, bench_spec *s, int inputs, double bytes_per_elem)
{
    snprintf(s->shape, sizeof s->shape, "%zu", p[0]);
    for (int i = 0; i <= inputs; i++)
        buf(s, p[0], BENCH_F32, 0);
    s->bytes = bytes_per_elem * (double)p[0];
}

static void spec_unary(const size_t *p, bench_spec *s) { spec_n(p, s, 1, 2 * F4); }
static void spec_binary(const size_t *p, bench_spec *s) { spec_n(p, s, 2, 3 * F4); }
static void spec_map(const size_t *p, bench_spec *s) { spec_n(p, s, 3, 4 * F4); }
static void spec_scale_add(const size_t *p, bench_spec *s) { spec_n(p, s, 1, 3 * F4); }
static void spec_fill(const size_t *p, bench_spec *s) { spec_n(p, s, 0, F4); }
static void spec_sum(const size_t *p, bench_spec *s)
{
    spec_n(p, s, 1, F4);
    s->bufs[1].count = 1;
}

static void spec_cast(const size_t *p, bench_spec *s)
{
    spec_n(p, s, 1, F4 + 2);
    s->bufs[1].fill = BENCH_F16;
}

static tgl_status run_unary(tgl_backend *b, const size_t *p, const tgl_ptr *u)
{
    return tgl_unary(b, TGL_UNARY_GELU, u[0], u[1], p[0]);
}

static tgl_status run_binary(tgl_backend *b, const size_t *p, const tgl_ptr *u)
{
    return tgl_binary(b, TGL_BINARY_ADD, u[0], u[1], u[2], p[0]);
}

static tgl_status run_map(tgl_backend *b, const size_t *p, const tgl_ptr *u)
{
    return tgl_map(b, "sqrt(a*b + c)", u, 3, u[3], p[0]);
}

static tgl_status run_scale_add(tgl_backend *b, const size_t *p, const tgl_ptr *u)
{
    return tgl_scale_add(b, 0.5f, u[0], 0.25f, u[1], p[0]);
}

static tgl_status run_fill(tgl_backend *b, const size_t *p, const tgl_ptr *u)
{
    return tgl_fill(b, u[0], 1.5f, p[0]);
}

static tgl_status run_cast(tgl_backend *b, const size_t *p, const tgl_ptr *u)
{
    return tgl_cast_f32_f16(b, u[0], u[1], p[0]);
}

static tgl_status run_sum(tgl_backend *b, const size_t *p, const tgl_ptr *u)
{
    return tgl_reduce(b, TGL_REDUCE_SUM, u[0], u[1], p, 1, 0);
}

static void spec_cast_back(const size_t *p, bench_spec *s)
{
    spec_n(p, s, 1, F4 + 2);
    s->bufs[0].fill = BENCH_F16;
}

static tgl_status run_cast_back(tgl_backend *b, const size_t *p, const tgl_ptr *u)
{
    return tgl_cast_f16_f32(b, u[0], u[1], p[0]);
}

/* tgl_copy f32 -> bf16 of a contiguous vector (torch: o_bf16.copy_(a)). */
static tgl_status run_copy_bf16(tgl_backend *b, const size_t *p, const tgl_ptr *u)
{
    tgl_tensor src = tgl_tensor_contiguous(u[0], TGL_DTYPE_F32, 1, p);
    tgl_tensor dst = tgl_tensor_contiguous(u[1], TGL_DTYPE_BF16, 1, p);
    return tgl_copy(b, &dst, &src);
}

/* tgl_compare (a > b into a bool mask) then tgl_where(mask, a, b) over n f32 elements (torch:
 * torch.where(a > b, a, b, out=o)). Buffers: a, b, out, and the mask (n bytes). */
static void spec_compare_where(const size_t *p, bench_spec *s)
{
    spec_n(p, s, 2, 4 * F4 + 2); /* a, b read twice, out written, the mask written and read */
    buf(s, (p[0] + 3) / 4, BENCH_F32, 0);
}

static tgl_status run_compare_where(tgl_backend *b, const size_t *p, const tgl_ptr *u)
{
    tgl_tensor a = tgl_tensor_contiguous(u[0], TGL_DTYPE_F32, 1, p), bb = a, out = a;
    tgl_tensor mask = tgl_tensor_contiguous(u[3], TGL_DTYPE_BOOL, 1, p);
    bb.data = u[1];
    out.data = u[2];
    tgl_status st = tgl_compare(b, TGL_COMPARE_GT, &a, &bb, &mask);
    return st ? st : tgl_where(b, &mask, &a, &bb, &out);
}

/* The same select fused by tgl_map_t: a and b read once, out written (no mask in memory). */
static void spec_map_where(const size_t *p, bench_spec *s) { spec_n(p, s, 2, 3 * F4); }

static tgl_status run_map_where(tgl_backend *b, const size_t *p, const tgl_ptr *u)
{
    tgl_tensor in[2] = {tgl_tensor_contiguous(u[0], TGL_DTYPE_F32, 1, p), tgl_tensor_contiguous(u[1], TGL_DTYPE_F32, 1, p)};
    tgl_tensor out = tgl_tensor_contiguous(u[2], TGL_DTYPE_F32, 1, p);
    return tgl_map_t(b, "select(a > b, a, b)", in, 2, &out);
}

/* tgl_random: n standard normal f32 values (torch: o.normal_()). */
static tgl_status run_random_normal(tgl_backend *b, const size_t *p, const tgl_ptr *u)
{
    tgl_tensor out = tgl_tensor_contiguous(u[0], TGL_DTYPE_F32, 1, p);
    return tgl_random(b, TGL_RANDOM_NORMAL, &out, 0.0, 1.0, 42, 0);
}

/* tgl_dropout of n f32 with p = 0.1 (torch: F.dropout(a, 0.1, training=True)). */
static tgl_status run_dropout(tgl_backend *b, const size_t *p, const tgl_ptr *u)
{
    tgl_tensor in = tgl_tensor_contiguous(u[0], TGL_DTYPE_F32, 1, p), out = in;
    out.data = u[1];
    return tgl_dropout(b, &in, &out, 0.1, 42, 0);
}

/* tgl_cumsum of n f32 as one line (torch: torch.cumsum(a, 0, out=o)). */
static tgl_status run_cumsum(tgl_backend *b, const size_t *p, const tgl_ptr *u)
{
    tgl_tensor in = tgl_tensor_contiguous(u[0], TGL_DTYPE_F32, 1, p), out = in;
    out.data = u[1];
    return tgl_cumsum(b, &in, 0, &out);
}

/* ---- transfers: p = {n floats} ----------------------------------------------------------- */

static void spec_transfer(const size_t *p, bench_spec *s) { spec_n(p, s, 0, F4); }
static void spec_copy_dtod(const size_t *p, bench_spec *s) { spec_n(p, s, 1, 2 * F4); }

static tgl_status run_htod(tgl_backend *b, const size_t *p, const tgl_ptr *u, float *const *h)
{
    return tgl_copy_htod(b, u[0], h[0], p[0] * sizeof(float));
}

static tgl_status run_dtoh(tgl_backend *b, const size_t *p, const tgl_ptr *u, float *const *h)
{
    return tgl_copy_dtoh(b, h[0], u[0], p[0] * sizeof(float));
}

static tgl_status run_dtod(tgl_backend *b, const size_t *p, const tgl_ptr *u)
{
    return tgl_copy_dtod(b, u[1], u[0], p[0] * sizeof(float));
}

/* ---- rows x cols: p = {rows, cols} ---------------------------------------------------- */

static void spec_rows(const size_t *p, bench_spec *s, size_t out_count, double bytes)
{
    snprintf(s->shape, sizeof s->shape, "%zux%zu", p[0], p[1]);
    buf(s, p[0] * p[1], BENCH_F32, 0);
    buf(s, out_count, BENCH_F32, 0);
    s->bytes = bytes;
}

static void spec_row_op(const size_t *p, bench_spec *s) { spec_rows(p, s, p[0] * p[1], 2 * F4 * p[0] * p[1]); }
static void spec_argmax(const size_t *p, bench_spec *s) { spec_rows(p, s, p[0], F4 * p[0] * (p[1] + 1)); }
static void spec_sum_cols(const size_t *p, bench_spec *s) { spec_rows(p, s, p[1], F4 * p[1] * (p[0] + 1)); }

static void spec_norm_weights(const size_t *p, bench_spec *s)
{
    spec_row_op(p, s);
    buf(s, p[1], BENCH_F32, 0); /* weight / gamma */
    buf(s, p[1], BENCH_F32, 0); /* beta */
}

static void spec_broadcast(const size_t *p, bench_spec *s)
{
    spec_rows(p, s, p[0] * p[1], (2.0 * p[0] + 1) * p[1] * F4);
    buf(s, p[1], BENCH_F32, 0);
}

static tgl_status run_softmax(tgl_backend *b, const size_t *p, const tgl_ptr *u)
{
    return tgl_softmax(b, u[0], u[1], p[0], p[1]);
}

static tgl_status run_rmsnorm(tgl_backend *b, const size_t *p, const tgl_ptr *u)
{
    return tgl_rmsnorm(b, u[0], u[2], u[1], p[0], p[1], 1e-5f);
}

static tgl_status run_layernorm(tgl_backend *b, const size_t *p, const tgl_ptr *u)
{
    return tgl_layernorm(b, u[0], u[2], u[3], u[1], p[0], p[1], 1e-5f);
}

/* Sums over axis 0 (columns): the strided reduction (bias gradients, batch sums). */
static tgl_status run_sum_cols(tgl_backend *b, const size_t *p, const tgl_ptr *u)
{
    return tgl_reduce(b, TGL_REDUCE_SUM, u[0], u[1], p, 2, 0);
}

static tgl_status run_argmax(tgl_backend *b, const size_t *p, const tgl_ptr *u)
{
    return tgl_argmax(b, u[0], u[1], p, 2, 1);
}

static tgl_status run_argmin(tgl_backend *b, const size_t *p, const tgl_ptr *u)
{
    return tgl_argmin(b, u[0], u[1], p, 2, 1);
}

/* The largest element of each row (reduction over the last axis). */
static tgl_status run_max_rows(tgl_backend *b, const size_t *p, const tgl_ptr *u)
{
    return tgl_reduce(b, TGL_REDUCE_MAX, u[0], u[1], p, 2, 1);
}

static tgl_status run_log_softmax(tgl_backend *b, const size_t *p, const tgl_ptr *u)
{
    return tgl_log_softmax(b, u[0], u[1], p[0], p[1]);
}

static tgl_status run_permute(tgl_backend *b, const size_t *p, const tgl_ptr *u)
{
    static const size_t perm[2] = {1, 0};
    return tgl_permute(b, u[0], u[1], p, 2, perm);
}

/* A bias row added to every row: [rows, cols] + [cols]. */
/* tgl_copy of a rows x cols f32 matrix's transpose into a dense cols x rows one (torch:
 * o.view(c, r).copy_(x.t())). */
static tgl_status run_copy_transpose(tgl_backend *b, const size_t *p, const tgl_ptr *u)
{
    tgl_tensor src = tgl_tensor_contiguous(u[0], TGL_DTYPE_F32, 2, p);
    tgl_tensor dst = tgl_tensor_contiguous(u[1], TGL_DTYPE_F32, 2, (size_t[]){p[1], p[0]});
    src.shape[0] = p[1];
    src.shape[1] = p[0];
    src.strides[0] = 1;
    src.strides[1] = (int64_t)p[1];
    return tgl_copy(b, &dst, &src);
}

static tgl_status run_broadcast(tgl_backend *b, const size_t *p, const tgl_ptr *u)
{
    return tgl_binary_broadcast(b, TGL_BINARY_ADD, u[0], p, 2, u[2], p + 1, 1, u[1]);
}

/* tgl_gather along the last axis of a rows x cols f32 matrix by a rows x cols i32 index of
 * random columns (torch: torch.gather(x, 1, idx, out=o)): x, the index and out once each. */
static void spec_gather_axis(const size_t *p, bench_spec *s)
{
    spec_rows(p, s, p[0] * p[1], 3 * F4 * p[0] * p[1]);
    buf(s, p[0] * p[1], BENCH_IDS, p[1]);
}

/* tgl_scatter ADD of n f32 into n places by uniform random ids (torch: o.scatter_add_(0, idx,
 * a)): src and the ids read, out read and written. */
static void spec_scatter_add(const size_t *p, bench_spec *s)
{
    spec_n(p, s, 1, 4 * F4);
    buf(s, p[0], BENCH_IDS, p[0]);
}

static tgl_status scatter_add(tgl_backend *b, const size_t *p, const tgl_ptr *u, tgl_scatter_reduce reduce)
{
    tgl_tensor src = tgl_tensor_contiguous(u[0], TGL_DTYPE_F32, 1, p), out = src;
    tgl_tensor idx = tgl_tensor_contiguous(u[2], TGL_DTYPE_I32, 1, p);
    out.data = u[1];
    return tgl_scatter(b, &src, 0, &idx, &out, reduce);
}

static tgl_status run_scatter_add(tgl_backend *b, const size_t *p, const tgl_ptr *u)
{
    return scatter_add(b, p, u, TGL_SCATTER_ADD);
}

/* The same with ADD_UNORDERED: a float atomic per element, PyTorch's own kind of sum. */
static tgl_status run_scatter_add_unordered(tgl_backend *b, const size_t *p, const tgl_ptr *u)
{
    return scatter_add(b, p, u, TGL_SCATTER_ADD_UNORDERED);
}

/* tgl_sort of n f32 as one line, values and indices (torch: torch.sort(a, stable=True)). */
static void spec_sort(const size_t *p, bench_spec *s)
{
    spec_n(p, s, 1, 3 * F4);
    buf(s, p[0], BENCH_F32, 0); /* the i32 indices */
}

static tgl_status run_sort(tgl_backend *b, const size_t *p, const tgl_ptr *u)
{
    tgl_tensor in = tgl_tensor_contiguous(u[0], TGL_DTYPE_F32, 1, p), values = in;
    tgl_tensor indices = tgl_tensor_contiguous(u[2], TGL_DTYPE_I32, 1, p);
    values.data = u[1];
    return tgl_sort(b, &in, 0, 0, &values, &indices);
}

/* tgl_topk of each row, p = {rows, cols, k}: LLM sampling's top k of a vocabulary's logits
 * (torch: torch.topk(x, k, dim=1)). */
static void spec_topk(const size_t *p, bench_spec *s)
{
    snprintf(s->shape, sizeof s->shape, "%zux%zu k%zu", p[0], p[1], p[2]);
    buf(s, p[0] * p[1], BENCH_F32, 0);
    buf(s, p[0] * p[2], BENCH_F32, 0);
    buf(s, p[0] * p[2], BENCH_F32, 0); /* the i32 indices */
    s->bytes = F4 * (double)p[0] * ((double)p[1] + 2.0 * (double)p[2]);
}

static tgl_status run_topk(tgl_backend *b, const size_t *p, const tgl_ptr *u)
{
    tgl_tensor in = tgl_tensor_contiguous(u[0], TGL_DTYPE_F32, 2, p);
    tgl_tensor values = tgl_tensor_contiguous(u[1], TGL_DTYPE_F32, 2, (size_t[]){p[0], p[2]});
    tgl_tensor indices = tgl_tensor_contiguous(u[2], TGL_DTYPE_I32, 2, (size_t[]){p[0], p[2]});
    return tgl_topk(b, &in, 1, p[2], 1, &values, &indices);
}

static tgl_status run_gather_axis(tgl_backend *b, const size_t *p, const tgl_ptr *u)
{
    tgl_tensor x = tgl_tensor_contiguous(u[0], TGL_DTYPE_F32, 2, p), out = x;
    tgl_tensor idx = tgl_tensor_contiguous(u[2], TGL_DTYPE_I32, 2, p);
    out.data = u[1];
    return tgl_gather(b, &x, 1, &idx, &out);
}

/* ---- LLM kernels ------------------------------------------------------------------------ */

/* p = {batch, seq, heads, head_dim} */
static void spec_rope(const size_t *p, bench_spec *s)
{
    size_t n = p[0] * p[1] * p[2] * p[3];
    snprintf(s->shape, sizeof s->shape, "%zux%zux%zux%zu", p[0], p[1], p[2], p[3]);
    buf(s, n, BENCH_F32, 0);
    buf(s, n, BENCH_F32, 0);
    s->bytes = 2 * F4 * (double)n;
}

static tgl_status run_rope(tgl_backend *b, const size_t *p, const tgl_ptr *u)
{
    return tgl_rope(b, u[0], u[1], p[0], p[1], p[2], p[3], 0, 10000.0f, TGL_ROPE_NEOX);
}

/* p = {table_rows, cols, n_ids} */
static void spec_gather(const size_t *p, bench_spec *s)
{
    snprintf(s->shape, sizeof s->shape, "%zu of %zux%zu", p[2], p[0], p[1]);
    buf(s, p[0] * p[1], BENCH_F32, 0);
    buf(s, p[2], BENCH_IDS, p[0]);
    buf(s, p[2] * p[1], BENCH_F32, 0);
    s->bytes = 2 * F4 * (double)p[2] * p[1] + F4 * p[2];
}

static tgl_status run_gather(tgl_backend *b, const size_t *p, const tgl_ptr *u)
{
    return tgl_gather_rows(b, u[0], u[1], u[2], p[0], p[1], p[2]);
}

/* ---- GEMM family ------------------------------------------------------------------------ */

/* p = {m, n, k, batch} (batch 1 for the single products) */
static void spec_gemm_elems(const size_t *p, bench_spec *s, bench_fill fill)
{
    if (p[3] > 1)
        snprintf(s->shape, sizeof s->shape, "%zu x %zux%zux%zu", p[3], p[0], p[1], p[2]);
    else
        snprintf(s->shape, sizeof s->shape, "%zux%zux%zu", p[0], p[1], p[2]);
    buf(s, p[3] * p[0] * p[2], fill, 0);
    buf(s, p[3] * p[2] * p[1], fill, 0);
    buf(s, p[3] * p[0] * p[1], fill, 0);
    s->flops = 2.0 * p[0] * p[1] * p[2] * p[3];
}

static void spec_gemm(const size_t *p, bench_spec *s) { spec_gemm_elems(p, s, BENCH_F32); }
static void spec_gemm_f16(const size_t *p, bench_spec *s) { spec_gemm_elems(p, s, BENCH_F16); }

static tgl_status run_gemm(tgl_backend *b, const size_t *p, const tgl_ptr *u)
{
    return tgl_gemm(b, TGL_NO_TRANS, TGL_NO_TRANS, p[0], p[1], p[2], 1, u[0], p[2], u[1], p[1], 0, u[2], p[1]);
}

static tgl_status run_gemm_f16(tgl_backend *b, const size_t *p, const tgl_ptr *u)
{
    return tgl_gemm_f16(b, TGL_NO_TRANS, TGL_NO_TRANS, p[0], p[1], p[2], 1, u[0], p[2], u[1], p[1], 0, u[2], p[1]);
}

static tgl_status run_batched(tgl_backend *b, const size_t *p, const tgl_ptr *u)
{
    return tgl_gemm_batched(b, TGL_NO_TRANS, TGL_NO_TRANS, p[0], p[1], p[2], 1, u[0], p[2], p[0] * p[2], u[1], p[1],
                            p[2] * p[1], 0, u[2], p[1], p[0] * p[1], p[3]);
}

/* A linear layer as frameworks store it, y = x W^T (+ bias), p = {m, n, k}: x [m, k], W [n, k],
 * y [m, n], bias [n]; tgl_gemm_fused with its epilogue. */
static void spec_linear(const size_t *p, bench_spec *s)
{
    snprintf(s->shape, sizeof s->shape, "%zux%zux%zu", p[0], p[1], p[2]);
    buf(s, p[0] * p[2], BENCH_F32, 0);
    buf(s, p[1] * p[2], BENCH_F32, 0);
    buf(s, p[0] * p[1], BENCH_F32, 0);
    buf(s, p[1], BENCH_F32, 0);
    s->flops = 2.0 * p[0] * p[1] * p[2];
}

/* x W^T: the product alone (tgl_gemm), the reference for the fused forms */
static tgl_status run_linear(tgl_backend *b, const size_t *p, const tgl_ptr *u)
{
    return tgl_gemm(b, TGL_NO_TRANS, TGL_TRANS, p[0], p[1], p[2], 1, u[0], p[2], u[1], p[2], 0, u[2], p[1]);
}

/* gelu(x W^T + bias): a GPT-2 feed-forward layer's first half */
static tgl_status run_linear_gelu(tgl_backend *b, const size_t *p, const tgl_ptr *u)
{
    return tgl_gemm_fused(b, TGL_NO_TRANS, TGL_TRANS, p[0], p[1], p[2], 1, u[0], p[2], u[1], p[2], 0, u[2], p[1], u[3],
                          TGL_ACTIVATION_GELU, 0, 0);
}

/* y = silu(x W^T) * y: SwiGLU's gate over y holding the up projection */
static tgl_status run_linear_swiglu(tgl_backend *b, const size_t *p, const tgl_ptr *u)
{
    return tgl_gemm_fused(b, TGL_NO_TRANS, TGL_TRANS, p[0], p[1], p[2], 1, u[0], p[2], u[1], p[2], 0, u[2], p[1], 0,
                          TGL_ACTIVATION_SILU, 0, 1);
}

/* OpenBLAS runs every product of the batch (gemm and gemm_f16: f32 sgemm of the same size). */
static int blas_gemm(const tgl_blas *o, const size_t *p, float *const *h)
{
    if (!o->sgemm)
        return 0;
    for (size_t t = 0; t < p[3]; t++)
        o->sgemm(TGL_CBLAS_ROW_MAJOR, TGL_CBLAS_NO_TRANS, TGL_CBLAS_NO_TRANS, (int)p[0], (int)p[1], (int)p[2], 1,
                 h[0] + t * p[0] * p[2], (int)p[2], h[1] + t * p[2] * p[1], (int)p[1], 0, h[2] + t * p[0] * p[1],
                 (int)p[1]);
    return 1;
}

/* p = {rows, cols}; the rate is GB/s of W streamed, what bounds a decode step. */
static void spec_matvec(const size_t *p, bench_spec *s)
{
    snprintf(s->shape, sizeof s->shape, "%zux%zu", p[0], p[1]);
    buf(s, p[0] * p[1], BENCH_F32, 0);
    buf(s, p[1], BENCH_F32, 0);
    buf(s, p[0], BENCH_F32, 0);
    s->bytes = F4 * (double)p[0] * p[1];
}

static tgl_status run_matvec(tgl_backend *b, const size_t *p, const tgl_ptr *u)
{
    return tgl_matvec(b, p[0], p[1], u[0], u[1], u[2]);
}

static int blas_matvec(const tgl_blas *o, const size_t *p, float *const *h)
{
    if (!o->sgemv)
        return 0;
    o->sgemv(TGL_CBLAS_ROW_MAJOR, TGL_CBLAS_NO_TRANS, (int)p[0], (int)p[1], 1, h[0], (int)p[1], h[1], 1, 0, h[2], 1);
    return 1;
}

/* tgl_matvec_t with W [rows, cols] in a weight format, p = {rows, cols}: the rate is GB/s of
 * what the product must read (W as stored, x) and write (y), against which a device's copy
 * bandwidth is the bound (bench/gpu_reference.py times a copy of as many bytes). OpenBLAS's
 * sgemv of the same weights as f32 is the host reference. */
static void spec_matvec_w(const size_t *p, bench_spec *s, bench_fill fill, double weight_bytes_per_elem)
{
    snprintf(s->shape, sizeof s->shape, "%zux%zu", p[0], p[1]);
    buf(s, p[0] * p[1], fill, 0);
    buf(s, p[1], BENCH_F32, 0);
    buf(s, p[0], BENCH_F32, 0);
    s->bytes = weight_bytes_per_elem * (double)p[0] * (double)p[1] + F4 * (double)(p[0] + p[1]);
}

static void spec_matvec_q4_0(const size_t *p, bench_spec *s) { spec_matvec_w(p, s, BENCH_Q4_0, 18.0 / 32.0); }
static void spec_matvec_q8_0(const size_t *p, bench_spec *s) { spec_matvec_w(p, s, BENCH_Q8_0, 34.0 / 32.0); }
static void spec_matvec_f16(const size_t *p, bench_spec *s) { spec_matvec_w(p, s, BENCH_F16, 2.0); }

static tgl_status matvec_w(tgl_backend *b, const size_t *p, const tgl_ptr *u, tgl_dtype dt)
{
    tgl_tensor w = tgl_tensor_contiguous(u[0], dt, 2, (size_t[]){p[0], p[1]});
    tgl_tensor x = tgl_tensor_contiguous(u[1], TGL_DTYPE_F32, 1, &p[1]);
    tgl_tensor y = tgl_tensor_contiguous(u[2], TGL_DTYPE_F32, 1, &p[0]);
    return tgl_matvec_t(b, &w, &x, &y);
}

static tgl_status run_matvec_q4_0(tgl_backend *b, const size_t *p, const tgl_ptr *u)
{
    return matvec_w(b, p, u, TGL_DTYPE_Q4_0);
}

static tgl_status run_matvec_q8_0(tgl_backend *b, const size_t *p, const tgl_ptr *u)
{
    return matvec_w(b, p, u, TGL_DTYPE_Q8_0);
}

static tgl_status run_matvec_f16(tgl_backend *b, const size_t *p, const tgl_ptr *u)
{
    return matvec_w(b, p, u, TGL_DTYPE_F16);
}

/* ---- attention and convolution ------------------------------------------------------------ */

/* p = {batch, heads, seq_q, seq_kv, head_dim, causal}. Causal work counts only the visible
 * (query, key) pairs (bottom-right aligned), so causal and full rates compare. */
static void spec_attention(const size_t *p, bench_spec *s)
{
    size_t bh = p[0] * p[1], sq = p[2], skv = p[3], d = p[4];
    snprintf(s->shape, sizeof s->shape, "%zux%zux%zux%zux%zu%s", p[0], p[1], sq, skv, d, p[5] ? " causal" : "");
    buf(s, bh * sq * d, BENCH_F32, 0);
    buf(s, bh * skv * d, BENCH_F32, 0);
    buf(s, bh * skv * d, BENCH_F32, 0);
    buf(s, bh * sq * d, BENCH_F32, 0);
    double pairs = 0;
    for (size_t i = 0; i < sq; i++) {
        double seen = (double)i + (double)skv - (double)sq + 1; /* keys 0 .. i + skv - sq */
        pairs += !p[5] ? (double)skv : seen > 0 ? seen : 0;
    }
    s->flops = 4.0 * (double)bh * pairs * (double)d;
}

/* A decode step: one query per head over a long cache; the rate is GB/s of K and V read. */
static void spec_decode(const size_t *p, bench_spec *s)
{
    spec_attention(p, s);
    s->bytes = 2 * F4 * (double)(p[0] * p[1] * p[3] * p[4]);
    s->flops = 0;
}

static tgl_status run_attention(tgl_backend *b, const size_t *p, const tgl_ptr *u)
{
    return tgl_attention(b, u[0], u[1], u[2], u[3], p[0], p[1], p[2], p[3], p[4], 0.125f, (int)p[5]);
}

/* Grouped-query decode, p = {batch, heads, heads_kv, seq_kv, head_dim}: one causal query per
 * head over a cache of seq_kv keys per key/value head; the rate is GB/s of K and V read (once per
 * key/value head). bench/gpu_reference.py's reference: scaled_dot_product_attention with
 * enable_gqa. */
static void spec_gqa_decode(const size_t *p, bench_spec *s)
{
    size_t b = p[0], h = p[1], hkv = p[2], skv = p[3], d = p[4];
    snprintf(s->shape, sizeof s->shape, "%zux%zu/%zux1x%zux%zu", b, h, hkv, skv, d);
    buf(s, b * h * d, BENCH_F32, 0);
    buf(s, b * hkv * skv * d, BENCH_F32, 0);
    buf(s, b * hkv * skv * d, BENCH_F32, 0);
    buf(s, b * h * d, BENCH_F32, 0);
    s->bytes = 2 * F4 * (double)(b * hkv * skv * d);
}

static tgl_status run_gqa_decode(tgl_backend *b, const size_t *p, const tgl_ptr *u)
{
    return tgl_attention_gqa(b, u[0], u[1], u[2], u[3], p[0], p[1], p[2], 1, p[3], p[3], p[4],
                             1.0f / sqrtf((float)p[4]), 1);
}

/* The same over an f16 cache (tgl_attention_t): half the bytes of K and V to read.
 * bench/gpu_reference.py's reference: scaled_dot_product_attention with q, k and v in f16
 * (PyTorch's kernels take one dtype), so both read the same cache bytes. */
static void spec_gqa_decode_f16(const size_t *p, bench_spec *s)
{
    spec_gqa_decode(p, s);
    s->bufs[1].fill = s->bufs[2].fill = BENCH_F16;
    s->bytes /= 2;
}

static tgl_status run_gqa_decode_f16(tgl_backend *b, const size_t *p, const tgl_ptr *u)
{
    tgl_tensor q = tgl_tensor_contiguous(u[0], TGL_DTYPE_F32, 4, (size_t[]){p[0], p[1], 1, p[4]}), o = q;
    tgl_tensor k = tgl_tensor_contiguous(u[1], TGL_DTYPE_F16, 4, (size_t[]){p[0], p[2], p[3], p[4]}), v = k;
    v.data = u[2];
    o.data = u[3];
    return tgl_attention_t(b, &q, &k, &v, NULL, &o, &(tgl_attention_desc){.causal = 1});
}

/* p = {batch, in_channels, height, width, out_channels, kernel, pad}, stride 1. */
static tgl_conv2d_desc conv_desc(const size_t *p)
{
    return (tgl_conv2d_desc){.batch = p[0], .in_channels = p[1], .in_h = p[2], .in_w = p[3],
                             .out_channels = p[4], .kernel_h = p[5], .kernel_w = p[5], .pad_h = p[6], .pad_w = p[6]};
}

static void spec_conv2d(const size_t *p, bench_spec *s)
{
    tgl_conv2d_desc d = conv_desc(p);
    size_t oh = 0, ow = 0;
    tgl_conv2d_output_size(&d, &oh, &ow);
    snprintf(s->shape, sizeof s->shape, "%zux%zux%zux%zu->%zu k%zu", p[0], p[1], p[2], p[3], p[4], p[5]);
    buf(s, p[0] * p[1] * p[2] * p[3], BENCH_F32, 0);
    buf(s, p[4] * p[1] * p[5] * p[5], BENCH_F32, 0);
    buf(s, p[4], BENCH_F32, 0);
    buf(s, p[0] * p[4] * oh * ow, BENCH_F32, 0);
    s->flops = 2.0 * p[0] * p[4] * oh * ow * p[1] * p[5] * p[5];
}

static tgl_status run_conv2d(tgl_backend *b, const size_t *p, const tgl_ptr *u)
{
    tgl_conv2d_desc d = conv_desc(p);
    return tgl_conv2d(b, &d, u[0], u[1], u[2], u[3]);
}

/* ---- the table ---------------------------------------------------------------------------- */

/* N3: the three sizes; P: one size's parameters (a parenthesized list that may hold commas). */
#define P(...) __VA_ARGS__
#define N3(a, b, c) {{a}, {b}, {c}}
const bench_op tgl_bench_ops[] = {
    {"unary_gelu", "elementwise", "n", N3(1u << 16, 1u << 20, 1u << 24), spec_unary, run_unary, NULL, NULL},
    {"binary_add", "elementwise", "n", N3(1u << 16, 1u << 20, 1u << 24), spec_binary, run_binary, NULL, NULL},
    {"map_sqrt_ab_c", "elementwise", "n", N3(1u << 16, 1u << 20, 1u << 24), spec_map, run_map, NULL, NULL},
    {"scale_add", "elementwise", "n", N3(1u << 16, 1u << 20, 1u << 24), spec_scale_add, run_scale_add, NULL, NULL},
    {"fill", "elementwise", "n", N3(1u << 16, 1u << 20, 1u << 24), spec_fill, run_fill, NULL, NULL},
    {"cast_f32_f16", "elementwise", "n", N3(1u << 16, 1u << 20, 1u << 24), spec_cast, run_cast, NULL, NULL},
    {"cast_f16_f32", "elementwise", "n", N3(1u << 16, 1u << 20, 1u << 24), spec_cast_back, run_cast_back, NULL, NULL},
    {"copy_htod", "transfer", "n", N3(1u << 16, 1u << 20, 1u << 24), spec_transfer, NULL, NULL, run_htod},
    {"copy_dtoh", "transfer", "n", N3(1u << 16, 1u << 20, 1u << 24), spec_transfer, NULL, NULL, run_dtoh},
    {"copy_dtod", "transfer", "n", N3(1u << 16, 1u << 20, 1u << 24), spec_copy_dtod, run_dtod, NULL, NULL},
    {"binary_broadcast", "shape", "rows,cols", N3(P(256, 256), P(1024, 1024), P(4096, 4096)), spec_broadcast,
     run_broadcast, NULL, NULL},
    {"permute", "shape", "rows,cols", N3(P(256, 256), P(1024, 1024), P(4096, 4096)), spec_row_op, run_permute,
     NULL, NULL},
    {"copy_transpose", "tensor", "rows,cols", N3(P(256, 256), P(1024, 1024), P(4096, 4096)), spec_row_op,
     run_copy_transpose, NULL, NULL},
    {"copy_f32_bf16", "tensor", "n", N3(1u << 16, 1u << 20, 1u << 24), spec_cast, run_copy_bf16, NULL, NULL},
    {"compare_where", "tensor", "n", N3(1u << 16, 1u << 20, 1u << 24), spec_compare_where, run_compare_where, NULL,
     NULL},
    {"map_where", "tensor", "n", N3(1u << 16, 1u << 20, 1u << 24), spec_map_where, run_map_where, NULL, NULL},
    {"gather", "tensor", "rows,cols", N3(P(64, 1024), P(1024, 1024), P(4096, 4096)), spec_gather_axis,
     run_gather_axis, NULL, NULL},
    {"scatter_add", "tensor", "n", N3(1u << 16, 1u << 20, 1u << 24), spec_scatter_add, run_scatter_add, NULL, NULL},
    {"scatter_add_unordered", "tensor", "n", N3(1u << 16, 1u << 20, 1u << 24), spec_scatter_add,
     run_scatter_add_unordered, NULL, NULL},
    {"sort", "tensor", "n", N3(1u << 16, 1u << 20, 1u << 24), spec_sort, run_sort, NULL, NULL},
    {"topk", "tensor", "rows,cols,k", N3(P(1, 50257, 50), P(32, 50257, 50), P(256, 50257, 50)), spec_topk, run_topk,
     NULL, NULL},
    {"random_normal", "random", "n", N3(1u << 16, 1u << 20, 1u << 24), spec_fill, run_random_normal, NULL, NULL},
    {"dropout", "random", "n", N3(1u << 16, 1u << 20, 1u << 24), spec_unary, run_dropout, NULL, NULL},
    {"reduce_sum", "reduction", "n", N3(1u << 16, 1u << 20, 1u << 24), spec_sum, run_sum, NULL, NULL},
    {"cumsum", "reduction", "n", N3(1u << 16, 1u << 20, 1u << 24), spec_unary, run_cumsum, NULL, NULL},
    {"reduce_sum_cols", "reduction", "rows,cols", N3(P(64, 1024), P(1024, 1024), P(4096, 4096)), spec_sum_cols,
     run_sum_cols, NULL, NULL},
    {"argmax", "reduction", "rows,cols", N3(P(64, 1024), P(1024, 1024), P(4096, 4096)), spec_argmax, run_argmax,
     NULL, NULL},
    {"argmin", "reduction", "rows,cols", N3(P(64, 1024), P(1024, 1024), P(4096, 4096)), spec_argmax, run_argmin,
     NULL, NULL},
    {"reduce_max_rows", "reduction", "rows,cols", N3(P(64, 1024), P(1024, 1024), P(4096, 4096)), spec_argmax,
     run_max_rows, NULL, NULL},
    {"softmax", "normalization", "rows,cols", N3(P(64, 1024), P(1024, 1024), P(4096, 4096)), spec_row_op,
     run_softmax, NULL, NULL},
    {"log_softmax", "normalization", "rows,cols", N3(P(64, 1024), P(1024, 1024), P(4096, 4096)), spec_row_op,
     run_log_softmax, NULL, NULL},
    {"rmsnorm", "normalization", "rows,cols", N3(P(64, 1024), P(1024, 1024), P(4096, 4096)), spec_norm_weights,
     run_rmsnorm, NULL, NULL},
    {"layernorm", "normalization", "rows,cols", N3(P(64, 1024), P(1024, 1024), P(4096, 4096)), spec_norm_weights,
     run_layernorm, NULL, NULL},
    {"rope", "llm", "batch,seq,heads,head_dim", N3(P(1, 128, 8, 64), P(1, 512, 32, 128), P(1, 2048, 32, 128)),
     spec_rope, run_rope, NULL, NULL},
    {"gather_rows", "llm", "table_rows,cols,n_ids", N3(P(8192, 1024, 16), P(8192, 1024, 512), P(8192, 1024, 8192)),
     spec_gather, run_gather, NULL, NULL},
    {"gemm", "gemm", "m,n,k,batch", N3(P(128, 128, 128, 1), P(512, 512, 512, 1), P(1024, 1024, 1024, 1)),
     spec_gemm, run_gemm, blas_gemm, NULL},
    {"gemm_f16", "gemm", "m,n,k,batch", N3(P(128, 128, 128, 1), P(512, 512, 512, 1), P(1024, 1024, 1024, 1)),
     spec_gemm_f16, run_gemm_f16, blas_gemm, NULL},
    {"gemm_batched", "gemm", "m,n,k,batch", N3(P(64, 64, 64, 16), P(128, 128, 128, 32), P(256, 256, 256, 64)),
     spec_gemm, run_batched, blas_gemm, NULL},
    {"linear", "gemm", "m,n,k", N3(P(1, 3072, 768), P(128, 3072, 768), P(1024, 4096, 4096)), spec_linear,
     run_linear, NULL, NULL},
    {"linear_gelu", "gemm", "m,n,k", N3(P(1, 3072, 768), P(128, 3072, 768), P(1024, 4096, 4096)), spec_linear,
     run_linear_gelu, NULL, NULL},
    {"linear_swiglu", "gemm", "m,n,k", N3(P(1, 11008, 4096), P(128, 11008, 4096), P(1024, 11008, 4096)), spec_linear,
     run_linear_swiglu, NULL, NULL},
    {"matvec", "gemm", "rows,cols", N3(P(1024, 1024), P(4096, 4096), P(8192, 8192)), spec_matvec, run_matvec,
     blas_matvec, NULL},
    {"matvec_q4_0", "gemm", "rows,cols", N3(P(1024, 1024), P(4096, 4096), P(4096, 11008)), spec_matvec_q4_0,
     run_matvec_q4_0, blas_matvec, NULL},
    {"matvec_q8_0", "gemm", "rows,cols", N3(P(1024, 1024), P(4096, 4096), P(4096, 11008)), spec_matvec_q8_0,
     run_matvec_q8_0, blas_matvec, NULL},
    {"matvec_f16", "gemm", "rows,cols", N3(P(1024, 1024), P(4096, 4096), P(4096, 11008)), spec_matvec_f16,
     run_matvec_f16, blas_matvec, NULL},
    {"attention", "attention", "batch,heads,seq_q,seq_kv,head_dim,causal",
     N3(P(1, 8, 128, 128, 64, 1), P(1, 8, 512, 512, 64, 1), P(1, 16, 1024, 1024, 64, 1)), spec_attention,
     run_attention, NULL, NULL},
    {"attention_decode", "attention", "batch,heads,seq_q,seq_kv,head_dim,causal",
     N3(P(1, 8, 1, 512, 64, 1), P(1, 32, 1, 2048, 128, 1), P(1, 32, 1, 8192, 128, 1)), spec_decode,
     run_attention, NULL, NULL},
    {"attention_gqa_decode", "attention", "batch,heads,heads_kv,seq_kv,head_dim",
     N3(P(1, 8, 2, 512, 64), P(1, 32, 8, 4096, 128), P(4, 32, 8, 4096, 128)), spec_gqa_decode, run_gqa_decode, NULL,
     NULL},
    {"attention_gqa_decode_f16", "attention", "batch,heads,heads_kv,seq_kv,head_dim",
     N3(P(1, 8, 2, 512, 64), P(1, 32, 8, 4096, 128), P(4, 32, 8, 4096, 128)), spec_gqa_decode_f16,
     run_gqa_decode_f16, NULL, NULL},
    {"conv2d", "conv", "batch,in_channels,height,width,out_channels,kernel,pad",
     N3(P(1, 16, 32, 32, 16, 3, 1), P(1, 64, 56, 56, 64, 3, 1), P(4, 64, 56, 56, 64, 3, 1)), spec_conv2d,
     run_conv2d, NULL, NULL},
};
const size_t tgl_bench_op_count = sizeof tgl_bench_ops / sizeof tgl_bench_ops[0];
