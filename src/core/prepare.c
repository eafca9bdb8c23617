/* tgl_warmup and tgl_tune, the two calls that prepare a device for a program.
 *
 * tgl_warmup: runs every op family once per kernel path an ordinary program takes, on small
 * zero-filled tensors, so that the device's programs are built (and land in the program cache
 * and the driver's shader cache) before the program needs them. It goes through the public
 * calls, so what it builds is exactly what those calls pick on this device: the workgroup
 * sizes, tile shapes and buffer-texture choices of the renderer table. */
#include "validate.h"

#include <string.h>

#define WARM_FLOATS ((size_t)1 << 20) /* 4 MiB per scratch buffer: the largest case below fits */
#define ODD 1027                      /* vec4 bodies and scalar tails both */

typedef struct warm {
    tgl_backend *b;
    tgl_ptr x, y, z, w;
    unsigned calls;
    tgl_status st;
} warm;

/* Records one call's status; after the first failure the rest are skipped. */
static void did(warm *c, tgl_status st)
{
    if (!c->st)
        c->st = st;
    c->calls += !st;
}

static void elementwise(warm *c)
{
    tgl_backend *b = c->b;
    for (int op = 0; op < TGL__UNARY_FLAT_KERNELS && !c->st; op++)
        did(c, tgl_unary(b, (tgl_unary_op)op, c->x, c->y, ODD));
    for (int op = 0; op < TGL__BINARY_FLAT_KERNELS && !c->st; op++)
        did(c, tgl_binary(b, (tgl_binary_op)op, c->x, c->y, c->z, ODD));
    did(c, tgl_scale_add(b, 2.0f, c->x, 1.0f, c->y, ODD));
    did(c, tgl_copy_dtod(b, c->y, c->x, ODD * sizeof(float)));
    did(c, tgl_cast_f32_f16(b, c->x, c->z, ODD));
    did(c, tgl_cast_f16_f32(b, c->z, c->y, ODD));
    const size_t m[2] = {64, 64}, row[2] = {1, 64}, col[2] = {64, 1}, t3[3] = {4, 8, 16};
    const size_t swap[2] = {1, 0}, rot[3] = {2, 0, 1};
    did(c, tgl_binary_broadcast(b, TGL_BINARY_ADD, c->x, m, 2, c->y, row, 2, c->z));
    did(c, tgl_binary_broadcast(b, TGL_BINARY_MUL, c->x, m, 2, c->y, col, 2, c->z));
    did(c, tgl_permute(b, c->x, c->z, m, 2, swap));
    did(c, tgl_permute(b, c->x, c->z, t3, 3, rot));
    /* tgl_copy: casts between f32 and the half types (dense: a word per invocation), and a
     * strided f16 copy (one invocation per element) */
    static const tgl_dtype halves[2] = {TGL_DTYPE_F16, TGL_DTYPE_BF16};
    for (int h = 0; h < 2; h++) {
        tgl_tensor f = tgl_tensor_contiguous(c->x, TGL_DTYPE_F32, 2, m);
        tgl_tensor half = tgl_tensor_contiguous(c->z, halves[h], 2, m);
        did(c, tgl_copy(b, &half, &f));
        f.data = c->y;
        did(c, tgl_copy(b, &f, &half));
    }
    tgl_tensor hs = tgl_tensor_contiguous(c->z, TGL_DTYPE_F16, 2, m), ht = hs;
    ht.data = c->w;
    ht.strides[0] = 1;
    ht.strides[1] = 64;
    did(c, tgl_copy(b, &ht, &hs));
    /* a comparison against a broadcast row and a where over its result (f32) */
    tgl_tensor x = tgl_tensor_contiguous(c->x, TGL_DTYPE_F32, 2, m);
    tgl_tensor r = tgl_tensor_contiguous(c->y, TGL_DTYPE_F32, 1, m + 1);
    tgl_tensor mask = tgl_tensor_contiguous(c->z, TGL_DTYPE_BOOL, 2, m);
    tgl_tensor out = tgl_tensor_contiguous(c->w, TGL_DTYPE_F32, 2, m);
    did(c, tgl_compare(b, TGL_COMPARE_GT, &x, &r, &mask));
    did(c, tgl_where(b, &mask, &x, &r, &out));
    did(c, tgl_masked_fill(b, &x, &mask, 0.0, &out));
    /* the descriptor unary and binary ops (f32, dense; the op is a uniform) */
    did(c, tgl_unary_t(b, TGL_UNARY_ERF, &x, &out));
    did(c, tgl_binary_t(b, TGL_BINARY_ATAN2, &x, &out, &out));
    did(c, tgl_clamp(b, &x, &r, &out, &out));
    did(c, tgl_fill_t(b, &mask, 1.0));
    did(c, tgl_arange(b, &r, 0.0, 0.5));
    /* random numbers (the kind is a uniform: one program per out dtype) and dropout, f32 */
    did(c, tgl_random(b, TGL_RANDOM_NORMAL, &out, 0.0, 1.0, 1, 0));
    did(c, tgl_dropout(b, &x, &out, 0.5, 1, 0));
    did(c, tgl_triu(b, &x, &out, 0)); /* triu and tril: one program per dtype, the side a uniform */
    did(c, tgl_tril(b, &x, &out, -1));
    /* tgl_cat along the last dim: x's two column halves side by side (strided slices) */
    tgl_tensor halves_x[2] = {x, x};
    for (int h = 0; h < 2; h++) {
        halves_x[h].shape[1] = 32;
        halves_x[h].data = c->x + (tgl_ptr)(h * 32 * sizeof(float));
    }
    did(c, tgl_cat(b, halves_x, 2, 1, &out));
    /* flip, roll, repeat and pad: strided copies (and a constant pad's fills) of x's halves */
    tgl_tensor half_out = out;
    half_out.shape[1] = 32;
    did(c, tgl_flip(b, &halves_x[0], (const size_t[]){1}, 1, &half_out));
    did(c, tgl_roll(b, &halves_x[0], (const int64_t[]){3}, 1, (const size_t[]){0}, &half_out));
    did(c, tgl_repeat(b, &halves_x[0], (const size_t[]){1, 2}, 2, &out));
    tgl_tensor inner = halves_x[0];
    inner.shape[0] = 62;
    inner.shape[1] = 30;
    did(c, tgl_pad(b, &inner, (const int64_t[]){1, 1, 1, 1}, 4, TGL_PAD_CONSTANT, 0.0, &half_out));
    /* tgl_reduce_t: short lines (an invocation each) and long ones (a workgroup each), f32 */
    tgl_tensor sums = tgl_tensor_contiguous(c->y, TGL_DTYPE_F32, 1, m);
    did(c, tgl_reduce_t(b, TGL_REDUCE_SUM, &x, 1, &sums));
    tgl_tensor line = tgl_tensor_contiguous(c->x, TGL_DTYPE_F32, 1, (size_t[]){4096});
    tgl_tensor total = tgl_tensor_contiguous(c->y, TGL_DTYPE_F32, 0, NULL);
    did(c, tgl_reduce_t(b, TGL_REDUCE_SUM, &line, 0, &total));
    /* tgl_argmax_t / tgl_argmin_t: each row's largest and smallest into i32 indices */
    tgl_tensor ids = tgl_tensor_contiguous(c->y, TGL_DTYPE_I32, 1, m);
    did(c, tgl_argmax_t(b, &x, 1, &ids));
    did(c, tgl_argmin_t(b, &x, 1, &ids));
    did(c, tgl_one_hot(b, &ids, &out)); /* one program per out dtype */
    /* gather and index_select by those indices: the check pass, then the gather (f32) */
    tgl_tensor picks = ids, picked = tgl_tensor_contiguous(c->w, TGL_DTYPE_F32, 2, col);
    picks.ndim = 2;
    picks.shape[1] = 1;
    picks.strides[1] = 1;
    did(c, tgl_gather(b, &x, 1, &picks, &picked));
    did(c, tgl_index_select(b, &x, 0, &ids, &out));
    /* scatter (f32 ADD: all four passes) and index_add by those indices, into out */
    did(c, tgl_scatter(b, &x, 1, &picks, &out, TGL_SCATTER_ADD));
    did(c, tgl_index_add(b, &x, 0, &ids, &out));
    /* sort and topk along the rows (f32): the pairs' load, the network, the store */
    tgl_tensor top = tgl_tensor_contiguous(c->w, TGL_DTYPE_F32, 2, (size_t[]){64, 8});
    did(c, tgl_sort(b, &x, 1, 0, &out, NULL));
    did(c, tgl_topk(b, &x, 1, 8, 1, &top, NULL));
    /* the row-wise ops over descriptors (a workgroup per line), f32 */
    did(c, tgl_softmax_t(b, &x, 1, &out));
    did(c, tgl_log_softmax_t(b, &x, 1, &out));
    did(c, tgl_rmsnorm_t(b, &x, NULL, &out, 1e-5f));
    did(c, tgl_layernorm_t(b, &x, NULL, NULL, &out, 1e-5f));
    /* the scans along the rows, f32 (one chunk a line) and i32 */
    did(c, tgl_cumsum(b, &x, 1, &out));
    did(c, tgl_cumprod(b, &x, 1, &out));
    did(c, tgl_cummax(b, &x, 1, &out, NULL));
    did(c, tgl_cummin(b, &x, 1, &out, NULL));
    tgl_tensor counts = tgl_tensor_contiguous(c->y, TGL_DTYPE_I32, 1, m);
    did(c, tgl_cumsum(b, &counts, 0, &counts));
    /* masked_select and nonzero (f32): the flags' copy, their scan, the placement */
    tgl_tensor packed = tgl_tensor_contiguous(c->w, TGL_DTYPE_F32, 1, (size_t[]){64 * 64});
    tgl_tensor found = tgl_tensor_contiguous(c->z, TGL_DTYPE_I32, 0, NULL);
    tgl_tensor where = tgl_tensor_contiguous(c->w, TGL_DTYPE_I32, 2, (size_t[]){64 * 64, 2});
    mask.data = c->y;
    did(c, tgl_masked_select(b, &x, &mask, &packed, &found));
    did(c, tgl_nonzero(b, &x, &where, &found));
}

static void reductions(warm *c)
{
    tgl_backend *b = c->b;
    /* Rows (inner 1), columns (inner >= 32), short strides, and one long line. */
    const size_t rows[2] = {8, 1024}, cols[2] = {1024, 64}, mid[3] = {16, 8, 4}, line[1] = {65536};
    for (int op = 0; op <= TGL_REDUCE_PROD && !c->st; op++) {
        did(c, tgl_reduce(b, (tgl_reduce_op)op, c->x, c->y, rows, 2, 1));
        did(c, tgl_reduce(b, (tgl_reduce_op)op, c->x, c->y, cols, 2, 0));
        did(c, tgl_reduce(b, (tgl_reduce_op)op, c->x, c->y, mid, 3, 1));
        did(c, tgl_reduce(b, (tgl_reduce_op)op, c->x, c->y, line, 1, 0));
    }
    for (int max = 0; max < 2; max++) {
        tgl_status (*arg)(tgl_backend *, tgl_ptr, tgl_ptr, const size_t *, size_t, size_t) = max ? tgl_argmax
                                                                                                   : tgl_argmin;
        did(c, arg(b, c->x, c->y, rows, 2, 1));
        did(c, arg(b, c->x, c->y, cols, 2, 0));
        did(c, arg(b, c->x, c->y, line, 1, 0));
    }
}

static void row_ops(warm *c)
{
    tgl_backend *b = c->b;
    const size_t widths[2] = {100, 4096};
    for (int i = 0; i < 2; i++) {
        size_t r = 8, n = widths[i];
        did(c, tgl_softmax(b, c->x, c->y, r, n));
        did(c, tgl_log_softmax(b, c->x, c->y, r, n));
        did(c, tgl_rmsnorm(b, c->x, 0, c->y, r, n, 1e-5f));
        did(c, tgl_rmsnorm(b, c->x, c->w, c->y, r, n, 1e-5f));
        did(c, tgl_layernorm(b, c->x, 0, 0, c->y, r, n, 1e-5f));
        did(c, tgl_layernorm(b, c->x, c->w, c->w, c->y, r, n, 1e-5f));
    }
    did(c, tgl_rope(b, c->x, c->y, 1, 4, 2, 64, 0, 10000.0f, TGL_ROPE_NEOX));
    did(c, tgl_rope(b, c->x, c->y, 1, 4, 2, 64, 0, 10000.0f, TGL_ROPE_INTERLEAVED));
    for (int m = 0; m < 4; m++) { /* tgl_rope_t: each layout, positions (z's zeros) or not */
        tgl_tensor x = tgl_tensor_contiguous(c->x, TGL_DTYPE_F32, 4, (size_t[]){1, 4, 2, 64});
        tgl_tensor y = tgl_tensor_contiguous(c->y, TGL_DTYPE_F32, 4, (size_t[]){1, 4, 2, 64});
        tgl_tensor pos = tgl_tensor_contiguous(c->z, TGL_DTYPE_I32, 2, (size_t[]){1, 4});
        tgl_rope_desc d = {.theta = 10000.0f, .mode = m & 1 ? TGL_ROPE_INTERLEAVED : TGL_ROPE_NEOX};
        if (m >> 1)
            did(c, tgl_fill(b, c->z, 0.0f, 4));
        did(c, tgl_rope_t(b, &x, &y, m >> 1 ? &pos : NULL, &d));
    }
    /* z holds zeros: valid row ids. */
    did(c, tgl_fill(b, c->z, 0.0f, 64));
    did(c, tgl_gather_rows(b, c->x, c->z, c->y, 64, 64, 8));
    did(c, tgl_gather_rows(b, c->x, c->z, c->y, 64, 3, 8));
}

static void products(warm *c)
{
    tgl_backend *b = c->b;
    /* Sizes with rows of whole vec4s and without, every transpose pair, f32 and f16. */
    const size_t sizes[2] = {64, 33};
    for (int s = 0; s < 2; s++) {
        size_t n = sizes[s];
        for (int t = 0; t < 4 && !c->st; t++) {
            tgl_transpose ta = t & 1 ? TGL_TRANS : TGL_NO_TRANS, tb = t & 2 ? TGL_TRANS : TGL_NO_TRANS;
            did(c, tgl_gemm(b, ta, tb, n, n, n, 1.0f, c->x, n, c->y, n, 0.0f, c->z, n));
            did(c, tgl_gemm(b, ta, tb, n, n, n, 1.0f, c->x, n, c->y, n, 1.0f, c->z, n));
            did(c, tgl_gemm_f16(b, ta, tb, n, n, n, 1.0f, c->x, n, c->y, n, 0.0f, c->z, n));
            /* a linear layer's epilogue and a gate (SwiGLU) */
            did(c, tgl_gemm_fused(b, ta, tb, n, n, n, 1.0f, c->x, n, c->y, n, 0.0f, c->z, n, c->w,
                                  TGL_ACTIVATION_GELU, 0.0f, 0));
            did(c, tgl_gemm_fused(b, ta, tb, n, n, n, 1.0f, c->x, n, c->y, n, 0.0f, c->z, n, 0,
                                  TGL_ACTIVATION_SILU, 0.0f, 1));
        }
        did(c, tgl_gemm_batched(b, TGL_NO_TRANS, TGL_NO_TRANS, n, n, n, 1.0f, c->x, n, n * n, c->y, n, 0, 0.0f,
                                c->z, n, n * n, 4));
        did(c, tgl_matvec(b, 64, n, c->x, c->y, c->z));
    }
    /* The weight formats: a decode step's product (one row of x) and a prompt's (several), and
     * the conversions to and from the block formats. */
    for (int dt = TGL_DTYPE_F32; dt < TGL_DTYPE_COUNT && !c->st; dt++) {
        if (dt == TGL_DTYPE_I32 || dt == TGL_DTYPE_BOOL)
            continue;
        tgl_tensor w = tgl_tensor_contiguous(c->x, (tgl_dtype)dt, 2, (size_t[]){64, 256});
        for (size_t n = 1; n <= 4; n += 3) {
            tgl_tensor x = tgl_tensor_contiguous(c->y, TGL_DTYPE_F32, 2, (size_t[]){n, 256});
            tgl_tensor y = tgl_tensor_contiguous(c->z, TGL_DTYPE_F32, 2, (size_t[]){n, 64});
            did(c, tgl_matvec_t(b, &w, &x, &y));
            /* a residual add (beta 1) and a gate (SwiGLU) */
            did(c, tgl_matvec_t_fused(b, &w, &x, 1.0f, NULL, TGL_ACTIVATION_NONE, 0.0f, 0, &y));
            did(c, tgl_matvec_t_fused(b, &w, &x, 0.0f, NULL, TGL_ACTIVATION_SILU, 0.0f, 1, &y));
        }
        /* an embedding lookup of 4 rows (ids 0: w's zeros) */
        tgl_tensor ids = tgl_tensor_contiguous(c->w, TGL_DTYPE_I32, 1, (size_t[]){4});
        tgl_tensor rows = tgl_tensor_contiguous(c->z, TGL_DTYPE_F32, 2, (size_t[]){4, 256});
        did(c, tgl_fill(b, c->w, 0.0f, 4));
        did(c, tgl_gather_rows_t(b, &w, &ids, &rows));
        if (dt == TGL_DTYPE_Q8_0 || dt == TGL_DTYPE_Q4_0) {
            tgl_tensor f = tgl_tensor_contiguous(c->y, TGL_DTYPE_F32, 2, (size_t[]){64, 256});
            did(c, tgl_quantize(b, &f, &w));
            did(c, tgl_dequantize(b, &w, &f));
        }
    }
    /* Attention at the common head sizes, prefill with and without the mask, and decode over a
     * KV cache (256 of 512 positions filled), as a model's decode step calls it. */
    const size_t dims[2] = {64, 128};
    for (int i = 0; i < 2; i++) {
        size_t d = dims[i];
        float scale = d == 64 ? 0.125f : 0.08838835f;
        did(c, tgl_attention(b, c->x, c->y, c->z, c->w, 1, 2, 64, 64, d, scale, 0));
        did(c, tgl_attention(b, c->x, c->y, c->z, c->w, 1, 2, 64, 64, d, scale, 1));
        did(c, tgl_attention_kv(b, c->x, c->y, c->z, c->w, 1, 2, 1, 256, 512, d, scale, 1));
        /* grouped-query decode and prefill (Llama's 4 query heads per key/value head) */
        did(c, tgl_attention_gqa(b, c->x, c->y, c->z, c->w, 1, 8, 2, 1, 256, 512, d, scale, 1));
        did(c, tgl_attention_gqa(b, c->x, c->y, c->z, c->w, 1, 8, 2, 64, 64, 64, d, scale, 1));
        /* ... and both over an f16 cache (tgl_attention_t) */
        tgl_tensor q1 = tgl_tensor_contiguous(c->x, TGL_DTYPE_F32, 4, (size_t[]){1, 8, 1, d});
        tgl_tensor q64 = tgl_tensor_contiguous(c->x, TGL_DTYPE_F32, 4, (size_t[]){1, 8, 64, d});
        tgl_tensor o1 = q1, o64 = q64;
        o1.data = o64.data = c->w;
        tgl_tensor k = tgl_tensor_contiguous(c->y, TGL_DTYPE_F16, 4, (size_t[]){1, 2, 512, d}), v = k;
        v.data = c->z;
        did(c, tgl_attention_t(b, &q1, &k, &v, NULL, &o1, &(tgl_attention_desc){.causal = 1, .seq_kv = 256}));
        did(c, tgl_attention_t(b, &q64, &k, &v, NULL, &o64, &(tgl_attention_desc){.causal = 1, .seq_kv = 64}));
    }
    /* Convolutions: 3x3 at 64 and 128 channels, 1x1, depthwise, a 7x7 stride-2 stem, and a large
     * layer with a bias (205 x 205, 672 K outputs: a grid GPUs run without splitting K). */
    const tgl_conv2d_desc convs[] = {
        {.batch = 1, .in_channels = 64, .in_h = 8, .in_w = 8, .out_channels = 64, .kernel_h = 3, .kernel_w = 3,
         .pad_h = 1, .pad_w = 1},
        {.batch = 1, .in_channels = 128, .in_h = 8, .in_w = 8, .out_channels = 128, .kernel_h = 3, .kernel_w = 3,
         .pad_h = 1, .pad_w = 1},
        {.batch = 1, .in_channels = 64, .in_h = 8, .in_w = 8, .out_channels = 64, .kernel_h = 1, .kernel_w = 1},
        {.batch = 1, .in_channels = 64, .in_h = 8, .in_w = 8, .out_channels = 64, .kernel_h = 3, .kernel_w = 3,
         .pad_h = 1, .pad_w = 1, .groups = 64},
        {.batch = 1, .in_channels = 3, .in_h = 32, .in_w = 32, .out_channels = 16, .kernel_h = 7, .kernel_w = 7,
         .stride_h = 2, .stride_w = 2, .pad_h = 3, .pad_w = 3},
        {.batch = 1, .in_channels = 4, .in_h = 205, .in_w = 205, .out_channels = 16, .kernel_h = 3, .kernel_w = 3,
         .pad_h = 1, .pad_w = 1},
    };
    for (size_t i = 0; i < sizeof convs / sizeof convs[0]; i++)
        did(c, tgl_conv2d(b, &convs[i], c->x, c->y, i % 2 ? c->w : 0, c->z));
    /* a transposed convolution: U-Net's 2x upsampling with a bias */
    const tgl_conv2d_desc upsample = {.batch = 1, .in_channels = 32, .in_h = 8, .in_w = 8, .out_channels = 16,
                                .kernel_h = 2, .kernel_w = 2, .stride_h = 2, .stride_w = 2};
    did(c, tgl_conv_transpose2d(b, &upsample, 0, 0, c->x, c->y, c->w, c->z));
    /* ResNet's fused forms (tgl_conv2d_fused): bias and relu, the first with its residual in place */
    for (size_t i = 0; i < 3; i++)
        did(c, tgl_conv2d_fused(b, &convs[i], c->x, c->y, c->w, TGL_ACTIVATION_RELU, 0.0f, i ? 0 : c->z, 1, c->z));
    /* pooling: ResNet's stem max pool and a global average */
    tgl_pool2d_desc pools[] = {
        {.batch = 1, .channels = 64, .in_h = 16, .in_w = 16, .kernel_h = 3, .kernel_w = 3, .stride_h = 2,
         .stride_w = 2, .pad_h = 1, .pad_w = 1},
        {.batch = 1, .channels = 64, .in_h = 7, .in_w = 7, .kernel_h = 7, .kernel_w = 7, .kind = TGL_POOL_AVG},
    };
    for (size_t i = 0; i < sizeof pools / sizeof pools[0]; i++)
        did(c, tgl_pool2d(b, &pools[i], c->x, c->z));
    did(c, tgl_max_pool2d_indices(b, &pools[0], c->x, c->z, c->w)); /* the stem pool with its indices */
    /* adaptive pooling: a global average and a 7 x 7 max */
    did(c, tgl_adaptive_pool2d(b, TGL_POOL_AVG, 1, 64, 16, 16, 1, 1, c->x, c->z));
    did(c, tgl_adaptive_pool2d(b, TGL_POOL_MAX, 1, 64, 16, 16, 7, 7, c->x, c->z));
    /* resizing: a 2x upsample of a feature map in each mode */
    for (int mode = 0; mode < TGL_INTERP_MODE_COUNT; mode++) {
        tgl_interpolate_desc up = {.batch = 1, .channels = 64, .in_h = 16, .in_w = 16, .out_h = 32, .out_w = 32,
                                   .mode = (tgl_interp_mode)mode};
        did(c, tgl_interpolate(b, &up, c->x, c->z));
    }
}

TGL_API tgl_status tgl_warmup(tgl_backend *b, unsigned *calls)
{
    if (calls)
        *calls = 0;
    if (!b)
        return tgl__fail(NULL, TGL_ERR_INVALID_ARGUMENT, "tgl_warmup: b: NULL");
    warm c = {b, 0, 0, 0, 0, 0, TGL_OK};
    tgl_ptr *bufs[4] = {&c.x, &c.y, &c.z, &c.w};
    for (int i = 0; i < 4 && !c.st; i++)
        if (!(c.st = tgl_alloc(b, WARM_FLOATS * sizeof(float), bufs[i])))
            c.st = tgl_fill(b, *bufs[i], 0.0f, WARM_FLOATS);
    if (!c.st)
        elementwise(&c);
    if (!c.st)
        reductions(&c);
    if (!c.st)
        row_ops(&c);
    if (!c.st)
        products(&c);
    if (!c.st)
        c.st = tgl_synchronize(b);
    char why[sizeof b->last_error];
    tgl__strlcpy(why, b->last_error, sizeof why); /* the frees below must not hide it */
    for (int i = 0; i < 4; i++)
        if (*bufs[i])
            tgl_free(b, *bufs[i]);
    if (calls)
        *calls = c.calls;
    return c.st ? tgl__fail(b, c.st, "tgl_warmup: %s", why) : TGL_OK;
}

TGL_API tgl_status tgl_tune(tgl_backend *b, size_t size, FILE *report)
{
    tgl_status st = tgl__enter(b);
    if (st)
        return st;
    if (size && (size < 64 || size > 8192))
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "tgl_tune: size %zu outside 64..8192 (0: the default)", size);
    if (!b->vt->tune)
        return tgl__fail(b, TGL_ERR_UNSUPPORTED, "tgl_tune: the %s backend has no kernel shapes to tune",
                         b->vt->name);
    return tgl__leave(b, b->vt->tune(b, size, report));
}
